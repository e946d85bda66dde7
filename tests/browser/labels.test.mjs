// Labels agree with each other and with the data: a MindSpore run folder (`*_ascend_ms`) is named
// a MindSpore run on the Inputs tab, a torch_npu one (`*_ascend_pt`) a torch_npu run; a SOMAS dump
// whose first 64 KiB hold no tensor line (a large graph's parameters fill them) is named with the
// same version in the dump selector, the overview and the Inputs tab — the version the CLI reads
// from the whole dump. The expectations come from the folder names and from the CLI's JSON of the same files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');

let server;
let tmp;
let padded;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-labels-'));
  const gen = path.join(tmp, 'gen.ir');
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '600', '--seed', '3', '--out', gen], { stdio: 'ignore' });
  // 2,500 more parameters (unused: they only add static memory) push the first tensor line past
  // the 64 KiB the classifier reads.
  const lines = readFileSync(gen, 'utf8').split('\n');
  const params = lines.map((l, i) => (/^%\d+P\t/.test(l) ? i : -1)).filter((i) => i >= 0);
  const pad = Array.from({ length: 2500 }, (_, k) => `%${params.length + k}P\t#512S\tpad/block${k}.weight\t0`);
  lines.splice(params[params.length - 1] + 1, 0, ...pad);
  padded = path.join(tmp, 'Ascend_somas_tensor_offset_1.ir');
  writeFileSync(padded, lines.join('\n'));
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('run folders are named by the framework their folder name says', async () => {
  const files = [
    ...filesUnder(path.join(TEXT, 'rank0_ascend_pt')).map((f) => ({ ...f, path: `job/rank0_ascend_ms/${f.path.split('/').slice(1).join('/')}` })),
    ...filesUnder(path.join(TEXT, 'rank1_ascend_pt')).map((f) => ({ ...f, path: `job/${f.path}` })),
  ];
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, files);
    await settled(page);
    const kinds = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid="unit"]')].map((tr) => [tr.dataset.path, tr.querySelector('.kind').textContent])));
    assert.deepEqual(kinds, { 'job/rank0_ascend_ms': 'MindSpore run', 'job/rank1_ascend_pt': 'torch_npu run' });
  } finally {
    await b.close();
  }
});

test('a SOMAS dump has one version: the selector says what the overview says', async () => {
  const inspect = JSON.parse(execFileSync(CLI, ['inspect', padded, '--json'], { encoding: 'utf8' }));
  const parsed = JSON.parse(spawnSync(CLI, ['somas', padded, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout);
  const version = parsed.format.version;
  assert.notEqual(inspect.units[0].version, version, 'the head alone cannot tell the version of this dump (else the test shows nothing)');

  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(padded).toString('base64') }]);
    await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    const option = await page.evaluate(() => {
      const s = document.querySelector('[data-testid="somas-dump"]');
      return s.options[s.selectedIndex].textContent;
    });
    const format = await page.evaluate(() => {
      const dt = [...document.querySelectorAll('.somas-facts dt')].find((d) => d.textContent === 'Format');
      return dt ? dt.nextElementSibling.textContent : null;
    });
    assert.equal(format, `somas-info ${version}`);
    assert.ok(option.includes(`somas-info ${version}`), `the selector "${option}" names ${version}`);
    // The Inputs tab, which read only the head, says the same once the whole dump is read.
    const inputs = await page.textContent('[data-testid="unit"][data-kind="somas"] [data-testid="unit-version"]');
    assert.ok(inputs.startsWith(`somas-info ${version}`), `the Inputs tab's "${inputs}" names ${version}`);
    assert.ok(!inputs.includes(inspect.units[0].version) || inspect.units[0].version === version, inputs);
  } finally {
    await b.close();
  }
});
