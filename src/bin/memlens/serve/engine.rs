//! The native engine behind `memlens serve`: the same objects the wasm engine gives the page's
//! worker (a session of files, a torch_npu job view, a SOMAS view, a memory snapshot, a job
//! summary file), held here between requests, and the calls on them — converted from and to HTTP,
//! like `src/wasm/` converts from and to JavaScript. The views' questions are the core's serde
//! requests (`profiler::view::Request`, `somas::view::Request`, the snapshot view's request types,
//! `profiler::summary_view::Request`), answered by the same core code; files are read under the
//! served roots only.
//!
//! Long calls (classifying, analysing, opening a dump, a snapshot or a job summary) run on their own thread as a
//! *job* whose progress the page's worker polls ([`Engine::poll`]), since its calls are
//! synchronous.

use memlens::bulk::{self, Bulk};
use memlens::chart::Viewport;
use memlens::input::roots::{Refusal, ServedRoots};
use memlens::input::{CountingOpener, FileOpener, InputSet};
use memlens::profiler::summary_view::SummaryView;
use memlens::profiler::view::JobView;
use memlens::snapshot::view::{
    CurveRequest, HitRequest, PositionRequest, SnapshotView, TableRequest, ViewRequest,
};
use memlens::somas::view::{ExportRequest, SomasSession};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Sessions kept at most; the oldest goes first (a closed tab never says goodbye).
const MAX_SESSIONS: usize = 16;

/// What a call answers.
#[derive(Debug)]
pub enum Answer {
    /// JSON text.
    Json(String),
    /// Bytes (bulk answers, exports).
    Bytes(Vec<u8>),
}

/// Why a call failed, with the HTTP status it maps to.
#[derive(Debug)]
pub enum Failure {
    /// 400: a malformed call or one the engine refuses (the message says why).
    Bad(String),
    /// 403: a path outside the served roots.
    Forbidden(String),
    /// 404: no such session, view, job or file.
    Missing(String),
}

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Outside(m) => Failure::Forbidden(m),
            Refusal::Missing(m) => Failure::Missing(m),
        }
    }
}

type Result<T> = std::result::Result<T, Failure>;

enum View {
    Profiler(Box<JobView>),
    Somas(Box<SomasSession>),
    /// A memory snapshot, with the milliseconds reading it took.
    Snapshot(Box<SnapshotView>, f64),
    /// A job summary file (`job.memlens.json`).
    Summary(Box<SummaryView>),
}

/// The files of one drop (one page's worker) and the views opened on them.
struct Session {
    set: InputSet,
    views: HashMap<u64, View>,
}

/// Progress and outcome of a long call.
#[derive(Default)]
struct JobState {
    /// Bumped at each change, so a poll can wait for the next one.
    seq: u64,
    /// The last progress report: `[label or path, done, total]`.
    progress: Option<(String, f64, f64)>,
    /// `Ok(JSON text)` or the error message, once done.
    outcome: Option<std::result::Result<String, String>>,
}

#[derive(Default)]
struct Job {
    state: Mutex<JobState>,
    changed: Condvar,
}

impl Job {
    fn lock(&self) -> MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn report(&self, label: &str, done: f64, total: f64) {
        let mut s = self.lock();
        s.seq += 1;
        s.progress = Some((label.to_string(), done, total));
        self.changed.notify_all();
    }

    fn finish(&self, outcome: std::result::Result<String, String>) {
        let mut s = self.lock();
        s.seq += 1;
        s.outcome = Some(outcome);
        self.changed.notify_all();
    }
}

/// Every session, view and job of one server.
pub struct Engine {
    roots: ServedRoots,
    sessions: Mutex<HashMap<u64, Arc<Mutex<Session>>>>,
    jobs: Mutex<HashMap<u64, Arc<Job>>>,
    next: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock is a bug; the state is still usable for the other calls.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn arg<T: for<'de> Deserialize<'de>>(call: &Value, name: &str) -> Result<T> {
    serde_json::from_value(call.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| Failure::Bad(format!("argument {name}: {e}")))
}

fn bulk_bytes(answers: &[&dyn Bulk]) -> Answer {
    Answer::Bytes(bulk::encode(answers))
}

impl Engine {
    /// An engine reading files under `roots` only.
    pub fn new(roots: ServedRoots) -> Engine {
        Engine {
            roots,
            sessions: Mutex::new(HashMap::new()),
            jobs: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        }
    }

    /// The served roots.
    pub fn roots(&self) -> &ServedRoots {
        &self.roots
    }

    fn id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn session(&self, call: &Value) -> Result<Arc<Mutex<Session>>> {
        let id: u64 = arg(call, "session")?;
        lock(&self.sessions)
            .get(&id)
            .cloned()
            .ok_or_else(|| Failure::Missing(format!("no session {id} (the server was restarted?)")))
    }

    /// Runs `work` on its own thread as a job; answers `{"job": id}` at once.
    fn spawn(
        &self,
        work: impl FnOnce(&Job) -> std::result::Result<String, String> + Send + 'static,
    ) -> Answer {
        let id = self.id();
        let job = Arc::new(Job::default());
        lock(&self.jobs).insert(id, job.clone());
        std::thread::spawn(move || {
            let outcome = work(&job);
            job.finish(outcome);
        });
        Answer::Json(json!({ "job": id }).to_string())
    }

    /// The state of job `id` once it changed after `seq`, or after `wait` at most:
    /// `{"seq", "progress": [label, done, total] | null, "done", "result" | "error"}`. A finished
    /// job is forgotten once its outcome was read.
    pub fn poll(&self, id: u64, seq: u64, wait: Duration) -> Result<Answer> {
        let job = lock(&self.jobs)
            .get(&id)
            .cloned()
            .ok_or_else(|| Failure::Missing(format!("no job {id}")))?;
        let deadline = Instant::now() + wait;
        let mut state = job.lock();
        while state.seq <= seq && state.outcome.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = job
                .changed
                .wait_timeout(state, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        let progress = state
            .progress
            .as_ref()
            .map(|(l, d, t)| json!([l, d, t]))
            .unwrap_or(Value::Null);
        let mut answer =
            json!({ "seq": state.seq, "progress": progress, "done": state.outcome.is_some() });
        match &state.outcome {
            Some(Ok(text)) => {
                answer["result"] = serde_json::from_str(text).unwrap_or(Value::Null);
            }
            Some(Err(message)) => answer["error"] = Value::String(message.clone()),
            None => {}
        }
        if state.outcome.is_some() {
            drop(state);
            lock(&self.jobs).remove(&id);
        }
        Ok(Answer::Json(answer.to_string()))
    }

    /// Answers one call: `{"call": name, …arguments}`.
    pub fn call(&self, call: &Value) -> Result<Answer> {
        let name: String = arg(call, "call")?;
        match name.as_str() {
            "session.new" => {
                let id = self.id();
                let mut sessions = lock(&self.sessions);
                while sessions.len() >= MAX_SESSIONS {
                    let Some(oldest) = sessions.keys().min().copied() else {
                        break;
                    };
                    sessions.remove(&oldest);
                }
                let session = Session {
                    set: memlens::families::input_set(),
                    views: HashMap::new(),
                };
                sessions.insert(id, Arc::new(Mutex::new(session)));
                Ok(Answer::Json(json!({ "session": id }).to_string()))
            }
            "session.free" => {
                let id: u64 = arg(call, "session")?;
                lock(&self.sessions).remove(&id);
                Ok(Answer::Json("null".to_string()))
            }
            "session.classify" => self.classify(call),
            "view.free" => {
                let view: u64 = arg(call, "view")?;
                let session = self.session(call)?;
                lock(&session).views.remove(&view);
                Ok(Answer::Json("null".to_string()))
            }
            "view.request" => {
                let view: u64 = arg(call, "view")?;
                let request: String = arg(call, "request")?;
                let session = self.session(call)?;
                let mut session = lock(&session);
                let text = match session.views.get_mut(&view) {
                    Some(View::Profiler(v)) => serde_json::from_str(&request)
                        .map_err(|e| format!("bad request: {e}"))
                        .and_then(|r| v.answer(&r)),
                    Some(View::Somas(v)) => serde_json::from_str(&request)
                        .map_err(|e| format!("bad request: {e}"))
                        .and_then(|r| v.answer(&r)),
                    Some(View::Summary(v)) => serde_json::from_str(&request)
                        .map_err(|e| format!("bad request: {e}"))
                        .and_then(|r| v.answer(&r)),
                    Some(View::Snapshot(..)) => {
                        return Err(Failure::Bad(format!(
                            "view {view} is a memory snapshot: it answers snapshot.* calls"
                        )))
                    }
                    None => return Err(Failure::Missing(format!("no view {view}"))),
                };
                text.map(Answer::Json).map_err(Failure::Bad)
            }
            "profiler.open" => {
                let session = self.session(call)?;
                let mut session = lock(&session);
                let view = JobView::open(&mut session.set);
                let id = self.id();
                session.views.insert(id, View::Profiler(Box::new(view)));
                Ok(Answer::Json(json!({ "view": id }).to_string()))
            }
            "profiler.analyze" => {
                let view: u64 = arg(call, "view")?;
                let session = self.session(call)?;
                Ok(self.spawn(move |job| {
                    let mut guard = lock(&session);
                    let Session { set, views } = &mut *guard;
                    let Some(View::Profiler(v)) = views.get_mut(&view) else {
                        return Err(format!("no torch_npu view {view}"));
                    };
                    let report = |path: &str, done: u64, total: u64| {
                        job.report(path, done as f64, total as f64)
                    };
                    v.analyze(&CountingOpener::new(set, &report));
                    Ok("null".to_string())
                }))
            }
            "profiler.curves" | "profiler.timeline" | "profiler.export" => {
                let view: u64 = arg(call, "view")?;
                let session = self.session(call)?;
                let mut session = lock(&session);
                let Some(View::Profiler(v)) = session.views.get_mut(&view) else {
                    return Err(Failure::Missing(format!("no torch_npu view {view}")));
                };
                match name.as_str() {
                    "profiler.curves" => {
                        let curves = v
                            .curves(
                                arg(call, "rank")?,
                                arg(call, "x0")?,
                                arg(call, "x1")?,
                                arg(call, "columns")?,
                                &arg::<String>(call, "spec")?,
                            )
                            .map_err(Failure::Bad)?;
                        let refs: Vec<&dyn Bulk> = curves.iter().map(|c| c as &dyn Bulk).collect();
                        Ok(bulk_bytes(&refs))
                    }
                    "profiler.timeline" => {
                        let viewport = Viewport {
                            x0: arg(call, "x0")?,
                            x1: arg(call, "x1")?,
                            y0: arg(call, "y0")?,
                            y1: arg(call, "y1")?,
                        };
                        let answer = v
                            .timeline(
                                arg(call, "rank")?,
                                &viewport,
                                arg(call, "width")?,
                                arg(call, "height")?,
                                arg::<u32>(call, "maxRects")? as usize,
                            )
                            .map_err(Failure::Bad)?;
                        Ok(bulk_bytes(&[&answer]))
                    }
                    _ => v
                        .export(&arg::<String>(call, "name")?)
                        .map(Answer::Bytes)
                        .map_err(Failure::Bad),
                }
            }
            "somas.open" => {
                let dump: String = arg(call, "dump")?;
                let task: Option<String> = arg(call, "taskInfo")?;
                let session = self.session(call)?;
                let id = self.id();
                Ok(self.spawn(move |job| {
                    let mut guard = lock(&session);
                    let start = Instant::now();
                    let clock = || start.elapsed().as_secs_f64() * 1000.0;
                    let mut report = |label: &str, done: u64, total: u64| {
                        job.report(label, done as f64, total as f64)
                    };
                    let opened =
                        SomasSession::open(&guard.set, &dump, task.as_deref(), &mut report, &clock)
                            .map_err(|d| d.to_string())?;
                    guard.views.insert(id, View::Somas(Box::new(opened)));
                    Ok(json!({ "view": id }).to_string())
                }))
            }
            "somas.curves" | "somas.rects" | "somas.frame" | "somas.exportZip"
            | "somas.exportFile" => {
                let view: u64 = arg(call, "view")?;
                let session = self.session(call)?;
                let session = lock(&session);
                let Some(View::Somas(v)) = session.views.get(&view) else {
                    return Err(Failure::Missing(format!("no SOMAS view {view}")));
                };
                let export = || -> Result<ExportRequest> {
                    let text: String = arg(call, "request")?;
                    if text.trim().is_empty() {
                        return Ok(ExportRequest::default());
                    }
                    serde_json::from_str(&text)
                        .map_err(|e| Failure::Bad(format!("bad export request: {e}")))
                };
                match name.as_str() {
                    "somas.curves" => Ok(bulk_bytes(&[&v.curves(
                        arg(call, "x0")?,
                        arg(call, "x1")?,
                        arg(call, "columns")?,
                    )])),
                    "somas.rects" => {
                        let viewport = Viewport {
                            x0: arg(call, "x0")?,
                            x1: arg(call, "x1")?,
                            y0: arg(call, "y0")?,
                            y1: arg(call, "y1")?,
                        };
                        Ok(bulk_bytes(&[&v.rects(
                            &viewport,
                            arg(call, "width")?,
                            arg(call, "height")?,
                            arg::<u32>(call, "maxRects")? as usize,
                        )]))
                    }
                    "somas.frame" => Ok(bulk_bytes(&[&v.frame(arg(call, "index")?)])),
                    "somas.exportZip" => v
                        .export_zip(&export()?)
                        .map(Answer::Bytes)
                        .map_err(Failure::Bad),
                    _ => v
                        .export_file(&export()?, &arg::<String>(call, "path")?)
                        .map(Answer::Bytes)
                        .map_err(Failure::Bad),
                }
            }
            "snapshot.open" => {
                let path: String = arg(call, "path")?;
                let session = self.session(call)?;
                let id = self.id();
                Ok(self.spawn(move |job| {
                    let mut guard = lock(&session);
                    let start = Instant::now();
                    let report = |name: &str, done: u64, total: u64| {
                        job.report(&format!("reading {name}"), done as f64, total as f64)
                    };
                    let opened = {
                        let opener = CountingOpener::new(&guard.set, &report);
                        let source = opener.open(&path).map_err(|d| d.to_string())?;
                        let clock = || start.elapsed().as_secs_f64() * 1000.0;
                        SnapshotView::open_timed(&*source, &clock).map_err(|d| d.to_string())?
                    };
                    let ms = start.elapsed().as_secs_f64() * 1000.0;
                    guard.views.insert(id, View::Snapshot(Box::new(opened), ms));
                    Ok(json!({ "view": id }).to_string())
                }))
            }
            name if name.starts_with("snapshot.") => self.snapshot(name, call),
            "summary.open" => {
                let path: String = arg(call, "path")?;
                let session = self.session(call)?;
                let id = self.id();
                Ok(self.spawn(move |job| {
                    let mut guard = lock(&session);
                    let report = |name: &str, done: u64, total: u64| {
                        job.report(&format!("reading {name}"), done as f64, total as f64)
                    };
                    let opened = {
                        let opener = CountingOpener::new(&guard.set, &report);
                        let source = opener.open(&path).map_err(|d| d.to_string())?;
                        SummaryView::open(&*source).map_err(|d| d.to_string())?
                    };
                    guard.views.insert(id, View::Summary(Box::new(opened)));
                    Ok(json!({ "view": id }).to_string())
                }))
            }
            "memory" => Ok(Answer::Json(resident_bytes().to_string())),
            other => Err(Failure::Bad(format!("unknown call {other}"))),
        }
    }

    /// A question to an opened memory snapshot (`snapshot.NAME`, the methods of the wasm
    /// engine's `SnapshotSession`); `request` carries the core's serde request where it takes one.
    fn snapshot(&self, name: &str, call: &Value) -> Result<Answer> {
        let view: u64 = arg(call, "view")?;
        let session = self.session(call)?;
        let mut session = lock(&session);
        let Some(View::Snapshot(v, read_ms)) = session.views.get_mut(&view) else {
            return Err(Failure::Missing(format!("no memory snapshot view {view}")));
        };
        fn json_of<T: serde::Serialize>(r: std::result::Result<T, String>) -> Result<Answer> {
            let value = r.map_err(Failure::Bad)?;
            serde_json::to_string(&value)
                .map(Answer::Json)
                .map_err(|e| Failure::Bad(e.to_string()))
        }
        match name {
            "snapshot.overview" => {
                let start = Instant::now();
                let clock = || start.elapsed().as_secs_f64() * 1000.0;
                v.overview_answer(*read_ms, &clock)
                    .map(Answer::Json)
                    .map_err(|e| Failure::Bad(e.to_string()))
            }
            "snapshot.summaryJson" => Ok(Answer::Json(v.summary_json())),
            "snapshot.curve" => {
                let r: CurveRequest = arg(call, "request")?;
                Ok(bulk_bytes(&[&v.curve(&r).map_err(Failure::Bad)?]))
            }
            "snapshot.timeline" => {
                let r: ViewRequest = arg(call, "request")?;
                Ok(bulk_bytes(&[&v.timeline_view(&r).map_err(Failure::Bad)?]))
            }
            "snapshot.state" => {
                let r: ViewRequest = arg(call, "request")?;
                Ok(bulk_bytes(&[&v.state_view(&r).map_err(Failure::Bad)?]))
            }
            "snapshot.timelineHit" => json_of(v.timeline_hit(&arg::<HitRequest>(call, "request")?)),
            "snapshot.stateHit" => json_of(v.state_hit(&arg::<HitRequest>(call, "request")?)),
            "snapshot.allocation" => {
                json_of(v.allocation(arg(call, "device")?, arg(call, "element")?))
            }
            "snapshot.block" => json_of(v.block(arg(call, "device")?, arg(call, "block")?)),
            "snapshot.table" => json_of(v.table(&arg::<TableRequest>(call, "request")?)),
            "snapshot.position" => json_of(v.position(&arg::<PositionRequest>(call, "request")?)),
            "snapshot.export" => v
                .export(&arg::<String>(call, "name")?)
                .map(Answer::Bytes)
                .map_err(Failure::Bad),
            other => Err(Failure::Bad(format!("unknown call {other}"))),
        }
    }

    /// Adds the served paths `files` (files or folders; refused outside the roots) and the
    /// `unreadable` entries to the session, then classifies it as a job whose result is the
    /// inventory.
    fn classify(&self, call: &Value) -> Result<Answer> {
        #[derive(Deserialize)]
        struct Unreadable {
            path: String,
            #[serde(default)]
            size: f64,
            #[serde(default)]
            reason: String,
        }
        let files: Vec<String> = arg(call, "files")?;
        let unreadable: Vec<Unreadable> =
            arg::<Option<Vec<Unreadable>>>(call, "unreadable")?.unwrap_or_default();
        // Every path is checked before anything is read: one path outside refuses the call.
        let (listed, errors) = self.roots.files(&files)?;
        let session = self.session(call)?;
        Ok(self.spawn(move |job| {
            let mut guard = lock(&session);
            // The served paths opened are what the user gave (an empty folder lists no file).
            for f in &files {
                guard.set.add_given(f);
            }
            guard.set.add_listed(listed, errors);
            for u in &unreadable {
                guard
                    .set
                    .add_unreadable(&u.path, u.size.max(0.0) as u64, &u.reason);
            }
            guard.set.classify_answer(&mut |step| match step {
                memlens::input::LoadStep::Expanding { path, done, total } => {
                    job.report(&format!("expanding {path}"), done as f64, total as f64)
                }
                memlens::input::LoadStep::Heads { done, total } => {
                    job.report("reading file headers", done as f64, total as f64)
                }
            })
        }))
    }
}

/// Resident memory of this process in bytes (Linux `/proc/self/statm`; 0 elsewhere): what the
/// page shows where the wasm engine shows its linear memory.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}
