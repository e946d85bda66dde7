// The drop zone's list of the files `memlens serve` shares: its folders to browse and open, read
// from the engine on the page's own origin (`api/list`). Opening a folder or file hands its served
// path to the worker, whose native engine reads it where it lies. Names are set as text.
import { el } from './ui/dom.js';
import { bytes } from './format.js';

/** Shows the served folders in `box`; `open(path, size)` loads a picked path. */
export async function showServed(box, open) {
  const list = async (path) => {
    const r = await fetch(path ? `api/list?path=${encodeURIComponent(path)}` : 'api/list', { cache: 'no-store' });
    const text = await r.text();
    if (!r.ok) throw new Error(text || `HTTP ${r.status}`);
    return JSON.parse(text).entries;
  };
  const show = async (path) => {
    box.dataset.state = 'loading';
    let entries;
    try {
      entries = await list(path);
    } catch (err) {
      box.dataset.state = 'error';
      box.replaceChildren(el('p', { class: 'served-error', text: `The served files could not be listed: ${err.message}` }));
      return;
    }
    const parts = path ? path.split('/') : [];
    const crumbs = [el('button', { type: 'button', class: 'link', text: 'served folders', data: { testid: 'served-crumb' }, on: { click: () => show('') } })];
    parts.forEach((p, i) => {
      const to = parts.slice(0, i + 1).join('/');
      crumbs.push(el('span', { text: ' / ' }), el('button', { type: 'button', class: 'link', text: p, data: { testid: 'served-crumb' }, on: { click: () => show(to) } }));
    });
    const rows = entries.map((e) => {
      const full = path ? `${path}/${e.name}` : e.name;
      const name =
        e.kind === 'dir'
          ? el('button', { type: 'button', class: 'link', text: `${e.name}/`, title: `Show what ${full} holds`, on: { click: () => show(full) } })
          : el('span', { text: e.name });
      return el('li', { data: { testid: 'served-entry', path: full, kind: e.kind } }, [
        name,
        el('span', { class: 'served-size', text: e.kind === 'dir' ? '' : bytes(e.size) }),
        el('button', { type: 'button', text: 'Open', title: `Analyse ${full} with the native engine`, data: { testid: 'served-open' }, on: { click: () => open(full, e.size) } }),
      ]);
    });
    box.replaceChildren(
      el('p', { class: 'served-title', text: 'Files on the machine running memlens serve (analysed there, nothing is uploaded):' }),
      el('div', { class: 'served-path' }, crumbs),
      rows.length ? el('ul', { class: 'served-list' }, rows) : el('p', { class: 'served-empty', text: 'This folder is empty.' }),
    );
    box.dataset.state = 'ready';
    box.dataset.path = path;
  };
  box.hidden = false;
  await show('');
}
