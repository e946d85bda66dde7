// The analysis families' page modules. Each entry is
//   { id, title(inventory) → tab label, accepts(inventory) → bool, mount(panel, ctx) → { unmount?() } }
// where ctx = { client, inventory, setStatus(state, text), showProgress(label, done, total, numbers?),
// hideProgress(), showErrors(list), restore, … } (`restore`: the tab takes its view state from the
// URL hash, else it clears its keys there: see app.js). A module that accepts the inventory gets a tab. The handle may
// carry `ready`: a promise the page waits for before it reports `ready` (a rejection is shown as an
// error).
import { profiler } from './profiler/index.js';
import { somasPage } from './somas/page.js';
import { snapshotPage } from './snapshot/index.js';
import { jobSummaryPage } from './jobsummary/index.js';

export const analyses = [profiler, somasPage, snapshotPage, jobSummaryPage];
