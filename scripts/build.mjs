// Builds what the page needs, skipping every output that is already newer than its inputs:
//   www/pkg/          single-threaded wasm (stable toolchain, --target web)
//   www/pkg-threads/  threaded wasm with wasm-bindgen-rayon (nightly + build-std, shared memory)
//   www/coi-serviceworker.js, www/examples/
//   dist/memlens.html one self-contained file for file:// (single-threaded build inlined)
import { run, root, mtime, step, existsSync } from './util.mjs';
import { rmSync, mkdirSync, writeFileSync, readFileSync, copyFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const WASM = 'wasm32-unknown-unknown';
const r = (...p) => path.join(root, ...p);

/** Newest modification time under the given files/folders. */
function newest(paths) {
  let t = 0;
  const visit = (p) => {
    if (!existsSync(p)) return;
    const st = statSync(p);
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(path.join(p, n));
    else t = Math.max(t, st.mtimeMs);
  };
  for (const p of paths) visit(p);
  return t;
}

// Maximum memory of the threaded build's shared memory: the wasm32 limit, 4 GiB. Chromium reserves
// it as address space only; pages are committed as the heap grows.
const MAX_MEMORY = 4 * 1024 * 1024 * 1024;

// Both engines are built with WebAssembly SIMD (128-bit vectors): the JSON structural scan has a
// SIMD128 kernel, and LLVM vectorises other loops with it. Chrome/Edge 91, Firefox 89 and Safari
// 16.4 run it; the page's module workers already need Firefox 114, so no scalar build is kept.
const SIMD_RUSTFLAGS = '-C target-feature=+simd128';

const THREAD_RUSTFLAGS = [
  SIMD_RUSTFLAGS,
  '-C target-feature=+atomics,+bulk-memory',
  '-C link-arg=--shared-memory',
  `-C link-arg=--max-memory=${MAX_MEMORY}`,
  '-C link-arg=--import-memory',
  '-C link-arg=--export=__wasm_init_tls',
  '-C link-arg=--export=__tls_size',
  '-C link-arg=--export=__tls_align',
  '-C link-arg=--export=__tls_base',
  '-C link-arg=--export=__heap_base',
].join(' ');

const WASM_OPT_FEATURES = [
  '--enable-bulk-memory',
  '--enable-threads',
  '--enable-mutable-globals',
  '--enable-nontrapping-float-to-int',
  '--enable-sign-ext',
  '--enable-reference-types',
  '--enable-multivalue',
  '--enable-simd',
];

function cargoWasm({ threads }) {
  const targetDir = r('target', threads ? 'wasm-threads' : 'wasm-single');
  const args = threads
    ? ['+nightly', 'build', '--release', '--lib', '--target', WASM, '--features', 'threads',
       '--target-dir', targetDir, '-Z', 'build-std=panic_abort,std']
    : ['build', '--release', '--lib', '--target', WASM, '--target-dir', targetDir];
  const env = { ...process.env };
  env.RUSTFLAGS = threads ? THREAD_RUSTFLAGS : SIMD_RUSTFLAGS;
  run('cargo', args, { env });
  return path.join(targetDir, WASM, 'release', 'memlens.wasm');
}

/** wasm-bindgen + wasm-opt into `outDir`, unless it is already up to date. */
function bindgen(wasmFile, outDir, target = 'web') {
  const stamp = path.join(outDir, '.built-from');
  const key = `${mtime(wasmFile)} ${statSync(wasmFile).size}`;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === key) return false;
  // wasm-bindgen never cleans its output folder.
  rmSync(outDir, { recursive: true, force: true });
  run('wasm-bindgen', ['--target', target, '--no-typescript', '--remove-name-section', '--out-dir', outDir, wasmFile]);
  const bg = path.join(outDir, 'memlens_bg.wasm');
  run(r('node_modules', 'binaryen', 'bin', 'wasm-opt'), ['-O3', ...WASM_OPT_FEATURES, bg, '-o', bg]);
  writeFileSync(stamp, key);
  return true;
}

function copyIfNewer(from, to) {
  if (mtime(to) >= mtime(from)) return;
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(from, to);
}

/**
 * Copies the bundled examples (fixtures/examples/<id>/…, titles in fixtures/examples/examples.json)
 * into www/examples with a manifest listing their files.
 */
function examples() {
  const src = r('fixtures', 'examples');
  const dest = r('www', 'examples');
  const index = path.join(src, 'examples.json');
  if (!existsSync(index)) return;
  if (mtime(path.join(dest, 'manifest.json')) >= newest([src])) return;
  rmSync(dest, { recursive: true, force: true });
  const manifest = [];
  for (const meta of JSON.parse(readFileSync(index, 'utf8'))) {
    const dir = path.join(src, meta.id);
    if (!existsSync(dir)) continue;
    const files = [];
    const walk = (rel) => {
      for (const n of readdirSync(path.join(dir, rel)).sort()) {
        const relPath = rel ? `${rel}/${n}` : n;
        const full = path.join(dir, relPath);
        if (statSync(full).isDirectory()) walk(relPath);
        else {
          files.push(relPath);
          mkdirSync(path.dirname(path.join(dest, meta.id, relPath)), { recursive: true });
          copyFileSync(full, path.join(dest, meta.id, relPath));
        }
      }
    };
    walk('');
    manifest.push({ id: meta.id, title: meta.title, description: meta.description, files });
  }
  mkdirSync(dest, { recursive: true });
  writeFileSync(path.join(dest, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

/** dist/memlens.html: the page, its worker and the single-threaded wasm in one file. */
async function offline() {
  const out = r('dist', 'memlens.html');
  const inputs = [r('www'), r('scripts', 'build.mjs')];
  if (mtime(out) >= newest(inputs)) return false;
  const esbuild = await import('esbuild');
  const examplesDir = r('www', 'examples');
  // Swap the two modules that fetch from the server for versions with the data inlined.
  const inline = {
    name: 'offline',
    setup(b) {
      b.onResolve({ filter: /[/]spawn-worker\.js$/ }, () => ({ path: 'spawn-worker', namespace: 'offline' }));
      b.onResolve({ filter: /[/]examples-source\.js$/ }, () => ({ path: 'examples', namespace: 'offline' }));
      b.onLoad({ filter: /^spawn-worker$/, namespace: 'offline' }, () => ({
        contents: `const SRC = ${JSON.stringify(workerBundle)};
export function spawnWorker() {
  const url = URL.createObjectURL(new Blob([SRC], { type: 'text/javascript' }));
  return new Worker(url, { name: 'memlens' });
}
export function nativePage() { return false; }`,
        loader: 'js',
      }));
      b.onLoad({ filter: /^examples$/, namespace: 'offline' }, () => {
        const manifest = existsSync(path.join(examplesDir, 'manifest.json'))
          ? JSON.parse(readFileSync(path.join(examplesDir, 'manifest.json'), 'utf8'))
          : [];
        const data = {};
        for (const ex of manifest)
          for (const f of ex.files)
            data[`${ex.id}/${f}`] = readFileSync(path.join(examplesDir, ex.id, f)).toString('base64');
        return {
          contents: `const MANIFEST = ${JSON.stringify(manifest)};
const DATA = ${JSON.stringify(data)};
export async function loadManifest() { return MANIFEST; }
export async function loadExampleFile(id, file) {
  const b64 = DATA[id + '/' + file];
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Blob([bytes]);
}`,
          loader: 'js',
        };
      });
    },
  };
  const common = { bundle: true, format: 'iife', write: false, target: 'es2022', logLevel: 'warning', legalComments: 'none' };
  const w = await esbuild.build({
    ...common,
    entryPoints: [r('www', 'worker-offline.js')],
    loader: { '.wasm': 'binary' },
    // import.meta.url is only used by the glue when no module bytes are passed; they always are.
    define: { 'import.meta.url': '"file:///memlens/"' },
  });
  const workerBundle = w.outputFiles[0].text;
  const app = await esbuild.build({ ...common, entryPoints: [r('www', 'app.js')], plugins: [inline] });
  let html = readFileSync(r('www', 'index.html'), 'utf8');
  const csp =
    "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob:; " +
    "style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; form-action 'none'; base-uri 'none'";
  html = html
    .replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, `<meta http-equiv="Content-Security-Policy" content="${csp}">`)
    .replace(/<link rel="icon" href="favicon.svg" type="image\/svg\+xml">/, () =>
      `<link rel="icon" href="data:image/svg+xml;base64,${readFileSync(r('www', 'favicon.svg')).toString('base64')}">`)
    .replace(/<link rel="stylesheet" href="([^"]+)">/g, (_, href) => `<style>\n${readFileSync(r('www', href), 'utf8')}\n</style>`)
    .replace(/<script src="coi-serviceworker.js"><\/script>\n?/, '')
    .replace(/<script type="module" src="app.js"><\/script>/, () => `<script>\n${app.outputFiles[0].text.replace(/<\/script/gi, '<\\/script')}\n</script>`);
  if (html.includes('src="app.js"') || /<link rel="stylesheet"/.test(html) || html.includes('href="favicon.svg"')) throw new Error('offline: index.html markers not found');
  mkdirSync(r('dist'), { recursive: true });
  writeFileSync(out, html);
  return true;
}

/** Builds everything that is stale. */
export async function build({ threads = true, single = true, offlineFile = true } = {}) {
  if (single) {
    await step('wasm, single-threaded → www/pkg', () => {
      const wasm = cargoWasm({ threads: false });
      bindgen(wasm, r('www', 'pkg'));
    });
  }
  if (threads) {
    await step('wasm, threaded (nightly) → www/pkg-threads', () => {
      const wasm = cargoWasm({ threads: true });
      bindgen(wasm, r('www', 'pkg-threads'));
    });
  }
  copyIfNewer(r('node_modules', 'coi-serviceworker', 'coi-serviceworker.min.js'), r('www', 'coi-serviceworker.js'));
  examples();
  if (offlineFile) await step('offline page → dist/memlens.html', offline);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { main } = await import('./util.mjs');
  main(async () => {
    const { setup } = await import('./setup.mjs');
    await setup();
    await build();
  });
}
