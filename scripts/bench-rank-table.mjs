// Browser benchmark of the rank table's column fit (not a test): job summaries of 1,201 and 4,096
// ranks with figures of every size (tests/browser/varied-summary.mjs) are opened on the page
// through the file input; reports the time the table spends fitting its columns to their widest
// texts (the `rank-table-fit` measure the page records once per overview) and the time from the
// input's change event to the drawn overview. With --baseline OTHER_WWW (a built www/ of another
// commit) the two pages are measured in turn, alternating, --runs times each, and the columns'
// widths of the two (the header's grid template) are compared: a faster fit must give the same
// widths.
//
//   node scripts/bench-rank-table.mjs [--ranks 1201,4096] [--runs 3] [--baseline OTHER_WWW] [--single]
//
// Needs a built page (npm run build). 1440×900, threaded unless --single.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer } from '../tests/browser/harness.mjs';
import { variedSummary } from '../tests/browser/varied-summary.mjs';
import { serve } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('ranks', '1201,4096').split(',').map(Number);
const RUNS = Number(arg('runs', 3));
const BASELINE = arg('baseline', null);
const ISOLATE = !process.argv.includes('--single');
const SCOPE = '[data-testid="jobsummary"]';

/** One page load of the summary `file`: fit time(s), time to the overview, the columns' widths. */
async function once(url, file) {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(url);
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="engine"]')?.dataset.threads) > 0, null, { timeout: 60000 });
    await page.evaluate(() => {
      window.addEventListener('change', () => { window.__t0 = performance.now(); }, { capture: true, once: true });
    });
    await page.setInputFiles('[data-testid="file-input"]', file);
    await page.waitForFunction((scope) => ['ready', 'error', 'empty'].includes(document.querySelector(scope)?.dataset.state), SCOPE, { timeout: 600000 });
    const first = await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => setTimeout(() => res(performance.now() - window.__t0), 0))));
    return await page.evaluate(([scope, first]) => {
      const table = document.querySelector(`${scope} [data-testid="ascend-rank-table"]`);
      return {
        fit: performance.getEntriesByName('rank-table-fit').map((e) => e.duration),
        first,
        ranks: Number(table.dataset.total),
        widths: table.querySelector('.vt-head').style.gridTemplateColumns,
      };
    }, [SCOPE, first]);
  } finally {
    await b.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const TMP = mkdtempSync(path.join(tmpdir(), 'memlens-bench-rank-table-'));
const server = await startServer({ isolate: ISOLATE });
const base = BASELINE ? await serve({ dir: path.resolve(BASELINE), port: 0, isolate: ISOLATE }) : null;
const pages = [['this page', server.url], ...(base ? [['baseline', base.url]] : [])];
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
try {
  for (const n of SIZES) {
    const file = path.join(TMP, `job-${n}.memlens.json`);
    writeFileSync(file, variedSummary(n).text);
    const got = new Map(pages.map(([which]) => [which, []]));
    for (let run = 1; run <= RUNS; run++) {
      for (const [which, url] of run % 2 ? pages : [...pages].reverse()) {
        const r = await once(url, file);
        got.get(which).push(r);
        console.log(`${n} ranks, ${which}, run ${run} (load ${loadavg()[0].toFixed(1)}, ${new Date().toISOString().slice(11, 19)} UTC): fit ${r.fit.map((d) => `${d.toFixed(1)} ms`).join(', ')}; drop → overview ${r.first.toFixed(0)} ms; ${r.ranks} rows`);
      }
    }
    const fits = new Map([...got].map(([which, rs]) => [which, median(rs.map((r) => r.fit[0]))]));
    console.log(`${n} ranks: fit median ${[...fits].map(([w, f]) => `${w} ${f.toFixed(1)} ms`).join(', ')}${base ? ` (${(fits.get('this page') / fits.get('baseline')).toFixed(2)}×)` : ''}`);
    if (base) {
      const widths = new Set([...got.values()].flat().map((r) => r.widths));
      console.log(`  column widths ${widths.size === 1 ? 'identical on both pages' : `DIFFER: ${[...widths].join(' | ')}`}: ${[...widths][0]}`);
    }
  }
} finally {
  await server.close();
  if (base) await new Promise((r) => base.server.close(r));
  rmSync(TMP, { recursive: true, force: true });
}
