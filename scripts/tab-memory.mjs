// The resident memory of a browser the benchmarks opened (Linux: /proc), sampled while a page
// works: the tab's renderer processes (the page, its workers and their WebAssembly memory live in
// them) and the browser's processes in all. Linear memory a worker has grown but not touched is
// not resident, so this is what the tab really holds, JavaScript heaps included. Counted: the
// anonymous and shared-memory resident pages (RssAnon + RssShmem), not the mapped files.
// Also the CPU time the same processes took (`browserCpu`), for the page benchmark's measure that
// load stretches less than wall time.
import { readFileSync, readdirSync } from 'node:fs';

/** Milliseconds per clock tick of /proc's CPU times (USER_HZ: 100 on Linux wherever it is exported). */
export const TICK_MS = 10;

/**
 * The fields of `/proc/PID/stat` after the command name (`pid` a number or 'self'), so that field
 * N of proc(5) is at index N − 3. The command name (field 2) may hold spaces and parentheses: the
 * fields after it follow the last ')'. Throws when the process is gone.
 */
export function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * pid → { ppid, cmdline, rss (bytes: anonymous + shared memory), cpuMs (user + system time of the
 * process and of its children it has waited for, ms) } of every process still readable.
 */
function processes() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const rest = statFields(name);
      const ppid = Number(rest[1]);
      // utime, stime, cutime, cstime (fields 14–17): every thread's time, ended ones included,
      // and that of children the process reaped (a renderer ended before the sample).
      const cpuMs = (Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) * TICK_MS;
      // Anonymous and shared-memory pages only: the pages of the browser's files (its code,
      // fonts), shared by every process, are left out.
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const kb = (field) => Number((status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
      const rss = (kb('RssAnon') + kb('RssShmem')) * 1024;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.set(Number(name), { ppid, rss, cmdline, cpuMs });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/** The processes of the browser whose profile folder is `dir` (its own and their descendants'): pids in `procs`. */
function browserFamily(procs, dir) {
  const roots = [...procs].filter(([, p]) => p.cmdline.includes(`--user-data-dir=${dir}`) && !p.cmdline.includes('--type=')).map(([pid]) => pid);
  const family = new Set(roots);
  // Children come after their parents in no guaranteed order: grow the set until it is stable.
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of procs) {
      if (!family.has(pid) && family.has(p.ppid)) {
        family.add(pid);
        grew = true;
      }
    }
  }
  return { family, found: roots.length > 0 };
}

/** The memory now of the browser whose profile folder is `dir`: { renderer, all } in bytes. */
export function tabMemory(dir) {
  return familyTotals(dir, 'rss');
}

/** `key` of every process of the browser whose profile folder is `dir`, summed: { renderer, all, found }. */
function familyTotals(dir, key) {
  const procs = processes();
  const { family, found } = browserFamily(procs, dir);
  let renderer = 0;
  let all = 0;
  for (const pid of family) {
    const p = procs.get(pid);
    all += p[key];
    if (p.cmdline.includes('--type=renderer')) renderer += p[key];
  }
  return { renderer, all, found };
}

/**
 * The CPU time so far (ms, user + system) of the browser whose profile folder is `dir`: its
 * renderer processes (the page, its workers and their threads) and all its processes (the GPU and
 * browser processes too), `{ renderer, all }`. The difference of two samples is the CPU a load
 * took on every core, which the machine's other work slows less than it stretches the wall time
 * (a measure steadier than the wall time under load; the wall time is still what a user waits).
 * A process that ends between two samples takes its time with it unless its parent reaped it;
 * the renderers of one tab live from its load to its close.
 */
export function browserCpu(dir) {
  const { renderer, all } = familyTotals(dir, 'cpuMs');
  return { renderer, all };
}

/**
 * Samples `tabMemory(dir)` every `everyMs` until `stop()`, which returns the peaks
 * ({ renderer, all } in bytes, `samples`).
 */
export function watchTabMemory(dir, everyMs = 200) {
  const peak = { renderer: 0, all: 0, samples: 0 };
  const sample = () => {
    const m = tabMemory(dir);
    if (!m.found) return;
    peak.renderer = Math.max(peak.renderer, m.renderer);
    peak.all = Math.max(peak.all, m.all);
    peak.samples += 1;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    peak: () => ({ ...peak }),
    stop() {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}
