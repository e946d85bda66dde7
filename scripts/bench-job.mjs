// What the page benchmarks share about a job: the CLI's --json on it (time and ranks), the rank
// table's model read from the page (every rank and all rows, though the table's DOM holds only
// the rows in view), and the check of one against the other.
import { execFileSync } from 'node:child_process';
import { statFields, TICK_MS } from './tab-memory.mjs';

/**
 * The CPU time (ms, user + system) of this process's children it has waited for (Linux: /proc;
 * 0 elsewhere): the difference around a synchronous run of a child is that child's CPU.
 */
function childrenCpuMs() {
  try {
    const rest = statFields('self');
    // cutime and cstime (fields 16 and 17).
    return (Number(rest[13]) + Number(rest[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The CLI's --json on `dir`: its time and CPU time (ms) and its ranks ({ role, rank, rows }). */
export function cliJson(cli, dir) {
  const cpu = childrenCpuMs();
  const t = performance.now();
  const out = execFileSync(cli, ['profiler', '--json', dir], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 2 ** 30 });
  const ms = performance.now() - t;
  const cpuMs = childrenCpuMs() - cpu;
  const ranks = JSON.parse(out).ranks.map((r) => ({ role: r.role, rank: r.rank, rows: r.rows }));
  return { ms, cpuMs, ranks };
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
