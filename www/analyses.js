// The analysis families' page modules. Each entry is
//   { id, title(inventory) → tab label, accepts(inventory) → bool, mount(panel, ctx) → { unmount?() } }
// where ctx = { client, inventory, setStatus(state, text), showProgress(label, done, total),
// hideProgress(), showErrors(list) }. A module that accepts the inventory gets a tab.
import { somasPage } from './somas/page.js';

export const analyses = [somasPage];
