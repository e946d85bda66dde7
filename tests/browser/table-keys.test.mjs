// The SOMAS and memory-snapshot tables keep their key column in view while they scroll sideways,
// as the allocation table keeps Name and Size: at 1024×700 a wide table scrolls inside its box, its
// last column comes into view and the key column (header and cells) stays where it was. The key
// columns are named here from the tools' own column orders (somas_tool's CSVs, the snapshot's
// segment list), not read from the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openSample, startServer, filesUnder, assertKeysStay, tableGeometry } from './harness.mjs';

const SNAPSHOT = path.join(root, 'fixtures', 'snapshots', 'cs336_tiny_mem_snapshot.pickle');
const SIZES = [
  { width: 1024, height: 700 },
  { width: 1440, height: 900 },
];

let server;
let tmp;
let somasDir;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-table-keys-'));
  // A dump with overwrite conflicts, so the conflicts table has rows.
  somasDir = path.join(tmp, 'somas');
  mkdirSync(somasDir);
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '300', '--seed', '5', '--inject-conflicts', '3', '--out', path.join(somasDir, 'Ascend_somas_tensor_offset_1.ir')], { stdio: 'ignore' });
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

// The hash key of the selection a SOMAS table scrolls to once its rows are in (tables.js
// `keyFor`): the peak node is selected from the start, so the nodes table scrolls to its row.
const SELECTED_BY = { nodes: 's.node', tensors: 's.tensor', conflicts: 's.pair' };

/**
 * Waits until the table inside `container` shows `table` with drawn rows and no row still waiting
 * for its data, and, when the page has a selection the table scrolls to, until that row is drawn
 * inside the table's viewport: the scroll to it comes after the first rows, and would otherwise
 * move the rows while a test measures them. With `named`, also until `container` itself names
 * `table` in its `data-table`: the snapshot tab keeps the table shown before on screen until the
 * new one's first rows are in, and names the new one then (www/snapshot/tables.js), so its tab
 * selected and rows drawn may still be the old table's (a clean clone's run under load measured
 * the peak table's `frame` column for the segments' `address`). The SOMAS tab empties its box at
 * the click, so its rows are always the table asked for.
 */
async function tableShown(page, container, table, { named = false } = {}) {
  await page.click(`${container} [data-table="${table}"]`);
  await page.waitForFunction(([sel, t, key, named]) => {
    if (named && document.querySelector(sel)?.dataset.table !== t) return false;
    const tab = document.querySelector(`${sel} [data-table="${t}"]`);
    const heads = document.querySelectorAll(`${sel} .vt-head [role="columnheader"]`).length;
    const rows = [...document.querySelectorAll(`${sel} .vt-rows .vt-row`)];
    if (!tab || tab.getAttribute('aria-selected') !== 'true' || heads === 0) return false;
    if (!rows.some((r) => r.children.length === heads && r.textContent.trim()) || rows.some((r) => r.children.length !== heads)) return false;
    if (!key || !new URLSearchParams(location.hash.slice(1)).get(key)) return true;
    const vp = document.querySelector(`${sel} .vt-viewport`).getBoundingClientRect();
    const picked = document.querySelector(`${sel} .vt-rows .vt-row.selected`)?.getBoundingClientRect();
    return !!picked && picked.top >= vp.top - 0.5 && picked.bottom <= vp.bottom + 0.5;
  }, [container, table, SELECTED_BY[table] || null, named], { timeout: 30000 });
  await page.locator(container).scrollIntoViewIfNeeded();
}

const shot = (page, container, name) => page.locator(container).screenshot({ path: path.join(SHOTS, `${name}.png`) });

for (const colorScheme of ['light', 'dark']) {
  test(`SOMAS tables (${colorScheme}): the key columns stay in view while the table scrolls sideways`, async () => {
    for (const size of SIZES) {
      const { browser: b, page } = await openSample(server, filesUnder(somasDir), { viewport: size, colorScheme, view: 'somas' });
      try {
        const box = '#somas-tables';
        // graph_tensors.csv leads with the tensor id; a conflict with its two tensors.
        for (const [table, keys] of [['tensors', ['TensorId']], ['conflicts', ['TensorA', 'TensorB']], ['nodes', ['Name']]]) {
          await tableShown(page, box, table);
          const g = await tableGeometry(page, box);
          assert.deepEqual(g.heads.slice(0, keys.length).map((h) => h.name), keys);
          if (size.width === 1024) await assertKeysStay(page, box, keys.length);
          if (table !== 'nodes') await shot(page, box, `somas-table-${table}-${size.width}-${colorScheme}`);
        }
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    }
  });

  test(`snapshot tables (${colorScheme}): the key column stays in view while the table scrolls sideways`, async () => {
    for (const size of SIZES) {
      const { browser: b, page } = await openSample(server, [{ path: path.basename(SNAPSHOT), base64: readFileSync(SNAPSHOT).toString('base64') }], { viewport: size, colorScheme, view: 'snapshot' });
      try {
        const box = '#snap-tables';
        // The segment list is the widest: eight columns, led by the segment's address.
        await tableShown(page, box, 'segments', { named: true });
        const g = await tableGeometry(page, box);
        assert.equal(g.heads[0].name, 'address');
        if (size.width === 1024) await assertKeysStay(page, box, 1);
        await shot(page, box, `snapshot-table-segments-${size.width}-${colorScheme}`);
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    }
  });
}
