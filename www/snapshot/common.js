// Small pieces the snapshot views share: the selection store (mirrored in the URL hash, numbers
// only, never names from the user's files), request coalescing, section frames, class colours.
import { el, cssVar } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { createStore as createViewStore } from '../ui/store.js';
import { plural } from '../format.js';

/** The hash keys of the selection within one snapshot file (cleared when another file opens). */
export const SELECTION_KEYS = ['n.dev', 'n.g', 'n.el', 'n.bl'];
/** Every hash key of the snapshot tab: the open file and its selection (see analyses.js). */
export const HASH_KEYS = ['n.file', ...SELECTION_KEYS];

const num = (v) => (v === undefined || v === null || v === '' || !Number.isFinite(Number(v)) ? null : Number(v));

/**
 * The selection every snapshot view shares: `device`, `group` (frame id of a group, highlighted
 * everywhere), `element` (an allocation of the timeline), `block` (a block of the allocator
 * state), restored from the hash. The page's one store (ui/store.js: `get()`, `set(patch)`,
 * `ask(keys)`), but `on(fn(state, changedKeys))` hears the changed keys as an array.
 */
export function createStore(devices) {
  const h = hash.getState();
  const dev = num(h['n.dev']);
  const store = createViewStore({
    device: devices.some((d) => d.device === dev) ? dev : devices[0].device,
    group: num(h['n.g']),
    element: num(h['n.el']),
    block: num(h['n.bl']),
  }, { toHash: (s) => ({ 'n.dev': s.device, 'n.g': s.group, 'n.el': s.element, 'n.bl': s.block }) });
  return { ...store, on: (fn) => store.on((state, changed) => fn(state, [...changed])) };
}

/** Request coalescing, shared by every view (ui/latest.js): `latest(fetch, apply, onError)`. */
export { latest } from '../ui/latest.js';

/** The keys of a pick: a click the worker answers asks the store for them (ui/store.js `ask`). */
export const PICK = ['device', 'group', 'element', 'block'];

/** A titled panel section with a toolbar; returns { section, body, tools }. */
export function section(id, title, help) {
  const tools = el('div', { class: 'toolbar' });
  const heading = el('h2', { text: title });
  if (help) heading.title = help;
  const body = el('div', { class: 'snap-body' });
  const node = el('section', { class: 'panel snap-section', id: `snap-${id}`, tabindex: '-1', 'aria-label': title, 'data-view': id },
    el('div', { class: 'panel-head' }, heading, tools), body);
  return { section: node, body, tools };
}

/** A small button. */
export function button(text, onClick, props = {}) {
  return el('button', { type: 'button', text, on: { click: onClick }, ...props });
}

/** An empty, loading or error line inside a view. */
export function stateLine(kind, text) {
  return el('div', { class: kind === 'error' ? 'error-state' : kind === 'loading' ? 'loading-state' : 'empty-state', text });
}

/** Group ids that are not frames (see the core's analysis::NONE and NO_STACK). */
export const NO_PYTHON_FRAME = 4294967295;
export const NO_STACK = 4294967294;

/** The RGBA bytes of a CSS colour, resolved by the browser. */
const probe = new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
function rgba(color) {
  probe.clearRect(0, 0, 1, 1);
  probe.fillStyle = '#000';
  probe.fillStyle = color;
  probe.fillRect(0, 0, 1, 1);
  return probe.getImageData(0, 0, 1, 1).data;
}

/**
 * Fill and border colours of classes `--{prefix}0 … --{prefix}{n-1}` as 0xAABBGGRR words for the
 * worker's raster (borders mixed with --snap-edge), read again when the colour scheme changes.
 */
const palettes = new Map();
export function palette(prefix, n) {
  if (palettes.has(prefix)) return palettes.get(prefix);
  const edge = rgba(cssVar('--snap-edge') || 'rgba(0,0,0,0.35)');
  const a = edge[3] / 255;
  const mix = (x, e) => Math.round(x * (1 - a) + e * a);
  const word = (r, g, b) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  const fill = [];
  const border = [];
  for (let c = 0; c < n; c++) {
    const [r, g, b] = rgba(cssVar(`--${prefix}${c}`) || '#888');
    fill.push(word(r, g, b));
    border.push(word(mix(r, edge[0]), mix(g, edge[1]), mix(b, edge[2])));
  }
  const p = { fill, border };
  palettes.set(prefix, p);
  return p;
}
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => palettes.clear());

/**
 * A stack's frames as tooltip lines: the user's frames (the grouping one marked ▶), or the first
 * frames when there is none; runs of one repeated frame (recursion, nested calls of one line)
 * shown once with their count; at most `n` lines.
 */
export function stackLines(stack, n = 8) {
  if (!stack.length) return ['(no stack recorded: allocated before recording began)'];
  const picked = stack.filter((f) => f.user || f.top);
  const lines = [];
  for (const f of picked.length ? picked : stack) {
    const text = `${f.filename}:${f.line} ${f.name}`;
    const last = lines[lines.length - 1];
    if (last && last.text === text) last.count += 1;
    else lines.push({ text, top: f.top, count: 1 });
  }
  const out = lines.slice(0, n).map((l) => `${l.top ? '▶ ' : '  '}${l.text}${l.count > 1 ? ` (×${l.count})` : ''}`);
  out.push(`  ${plural(stack.length, 'frame')} in all`);
  return out;
}
