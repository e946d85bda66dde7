// The resident memory of a browser the benchmarks opened (Linux: /proc), sampled while a page
// works: the tab's renderer processes (the page, its workers and their WebAssembly memory live in
// them) and the browser's processes in all. Linear memory a worker has grown but not touched is
// not resident, so this is what the tab really holds, JavaScript heaps included. Counted: the
// anonymous and shared-memory resident pages (RssAnon + RssShmem), not the mapped files.
import { readFileSync, readdirSync } from 'node:fs';

/** pid → { ppid, cmdline, rss (bytes: anonymous + shared memory) } of every process still readable. */
function processes() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: the fields after it follow the
      // last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(rest[1]);
      // Anonymous and shared-memory pages only: the pages of the browser's files (its code,
      // fonts), shared by every process, are left out.
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const kb = (field) => Number((status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
      const rss = (kb('RssAnon') + kb('RssShmem')) * 1024;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.set(Number(name), { ppid, rss, cmdline });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/** The memory now of the browser whose profile folder is `dir`: { renderer, all } in bytes. */
export function tabMemory(dir) {
  const procs = processes();
  const roots = [...procs].filter(([, p]) => p.cmdline.includes(`--user-data-dir=${dir}`) && !p.cmdline.includes('--type=')).map(([pid]) => pid);
  const family = new Set(roots);
  // Children come after their parents in no guaranteed order: grow the set until it is stable.
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of procs) {
      if (!family.has(pid) && family.has(p.ppid)) {
        family.add(pid);
        grew = true;
      }
    }
  }
  let renderer = 0;
  let all = 0;
  for (const pid of family) {
    const p = procs.get(pid);
    all += p.rss;
    if (p.cmdline.includes('--type=renderer')) renderer += p.rss;
  }
  return { renderer, all, found: roots.length > 0 };
}

/**
 * Samples `tabMemory(dir)` every `everyMs` until `stop()`, which returns the peaks
 * ({ renderer, all } in bytes, `samples`).
 */
export function watchTabMemory(dir, everyMs = 200) {
  const peak = { renderer: 0, all: 0, samples: 0 };
  const sample = () => {
    const m = tabMemory(dir);
    if (!m.found) return;
    peak.renderer = Math.max(peak.renderer, m.renderer);
    peak.all = Math.max(peak.all, m.all);
    peak.samples += 1;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    peak: () => ({ ...peak }),
    stop() {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}
