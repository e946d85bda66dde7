// View 1, the job overview: headline figures, the role × rank matrix of peaks (heat-coloured,
// outliers marked; drawn by rank-matrix.js), one row per rank with its call-stack coverage (a
// virtual table, rank-table.js), and the warnings. Clicking a cell or a row selects that rank in
// every other view.
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { rankLabel, section } from './common.js';
import { rankMatrix } from './rank-matrix.js';
import { rankTable, tooLarge } from './rank-table.js';

/**
 * Renders the overview into a section; returns { node, update(state) }. `soon(i)`, if given, is
 * told of a rank likely to be selected next (the pointer rests on or presses its cell or row).
 */
export function overview({ report, ranks }, store, { soon = null } = {}) {
  const { node, body } = section(1, 'overview', 'Job overview', {
    help: 'Peak device memory of every rank. Click a rank (a matrix cell or a row) to open it in the views below.',
  });
  const summaries = report.ranks;
  // The job's totals are computed in the engine (the same object `memlens profiler --json` prints).
  const totals = report.totals;
  const peakIdx = totals.peak_rank ?? -1;

  // ---- headline figures (hooks: data-metric / data-value) ----
  const metric = (id, label, value, text, sub, title) =>
    el('div', { class: 'metric', 'data-metric': id, 'data-value': String(value), title },
      el('div', { class: 'label', text: label }),
      el('div', { class: 'value', text }),
      sub ? el('div', { class: 'sub', text: sub }) : null);
  const peak = peakIdx >= 0 ? summaries[peakIdx] : null;
  const peakButton = peak
    ? el('button', { type: 'button', class: 'linkish', text: rankLabel(peak), title: 'Open this rank', on: { click: () => open(peakIdx) } })
    : null;
  const metrics = el('div', { class: 'metrics' },
    metric('ascend-ranks', 'Ranks', totals.ranks, int(totals.ranks), plural(totals.roles, 'role')),
    metric('ascend-rows', 'Allocation rows', totals.rows, int(totals.rows), `${int(totals.rows_ge)} of them cann:: (GE)`),
    problemsMetric(totals, filesLine(totals, summaries.filter(tooLarge).length)),
    peak
      ? el('div', { class: 'metric peak-metric', 'data-metric': 'ascend-peak', 'data-value': String(peak.peak_allocated_bytes), title: exactBytes(peak.peak_allocated_bytes) },
          el('div', { class: 'label', text: 'Highest peak allocated' }),
          el('div', { class: 'value', text: bytes(peak.peak_allocated_bytes) }),
          el('div', { class: 'sub' }, peakButton))
      : null,
    metric('ascend-unreleased', 'Never released', totals.unreleased_bytes, bytes(totals.unreleased_bytes), plural(totals.unreleased_rows, 'allocation'), exactBytes(totals.unreleased_bytes)),
  );
  body.append(metrics);

  // A matrix cell opens its rank: select it and bring its memory chart into view. The scroll
  // starts in the frame's animation callbacks, after every change the click makes: the layout it
  // needs is then the frame's own, done once (started in the click, it laid out the page a first
  // time before the rank table and the views had changed).
  const open = (i) => {
    select(i);
    requestAnimationFrame(() => {
      const chart = document.getElementById('ascend-memory');
      if (chart) chart.scrollIntoView({ block: 'start', behavior: 'smooth' });
    });
  };
  const select = (i) => store.set({ rank: i, cmp: store.get().cmp === i ? null : store.get().cmp, view: null, window: null, at: null, row: null, group: null });

  // ---- matrix: roles (and steps) × ranks, on a canvas (see rank-matrix.js) ----
  const [minPeak, maxPeak] = [totals.min_peak_allocated_bytes, totals.peak_allocated_bytes];
  const matrix = rankMatrix(report, open, soon);
  body.append(el('div', { class: 'matrix-wrap' },
    el('h3', { text: 'Peak allocated (and reserved) by role and rank' }),
    matrix.node,
    el('div', { class: 'legend', 'data-testid': 'ascend-matrix-legend' },
      // Without a rank with data there is no lowest or highest peak (the core's totals say 0).
      peak ? el('span', {}, el('span', { class: 'swatch heat-lo' }), `lowest peak (${bytes(minPeak)})`) : null,
      peak ? el('span', {}, el('span', { class: 'swatch heat-hi' }), `highest peak (${bytes(maxPeak)})`) : null,
      el('span', { text: '▲/▼ outlier: > 10 % and > 64 MiB from its role’s median (roles with ≥ 3 ranks)' }))));

  // ---- one row per rank (virtual: only the rows in view are in the DOM; see rank-table.js) ----
  const table = rankTable(summaries, ranks, select, soon);
  body.append(table.node,
    el('div', { class: 'legend' },
      el('span', {}, el('span', { class: 'swatch seg direct' }), 'direct'),
      el('span', {}, el('span', { class: 'swatch seg via_forward' }), 'via forward op'),
      el('span', {}, el('span', { class: 'swatch seg approximate' }), 'approximate'),
      el('span', {}, el('span', { class: 'swatch seg none' }), 'none (cann:: rows and backward ops without a forward match)')));

  // ---- warnings ----
  body.append(warningsBlock(report));

  // The matrix repaints the cells in view; the table re-renders the rows in view only when the
  // selected rank changes (and scrolls it into view).
  let shown;
  function update(s) {
    matrix.update(s);
    if (shown === s.rank) return;
    shown = s.rank;
    table.show(s.rank);
  }
  return { node, update };
}

/**
 * "2 ranks failed, 1 rank too large, 1 file rejected, 1 file not analysed", or "every file read".
 * Failed ranks are a job summary's (ranks whose analysis failed where they ran) or a worker
 * pool's (ranks its readers could not read); the reasons are among the warnings. Of them, `big`
 * were left out for a file larger than the page reads.
 */
function filesLine(totals, big = 0) {
  const parts = [];
  const failed = (totals.failed_ranks || 0) - big;
  if (failed > 0) parts.push(`${plural(failed, 'rank')} failed`);
  if (big) parts.push(`${plural(big, 'rank')} too large`);
  if (totals.rejected) parts.push(`${plural(totals.rejected, 'file')} rejected`);
  if (totals.ignored) parts.push(`${plural(totals.ignored, 'file')} not analysed`);
  return parts.length ? parts.join(', ') : 'every file read';
}

/**
 * The headline card of a job's diagnostics, counted by level in the engine's words
 * (`totals.levels`: "1 error, 2 warnings"); `sub` is its second line. Hooks: `data-value` (all of
 * them), `data-errors`, `data-warnings`.
 */
export function problemsMetric(totals, sub) {
  const errors = totals.errors || 0;
  const warnings = totals.warnings || 0;
  return el('div', { class: `metric${errors ? ' has-errors' : ''}`, 'data-metric': 'ascend-warnings', 'data-value': String(errors + warnings), 'data-errors': String(errors), 'data-warnings': String(warnings) },
    el('div', { class: 'label', text: 'Errors and warnings' }),
    el('div', { class: 'value', text: errors || warnings ? totals.levels : 'none' }),
    sub ? el('div', { class: 'sub', text: sub }) : null);
}

/**
 * One diagnostic as a list item: its level, its place (file, line, byte, field), its message and
 * how many rows it stands for.
 */
export function diagnosticItem(w, extra = '') {
  const where = [w.file, w.line ? `line ${w.line}` : null, w.byte !== undefined && w.byte !== null ? `byte ${w.byte}` : null, w.field ? `field ${w.field}` : null].filter(Boolean).join(', ');
  return el('li', { class: `${w.severity}${extra}` },
    el('span', { class: 'sev', text: w.severity }),
    el('span', { class: 'where', text: where }),
    el('span', { class: 'msg', text: w.message }),
    w.count > 1 ? el('span', { class: 'count', text: `× ${int(w.count)}` }) : null);
}

/** The errors and warnings and the ignored files, hints first. */
export function warningsBlock(report) {
  const ws = [...report.warnings];
  const isHint = (w) => /export_type|db export|re-export|analyse\(/i.test(w.message);
  ws.sort((a, b) => isHint(b) - isHint(a));
  const list = el('ul', { class: 'warning-list', 'data-testid': 'ascend-warnings' });
  for (const w of ws) list.append(diagnosticItem(w, isHint(w) ? ' hint' : ''));
  const ignored = el('ul', { class: 'warning-list ignored' });
  // A file set aside with a warning (another run of a rank) has its reason said once, up there.
  const warned = new Set(report.warnings.map((w) => `${w.file}\n${w.message}`));
  for (const f of report.ignored) {
    const said = warned.has(`${f.path}\n${f.reason}`);
    ignored.append(el('li', {}, el('span', { class: 'where', text: f.path }), el('span', { class: `msg${said ? ' muted' : ''}`, text: said ? 'see its warning above' : f.reason })));
  }
  const details = el('details', { class: 'warnings-box', open: ws.some(isHint) || (ws.length > 0 && ws.length <= 5) },
    // The files not analysed are counted only when there are some ("0 files not analysed" said
    // nothing the list below does not).
    el('summary', { 'data-testid': 'ascend-warnings-title', text: [report.totals.levels, report.ignored.length ? `${plural(report.ignored.length, 'file')} not analysed` : null].filter(Boolean).join(', ') }),
    ws.length ? list : el('p', { class: 'muted', text: 'No errors or warnings.' }));
  if (report.ignored.length) details.append(el('h3', { text: 'Files not analysed' }), ignored);
  return details;
}
