// Export: somas_tool's file set exactly as `memlens somas --out DIR` writes it (the same Rust
// code writes both), as one zip or file by file, with the queries of the current selection; and
// PNGs of the charts.
import { el } from '../ui/dom.js';
import { download, downloadCanvas } from '../ui/download.js';
import { section, button } from './common.js';
import { plural } from '../format.js';

export class ExportView {
  constructor(app, parent, charts) {
    this.app = app;
    this.charts = charts;
    const { section: s, body, tools } = section('export', 'Export', {
      help: "somas_tool's output files (graph_*.csv, overview.txt, the InUseMemory and TotalMemory PNGs, mem_frame CSVs, query and conflict files) as memlens somas --out writes them",
    });
    this.section = s;
    parent.append(s);
    this.sel = app.store.get();
    const stem = (app.summary.file.split('/').pop() || 'somas').replace(/\.[^.]*$/, '');
    this.zipName = `${stem}.memlens.zip`;
    this.withQueries = el('input', { type: 'checkbox', checked: true, data: { testid: 'somas-export-queries' }, on: { change: () => this.refresh() } });
    this.zipButton = button('Download all (zip)', () => this.downloadZip(), { class: 'primary', title: 'e', data: { testid: 'somas-export-zip' } });
    tools.append(
      this.zipButton,
      button('summary.json', () => this.downloadSummary(), { title: 'the summary with the queries, as memlens somas FILE --json prints it', data: { testid: 'somas-export-summary' } }),
      // A chart that is not drawn (a dump without nodes, or without a layout) has no PNG to save.
      button('Curves PNG', () => downloadCanvas(charts.curves.plot.canvas, 'CurvesView.png'), { hidden: !app.summary.nodes }),
      button('Layout PNG', () => charts.layout.plot && downloadCanvas(charts.layout.plot.canvas, 'TensorLayout.png'), { hidden: !charts.layout.plot }),
      button('Frame PNG', () => downloadCanvas(charts.frame.canvas, 'MemoryFrame.png'), { hidden: !app.summary.nodes }),
    );
    this.what = el('p', { class: 'muted' });
    this.list = el('ul', { class: 'somas-files', data: { testid: 'somas-export-files' } });
    this.error = el('div', { class: 'error-state', hidden: true });
    body.append(el('label', {}, this.withQueries, ' include the queries of the current selection (node, tensor, address or range), as --node / --tensor / --address / --address-range do'), this.what, this.error, this.list);
    let timer = null;
    app.store.on((st) => {
      this.sel = st;
      clearTimeout(timer);
      timer = setTimeout(() => this.refresh(), 200);
    });
  }

  start() {
    this.refresh();
  }

  /** The queries to include, as the CLI flags would give them (a node only if one has that index). */
  async request() {
    if (!this.withQueries.checked) return {};
    const s = this.sel;
    const r = {};
    if (s.node !== null && (await this.app.call('nodeAt', { index: s.node })).name !== null) r.node = s.node;
    if (s.tensor !== null) r.tensor = s.tensor;
    if (s.range && s.range.single) r.address = s.range.start;
    else if (s.range) r.range = [s.range.start, s.range.end];
    return r;
  }

  flags(r) {
    const f = [];
    if (r.node !== undefined) f.push(`--node ${r.node}`);
    if (r.tensor !== undefined) f.push(`--tensor ${r.tensor}`);
    if (r.address) f.push(`--address ${r.address}`);
    if (r.range) f.push(`--address-range ${r.range[0]}-${r.range[1]}`);
    return f.join(' ');
  }

  async refresh() {
    const request = await this.request();
    try {
      const paths = await this.app.call('exportList', { request });
      this.error.hidden = true;
      const flags = this.flags(request);
      this.what.textContent = `${plural(paths.length, 'file')}, as memlens somas FILE${flags ? ` ${flags}` : ''} --out DIR writes them`;
      this.list.replaceChildren(
        ...paths.map((p) =>
          el('li', {}, button(p, () => this.downloadFile(request, p), { class: 'link', title: `download ${p}`, data: { testid: 'somas-export-file', path: p } })),
        ),
      );
    } catch (err) {
      this.error.hidden = false;
      this.error.textContent = err.message;
    }
  }

  async downloadZip() {
    const bytes = await this.app.call('exportZip', { request: await this.request() });
    download(this.zipName, bytes, 'application/zip');
  }

  async downloadSummary() {
    const text = await this.app.call('summaryJson', { request: await this.request() });
    download(`${this.zipName.replace(/\.zip$/, '')}.summary.json`, text, 'application/json');
  }

  async downloadFile(request, path) {
    const bytes = await this.app.call('exportFile', { request, path });
    const type = path.endsWith('.svg') ? 'image/svg+xml'
      : path.endsWith('.png') ? 'image/png'
      : path.endsWith('.csv') ? 'text/csv' : 'text/plain;charset=utf-8';
    download(path.replace(/\//g, '_'), bytes, type);
  }
}
