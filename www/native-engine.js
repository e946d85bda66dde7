// The native engine of `memlens serve`, behind the wasm module's interface: the worker's request
// handlers call `Session`, `ProfilerView`, `SomasView`, `SnapshotSession`, `JobSummaryView` and `memoryBytes` the
// same way whichever engine answers. Each call is one synchronous request to the page's own
// origin (a dedicated worker may block); long calls (classifying, analysing, opening a dump or a
// snapshot) come back as a job that is polled for progress until it is done. The engine reads
// the files under the folders it serves, named by served path; files from this computer (a drop)
// cannot be sent to it.

/** The engine's description (`GET /api/engine`), or null when this origin has none. */
export async function probeNative() {
  try {
    const r = await fetch('api/engine', { cache: 'no-store' });
    if (!r.ok) return null;
    const info = await r.json();
    return info && info.engine === 'memlens' && info.build === 'native' ? info : null;
  } catch {
    return null;
  }
}

function failure(x) {
  const body = x.response instanceof ArrayBuffer ? new TextDecoder().decode(x.response) : x.responseText;
  return new Error(body || `the native engine answered HTTP ${x.status}`);
}

/** One call; JSON text back, or an ArrayBuffer when `binary`. */
function rpc(call, binary = false) {
  const x = new XMLHttpRequest();
  x.open('POST', 'api/rpc', false);
  if (binary) x.responseType = 'arraybuffer';
  x.setRequestHeader('Content-Type', 'application/json');
  x.send(JSON.stringify(call));
  if (x.status !== 200) throw failure(x);
  return binary ? x.response : x.responseText;
}

const rpcJson = (call) => JSON.parse(rpc(call));

/** Waits for job `id`, passing each progress report `[label, done, total]` on; its result. */
function wait(id, progress) {
  let seq = 0;
  for (;;) {
    const x = new XMLHttpRequest();
    x.open('GET', `api/job?id=${id}&seq=${seq}`, false);
    x.send();
    if (x.status !== 200) throw failure(x);
    const state = JSON.parse(x.responseText);
    seq = state.seq;
    if (state.progress && progress) progress(...state.progress);
    if (state.done) {
      if ('error' in state) throw new Error(state.error);
      return state.result;
    }
  }
}

/**
 * Bulk answers (see `bulk::encode` in the core) as the wasm engine gives them: one plain object per
 * answer, numbers as numbers, texts as strings, arrays as typed arrays with buffers of their own.
 */
export function decodeBulk(buffer) {
  const view = new DataView(buffer);
  const len = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, len)));
  const start = Math.ceil((4 + len) / 8) * 8;
  const arrays = { f64: [Float64Array, 8], f32: [Float32Array, 4], u32: [Uint32Array, 4], u8: [Uint8Array, 1] };
  return header.map((fields) => {
    const o = {};
    for (const [name, kind, at, count] of fields) {
      const s = start + at;
      if (kind === 'num') o[name] = view.getFloat64(s, true);
      else if (kind === 'text') o[name] = new TextDecoder().decode(new Uint8Array(buffer, s, count));
      else {
        const [Type, size] = arrays[kind];
        o[name] = new Type(buffer.slice(s, s + count * size));
      }
    }
    return o;
  });
}

class Session {
  constructor() {
    this.id = rpcJson({ call: 'session.new' }).session;
    this.paths = [];
    this.unreadable = [];
  }

  /** A served path (file or folder) to read; a file from this computer is refused. */
  addFile(path, file) {
    if (file) {
      throw new Error(
        'this page is served by `memlens serve`, whose engine reads the files where it runs: pick them from the list of served files (to analyse files from this computer, open the page another way, e.g. `npm start` or the offline file)',
      );
    }
    this.paths.push(path);
  }

  /** A name the drop was given as: the served paths opened are those names, and the engine records them itself. */
  addGiven() {}

  addUnreadable(path, size, reason) {
    this.unreadable.push({ path, size, reason });
  }

  classify(progress) {
    const { job } = rpcJson({ call: 'session.classify', session: this.id, files: this.paths, unreadable: this.unreadable });
    return JSON.stringify(wait(job, (label, done, total) => progress(done, total, label)));
  }

  free() {
    // Like the wasm engine's free, this never fails: a session the server already dropped is gone.
    try {
      rpc({ call: 'session.free', session: this.id });
    } catch {
      /* nothing to free */
    }
  }
}

class View {
  constructor(session, view) {
    this.session = session;
    this.view = view;
  }

  call(name, args = {}, binary = false) {
    return rpc({ call: name, session: this.session, view: this.view, ...args }, binary);
  }

  request(text) {
    return this.call('view.request', { request: text });
  }

  free() {
    try {
      this.call('view.free');
    } catch {
      /* the view's session is gone already */
    }
  }
}

class ProfilerView extends View {
  constructor(session) {
    super(session.id, rpcJson({ call: 'profiler.open', session: session.id }).view);
  }

  analyze(_session, progress) {
    wait(JSON.parse(this.call('profiler.analyze')).job, progress);
  }

  curves(rank, x0, x1, columns, spec) {
    return decodeBulk(this.call('profiler.curves', { rank, x0, x1, columns, spec }, true));
  }

  timeline(rank, x0, x1, y0, y1, width, height, maxRects) {
    return decodeBulk(this.call('profiler.timeline', { rank, x0, x1, y0, y1, width, height, maxRects }, true))[0];
  }

  export(name) {
    return new Uint8Array(this.call('profiler.export', { name }, true));
  }
}

class SomasView extends View {
  static open(session, dump, taskInfo, progress) {
    const { job } = rpcJson({ call: 'somas.open', session: session.id, dump, taskInfo: taskInfo ?? null });
    const { view } = wait(job, (label, done, total) => progress(done, total, label));
    return new SomasView(session.id, view);
  }

  curves(x0, x1, columns) {
    return decodeBulk(this.call('somas.curves', { x0, x1, columns }, true))[0];
  }

  rects(x0, x1, y0, y1, width, height, maxRects) {
    return decodeBulk(this.call('somas.rects', { x0, x1, y0, y1, width, height, maxRects }, true))[0];
  }

  frame(index) {
    return decodeBulk(this.call('somas.frame', { index }, true))[0];
  }

  exportZip(request) {
    return new Uint8Array(this.call('somas.exportZip', { request }, true));
  }

  exportFile(request, path) {
    return new Uint8Array(this.call('somas.exportFile', { request, path }, true));
  }
}

/** An opened memory snapshot, with the methods of the wasm engine's `SnapshotSession`. */
class SnapshotSession extends View {
  static open(session, path, progress) {
    const { job } = rpcJson({ call: 'snapshot.open', session: session.id, path });
    const { view } = wait(job, (label, done, total) => progress(done, total, label));
    return new SnapshotSession(session.id, view);
  }

  overview() {
    return this.call('snapshot.overview');
  }

  summaryJson() {
    return this.call('snapshot.summaryJson');
  }

  curve(request) {
    return decodeBulk(this.call('snapshot.curve', { request }, true))[0];
  }

  timeline(request) {
    return decodeBulk(this.call('snapshot.timeline', { request }, true))[0];
  }

  state(request) {
    return decodeBulk(this.call('snapshot.state', { request }, true))[0];
  }

  timelineHit(request) {
    return this.call('snapshot.timelineHit', { request });
  }

  stateHit(request) {
    return this.call('snapshot.stateHit', { request });
  }

  allocation(device, element) {
    return this.call('snapshot.allocation', { device, element });
  }

  block(device, block) {
    return this.call('snapshot.block', { device, block });
  }

  table(request) {
    return this.call('snapshot.table', { request });
  }

  position(request) {
    return this.call('snapshot.position', { request });
  }

  export(name) {
    return new Uint8Array(this.call('snapshot.export', { name }, true));
  }
}

/** An opened job summary file, with the methods of the wasm engine's `JobSummaryView`. */
class JobSummaryView extends View {
  constructor(session, path) {
    const { job } = rpcJson({ call: 'summary.open', session: session.id, path });
    super(session.id, wait(job).view);
  }
}

/** The module the worker's handlers use, answered by the native engine described by `info`. */
export function nativeModule(info) {
  return {
    engineInfo: () => JSON.stringify({ threads: info.threads, build: 'native', version: info.version }),
    memoryBytes: () => rpcJson({ call: 'memory' }),
    Session,
    ProfilerView,
    SomasView,
    SnapshotSession,
    JobSummaryView,
  };
}
