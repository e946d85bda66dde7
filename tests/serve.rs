//! `memlens serve` over HTTP, as the page's worker uses it: the page's files with the development
//! server's headers, the served folders listed, paths outside them refused with 403, and a job
//! picked under the served root analysed by the native engine to the same report and the same
//! export bytes as `memlens profiler --json` / `--out`.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A running `memlens serve`; stopped when dropped.
struct Served {
    child: Child,
    port: u16,
    _page: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stand-in for the built page: its index.html carries the real page's head (so the marker is
/// placed as in the real one), and a file where the wasm goes.
fn page_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let index =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("www/index.html"))
            .unwrap();
    std::fs::write(dir.path().join("index.html"), index).unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/memlens_bg.wasm"), b"\0asm").unwrap();
    dir
}

fn serve(paths: &[&Path], extra: &[&str]) -> Served {
    let page = page_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memlens"));
    cmd.arg("--json").arg("serve");
    cmd.args(paths);
    cmd.args(["--port", "0", "--www"])
        .arg(page.path())
        .args(extra);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("memlens serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let started: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("{e}: {line:?} {err}")
    });
    let url = started["url"].as_str().unwrap();
    let port = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    Served {
        child,
        port,
        _page: page,
    }
}

/// One HTTP/1.1 exchange: (status, headers lower-cased, body).
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.status, self.text()))
    }
}

impl Served {
    fn request(&self, method: &str, path: &str, host: Option<&str>, body: &[u8]) -> Reply {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let host = host.map_or_else(|| format!("127.0.0.1:{}", self.port), str::to_string);
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Reply {
            status,
            headers,
            body: raw[split + 4..].to_vec(),
        }
    }

    fn get(&self, path: &str) -> Reply {
        self.request("GET", path, None, b"")
    }

    fn call(&self, call: Value) -> Reply {
        self.request("POST", "/api/rpc", None, call.to_string().as_bytes())
    }

    /// Waits for job `id` and answers its result.
    fn wait(&self, id: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seq = 0;
        loop {
            let r = self.get(&format!("/api/job?id={id}&seq={seq}"));
            assert_eq!(r.status, 200, "{}", r.text());
            let state = r.json();
            if state["done"] == true {
                assert!(state.get("error").is_none(), "{state}");
                return state["result"].clone();
            }
            seq = state["seq"].as_u64().unwrap();
            assert!(Instant::now() < deadline, "job {id} did not finish");
        }
    }
}

/// The Content-Security-Policy of the page's own meta tag.
fn page_csp() -> String {
    let index =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("www/index.html"))
            .unwrap();
    let at = index
        .find("http-equiv=\"Content-Security-Policy\" content=\"")
        .unwrap();
    let rest = &index[at + "http-equiv=\"Content-Security-Policy\" content=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

#[test]
fn the_page_comes_with_its_csp_and_isolation_headers_and_knows_the_engine() {
    let job = fixtures().join("classify/job");
    let s = serve(&[&job], &[]);
    let index = s.get("/");
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-security-policy"),
        Some(page_csp().as_str())
    );
    assert!(page_csp().contains("connect-src 'self'"));
    assert_eq!(
        index.header("cross-origin-opener-policy"),
        Some("same-origin")
    );
    assert_eq!(
        index.header("cross-origin-embedder-policy"),
        Some("require-corp")
    );
    assert_eq!(index.header("x-content-type-options"), Some("nosniff"));
    assert!(index
        .text()
        .contains("<meta name=\"memlens-engine\" content=\"native\">"));
    let wasm = s.get("/pkg/memlens_bg.wasm");
    assert_eq!(
        (wasm.status, wasm.header("content-type")),
        (200, Some("application/wasm"))
    );
    assert_eq!(s.get("/nothing.js").status, 404);
    let engine = s.get("/api/engine").json();
    assert_eq!(engine["build"], "native");
    assert_eq!(engine["roots"], json!(["job"]));
}

#[test]
fn only_the_own_host_name_is_answered_on_loopback() {
    let s = serve(&[], &[]);
    let r = s.request("GET", "/api/engine", Some("attacker.example"), b"");
    assert_eq!(r.status, 403);
    assert!(r.text().contains("its own address"), "{}", r.text());
    let r = s.request(
        "GET",
        "/api/engine",
        Some(&format!("localhost:{}", s.port)),
        b"",
    );
    assert_eq!(r.status, 200);
}

#[test]
fn paths_outside_the_served_root_are_refused_with_403() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("served");
    std::fs::create_dir_all(root.join("run")).unwrap();
    std::fs::write(root.join("run/a.csv"), "a\n").unwrap();
    std::fs::write(dir.path().join("secret.csv"), "secret\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("secret.csv"), root.join("run/link.csv")).unwrap();
    let s = serve(&[&root], &[]);

    let roots = s.get("/api/list").json();
    assert_eq!(
        roots["entries"],
        json!([{ "name": "served", "kind": "dir", "size": 0 }])
    );
    let run = s.get("/api/list?path=served/run").json();
    // The link leading out is not listed.
    assert_eq!(
        run["entries"],
        json!([{ "name": "a.csv", "kind": "file", "size": 2 }])
    );

    for path in [
        "served/..",
        "served/run/../../secret.csv",
        "served%2F..%2Fsecret.csv",
        "/etc",
        "%2Fetc",
        "elsewhere/x",
        "served/run/link.csv",
    ] {
        if path.ends_with("link.csv") && !cfg!(unix) {
            continue;
        }
        let r = s.get(&format!("/api/list?path={path}"));
        assert_eq!(r.status, 403, "{path}: {}", r.text());
        assert!(
            r.text().contains("served folder"),
            "{path}: the reason is given: {}",
            r.text()
        );
    }

    let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
    for files in [
        json!(["/etc/passwd"]),
        json!(["served/../secret.csv"]),
        json!(["served/run/a.csv", "served/run/link.csv"]),
    ] {
        if files.to_string().contains("link") && !cfg!(unix) {
            continue;
        }
        let r = s.call(json!({ "call": "session.classify", "session": session, "files": files }));
        assert_eq!(r.status, 403, "{files}: {}", r.text());
    }
    // A folder picked whole reads what is inside it, and a link inside leading out is left out
    // (listed as unreadable, never read).
    let job =
        s.call(json!({ "call": "session.classify", "session": session, "files": ["served"] }));
    assert_eq!(job.status, 200, "{}", job.text());
    let inventory = s.wait(&job.json()["job"]);
    let text = inventory.to_string();
    assert!(text.contains("served/run/a.csv"), "{text}");
    assert!(!text.contains("secret\\n"), "{text}");
    if cfg!(unix) {
        assert!(text.contains("served/run/link.csv"), "{text}");
        assert!(text.contains("leading out of the served folder"), "{text}");
    }
}

#[test]
fn a_job_picked_under_the_root_gives_the_clis_report_and_export_bytes() {
    let job = fixtures().join("classify/job");
    let s = serve(&[&job], &[]);
    let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
    let classify =
        s.call(json!({ "call": "session.classify", "session": session, "files": ["job"] }));
    assert_eq!(classify.status, 200, "{}", classify.text());
    let inventory = s.wait(&classify.json()["job"]);
    assert!(inventory.get("nothing_to_analyse").is_none(), "{inventory}");
    let view = s
        .call(json!({ "call": "profiler.open", "session": session }))
        .json()["view"]
        .clone();
    let analyze = s.call(json!({ "call": "profiler.analyze", "session": session, "view": view }));
    s.wait(&analyze.json()["job"]);
    let ask = |method: &str| {
        s.call(json!({
            "call": "view.request", "session": session, "view": view,
            "request": json!({ "method": method, "params": {} }).to_string(),
        }))
        .json()
    };
    let report = ask("report");

    let cwd = fixtures().join("classify");
    let out = tempfile::tempdir().unwrap();
    let cli = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", "job", "--json", "--out"])
        .arg(out.path())
        .current_dir(&cwd)
        .output()
        .unwrap();
    // The damaged rollout db is a file that could not be used: exit 2, the rest still written.
    assert_eq!(cli.status.code(), Some(2));
    let expected: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(report, expected);
    // Four text ranks and the db-only rollout rank (its damaged database reported as an error).
    assert_eq!(
        report["ranks"].as_array().map(Vec::len),
        Some(5),
        "{report}"
    );

    for name in [
        "memory_events.csv",
        "rank_summary.csv",
        "peak_attribution.csv",
        "step_peaks.csv",
        "summary.json",
    ] {
        let r = s.call(
            json!({ "call": "profiler.export", "session": session, "view": view, "name": name }),
        );
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        // summary.json is the page's download of what `--json` prints.
        let written = if name == "summary.json" {
            cli.stdout.clone()
        } else {
            std::fs::read(out.path().join(name)).unwrap()
        };
        assert!(!written.is_empty());
        assert!(
            r.body == written,
            "{name} differs from memlens profiler --out"
        );
    }
    let r = s.call(
        json!({ "call": "profiler.export", "session": session, "view": view, "name": "../x" }),
    );
    assert_eq!(r.status, 400);
    let r = s.call(json!({ "call": "nonsense" }));
    assert_eq!(r.status, 400);
    assert!(r.text().contains("unknown call nonsense"));
}

#[test]
fn another_bind_address_prints_a_warning() {
    let page = page_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["serve", "--port", "0", "--bind", "0.0.0.0", "--www"])
        .arg(page.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("warning: listening on 0.0.0.0"), "{line}");
    assert!(line.contains("anyone who can reach this machine"), "{line}");
}

#[test]
fn a_somas_dump_picked_under_the_root_gives_the_clis_summary_bytes() {
    let somas = fixtures().join("somas");
    let s = serve(&[&somas], &[]);
    let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
    let dump = "somas/Ascend_somas_tensor_offset_1.ir";
    let task = "somas/task_info_graph_1.ir";
    let classify =
        s.call(json!({ "call": "session.classify", "session": session, "files": ["somas"] }));
    assert_eq!(classify.status, 200, "{}", classify.text());
    s.wait(&classify.json()["job"]);
    let open =
        s.call(json!({ "call": "somas.open", "session": session, "dump": dump, "taskInfo": task }));
    assert_eq!(open.status, 200, "{}", open.text());
    let view = s.wait(&open.json()["job"])["view"].clone();
    let summary = s.call(json!({
        "call": "view.request", "session": session, "view": view,
        "request": json!({ "method": "summaryJson", "params": { "request": {} } }).to_string(),
    }));
    assert_eq!(summary.status, 200, "{}", summary.text());

    let cli = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["somas", dump, "--task-info", task, "--json"])
        .current_dir(fixtures())
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(0));
    assert!(summary.body == cli.stdout, "{}", summary.text());
    // The typed-array answers arrive in the bulk encoding: a header naming the fields.
    let curves = s.call(json!({
        "call": "somas.curves", "session": session, "view": view, "x0": 0.0, "x1": 1e9, "columns": 64,
    }));
    assert_eq!(curves.status, 200, "{}", curves.text());
    let len = u32::from_le_bytes(curves.body[..4].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&curves.body[4..4 + len]).unwrap();
    assert!(
        header[0].as_array().is_some_and(|f| !f.is_empty()),
        "{header}"
    );
}

#[test]
fn a_memory_snapshot_picked_under_the_root_gives_the_clis_summary_and_export_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap");
    std::fs::create_dir(&snap).unwrap();
    std::fs::copy(
        fixtures().join("snapshots/cs336_tiny_mem_snapshot.pickle"),
        snap.join("tiny.pickle"),
    )
    .unwrap();
    let s = serve(&[&snap], &[]);
    let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
    let classify =
        s.call(json!({ "call": "session.classify", "session": session, "files": ["snap"] }));
    assert_eq!(classify.status, 200, "{}", classify.text());
    s.wait(&classify.json()["job"]);
    let open =
        s.call(json!({ "call": "snapshot.open", "session": session, "path": "snap/tiny.pickle" }));
    assert_eq!(open.status, 200, "{}", open.text());
    let view = s.wait(&open.json()["job"])["view"].clone();
    let ask = |call: Value| {
        let mut call = call;
        call["session"] = session.clone();
        call["view"] = view.clone();
        let r = s.call(call);
        assert_eq!(r.status, 200, "{}", r.text());
        r
    };

    // Run where the served path names the same file, so the names inside the answers match.
    let cli = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["snapshot", "snap/tiny.pickle", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(0));
    let summary = ask(json!({ "call": "snapshot.summaryJson" }));
    assert!(summary.body == cli.stdout, "{}", summary.text());
    let out = dir.path().join("out");
    let written = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["snapshot", "snap/tiny.pickle", "--out"])
        .arg(&out)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(written.status.code(), Some(0));
    let mut names = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let served = ask(json!({ "call": "snapshot.export", "name": name }));
        assert!(
            served.body == std::fs::read(entry.path()).unwrap(),
            "{name} differs from memlens snapshot --out"
        );
        names += 1;
    }
    assert!(names >= 2, "memlens snapshot --out wrote {names} file(s)");

    let overview = ask(json!({ "call": "snapshot.overview" })).json();
    let device = overview["devices"][0]["device"].clone();
    assert!(device.is_i64(), "{overview}");
    // The typed-array answers arrive in the bulk encoding: a header naming the fields.
    let curve = ask(json!({
        "call": "snapshot.curve",
        "request": { "device": device, "x0": 0.0, "x1": 1e12, "columns": 64 },
    }));
    let len = u32::from_le_bytes(curve.body[..4].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&curve.body[4..4 + len]).unwrap();
    assert!(
        header[0].as_array().is_some_and(|f| !f.is_empty()),
        "{header}"
    );
    // Another kind of view's call on it, and a view that does not exist, are refused.
    let wrong = s.call(json!({
        "call": "view.request", "session": session, "view": view, "request": "{}",
    }));
    assert_eq!(wrong.status, 400, "{}", wrong.text());
    let missing = s.call(json!({
        "call": "snapshot.overview", "session": session, "view": 999_999,
    }));
    assert_eq!(missing.status, 404, "{}", missing.text());
}

#[test]
fn a_job_summary_picked_under_the_root_gives_the_overview_of_the_raw_job() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs");
    std::fs::create_dir(&jobs).unwrap();
    let text =
        std::fs::read_to_string(fixtures().join("summary/msinsight-level0.memlens.json")).unwrap();
    std::fs::write(jobs.join("job.memlens.json"), &text).unwrap();
    // The same job with one more rank that failed where it ran.
    let mut failed: Value = serde_json::from_str(&text).unwrap();
    let reason = "job/actor/broken_ascend_pt/operator_memory.csv: line 3: expected 8 fields";
    failed["ranks"].as_array_mut().unwrap().push(json!({
        "role": "zz", "rank": 7, "step": null, "run_dirs": ["job/actor/broken_ascend_pt"],
        "status": "error", "error": reason,
        "peak_allocated_bytes": 0, "peak_reserved_bytes": 0, "report": null,
        "curve": {"component": "", "t_ns": [], "allocated_bytes": [], "reserved_bytes": []},
        "unreleased": [], "warnings": []
    }));
    std::fs::write(jobs.join("failed.memlens.json"), failed.to_string()).unwrap();
    std::fs::write(
        jobs.join("cut.memlens.json"),
        &text.as_bytes()[..text.len() / 2],
    )
    .unwrap();
    let s = serve(&[&jobs], &[]);
    let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
    let classify =
        s.call(json!({ "call": "session.classify", "session": session, "files": ["jobs"] }));
    assert_eq!(classify.status, 200, "{}", classify.text());
    let inventory = s.wait(&classify.json()["job"]);
    let summaries = inventory["units"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["kind"] == "job-summary")
        .count();
    assert_eq!(summaries, 3, "{inventory}");
    let open = |path: &str| {
        let r = s.call(json!({ "call": "summary.open", "session": session, "path": path }));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["job"].clone()
    };
    let ask = |view: &Value, request: Value| {
        let r = s.call(json!({
            "call": "view.request", "session": session, "view": view,
            "request": request.to_string(),
        }));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    };

    // The overview's ranks, matrix and outliers are what the CLI prints for the raw job.
    let view = s.wait(&open("jobs/job.memlens.json"))["view"].clone();
    let overview = ask(&view, json!({ "method": "overview" }));
    let cli = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args([
            "profiler",
            "fixtures/torch_npu/msinsight-level0/text",
            "--json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(0));
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let ranks = overview["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), cli["ranks"].as_array().unwrap().len());
    for (r, c) in ranks.iter().zip(cli["ranks"].as_array().unwrap()) {
        // Each rank says how it came out in the keys of a job summary's rank, as the CLI does.
        assert_eq!((&r["status"], &r["no_data"]), (&json!("ok"), &Value::Null));
        assert_eq!(r, c);
    }
    assert_eq!(overview["matrix"], cli["matrix"]);
    assert_eq!(overview["outliers"], cli["outliers"]);
    assert_eq!(
        overview["totals"]["peak_allocated_bytes"],
        cli["totals"]["peak_allocated_bytes"]
    );
    assert_eq!(overview["summary"]["file"], "jobs/job.memlens.json");
    // One rank whole: the file's rank as written (ranks ordered by role then rank, as the
    // fixture's are).
    let file: Value = serde_json::from_str(&text).unwrap();
    let rank = ask(&view, json!({ "method": "rank", "params": { "rank": 1 } }));
    assert_eq!(rank["curve"], file["ranks"][1]["curve"]);
    assert_eq!(rank["unreleased"], file["ranks"][1]["unreleased"]);
    let r = s.call(json!({
        "call": "view.request", "session": session, "view": view,
        "request": json!({ "method": "rank", "params": { "rank": 9 } }).to_string(),
    }));
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("holds 2 ranks"), "{}", r.text());

    // A failed rank is counted as such, with its reason among the warnings.
    let view = s.wait(&open("jobs/failed.memlens.json"))["view"].clone();
    let overview = ask(&view, json!({ "method": "overview" }));
    assert_eq!(
        overview["totals"]["failed_ranks"], 1,
        "{}",
        overview["totals"]
    );
    assert_eq!(overview["totals"]["rejected"], 0);
    assert_eq!(overview["totals"]["ranks"], 3);
    assert_eq!(
        overview["warnings"][0]["file"],
        "job/actor/broken_ascend_pt"
    );
    assert_eq!(overview["warnings"][0]["message"], reason);

    // A damaged file fails naming it; so does a path that is not among the served files.
    let error_of = |job: Value| loop {
        let state = s.get(&format!("/api/job?id={job}&seq=0")).json();
        if state["done"] == true {
            break state["error"].as_str().unwrap_or_default().to_string();
        }
    };
    let error = error_of(open("jobs/cut.memlens.json"));
    assert!(error.contains("jobs/cut.memlens.json"), "{error}");
    let error = error_of(open("jobs/none.memlens.json"));
    assert!(error.contains("jobs/none.memlens.json"), "{error}");
}

/// Reads one answer from a kept-alive connection: its status, or `None` when nothing complete
/// came before the read timeout.
fn read_answer(s: &mut TcpStream) -> Option<u16> {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + length {
                return head.split(' ').nth(1).and_then(|c| c.parse().ok());
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A browser's first load opens six connections at once, keeps them alive, and may open one
/// that sends nothing yet. Every request on every connection is answered, twice over on the
/// same connections, on a fresh server each time (the old server queued some connections of such
/// a burst behind the kept-alive ones, and their requests were never answered).
#[test]
fn a_burst_of_kept_alive_connections_is_answered_on_each() {
    for _ in 0..3 {
        let s = serve(&[], &[]);
        let _idle = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        let mut conns: Vec<TcpStream> = (0..12)
            .map(|_| TcpStream::connect(("127.0.0.1", s.port)).unwrap())
            .collect();
        for round in 0..2 {
            for c in &mut conns {
                c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                write!(
                    c,
                    "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: keep-alive\r\n\r\n",
                    s.port
                )
                .unwrap();
            }
            let answered: Vec<Option<u16>> = conns.iter_mut().map(read_answer).collect();
            assert_eq!(answered, vec![Some(200); 12], "round {round}");
        }
    }
}

#[test]
fn a_folder_with_nothing_to_analyse_is_said_in_the_clis_words() {
    // Files memlens does not read, and a folder without files: the classify answer carries what
    // the CLI says of them, the folder's name first. The old answer left the name out, so an
    // empty folder's message named nothing at all.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("stuff");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("notes.txt"), "hi\n").unwrap();
    std::fs::write(dir.join("data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(dir.join("sub/config.json"), "{}\n").unwrap();
    std::fs::create_dir_all(root.path().join("empty/sub")).unwrap();
    let s = serve(&[root.path()], &[]);
    for (folder, files, starts) in [
        ("stuff", 3, "stuff: nothing to analyse: looked for "),
        (
            "empty",
            0,
            "empty: nothing to analyse: no files at all (looked for ",
        ),
    ] {
        let cli = Command::new(env!("CARGO_BIN_EXE_memlens"))
            .arg(folder)
            .current_dir(root.path())
            .output()
            .unwrap();
        assert_eq!(cli.status.code(), Some(1));
        let said = String::from_utf8_lossy(&cli.stderr);
        let said = said.trim_end().strip_prefix("memlens: ").unwrap();
        assert!(said.starts_with(starts), "{said}");

        let session = s.call(json!({ "call": "session.new" })).json()["session"].clone();
        let root_name = root.path().file_name().unwrap().to_str().unwrap();
        let path = format!("{root_name}/{folder}");
        let classify =
            s.call(json!({ "call": "session.classify", "session": session, "files": [path] }));
        assert_eq!(classify.status, 200, "{}", classify.text());
        let inventory = s.wait(&classify.json()["job"]);
        assert_eq!(inventory["units"].as_array().map(Vec::len), Some(files));
        assert_eq!(inventory["nothing_to_analyse"]["files"], files);
        // The served path opened is the name the page gave; the rest is the CLI's words.
        assert_eq!(
            inventory["nothing_to_analyse"]["text"],
            format!(
                "{path}: {}",
                said.strip_prefix(&format!("{folder}: ")).unwrap()
            )
        );
    }
}
