// What the page benchmarks share about a job: the CLI's --json on it (time and ranks), the rank
// table's model read from the page (every rank and all rows, though the table's DOM holds only
// the rows in view), and the check of one against the other.
import { execFileSync } from 'node:child_process';

/** The CLI's --json on `dir`: its time (ms) and its ranks ({ role, rank, rows }). */
export function cliJson(cli, dir) {
  const t = performance.now();
  const out = execFileSync(cli, ['profiler', '--json', dir], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 2 ** 30 });
  const ms = performance.now() - t;
  const ranks = JSON.parse(out).ranks.map((r) => ({ role: r.role, rank: r.rank, rows: r.rows }));
  return { ms, ranks };
}

/**
 * The rank table's model on `page` (the first table of ranks under `scope`): { ranks, rows }, or
 * null when there is none.
 */
export function rankTableModel(page, scope = 'body') {
  return page.evaluate((scope) => {
    const t = document.querySelector(`${scope} [data-testid="ascend-rank-table"]`);
    return t ? { ranks: Number(t.dataset.total), rows: Number(t.dataset.totalRows) } : null;
  }, scope);
}

const int = (n) => n.toLocaleString('en-US');

/** The rank table's model against the CLI's ranks, in words ("— MISMATCH" when they differ). */
export function tableCheck(table, ranks) {
  const rows = ranks.reduce((n, r) => n + r.rows, 0);
  if (!table) return 'no rank table';
  const ok = table.ranks === ranks.length && table.rows === rows;
  return `rank table ${int(table.ranks)} of the CLI's ${int(ranks.length)} ranks, ${int(table.rows)} of its ${int(rows)} rows${ok ? '' : ' — MISMATCH'}`;
}
