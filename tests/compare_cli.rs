//! `memlens compare` end to end: generated inputs with one injected change (through the
//! generator's own options), exit codes, the growth gate's message, `--json` = `summary.json`,
//! and bad input.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_memlens");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run memlens")
}

fn gen_profiler(dir: &Path, extra: &[&str]) -> Output {
    let d = dir.display().to_string();
    let mut args = vec![
        "generate",
        "profiler",
        "--out",
        &d,
        "--ranks",
        "2",
        "--rows",
        "300",
        "--trace-mb",
        "0.05",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("memlens-compare-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn profiler_runs_gate_json_and_out() {
    let t = tmp("profiler");
    let (a, b) = (t.join("a"), t.join("b"));
    gen_profiler(&a, &[]);
    let n: u64 = 12 << 20;
    let injected = gen_profiler(&b, &["--inject-peak-bytes", &n.to_string()]);
    let inj: serde_json::Value =
        serde_json::from_slice(injected.stdout.split(|&c| c == b'\n').next().unwrap()).unwrap();
    let frame = inj["frame"].as_str().unwrap().to_string();
    let before = inj["peak_before"][0].as_u64().unwrap();
    let (a, b) = (a.display().to_string(), b.display().to_string());

    // Without a gate: exit 0 and the text names the frame that grew.
    let o = run(&["compare", &a, &b]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&frame), "{text}");

    // The gate: just below the growth trips it (exit 3, naming the rank and the frame).
    let pct = n as f64 * 100.0 / before as f64;
    let o = run(&[
        "compare",
        &a,
        &b,
        "--fail-if-peak-grows",
        &format!("{:.4}", pct - 0.001),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rank 1") && err.contains(&frame), "{err}");
    assert!(!err.contains("rank 0"), "{err}");
    let o = run(&[
        "compare",
        &a,
        &b,
        "--fail-if-peak-grows",
        &format!("{:.4}", pct + 0.001),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The same job against itself never trips it.
    let o = run(&["compare", &a, &a, "--fail-if-peak-grows", "0"]);
    assert_eq!(o.status.code(), Some(0));

    // --json equals summary.json byte for byte; the CSV tables carry the change.
    let out = t.join("out");
    let o = run(&[
        "compare",
        &a,
        &b,
        "--json",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, std::fs::read(out.join("summary.json")).unwrap());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["family"], "profiler");
    assert_eq!(
        v["pairs"][1]["peak_allocated_delta_bytes"].as_u64(),
        Some(n)
    );
    let live = std::fs::read_to_string(out.join("compare_live_at_peak.csv")).unwrap();
    let row = live.lines().find(|l| l.contains(&frame)).unwrap();
    assert!(row.ends_with(&format!(",0,{n},{n},0,1")), "{row}");
    for f in [
        "compare_ranks.csv",
        "compare_one_side_allocations.csv",
        "compare_new_unreleased.csv",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }

    // Two steps of one run: the same folder twice.
    let o = run(&[
        "compare",
        &a,
        &a,
        "--base-step",
        "1",
        "--candidate-step",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mode"], "steps");
    assert_eq!(v["pairs"][0]["base"]["step"], 1);
    assert_eq!(v["pairs"][0]["candidate"]["step"], 2);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn somas_dumps_gate() {
    let t = tmp("somas");
    let (a, b) = (t.join("a.ir"), t.join("b.ir"));
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let g = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "generate", "somas", "--out", out, "--nodes", "800", "--seed", "2",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success());
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    g(&a, &[]);
    let info = g(&b, &["--grow-tensor", "500000000"]);
    let node = info["grown_tensor"]["node_index"].as_u64().unwrap();
    let o = run(&["compare", &a, &b, "--json", "--fail-if-peak-grows", "10"]);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["family"], "somas");
    assert_eq!(v["candidate"]["peak_index"].as_u64(), Some(node));
    assert_eq!(v["differences"], 2);
    let err = String::from_utf8_lossy(&o.stderr);
    let name = v["candidate"]["peak_node"].as_str().unwrap();
    assert!(err.contains(name), "{err}");
    let o = run(&["compare", &a, &a, "--fail-if-peak-grows", "0"]);
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn bad_input_is_named() {
    let t = tmp("bad");
    let dump = t.join("a.ir");
    let o = run(&[
        "generate",
        "somas",
        "--out",
        &dump.display().to_string(),
        "--nodes",
        "100",
    ]);
    assert!(o.status.success());
    let empty = t.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (d, e) = (dump.display().to_string(), empty.display().to_string());
    // A side with nothing to compare: exit 1, naming it.
    let o = run(&["compare", &d, &e]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&e) && err.contains("no torch_npu"), "{err}");
    let missing = t.join("missing").display().to_string();
    let o = run(&["compare", &missing, &d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&missing));
    let prof = t.join("p");
    gen_profiler(&prof, &[]);
    let o = run(&["compare", &d, &prof.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different families"));
    let _ = std::fs::remove_dir_all(&t);
}

/// Every file named `name` under `dir`, recursively.
fn files_named(dir: &Path, name: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_named(&p, name, out);
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
}

#[test]
fn the_gate_does_not_pass_a_side_whose_files_could_not_be_used() {
    let t = tmp("unusable");
    let (a, b) = (t.join("a"), t.join("b"));
    gen_profiler(&a, &[]);
    gen_profiler(&b, &[]);
    // The candidate's first rank loses its operator_memory.csv's body: the file is cut inside
    // its header, which the reader cannot use (its figures leave it out, so its peak falls).
    let mut found = Vec::new();
    files_named(&b, "operator_memory.csv", &mut found);
    found.sort();
    let broken = &found[0];
    std::fs::write(broken, b"").unwrap();
    let (a, b) = (a.display().to_string(), b.display().to_string());

    // Without a gate the comparison is still printed, its notes naming the file, but a file
    // that could not be used is bad input (exit 2, the README's rule for every command; main's
    // CLI exited 0 here), the file named on stderr too.
    let o = run(&["compare", &a, &b, "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let name = broken.strip_prefix(&b).unwrap().display().to_string();
    assert!(
        err.contains("could not be used") && err.contains(name.trim_start_matches('/')),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let unusable = v["unusable_files"].as_array().unwrap();
    assert_eq!(unusable.len(), 1, "{unusable:?}");
    assert!(
        unusable[0].as_str().unwrap().contains("the candidate"),
        "{unusable:?}"
    );

    // With a gate, however loose, it cannot judge: bad input (exit 2), the file named.
    let o = run(&["compare", &a, &b, "--fail-if-peak-grows", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot judge") && err.contains(name.trim_start_matches('/')),
        "{err}"
    );
    // The same gate on the untouched pair passes.
    let o = run(&["compare", &a, &a, "--fail-if-peak-grows", "1000"]);
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&t);
}
