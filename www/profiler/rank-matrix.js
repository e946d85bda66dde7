// The job overview's role × rank matrix of peaks, drawn on one canvas over a scroll area the size
// of the whole matrix: only the cells in view are painted, and the page holds the same few DOM
// nodes for 4 ranks or 4,000 (a table cell per rank made selecting and hovering cost a frame or
// more from about a thousand ranks on). The role column and the rank header stay in place while
// the cells scroll. Keyboard: the matrix is one focusable ARIA grid whose active cell (moved with
// the arrow keys, Home/End, Page Up/Down; opened with Enter or Space) is mirrored in a visually
// hidden grid cell that screen readers read through aria-activedescendant. Text from the files
// (role names) reaches the page only as canvas text, tooltip text and textContent.
import { el, cssVar } from '../ui/dom.js';
import { bytes, exactBytes, int } from '../format.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { rankLabel } from './common.js';
import { failedRank, failedReason, failedWord, tooLarge } from './rank-table.js';

/** Layout in CSS pixels: the role column, the header row and one cell (gap included). */
const LABEL_W = 170;
const HEAD_H = 24;
const CELL_W = 86;
const CELL_H = 54;
const GAP = 3;
/** Largest height of the matrix before it scrolls vertically (many roles or steps). */
const MAX_H = 420;
/** Outliers listed under the matrix as buttons; the rest are counted. */
const OUTLIERS_LISTED = 40;

let seq = 0;

// Colours and fonts from the page's CSS, read once per colour scheme; the matrices on the page
// (their repaint functions) are redrawn when the scheme changes.
let palette = null;
const live = new Set();
const colours = () => {
  if (!palette) {
    const font = getComputedStyle(document.body).fontFamily || 'sans-serif';
    palette = {
      heat: cssVar('--heat-rgb') || '228, 87, 46',
      panel: cssVar('--panel') || '#fff',
      text: cssVar('--text') || '#000',
      muted: cssVar('--muted') || '#666',
      accent: cssVar('--accent') || '#36c',
      compare: cssVar('--c-compare') || '#c0392b',
      peak: cssVar('--c-peak') || '#c62828',
      error: cssVar('--error') || '#c62828',
      errorBg: cssVar('--error-bg') || '#fdecea',
      bold: `600 12.5px ${font}`,
      small: `11px ${font}`,
      flag: `600 11px ${font}`,
      head: `600 12.5px ${font}`,
    };
  }
  return palette;
};
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  palette = null;
  for (const repaint of live) repaint();
});

const rankKey = (r) => `${r.role}\u0000${r.step ?? ''}\u0000${r.rank}`;

/** "▲ 190 % vs role": how far a rank stands from its role's median. */
export function outlierFlag(o) {
  return `${o.deviation_permille > 0 ? '▲' : '▼'} ${(Math.abs(o.deviation_permille) / 10).toFixed(0)} % vs role`;
}

/**
 * The second line of the cell of a rank left out for its size: the size of its files too large
 * ("file 1.50 GiB"), the bare size when that is wider than the cell (`cw`), in the cell's small
 * type on `g`.
 */
function leftOutSize(g, r, cw) {
  const files = r.tooLarge ? r.tooLarge.files : [];
  if (!files.length) return 'no figures';
  const size = bytes(files.reduce((n, f) => n + f.bytes, 0));
  const text = `${files.length === 1 ? 'file' : 'files'} ${size}`;
  g.font = colours().small;
  return g.measureText(text).width > cw - 10 ? size : text;
}

/** How long the pointer rests on a cell before `soon(i)` is called for its rank (ms). */
const REST_MS = 40;

/**
 * The matrix of `report` (its ranks, totals and outliers); `open(i)` opens rank i; `soon(i)`, if
 * given, is told of a rank that is likely to be opened next (the pointer rests on its cell or
 * presses it), so that its figures can be fetched before the click. Returns
 * { node, update(state) }: `update` marks the selected (`state.rank`) and compared (`state.cmp`)
 * ranks.
 */
export function rankMatrix(report, open, soon = null) {
  const summaries = report.ranks;
  const { totals } = report;

  // Rows (role, step) and columns (rank) in first-seen order, the ranks sorted by number.
  const rowSet = new Map();
  const colSet = new Map();
  for (const r of summaries) {
    const rk = `${r.role}\u0000${r.step ?? ''}`;
    if (!rowSet.has(rk)) rowSet.set(rk, r);
    if (!colSet.has(String(r.rank))) colSet.set(String(r.rank), true);
  }
  const rowKeys = [...rowSet.keys()];
  const rowText = rowKeys.map((rk) => {
    const [role, step] = rk.split('\u0000');
    return `${role || '(no role)'}${step ? ` · step ${step}` : ''}`;
  });
  const colVals = [...colSet.keys()];
  colVals.sort((a, b) => (a === 'unknown') - (b === 'unknown') || Number(a) - Number(b));
  // The column of ranks without a number is named by their device when they all name one.
  const unknownDevices = new Set(summaries.filter((r) => r.rank === 'unknown').map((r) => r.device ?? null));
  const colText = colVals.map((v) => (v === 'unknown' && unknownDevices.size === 1 && !unknownDevices.has(null) ? `device ${[...unknownDevices][0]}` : v));
  const rows = rowKeys.length;
  const cols = colVals.length;
  const rowOf = new Map(rowKeys.map((k, i) => [k, i]));
  const colOf = new Map(colVals.map((v, i) => [v, i]));
  // cell (row * cols + col) → the first rank of that (role, step, rank); and each rank's cell.
  const grid = new Map();
  const cellOfRank = new Map();
  summaries.forEach((r, i) => {
    const cell = rowOf.get(`${r.role}\u0000${r.step ?? ''}`) * cols + colOf.get(String(r.rank));
    if (!grid.has(cell)) grid.set(cell, i);
    cellOfRank.set(i, grid.get(cell));
  });
  const outliers = new Map(report.outliers.map((o) => [rankKey(o), o]));
  const outlierOf = (i) => outliers.get(rankKey(summaries[i]));
  // cell key → { r, c } of each drawn rank index (the first rank of its cell).
  const placeOf = new Map();
  for (const [key, i] of grid) placeOf.set(i, { r: Math.floor(key / cols), c: key % cols });
  // Heat spans the job's lowest to highest peak, so ranks a few percent apart still differ.
  const [minPeak, maxPeak] = [totals.min_peak_allocated_bytes, totals.peak_allocated_bytes];
  const heat = (v) => (maxPeak > minPeak ? Math.min(1, Math.max(0, (v - minPeak) / (maxPeak - minPeak))) : 1);

  const width = LABEL_W + cols * CELL_W;
  const height = HEAD_H + rows * CELL_H;
  const cellId = `rank-matrix-${++seq}-active`;
  const a11yCell = el('div', { role: 'gridcell', id: cellId });
  const a11yRow = el('div', { role: 'row' }, a11yCell);
  const space = el('div', { class: 'matrix-space', style: { width: `${width}px`, height: `${height}px` } });
  const scroller = el('div', {
    class: 'matrix-scroll',
    role: 'grid',
    tabindex: '0',
    'aria-label': `Peak allocated by role and rank, ${int(summaries.length)} ranks: arrow keys move, Enter opens the rank`,
    'aria-rowcount': String(rows + 1),
    'aria-colcount': String(cols + 1),
    'aria-activedescendant': cellId,
    'data-testid': 'ascend-matrix',
    data: { cells: grid.size, rows, cols, labelWidth: LABEL_W, headHeight: HEAD_H, cellWidth: CELL_W, cellHeight: CELL_H },
    style: { maxHeight: `${MAX_H}px` },
  }, space, el('div', { class: 'matrix-a11y' }, a11yRow));
  const canvas = el('canvas', { class: 'matrix-canvas', 'aria-hidden': 'true' });
  const view = el('div', { class: 'matrix-view' }, scroller, canvas);

  // The active cell (keyboard), the hovered one (pointer), the selected and compared ranks.
  let active = null;
  let hovered = -1;
  let selected = null;
  let compared = null;
  let focused = false;

  // ---- painting ----
  live.add(schedule);
  const fit = (g, text, max) => {
    if (g.measureText(text).width <= max) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (g.measureText(`${text.slice(0, mid)}…`).width <= max) lo = mid;
      else hi = mid - 1;
    }
    return `${text.slice(0, lo)}…`;
  };

  let pending = 0;
  function schedule() {
    all = true;
    if (!pending) pending = requestAnimationFrame(draw);
  }

  // A cell's texts, formatted once: a pan repaints every cell in view each frame, and formatting
  // the byte counts and measuring the outlier flag were most of a cell's cost.
  const texts = new Map();
  const textsOf = (g, i, cw) => {
    let t = texts.get(i);
    if (!t) {
      const s = summaries[i];
      const o = outlierOf(i);
      let flag = null;
      if (o) {
        // "▲ 199 % vs role", or "▲ 199 %" when that is wider than the cell.
        g.font = colours().flag;
        flag = outlierFlag(o);
        if (g.measureText(flag).width > cw - 10) flag = flag.replace(/ vs role$/, '');
      }
      // A failed rank's zeros are no figures: its cell says so in words, with a mark.
      // A rank left out for a file too large for the page gives that file's size instead.
      t = failedRank(s)
        ? { failed: `✕ ${failedWord(s)}`, peak: '', reserved: tooLarge(s) ? leftOutSize(g, s, cw) : 'no figures', flag: null, heat: '0' }
        : { peak: bytes(s.peak_allocated_bytes), reserved: `res. ${bytes(s.peak_reserved_bytes)}`, flag, heat: ((8 + heat(s.peak_allocated_bytes) * 60) / 100).toFixed(3) };
      if (t.failed) {
        // "✕ too large" is wider than a cell: the word stays, the mark goes (the cell's error
        // colours and dashed frame still mark it).
        g.font = colours().bold;
        if (g.measureText(t.failed).width > cw - 10) t.failed = failedWord(s);
      } else {
        // "res. 1000.0 GiB" is wider than a cell: the figure keeps its room, the word goes.
        g.font = colours().small;
        if (g.measureText(t.reserved).width > cw - 10) t.reserved = bytes(s.peak_reserved_bytes);
      }
      texts.set(i, t);
    }
    return t;
  };
  // The header's and the role column's labels, fitted once.
  const colFit = new Map();
  const rowFit = new Map();

  /** Paints the cell at row r, column c (rank index i) with its top left at (x, y). */
  function paintCell(g, p, r, c, i, x, y) {
    const cw = CELL_W - GAP;
    const ch = CELL_H - GAP;
    const t = textsOf(g, i, cw);
    g.fillStyle = t.failed ? p.errorBg : `rgba(${p.heat}, ${t.heat})`;
    g.fillRect(x, y, cw, ch);
    const right = x + cw - 6;
    g.font = p.bold;
    g.fillStyle = t.failed ? p.error : p.text;
    g.fillText(t.failed || t.peak, right, y + 16);
    g.font = p.small;
    g.fillStyle = p.muted;
    g.fillText(t.reserved, right, y + 31);
    if (t.flag) {
      g.font = p.flag;
      g.fillStyle = p.peak;
      g.fillText(t.flag, right, y + 45);
    }
    // Borders: outlier, hovered, compared (dashed), selected (double), focused (dotted).
    const frame = (colour, lw, dash, inset) => {
      g.strokeStyle = colour;
      g.lineWidth = lw;
      g.setLineDash(dash);
      g.strokeRect(x + inset, y + inset, cw - 2 * inset, ch - 2 * inset);
    };
    if (t.flag) frame(p.peak, 1, [], 0.5);
    if (t.failed) frame(p.error, 1, [3, 2], 0.5);
    if (i === hovered) frame(p.accent, 1, [], 0.5);
    if (i === compared) frame(p.compare, 1.5, [4, 3], 0.75);
    if (i === selected) frame(p.accent, 2.5, [], 1.25);
    if (focused && active && active.r === r && active.c === c) frame(p.text, 1.5, [2, 2], 3);
    g.setLineDash([]);
  }

  // What the next frame repaints: everything (`all`), or only the cells of these rank indices
  // (hover, selection and focus moves change the frames of two or three cells, not the view).
  let all = true;
  const dirty = new Set();
  const touch = (i) => {
    if (i !== null && i !== undefined && i >= 0) dirty.add(i);
    if (!pending) pending = requestAnimationFrame(draw);
  };
  let drawnAt = null;

  let drawn = false;
  function draw() {
    pending = 0;
    const only = all ? null : [...dirty];
    all = false;
    dirty.clear();
    if (!view.isConnected) {
      // Taken off the page for good (a new job replaced it): stop following the colour scheme.
      if (drawn) live.delete(schedule);
      return;
    }
    drawn = true;
    const w = scroller.clientWidth;
    const h = scroller.clientHeight;
    if (!w || !h) return;
    performance.mark('rank-matrix-draw-start');
    const dpr = window.devicePixelRatio || 1;
    const sx = scroller.scrollLeft;
    const sy = scroller.scrollTop;
    const p = colours();
    const g = canvas.getContext('2d');
    const at = `${w} ${h} ${dpr} ${sx} ${sy}`;
    if (only && drawnAt === at) {
      // Only some cells changed: each is cleared and painted again, clipped to the cells' area
      // (a cell half under the frozen header or role column stays under it).
      g.save();
      g.beginPath();
      g.rect(LABEL_W, HEAD_H, w - LABEL_W, h - HEAD_H);
      g.clip();
      g.textBaseline = 'alphabetic';
      g.textAlign = 'right';
      for (const i of only) {
        const place = placeOf.get(i);
        if (!place) continue;
        const x = LABEL_W + place.c * CELL_W - sx + GAP / 2;
        const y = HEAD_H + place.r * CELL_H - sy + GAP / 2;
        if (x > w || y > h || x + CELL_W < LABEL_W || y + CELL_H < HEAD_H) continue;
        // The whole cell with its share of the gaps, from whole pixels: nothing else is drawn there.
        g.clearRect(x - GAP / 2, y - GAP / 2, CELL_W, CELL_H);
        paintCell(g, p, place.r, place.c, i, x, y);
      }
      g.restore();
      performance.measure('rank-matrix-draw', 'rank-matrix-draw-start');
      return;
    }
    drawnAt = at;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${h}px`;
    }
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const c0 = Math.max(0, Math.floor(sx / CELL_W));
    const c1 = Math.min(cols - 1, Math.floor((sx + w - LABEL_W) / CELL_W));
    const r0 = Math.max(0, Math.floor(sy / CELL_H));
    const r1 = Math.min(rows - 1, Math.floor((sy + h - HEAD_H) / CELL_H));
    g.textBaseline = 'alphabetic';
    g.textAlign = 'right';
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const i = grid.get(r * cols + c);
        if (i === undefined) continue;
        paintCell(g, p, r, c, i, LABEL_W + c * CELL_W - sx + GAP / 2, HEAD_H + r * CELL_H - sy + GAP / 2);
      }
    }
    // Frozen header row and role column, painted over the cells that scrolled under them.
    g.fillStyle = p.panel;
    g.fillRect(0, 0, w, HEAD_H);
    g.fillRect(0, 0, LABEL_W, h);
    g.font = p.head;
    g.fillStyle = p.muted;
    for (let c = c0; c <= c1; c++) {
      const x = LABEL_W + (c + 1) * CELL_W - sx - GAP / 2 - 6;
      if (x - CELL_W + 12 < LABEL_W) continue;
      if (!colFit.has(c)) colFit.set(c, fit(g, colText[c], CELL_W - 10));
      g.fillText(colFit.get(c), x, HEAD_H - 7);
    }
    g.textAlign = 'left';
    for (let r = r0; r <= r1; r++) {
      const y = HEAD_H + r * CELL_H - sy + CELL_H / 2 + 4;
      if (y - 12 < HEAD_H) continue;
      if (!rowFit.has(r)) rowFit.set(r, fit(g, rowText[r], LABEL_W - 14));
      g.fillText(rowFit.get(r), 6, y);
    }
    g.fillStyle = p.panel;
    g.fillRect(0, 0, LABEL_W, HEAD_H);
    g.fillStyle = p.muted;
    g.fillText('role \\ rank', 6, HEAD_H - 7);
    performance.measure('rank-matrix-draw', 'rank-matrix-draw-start');
  }

  // ---- pointer ----
  // The cell under a client point: { r, c, i } (i = -1 for an empty cell), or null.
  function hit(clientX, clientY) {
    const box = scroller.getBoundingClientRect();
    const x = clientX - box.left;
    const y = clientY - box.top;
    if (x < LABEL_W || y < HEAD_H || x >= scroller.clientWidth || y >= scroller.clientHeight) return null;
    const c = Math.floor((x - LABEL_W + scroller.scrollLeft) / CELL_W);
    const r = Math.floor((y - HEAD_H + scroller.scrollTop) / CELL_H);
    if (c < 0 || c >= cols || r < 0 || r >= rows) return null;
    const i = grid.get(r * cols + c);
    return { r, c, i: i === undefined ? -1 : i };
  }

  function describe(i) {
    const r = summaries[i];
    if (tooLarge(r)) {
      // Which file, its size and the limit, one line each.
      const why = String(r.error || '').replace(/^too large:\s*/, '').split('; ').filter(Boolean);
      return [rankLabel(r), 'not read: a file is too large for the page', ...why, 'no figures (read it with memlens profiler or memlens serve)'];
    }
    // Why in the words of the rank table's title (the core's, for a rank the page read).
    if (failedRank(r)) return [rankLabel(r), failedReason(r), 'its zeros are left out of the job’s lowest peak'];
    const o = outlierOf(i);
    const lines = [rankLabel(r), `peak allocated ${exactBytes(r.peak_allocated_bytes)}`, `peak reserved ${exactBytes(r.peak_reserved_bytes)}`];
    if (o) lines.push(`stands out: ${o.deviation_permille > 0 ? '+' : ''}${(o.deviation_permille / 10).toFixed(1)} % from the role's median ${bytes(o.role_median_bytes)}`);
    return lines;
  }

  // The rank the pointer rests on is announced once it stays REST_MS (a sweep over the matrix
  // announces none).
  let rest = 0;
  const hover = (i) => {
    if (i === hovered) return;
    const was = hovered;
    hovered = i;
    scroller.dataset.hoverRankIndex = String(i);
    scroller.style.cursor = i >= 0 ? 'pointer' : '';
    touch(was);
    touch(i);
    clearTimeout(rest);
    if (soon && i >= 0) rest = setTimeout(() => soon(i), REST_MS);
  };
  scroller.addEventListener('mousemove', (ev) => {
    const at = hit(ev.clientX, ev.clientY);
    const i = at ? at.i : -1;
    hover(i);
    if (i >= 0) showTooltip(ev.clientX, ev.clientY, describe(i));
    else hideTooltip();
  });
  scroller.addEventListener('mouseleave', () => {
    hideTooltip();
    hover(-1);
  });
  scroller.addEventListener('pointerdown', (ev) => {
    const at = hit(ev.clientX, ev.clientY);
    if (soon && at && at.i >= 0) soon(at.i);
  });
  scroller.addEventListener('click', (ev) => {
    const at = hit(ev.clientX, ev.clientY);
    if (!at || at.i < 0) return;
    setActive(at.r, at.c, false);
    hideTooltip();
    open(at.i);
  });
  scroller.addEventListener('scroll', () => {
    hideTooltip();
    schedule();
  }, { passive: true });

  // ---- keyboard ----
  function setActive(r, c, reveal) {
    if (active) touch(grid.get(active.r * cols + active.c));
    active = { r, c };
    const i = grid.get(r * cols + c);
    scroller.dataset.activeRankIndex = String(i ?? -1);
    a11yRow.setAttribute('aria-rowindex', String(r + 2));
    a11yCell.setAttribute('aria-colindex', String(c + 2));
    a11yCell.setAttribute('aria-selected', String(i !== undefined && i === selected));
    a11yCell.textContent = i === undefined
      ? `${rowText[r]}, rank ${colText[c]}: no such rank`
      : describe(i).join(', ');
    if (reveal) {
      const x = LABEL_W + c * CELL_W;
      const y = HEAD_H + r * CELL_H;
      const vw = scroller.clientWidth - LABEL_W;
      const vh = scroller.clientHeight - HEAD_H;
      if (x - LABEL_W < scroller.scrollLeft) scroller.scrollLeft = x - LABEL_W;
      else if (x - LABEL_W + CELL_W > scroller.scrollLeft + vw) scroller.scrollLeft = x - LABEL_W + CELL_W - vw;
      if (y - HEAD_H < scroller.scrollTop) scroller.scrollTop = y - HEAD_H;
      else if (y - HEAD_H + CELL_H > scroller.scrollTop + vh) scroller.scrollTop = y - HEAD_H + CELL_H - vh;
    }
    // A scroll repaints the whole view (its scroll event); else only this cell changes.
    touch(i);
  }
  const activeFromSelection = () => {
    const cell = selected !== null && selected !== undefined ? cellOfRank.get(selected) : undefined;
    if (cell === undefined) return { r: 0, c: 0 };
    const cellKey = [...grid].find(([, i]) => i === cell);
    return cellKey ? { r: Math.floor(cellKey[0] / cols), c: cellKey[0] % cols } : { r: 0, c: 0 };
  };
  // Focus by a click must not scroll the matrix under the pointer before the click lands: only
  // a focus from the keyboard brings the active cell into view.
  let pressed = false;
  scroller.addEventListener('mousedown', () => { pressed = true; });
  scroller.addEventListener('mouseup', () => { pressed = false; });
  scroller.addEventListener('focus', () => {
    focused = true;
    const at = active || activeFromSelection();
    setActive(at.r, at.c, !pressed);
  });
  scroller.addEventListener('blur', () => {
    focused = false;
    if (active) touch(grid.get(active.r * cols + active.c));
  });
  const page = () => Math.max(1, Math.floor((scroller.clientWidth - LABEL_W) / CELL_W) - 1);
  scroller.addEventListener('keydown', (ev) => {
    if (!active) active = activeFromSelection();
    let { r, c } = active;
    switch (ev.key) {
      case 'ArrowLeft': c = Math.max(0, c - 1); break;
      case 'ArrowRight': c = Math.min(cols - 1, c + 1); break;
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'ArrowDown': r = Math.min(rows - 1, r + 1); break;
      case 'Home': c = 0; if (ev.ctrlKey) r = 0; break;
      case 'End': c = cols - 1; if (ev.ctrlKey) r = rows - 1; break;
      case 'PageUp': c = Math.max(0, c - page()); break;
      case 'PageDown': c = Math.min(cols - 1, c + page()); break;
      case 'Enter':
      case ' ': {
        ev.preventDefault();
        const i = grid.get(r * cols + c);
        if (i !== undefined) open(i);
        return;
      }
      default: return;
    }
    ev.preventDefault();
    setActive(r, c, true);
  });

  const resize = new ResizeObserver(() => schedule());
  resize.observe(scroller);

  // ---- outliers, listed (a ▲ among thousands of cells is easy to miss) ----
  const flagged = [];
  summaries.forEach((r, i) => {
    if (outlierOf(i) && cellOfRank.get(i) === i) flagged.push(i);
  });
  const outlierList = flagged.length
    ? el('div', { class: 'matrix-outliers', 'data-testid': 'matrix-outliers', data: { count: flagged.length } },
        el('span', { class: 'muted', text: `${flagged.length === 1 ? 'Outlier' : `Outliers (${int(flagged.length)})`}: ` }),
        ...flagged.slice(0, OUTLIERS_LISTED).map((i) => el('button', {
          type: 'button',
          class: 'linkish',
          data: { rankIndex: i },
          text: `${rankLabel(summaries[i])} ${outlierFlag(outlierOf(i))}`,
          title: describe(i).join('\n'),
          on: { click: () => open(i) },
        })),
        flagged.length > OUTLIERS_LISTED ? el('span', { class: 'muted', text: ` … and ${int(flagged.length - OUTLIERS_LISTED)} more` }) : null)
    : null;

  const node = el('div', { class: 'matrix-block' }, view, outlierList);

  function update(s) {
    if (s.rank === selected && s.cmp === compared) return;
    for (const i of [selected, compared, s.rank, s.cmp]) touch(i);
    selected = s.rank;
    compared = s.cmp;
    scroller.dataset.selectedRankIndex = String(selected ?? -1);
    if (active) a11yCell.setAttribute('aria-selected', String(grid.get(active.r * cols + active.c) === selected));
  }
  return { node, update };
}
