// View 1, the job overview: headline figures, the role × rank matrix of peaks (heat-coloured,
// outliers marked; drawn by rank-matrix.js), one row per rank with its call-stack coverage, and the warnings. Clicking a
// cell or a row selects that rank in every other view.
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { ms, timeTitle, rankLabel, rankText, allocatorName, section } from './common.js';
import { rankMatrix } from './rank-matrix.js';

/** Renders the overview into a section; returns { node, update(state) }. */
export function overview({ report, ranks }, store) {
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
    metric('ascend-warnings', 'Warnings', totals.warnings, int(totals.warnings), filesLine(totals)),
    peak
      ? el('div', { class: 'metric peak-metric', 'data-metric': 'ascend-peak', 'data-value': String(peak.peak_allocated_bytes), title: exactBytes(peak.peak_allocated_bytes) },
          el('div', { class: 'label', text: 'Highest peak allocated' }),
          el('div', { class: 'value', text: bytes(peak.peak_allocated_bytes) }),
          el('div', { class: 'sub' }, peakButton))
      : null,
    metric('ascend-unreleased', 'Never released', totals.unreleased_bytes, bytes(totals.unreleased_bytes), plural(totals.unreleased_rows, 'allocation'), exactBytes(totals.unreleased_bytes)),
  );
  body.append(metrics);

  // A matrix cell opens its rank: select it and bring its memory chart into view.
  const open = (i) => {
    select(i);
    const chart = document.getElementById('ascend-memory');
    if (chart) chart.scrollIntoView({ block: 'start', behavior: 'smooth' });
  };
  const select = (i) => store.set({ rank: i, cmp: store.get().cmp === i ? null : store.get().cmp, view: null, window: null, at: null, row: null, group: null });

  // ---- matrix: roles (and steps) × ranks, on a canvas (see rank-matrix.js) ----
  const [minPeak, maxPeak] = [totals.min_peak_allocated_bytes, totals.peak_allocated_bytes];
  const matrix = rankMatrix(report, open);
  body.append(el('div', { class: 'matrix-wrap' },
    el('h3', { text: 'Peak allocated (and reserved) by role and rank' }),
    matrix.node,
    el('div', { class: 'legend' },
      el('span', {}, el('span', { class: 'swatch heat-lo' }), `lowest peak (${bytes(minPeak)})`),
      el('span', {}, el('span', { class: 'swatch heat-hi' }), `highest peak (${bytes(maxPeak)})`),
      el('span', { text: '▲/▼ outlier: > 10 % and > 64 MiB from its role’s median (roles with ≥ 3 ranks)' }))));

  // ---- one row per rank ----
  const rows = [];
  const table = el('table', { class: 'ascend-ranks', 'data-testid': 'ascend-rank-table' });
  table.append(el('thead', {}, el('tr', {},
    ...['Role', 'Rank', 'Step', 'Rows', 'Call stacks', 'Peak allocated', 'Peak reserved', 'Peak at', 'Reserved − allocated', 'Unreleased'].map((t, k) =>
      el('th', { class: k >= 3 && k !== 4 ? 'num' : '', text: t })))));
  const rb = el('tbody');
  summaries.forEach((r, i) => {
    const info = ranks[i];
    const st = r.stacks;
    const total = Math.max(1, st.direct + st.via_forward + st.approximate + st.none);
    const bar = el('div', { class: 'coverage', title: `direct ${st.direct}, via forward ${st.via_forward}, approximate ${st.approximate}, none ${st.none} (of which ${r.rows_ge} cann:: rows have no Python stack by nature)` });
    for (const [k, n] of [['direct', st.direct], ['via_forward', st.via_forward], ['approximate', st.approximate], ['none', st.none]]) {
      const seg = el('span', { class: `seg ${k}` });
      seg.style.width = `${(100 * n) / total}%`;
      bar.append(seg);
    }
    const tr = el('tr', {
      'data-testid': 'rank-row',
      tabindex: '0',
      data: {
        role: r.role,
        rank: String(r.rank),
        step: r.step === null || r.step === undefined ? '' : String(r.step),
        rows: String(r.rows),
        peakAllocatedBytes: String(r.peak_allocated_bytes),
        peakReservedBytes: String(r.peak_reserved_bytes),
        stacksDirect: String(st.direct),
        stacksViaForward: String(st.via_forward),
        unreleasedRows: String(r.unreleased_rows),
        source: r.source,
        rankIndex: String(i),
      },
      on: { click: () => select(i), keydown: (ev) => ev.key === 'Enter' && select(i) },
    },
    el('td', { text: r.role || '(no role)', title: r.run_dirs.join('\n') }),
    el('td', { class: 'num', title: r.rank === 'unknown' ? 'profiler_info names no rank number' : '' }, r.rank === 'unknown' ? rankText(r) : String(r.rank), sourceBadge(r.source)),
    el('td', { class: 'num', text: r.step === null || r.step === undefined ? '' : String(r.step) }),
    el('td', { class: 'num', text: int(r.rows), title: `${int(r.rows_pta)} ${allocatorName(r)} + ${int(r.rows_ge)} cann:: (GE)` }),
    el('td', {}, bar, el('div', { class: 'coverage-text', text: `${st.direct} direct · ${st.via_forward} via fwd · ${st.approximate} approx · ${st.none} none` })),
    el('td', { class: 'num strong', text: bytes(r.peak_allocated_bytes), title: `${exactBytes(r.peak_allocated_bytes)} (from ${r.peak_source})` }),
    el('td', { class: 'num', text: bytes(r.peak_reserved_bytes), title: exactBytes(r.peak_reserved_bytes) }),
    el('td', { class: 'num', text: info && info.peak !== null ? ms(info.peak) : '–', title: info && info.peak !== null ? timeTitle(info.origin_ns, info.peak) : 'no allocator data' }),
    el('td', { class: 'num', text: bytes(r.fragmentation_bytes), title: `${exactBytes(r.fragmentation_bytes)} reserved but not allocated at the peak (fragmentation)` }),
    el('td', { class: 'num', text: `${int(r.unreleased_rows)} · ${bytes(r.unreleased_bytes)}`, title: exactBytes(r.unreleased_bytes) }));
    rows.push(tr);
    rb.append(tr);
  });
  table.append(rb);
  body.append(el('div', { class: 'scroll-x' }, table),
    el('div', { class: 'legend' },
      el('span', {}, el('span', { class: 'swatch seg direct' }), 'direct'),
      el('span', {}, el('span', { class: 'swatch seg via_forward' }), 'via forward op'),
      el('span', {}, el('span', { class: 'swatch seg approximate' }), 'approximate'),
      el('span', {}, el('span', { class: 'swatch seg none' }), 'none (cann:: rows and backward ops without a forward match)')));

  // ---- warnings ----
  body.append(warningsBlock(report));

  // Only the rows whose marks change are touched, so selecting a rank of a job of thousands
  // restyles two rows, not every one; the matrix repaints the cells in view.
  let shown = null;
  function update(s) {
    matrix.update(s);
    if (shown && shown.rank === s.rank) return;
    const touch = shown ? [shown.rank, s.rank] : summaries.map((_, i) => i);
    for (const i of touch) {
      if (i !== null && i !== undefined && rows[i]) rows[i].classList.toggle('selected', i === s.rank);
    }
    shown = { rank: s.rank };
  }
  return { node, update };
}

/** Which export of a rank was read: a small "db" (database) or "text" (CSV/JSON files) badge. */
function sourceBadge(source) {
  const db = source === 'db';
  return el('span', {
    class: `source-badge ${db ? 'db' : 'text'}`,
    'data-testid': 'rank-source',
    text: db ? 'db' : source === 'text' ? 'text' : source,
    title: db ? 'read from the database export (ascend_pytorch_profiler_*.db)' : source === 'text' ? 'read from the text export (CSV and JSON files)' : 'read from both exports (runs of both kinds)',
  });
}

/**
 * "2 ranks failed, 1 file rejected, 1 file not analysed", or "every file read". Failed ranks are a
 * job summary's: ranks whose analysis failed where they ran (the reasons are among the warnings).
 */
function filesLine(totals) {
  const parts = [];
  if (totals.failed_ranks) parts.push(`${plural(totals.failed_ranks, 'rank')} failed`);
  if (totals.rejected) parts.push(`${plural(totals.rejected, 'file')} rejected`);
  if (totals.ignored) parts.push(`${plural(totals.ignored, 'file')} not analysed`);
  return parts.length ? parts.join(', ') : 'every file read';
}

/** The warnings and ignored files, hints first. */
export function warningsBlock(report) {
  const ws = [...report.warnings];
  const isHint = (w) => /export_type|db export|re-export|analyse\(/i.test(w.message);
  ws.sort((a, b) => isHint(b) - isHint(a));
  const list = el('ul', { class: 'warning-list', 'data-testid': 'ascend-warnings' });
  for (const w of ws) {
    const where = [w.file, w.line ? `line ${w.line}` : null, w.byte !== undefined && w.byte !== null ? `byte ${w.byte}` : null, w.field ? `field ${w.field}` : null].filter(Boolean).join(', ');
    list.append(el('li', { class: `${w.severity}${isHint(w) ? ' hint' : ''}` },
      el('span', { class: 'sev', text: w.severity }),
      el('span', { class: 'where', text: where }),
      el('span', { class: 'msg', text: w.message }),
      w.count > 1 ? el('span', { class: 'count', text: `× ${int(w.count)}` }) : null));
  }
  const ignored = el('ul', { class: 'warning-list ignored' });
  // A file set aside with a warning (another run of a rank) has its reason said once, up there.
  const warned = new Set(report.warnings.map((w) => `${w.file}\n${w.message}`));
  for (const f of report.ignored) {
    const said = warned.has(`${f.path}\n${f.reason}`);
    ignored.append(el('li', {}, el('span', { class: 'where', text: f.path }), el('span', { class: `msg${said ? ' muted' : ''}`, text: said ? 'see its warning above' : f.reason })));
  }
  const details = el('details', { class: 'warnings-box', open: ws.some(isHint) || (ws.length > 0 && ws.length <= 5) },
    el('summary', { text: `${plural(ws.length, 'warning')}, ${plural(report.ignored.length, 'file')} not analysed` }),
    ws.length ? list : el('p', { class: 'muted', text: 'No warnings.' }));
  if (report.ignored.length) details.append(el('h3', { text: 'Files not analysed' }), ignored);
  return details;
}
