// A rank without figures said for what it is, the same in every view and path: a rank whose only
// file was refused, read by a pool of readers (`?workers=2`) or by one worker (`?workers=1`), is
// the same row in the rank table (the word "refused" and dashes, not zeros, with the core's
// sentence in its titles) and the same panel when selected; the job summary of the same job lists
// it under "1 rank without figures" in those words, and a rank whose task failed where it ran
// (a summary can carry that) in its own. The expectations are the CLI's `--json` for the same
// folders (`no_data.says`, which its table prints under the rank too).
//
// On main (45f92bb) one worker drew the refused rank with zeros (0, 0 B) and the pool drew it
// "failed" with dashes and the panel "rollout · rank 2 was not read"; the summary's panel said
// "1 rank failed — Its analysis failed where it ran" for it while the totals said "1 file
// rejected".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles, foreignRequests } from './harness.mjs';

let server;
let tmp;
let want;
let summaryText;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-no-figures-'));
  // Five ranks; the rollout rank's only memory file (its db export) is refused.
  cpSync(path.join(root, 'fixtures', 'classify', 'job'), path.join(tmp, 'job'), { recursive: true });
  const r = spawnSync(CLI, ['profiler', 'job', '--json', '-q', '--summary', 'job.memlens.json'], { cwd: tmp, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 2, r.stderr);
  want = JSON.parse(r.stdout);
  summaryText = readFileSync(path.join(tmp, 'job.memlens.json'), 'utf8');
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The CLI's rank of `role`. */
const cliRank = (role) => want.ranks.find((r) => r.role === role);

async function open(search, files) {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  const page = await b.page();
  await page.goto(server.url + search);
  await engineThreads(page);
  await dropFiles(page, files);
  return { b, page, state: await settled(page, 120000) };
}

/** What the rank table in `scope` shows of the row of `role`'s rank. */
function tableRow(page, scope, role) {
  return page.$eval(`${scope} [data-testid="rank-row"][data-role="${role}"]`, (row) => ({
    status: row.dataset.status,
    noData: row.dataset.noData,
    badge: row.querySelector('[data-testid="rank-failed"]')?.textContent ?? null,
    peak: row.querySelector('[data-testid="rank-failed-peak"]')?.textContent ?? null,
    cells: [...row.querySelectorAll('.vt-cell')].slice(3).map((c) => [c.textContent, c.title]),
  }));
}

test('a rank whose only file was refused: the same row and panel read by a pool or by one worker, in the CLI\'s words', async () => {
  const rollout = cliRank('rollout');
  assert.equal(rollout.no_data.kind, 'refused');
  const says = `no figures: ${rollout.no_data.says}`;
  // The file is named with the place its error gives (the db header's byte), as the error's own
  // line among the warnings names it (before, the place was only in the warnings).
  const error = want.warnings.find((w) => w.severity === 'error');
  assert.match(error.file, /^job\/rollout\/.*\.db$/);
  assert.equal(says, `no figures: its file was refused: ${error.file} (byte ${error.byte}): ${error.message}`);
  const seen = [];
  for (const search of ['?workers=2', '?workers=1']) {
    const { b, page } = await open(search, filesUnder(path.join(tmp, 'job')));
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-workers'), search === '?workers=2' ? '2' : null, search);
      const row = await tableRow(page, '#panel-ascend', 'rollout');
      assert.deepEqual([row.status, row.badge, row.peak, row.noData], ['error', 'refused', '✕ refused', 'refused'], `${search}: ${JSON.stringify(row)}`);
      // No figure reads as a measured zero; each says why in the CLI's words.
      assert.ok(!row.cells.some(([t]) => /^0( B)?$|^0 · 0 B$/.test(t)), `${search}: ${JSON.stringify(row.cells)}`);
      assert.ok(row.cells.some(([t, title]) => t === '–' && title === says), `${search}: ${JSON.stringify(row.cells)}`);
      // The rank picker names it by the same word (on 1d3c76a it read "— not read").
      const option = await page.$$eval('[data-testid="rank-select"] option', (os) => os.map((o) => o.textContent).filter((t) => t.startsWith('rollout')));
      assert.deepEqual(option, ['rollout · rank 2 · db — refused'], search);
      // The ranks read carry no mark.
      assert.equal(await page.$$eval('#panel-ascend [data-testid="rank-failed"]', (n) => n.length), 1, search);
      // Selected, its views give way to a panel that says why, in the same words.
      await page.click('#panel-ascend [data-testid="rank-row"][data-role="rollout"]');
      await page.waitForSelector('[data-testid="ascend-rank-failed"]:not([hidden])');
      const panel = await page.$eval('[data-testid="ascend-rank-failed"]', (p) => ({
        reason: p.dataset.reason,
        title: p.querySelector('h2').textContent,
        says: p.querySelector('[data-testid="ascend-rank-failed-reason"]').textContent,
      }));
      assert.deepEqual(panel, {
        reason: 'refused',
        title: 'rollout · rank 2 · db has no figures',
        says: `${rollout.no_data.says.charAt(0).toUpperCase()}${rollout.no_data.says.slice(1)}.`,
      }, search);
      // The page's words name the place as the CLI's do (on main the panel said "….db: page size …").
      assert.ok(panel.says.includes(`${error.file} (byte ${error.byte}): `), panel.says);
      seen.push({ row, panel, option });
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
  assert.deepEqual(seen[0], seen[1]);
});

/** The panel of ranks without figures in the job summary tab. */
function summaryPanel(page) {
  return page.$eval('[data-testid="jobsummary-failed"]', (p) => ({
    kinds: p.dataset.kinds,
    title: p.querySelector('h2').textContent,
    line: p.querySelector('p.muted').textContent,
    items: [...p.querySelectorAll('li')].map((li) => [li.dataset.kind, li.querySelector('.where').textContent, li.querySelector('.msg').textContent]),
  }));
}

test('the job summary of the same job lists the refused rank in the same words, and a rank whose task failed in its own', async () => {
  const rollout = cliRank('rollout');
  const file = [{ path: 'job.memlens.json', base64: Buffer.from(summaryText).toString('base64') }];
  const { b, page, state } = await open('', file);
  try {
    assert.equal(state, 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="jobsummary"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    assert.deepEqual(await summaryPanel(page), {
      kinds: 'refused:1',
      title: '1 rank without figures',
      line: '1 rank had its files refused, so the summary has no figures for it; the other 4 ranks are summarised in full.',
      items: [['refused', 'rollout · rank 2 · db', `no figures: ${rollout.no_data.says}`]],
    });
    // The totals above it count its file, not a failed rank.
    assert.equal(await page.textContent('[data-testid="jobsummary"] [data-metric="ascend-warnings"] .sub'), '1 file rejected');
    // Its row reads as in the torch_npu tab.
    const row = await tableRow(page, '[data-testid="jobsummary"]', 'rollout');
    assert.deepEqual([row.status, row.noData, row.badge, row.peak], ['error', 'refused', 'refused', '✕ refused']);
  } finally {
    await b.close();
  }

  // The same summary with the actor rank's task failed on its node, as an older driver wrote it
  // (no `no_data`: the page is given it from the core all the same).
  const lines = summaryText.split('\n');
  const at = lines.findIndex((l) => l.startsWith('{"role":"actor",'));
  assert.ok(at > 0);
  const actor = JSON.parse(lines[at].replace(/,$/, ''));
  delete actor.no_data;
  Object.assign(actor, { status: 'error', error: 'the worker of this task died', report: null, peak_allocated_bytes: 0, peak_reserved_bytes: 0 });
  lines[at] = JSON.stringify(actor) + (lines[at].endsWith(',') ? ',' : '');
  const failed = [{ path: 'job.memlens.json', base64: Buffer.from(lines.join('\n')).toString('base64') }];
  const again = await open('?workers=1', failed);
  try {
    assert.equal(again.state, 'ready');
    await again.page.waitForFunction(() => document.querySelector('[data-testid="jobsummary"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    assert.deepEqual(await summaryPanel(again.page), {
      kinds: 'refused:1 failed:1',
      title: '2 ranks without figures',
      line: '1 rank had its files refused; 1 rank failed where it ran, so the summary has no figures for them; the other 3 ranks are summarised in full.',
      items: [
        ['failed', 'actor · rank 1 · step 1', 'no figures: its analysis failed where it ran: the worker of this task died'],
        ['refused', 'rollout · rank 2 · db', `no figures: ${rollout.no_data.says}`],
      ],
    });
    assert.equal(await again.page.textContent('[data-testid="jobsummary"] [data-metric="ascend-warnings"] .sub'), '1 rank failed, 1 file rejected');
    const row = await tableRow(again.page, '[data-testid="jobsummary"]', 'actor');
    assert.deepEqual([row.status, row.noData, row.badge, row.peak], ['error', 'failed', 'failed', '✕ failed']);
    assert.deepEqual(again.b.consoleErrors, []);
  } finally {
    await again.b.close();
  }
});
