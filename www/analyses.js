// The analysis families' page modules. Each entry is
//   { id, title(inventory) → tab label, accepts(inventory) → bool, hashKeys,
//     mount(panel, ctx) → { unmount?() } }
// where ctx = { client, inventory, setStatus(state, text), showProgress(label, done, total, numbers?),
// hideProgress(), showErrors(list), restore, … }. `hashKeys`: every key the tab keeps its view
// state under in the URL hash, from the one list the tab itself uses. The page clears them all
// before it mounts the tabs of a drop that starts afresh, and before a link from the Compare mode
// writes the place it opens (app.js); the tabs only read them. `restore`: the hash holds view
// state for these tabs (a reload, or the place a Compare link wrote), not a cleared slate. A
// module that accepts the inventory gets a tab. The handle may carry `ready`: a promise the page
// waits for before it reports `ready` (a rejection is shown as an error).
import { profiler } from './profiler/index.js';
import { somasPage } from './somas/page.js';
import { snapshotPage } from './snapshot/index.js';
import { jobSummaryPage } from './jobsummary/index.js';

export const analyses = [profiler, somasPage, snapshotPage, jobSummaryPage];
