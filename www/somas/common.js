// Small pieces shared by the SOMAS views: class colours, address formatting, request coalescing,
// section frames.
import { el, cssVar } from '../ui/dom.js';

/** Colours of the layout classes (see `layout_class` in the core), from somas.css so dark mode follows. */
export function classColors() {
  const out = [];
  for (let c = 0; c < 8; c++) out.push(cssVar(`--somas-c${c}`) || '#888');
  return out;
}

/** 0x-prefixed lowercase hex of a non-negative integer below 2^53 (or a BigInt). */
export function hex(n) {
  if (n === null || n === undefined) return '';
  return `0x${(typeof n === 'bigint' ? n : BigInt(Math.round(Number(n)))).toString(16)}`;
}

/** Request coalescing, shared by every view (ui/latest.js): `latest(fetch, apply, onError)`. */
export { latest } from '../ui/latest.js';

/** A titled panel section with a toolbar slot; returns { section, body, tools }. */
export function section(id, title, { testid, help } = {}) {
  const tools = el('div', { class: 'toolbar' });
  const heading = el('h2', { text: title });
  if (help) heading.title = help;
  const body = el('div', { class: 'somas-section-body' });
  const sectionEl = el(
    'section',
    { class: 'panel somas-section', id: `somas-${id}`, tabindex: '-1', 'aria-label': title, data: { view: id } },
    el('div', { class: 'panel-head' }, heading, tools),
    body,
  );
  if (testid) sectionEl.dataset.testid = testid;
  return { section: sectionEl, body, tools };
}

/** A small button. */
export function button(text, onClick, props = {}) {
  return el('button', { type: 'button', text, on: { click: onClick }, ...props });
}

/** An empty or error state line inside a view. */
export function stateLine(kind, text) {
  return el('div', { class: kind === 'error' ? 'error-state' : 'empty-state', text });
}
