// The SOMAS requests of the analysis worker: one open plan (a wasm SomasView) per drop, and the
// questions the SOMAS views ask about it. Answers are JSON-ready objects or typed arrays; every
// figure is computed in Rust.
import { rasterize } from '../ui/raster.js';

export default function somasRequests(ctx) {
  let view = null;
  let rectsCache = [];
  const close = () => {
    if (view) view.free();
    view = null;
    rectsCache = [];
  };
  ctx.onReset(close);
  const need = () => {
    if (!view) throw new Error('no SOMAS dump is open');
    return view;
  };
  // Everything but the typed-array answers is one request to the core's view model.
  const ask = (method, params = {}) => JSON.parse(need().request(JSON.stringify({ method, params })));

  return {
    /** Opens `dump` (a path of the drop) with the optional `taskInfo` path; returns the summary. */
    'somas.open'({ dump, taskInfo }, progress) {
      close();
      const t0 = performance.now();
      view = ctx.mod().SomasView.open(ctx.session(), dump, taskInfo || undefined, (done, total, label) =>
        progress(done, total, label),
      );
      return { summary: ask('summary'), info: ask('info'), ms: performance.now() - t0 };
    },
    'somas.curves'({ x0, x1, columns }) {
      return ctx.transfer(need().curves(x0, x1, columns));
    },
    /** The layout for a viewport, painted: `{rgba, width, height, visible, individual, merged, runs, ms}`. */
    'somas.rects'(params) {
      const { x0, x1, y0, y1, width, height, maxRects, fill, border } = params;
      // The whole-plan view (after a reset) costs the most and comes back often: keep the last
      // few answers. The pixels are copied out, since the answer's own buffer moves to the page.
      const key = JSON.stringify(params);
      const hit = rectsCache.find((e) => e.key === key);
      if (hit) return ctx.transfer({ ...hit.answer, rgba: hit.answer.rgba.slice(), ms: 0, rasterMs: 0, cached: true });
      const t0 = performance.now();
      const r = need().rects(x0, x1, y0, y1, width, height, maxRects);
      const ms = performance.now() - t0;
      const rgba = rasterize(r, width, height, fill, border);
      const answer = {
        rgba,
        width,
        height,
        visible: r.visible,
        individual: r.individual,
        merged: r.merged,
        runs: r.x.length - r.individual,
        ms,
        rasterMs: performance.now() - t0 - ms,
      };
      if (ms > 20) {
        rectsCache.unshift({ key, answer: { ...answer, rgba: rgba.slice() } });
        rectsCache.length = Math.min(rectsCache.length, 3);
      }
      return ctx.transfer(answer);
    },
    'somas.hit'({ x, y, dx, dy }) {
      return ask('hit', { x, y, dx, dy });
    },
    'somas.tensor'({ id }) {
      return ask('tensor', { id });
    },
    'somas.nodeAt'({ index }) {
      return ask('nodeAt', { index });
    },
    'somas.frame'({ index }) {
      return ctx.transfer(need().frame(index));
    },
    'somas.search'({ text }) {
      return ask('search', { text });
    },
    'somas.nodeQuery'({ index }) {
      return ask('nodeQuery', { index });
    },
    'somas.tensorQuery'({ id }) {
      return ask('tensorQuery', { id });
    },
    'somas.tensorLead'({ id }) {
      return ask('tensorLead', { id });
    },
    'somas.addressQuery'({ address }) {
      return ask('addressQuery', { address });
    },
    'somas.rangeQuery'({ start, end }) {
      return ask('rangeQuery', { start, end });
    },
    'somas.table'({ view, table, request }) {
      return ask('table', { view, table, request: request || {} });
    },
    'somas.page'({ view, offset, limit }) {
      return ask('page', { view, offset, limit });
    },
    'somas.position'({ view, key }) {
      return ask('position', { view, key });
    },
    'somas.exportList'({ request }) {
      return ask('exportList', { request: request || {} });
    },
    'somas.exportZip'({ request }) {
      return ctx.transfer(need().exportZip(JSON.stringify(request || {})));
    },
    'somas.summaryJson'({ request }) {
      // The text as is: it is the download, byte for byte what the CLI prints.
      return need().request(JSON.stringify({ method: 'summaryJson', params: { request: request || {} } }));
    },
    'somas.exportFile'({ request, path }) {
      return ctx.transfer(need().exportFile(JSON.stringify(request || {}), path));
    },
  };
}
