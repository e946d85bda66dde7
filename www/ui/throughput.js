// Throughput and time left of a read in progress, from the bytes done so far and the time since
// the read started. An average over the whole read: steadier than the last interval, and a read
// of many files of one kind runs at an even pace.
import { bytes } from '../format.js';

// Below this much elapsed time an estimate is mostly noise: say nothing yet.
const SETTLE_MS = 300;

/**
 * Returns `update(done, total)` → `{ rate, left, text }`: bytes per second and seconds left (both
 * null until there is enough to estimate from), and a short phrase for the progress line
 * (e.g. "850 MiB/s, about 3 s left"). `now` is injectable for tests.
 */
export function throughput(now = () => performance.now()) {
  let t0 = null;
  let done0 = 0;
  return (done, total) => {
    const t = now();
    if (t0 === null) {
      t0 = t;
      done0 = done;
    }
    const elapsed = t - t0;
    const read = done - done0;
    if (elapsed < SETTLE_MS || read <= 0) return { rate: null, left: null, text: 'estimating speed…' };
    const rate = (read * 1000) / elapsed;
    const left = Math.max(0, (total - done) / rate);
    return { rate, left, text: `${bytes(rate)}/s, ${leftText(left)}` };
  };
}

/** 0.4 → "less than a second left", 75 → "about 1 min 15 s left". */
export function leftText(seconds) {
  if (seconds < 1) return 'less than a second left';
  const s = Math.round(seconds);
  if (s < 60) return `about ${s} s left`;
  const m = Math.floor(s / 60);
  return `about ${m} min${s % 60 ? ` ${s % 60} s` : ''} left`;
}
