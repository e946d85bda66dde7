// View 8, export: the CSV files `memlens profiler --out` writes (byte for byte, made by the same
// Rust code in the worker), and PNG images of the charts. Files are saved through blob: URLs;
// nothing leaves the page.
import { el } from '../ui/dom.js';
import { download, downloadCanvas } from '../ui/download.js';
import { bytes } from '../format.js';
import { section } from './common.js';

const CSVS = [
  ['memory_events.csv', 'One row per allocation of every rank: RL-Insight’s 12 columns with its meaning and types, then released, release times, stream, source, stack source, user frame, step, run folder.'],
  ['rank_summary.csv', 'One row per rank: rows, call-stack coverage, peaks, fragmentation, unreleased.'],
  ['peak_attribution.csv', 'The live set at each rank’s peak, by top user frame.'],
  ['step_peaks.csv', 'The peak of every ProfilerStep of every rank.'],
  ['records_aside.csv', 'One row per rank whose memory_record.csv was set aside for covering another time range than its allocations: its range, record count and peaks (only the header when none was).'],
  ['summary.json', 'The job summary exactly as “memlens profiler --json” prints it: ranks, peaks, coverage, warnings.'],
];

/** The job-wide exports, each with its media type: `[name, type]`. */
export const JOB_EXPORTS = CSVS.map(([name]) => [name, name.endsWith('.json') ? 'application/json' : 'text/csv;charset=utf-8']);

/**
 * The export view. `client.call('ascend.export', { name })` answers the file's bytes, or a Blob
 * (a pooled tab keeps the job's exports as blobs once written).
 */
export function exportView({ client, charts }) {
  const { node, body } = section(8, 'export', 'Export', {
    help: 'The CSV files are identical to what “memlens profiler --out DIR” writes for the same files, summary.json to what “memlens profiler --json” prints.',
  });
  const status = el('span', { class: 'muted export-status', role: 'status' });
  const csvList = el('div', { class: 'export-list' });
  for (const [name, what] of CSVS) {
    const id = name.replace(/[._]/g, '-').replace(/-csv$/, '');
    const type = JOB_EXPORTS.find(([n]) => n === name)[1];
    csvList.append(el('div', { class: 'export-item' },
      el('button', {
        type: 'button',
        'data-testid': `export-${id}`,
        text: name,
        on: {
          click: async () => {
            status.textContent = `preparing ${name}…`;
            try {
              const out = await client.call('ascend.export', { name });
              const blob = out instanceof Blob ? out : new Blob([out], { type });
              download(name, blob);
              status.textContent = `${name}: ${bytes(blob.size)}`;
            } catch (err) {
              status.textContent = `${name} failed: ${err.message}`;
            }
          },
        },
      }),
      el('span', { class: 'muted', text: what })));
  }
  const pngList = el('div', { class: 'export-list row' });
  for (const c of charts) {
    pngList.append(el('div', { class: 'export-item' },
      el('button', {
        type: 'button',
        'data-testid': `png-${c.id}`,
        text: `${c.title} (PNG)`,
        on: {
          click: async () => {
            try {
              await downloadCanvas(c.canvas(), c.file());
              status.textContent = `${c.file()} saved`;
            } catch (err) {
              status.textContent = `${c.title}: ${err.message}`;
            }
          },
        },
      })));
  }
  body.append(el('h3', { text: 'Data (whole job)' }), csvList, el('h3', { text: 'Charts (selected rank)' }), pngList, status);
  return { node, update() {}, focus: () => (node.querySelector('button') || node).focus() };
}
