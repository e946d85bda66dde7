// Loads the page served by a fresh `memlens serve` the way a browser's first load does, many
// times, and counts the loads in which a request was never answered. Each load opens six
// kept-alive connections at once (Chromium's per-host limit) plus one connection that sends
// nothing (a browser's speculative preconnect), and fetches the page's files over the six, one
// request after another on each.
//
//   node scripts/stress-serve.mjs [--loads N] [--bin PATH] [--www DIR]
//
// Prints one line per stalled load and a summary `loads N, stalled S`; exits 1 when S > 0.

import { spawn } from 'node:child_process';
import net from 'node:net';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { opt } from './util.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const loads = Number(opt('--loads', '50'));
const bin = opt('--bin', path.join(root, 'target/debug/memlens'));
const www = opt('--www', path.join(root, 'www'));
// A request not answered within this time counts as a stall (local files take milliseconds).
const STALL_MS = 5000;

/** The page's files, as URL paths (what a first load asks for, and more). */
function files(dir, prefix = '') {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...files(full, `${prefix}${name}/`));
    else if (/\.(js|css|html|svg)$/.test(name)) out.push(`/${prefix}${name}`);
  }
  return out;
}

function start() {
  const child = spawn(bin, ['serve', '--port', '0', '--json', '--www', www, root], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve({ child, url: new URL(JSON.parse(line).url) });
    });
    child.on('exit', (code) => reject(new Error(`memlens serve exited with ${code}`)));
  });
}

/**
 * Sends `files` one after another over one kept-alive connection; resolves with the files not
 * answered within STALL_MS. The connection stays open (a browser keeps it for the next
 * requests) until `open` is emptied.
 */
function connection(url, files, open) {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    open.push(socket);
    let buffer = Buffer.alloc(0);
    let next = 0;
    const send = () =>
      socket.write(`GET ${files[next]} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n\r\n`);
    const finish = (unanswered) => {
      clearTimeout(timer);
      resolve(unanswered);
    };
    const timer = setTimeout(() => finish(files.slice(next)), STALL_MS);
    socket.on('connect', send);
    socket.on('error', () => finish(files.slice(next)));
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffer.subarray(0, end).toString())?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.subarray(end + 4 + length);
        if (++next === files.length) return finish([]);
        send();
      }
    });
  });
}

/** One first load: six connections at once, the page's files spread over them, one idle. */
async function load(url, paths) {
  const idle = net.connect(Number(url.port), url.hostname);
  idle.on('error', () => {});
  const open = [idle];
  const lanes = Array.from({ length: 6 }, (_, i) => paths.filter((_, j) => j % 6 === i));
  const unanswered = (await Promise.all(lanes.map((files) => connection(url, files, open)))).flat();
  for (const socket of open) socket.destroy();
  return unanswered;
}

const paths = files(www);
let stalled = 0;
for (let i = 0; i < loads; i++) {
  // A fresh server each time: the stall showed on a server's first load.
  const { child, url } = await start();
  try {
    const unanswered = await load(url, paths);
    if (unanswered.length) {
      stalled++;
      console.log(`load ${i + 1}: ${unanswered.length} unanswered: ${unanswered.join(', ')}`);
    }
  } finally {
    child.kill();
  }
}
console.log(`loads ${loads}, stalled ${stalled}`);
process.exitCode = stalled ? 1 : 0;
