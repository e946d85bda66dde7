// Building DOM nodes without ever interpreting text as HTML: every string goes through textContent
// or an attribute, so names from user files cannot inject markup or script.

/**
 * el('div', { class: 'x', text: 'hello', title: 't', data: { id: 3 }, on: { click: fn } }, ...children)
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = String(v);
    else if (k === 'data') for (const [dk, dv] of Object.entries(v)) node.dataset[dk] = String(dv);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (k === 'style') Object.assign(node.style, v);
    else if (k in node && typeof node[k] !== 'function' && k !== 'list' && k !== 'form') node[k] = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** Removes all children of `node`. */
export function clear(node) {
  node.replaceChildren();
  return node;
}

// The page's colours are custom properties on the root that change only with the colour scheme,
// so each is read once per scheme: a read of computed style in a view's update lays out every
// change made before it in that task (a selection in a job's overview spent ~8 ms on such reads).
const vars = new Map();
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => vars.clear());

/** The current value of a CSS custom property (e.g. '--accent') on the root element. */
export function cssVar(name) {
  let v = vars.get(name);
  if (v === undefined) {
    v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    // A style sheet still loading defines nothing yet: read again next time.
    if (v) vars.set(name, v);
  }
  return v;
}
