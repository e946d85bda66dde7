//! The command line as a new user meets it: wrong paths, folders with nothing to analyse, one
//! command for any input, and the output conventions (quiet, colour, completions, version).
//! Each case checks the message the user reads and the exit code `--help` documents.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn memlens(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memlens"));
    cmd.args(args).current_dir(cwd);
    cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("memlens runs")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every subcommand that takes paths, with the extra arguments it needs.
const PATH_COMMANDS: [&[&str]; 5] = [&[], &["inspect"], &["profiler"], &["somas"], &["snapshot"]];

#[test]
fn a_missing_path_is_named_with_exit_2_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/path");
    let missing = missing.to_str().unwrap();
    for cmd in PATH_COMMANDS {
        let args: Vec<&str> = cmd.iter().copied().chain([missing]).collect();
        let out = memlens(&args, dir.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "memlens: {missing}: no such file or directory (the nearest folder above \
                 it that exists is {})\n",
                dir.path().display()
            ),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn a_typo_gets_the_close_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("actor_rollout")).unwrap();
    let out = memlens(&["profiler", "actor_rolout"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "memlens: actor_rolout: no such file or directory (did you mean actor_rollout?)\n"
    );
}

#[test]
fn an_empty_folder_says_what_was_looked_for_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let profiler =
        "torch_npu / MindSpore profiler run folders (`*_ascend_pt`, `*_ascend_ms`, or a \
                    folder holding ASCEND_PROFILER_OUTPUT, profiler_info*.json or a memory file)";
    let somas = "MindSpore SOMAS dumps (`*somas*.ir`, told by their first lines)";
    let snapshot = "PyTorch / torch_npu memory snapshots (pickles or their JSON form, of any \
                    name, told by their first bytes)";
    let summary = "memlens job summaries (`job.memlens.json`, told by their `format` key)";
    let both = format!("{profiler}, {somas}, {snapshot} or {summary}");
    for (cmd, looked_for) in [
        (&[][..], both.as_str()),
        (&["inspect"][..], both.as_str()),
        (&["profiler"][..], profiler),
        (&["somas"][..], somas),
    ] {
        let args: Vec<&str> = cmd.iter().copied().chain(["empty"]).collect();
        let out = memlens(&args, dir.path(), &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "memlens: empty: nothing to analyse: no files at all (looked for {looked_for})\n"
            ),
            "{args:?}"
        );
    }
}

/// A torch_npu run folder as verl leaves it with `analysis: False`: raw data, no
/// ASCEND_PROFILER_OUTPUT.
fn raw_run(root: &Path) -> &'static str {
    let run = "job/host_1234_20250101120000123_ascend_pt";
    let files = [
        "profiler_info_0.json",
        "profiler_metadata.json",
        "FRAMEWORK/torch.op_range",
        "PROF_000001_20250101120000123_ABCDEFG/device_0/data/memory.data",
        "PROF_000001_20250101120000123_ABCDEFG/host/data/host.data",
    ];
    for f in files {
        let p = root.join(run).join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body: &[u8] = if f.ends_with(".json") {
            b"{}"
        } else {
            b"\0raw"
        };
        std::fs::write(p, body).unwrap();
    }
    run
}

#[test]
fn a_raw_run_folder_says_to_run_the_analysis_first() {
    let dir = tempfile::tempdir().unwrap();
    let run = raw_run(dir.path());
    for cmd in [&[][..], &["profiler"][..]] {
        let args: Vec<&str> = cmd.iter().copied().chain(["job"]).collect();
        let out = memlens(&args, dir.path(), &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert!(
            lines[0].starts_with("memlens: job: nothing to analyse: looked for torch_npu"),
            "{err}"
        );
        assert!(
            lines[0].ends_with("in 5 files, down to 5 folder levels"),
            "{err}"
        );
        assert_eq!(lines[1], "found:");
        assert_eq!(lines[2], format!("  {run}: ascend-run (rank 0 role job)"));
        assert_eq!(
            lines[3],
            format!(
                "    hint: raw profiler data only (PROF_* / FRAMEWORK, no ASCEND_PROFILER_OUTPUT): \
                 the analysis never ran (verl's default `analysis: False` leaves run folders like \
                 this); run torch_npu.profiler.profiler.analyse(\"{run}\") first"
            )
        );
    }
}

#[test]
fn a_bare_prof_folder_is_named_as_raw_cann_data() {
    let dir = tempfile::tempdir().unwrap();
    raw_run(dir.path());
    let out = memlens(
        &[
            "profiler",
            "job/host_1234_20250101120000123_ascend_pt/PROF_000001_20250101120000123_ABCDEFG",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "\n  PROF_000001_20250101120000123_ABCDEFG: raw CANN profiler data (a PROF_* folder), \
             not the analysed output memlens reads\n    hint: run \
             torch_npu.profiler.profiler.analyse(\"<run folder>\") on the run folder that holds \
             it, then give memlens that folder\n"
        ),
        "{err}"
    );
}

#[test]
fn a_command_of_another_family_lists_what_it_found_and_points_to_memlens_path() {
    let cwd = fixtures().join("classify/job");
    let out = memlens(&["profiler", "graphs"], &cwd, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("\n  graphs/rank_0/Ascend_somas_tensor_offset_7.ir: somas (somas-info "),
        "{err}"
    );
    assert!(
        err.ends_with("hint: `memlens graphs` analyses whatever the paths hold\n"),
        "{err}"
    );
    // And the other way round: a folder of profiler output given to `somas`.
    let out = memlens(&["somas", "step1"], &cwd, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(": ascend-run (rank 0 role actor_update step 1)"));
}

#[test]
fn somas_on_a_folder_reads_its_one_dump_with_the_task_info_of_its_graph() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("classify/job/graphs/rank_0");
    let dst = dir.path().join("graph");
    std::fs::create_dir(&dst).unwrap();
    for f in [
        "Ascend_somas_tensor_offset_7.ir",
        "task_info_graph_7.ir",
        "somas_input_graph_7.ir",
    ] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    let folder = memlens(&["somas", "graph", "--json"], dir.path(), &[]);
    assert_eq!(folder.status.code(), Some(0), "{}", text(&folder.stderr));
    let file = memlens(
        &[
            "somas",
            "graph/Ascend_somas_tensor_offset_7.ir",
            "--task-info",
            "graph/task_info_graph_7.ir",
            "--json",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(text(&folder.stdout), text(&file.stdout));
    assert_eq!(
        text(&folder.stderr),
        "memlens: graph/Ascend_somas_tensor_offset_7.ir: with the task-info file \
         graph/task_info_graph_7.ir\n"
    );
    // With several dumps the user names one.
    let several = memlens(&["somas", "rank_0"], &src.join(".."), &[]);
    assert_eq!(several.status.code(), Some(2));
    assert_eq!(
        text(&several.stderr),
        "memlens: rank_0: 2 SOMAS dumps; name the one to analyse:\n  \
         rank_0/Ascend_somas_tensor_offset_7.ir\n  rank_0/plan_renamed.txt\n"
    );
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn memlens_path_on_a_mixed_folder_is_the_sum_of_the_subcommands() {
    let cwd = fixtures().join("classify");
    // The db-only rollout run's database is damaged: a file that could not be used, so exit 2
    // (`profiler`'s verdict), with every unit still printed and the problem said on stderr.
    let all = memlens(&["job", "--json"], &cwd, &[]);
    assert_eq!(all.status.code(), Some(2), "{}", text(&all.stderr));
    assert!(
        text(&all.stderr).contains("1 file could not be used"),
        "{}",
        text(&all.stderr)
    );
    let all = json(&all);
    let summaries = all["summaries"].as_array().unwrap();
    // The fixture holds five run folders with memory files (the db-only rollout run is one: its
    // database export is read, and its damage reported), one SOMAS dump of graph 7 beside its task-info file, and a renamed copy of the dump.
    let runs = [
        "job/step1/actor_update/host-a_1002_20250101120000456_ascend_pt",
        "job/step1/actor_update/host-a_1001_20250101120000123_ascend_pt",
        "job/step1/ref/host_b.cluster_2002_20250101120100002_ascend_pt",
        "job/step1/ref/host_b.cluster_2001_20250101120100001_ascend_pt",
        "job/rollout/20260526_085155_ascend_pt",
    ];
    let dump = "job/graphs/rank_0/Ascend_somas_tensor_offset_7.ir";
    let task = "job/graphs/rank_0/task_info_graph_7.ir";
    let renamed = "job/graphs/rank_0/plan_renamed.txt";
    let families: Vec<(&str, Vec<&str>)> = summaries
        .iter()
        .map(|s| {
            let paths = s["paths"].as_array().unwrap();
            (
                s["family"].as_str().unwrap(),
                paths.iter().map(|p| p.as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(
        families,
        [
            ("profiler", runs.to_vec()),
            ("somas", vec![dump, task]),
            ("somas", vec![renamed]),
        ]
    );
    let profiler = json(&memlens(&["profiler", "job", "--json"], &cwd, &[]));
    assert_eq!(summaries[0]["summary"], profiler);
    let somas = json(&memlens(
        &["somas", dump, "--task-info", task, "--json"],
        &cwd,
        &[],
    ));
    assert_eq!(summaries[1]["summary"], somas);
    let somas = json(&memlens(&["somas", renamed, "--json"], &cwd, &[]));
    assert_eq!(summaries[2]["summary"], somas);

    // The text is each subcommand's text under a title.
    let all = text(&memlens(&["job"], &cwd, &[]).stdout);
    let profiler = text(&memlens(&["profiler", "job"], &cwd, &[]).stdout);
    let somas = text(&memlens(&["somas", renamed], &cwd, &[]).stdout);
    assert!(all.starts_with(&format!(
        "torch_npu / MindSpore profiler job: 5 run folder(s) (memlens profiler)\n{profiler}\n"
    )));
    assert!(all.ends_with(&format!("SOMAS dump {renamed} (memlens somas)\n{somas}")));
}

#[test]
fn memlens_path_reads_every_unit_even_when_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("somas");
    std::fs::copy(
        src.join("Ascend_somas_tensor_offset_1.ir"),
        dir.path().join("Ascend_somas_tensor_offset_1.ir"),
    )
    .unwrap();
    // A dump cut after its header: recognised as a dump, not parseable.
    let good = std::fs::read(src.join("Ascend_somas_tensor_offset_1.v1_10.ir")).unwrap();
    let cut = &good[..good.len() / 3];
    std::fs::write(dir.path().join("Ascend_somas_tensor_offset_2.ir"), cut).unwrap();
    let out = memlens(&[".", "--json"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    let s = v["summaries"].as_array().unwrap();
    assert_eq!(s.len(), 2);
    assert!(s[0]["summary"].is_object());
    assert!(s[1]["summary"].is_null());
    let message = s[1]["error"]["message"].as_str().unwrap();
    let cli = memlens(
        &["somas", "Ascend_somas_tensor_offset_2.ir"],
        dir.path(),
        &[],
    );
    assert_eq!(cli.status.code(), Some(2));
    assert!(text(&cli.stderr).contains(message), "{message}");
    assert!(text(&out.stderr).contains(message));
}

#[test]
fn memlens_path_on_snapshots_is_memlens_snapshot_and_a_cut_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = dir.path().join("snaps");
    std::fs::create_dir(&snaps).unwrap();
    let tiny = std::fs::read(fixtures().join("snapshots/cs336_tiny_mem_snapshot.pickle")).unwrap();
    // Any name: a snapshot is recognised by its first bytes.
    std::fs::write(snaps.join("a_memory.json"), &tiny).unwrap();
    // Cut in the middle: still recognised, not readable.
    std::fs::write(snaps.join("b_cut.pkl"), &tiny[..tiny.len() / 2]).unwrap();
    let out = memlens(&["--json", "snaps"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let v = json(&out);
    let s = v["summaries"].as_array().unwrap();
    let families: Vec<(&str, &str)> = s
        .iter()
        .map(|x| {
            (
                x["family"].as_str().unwrap(),
                x["paths"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        families,
        [
            ("snapshot", "snaps/a_memory.json"),
            ("snapshot", "snaps/b_cut.pkl")
        ]
    );
    let one = memlens(
        &["snapshot", "snaps/a_memory.json", "--json"],
        dir.path(),
        &[],
    );
    assert_eq!(one.status.code(), Some(0));
    assert_eq!(s[0]["summary"], json(&one));
    assert!(s[1]["summary"].is_null());
    let message = s[1]["error"]["message"].as_str().unwrap();
    let cut = memlens(&["snapshot", "snaps/b_cut.pkl"], dir.path(), &[]);
    assert_eq!(cut.status.code(), Some(2));
    assert!(text(&cut.stderr).contains(message), "{message}");
    assert!(cut.stdout.is_empty());

    // The text is the subcommand's text under a title (a file given alone is named by its name).
    let all = text(&memlens(&["snaps/a_memory.json"], dir.path(), &[]).stdout);
    let one = text(&memlens(&["snapshot", "a_memory.json"], &snaps, &[]).stdout);
    assert_eq!(
        all,
        format!("memory snapshot a_memory.json (memlens snapshot)\n{one}")
    );
}

#[test]
fn nothing_on_stderr_when_piped_and_quiet_silences_notes() {
    let cwd = fixtures().join("classify");
    // The job's damaged rollout db makes it exit 2, its verdict the one line on stderr.
    let out = memlens(&["profiler", "job"], &cwd, &[]);
    assert_eq!(out.status.code(), Some(2));
    let verdict = &json(&memlens(&["profiler", "job", "--json", "-q"], &cwd, &[]))["verdict"];
    assert_eq!(
        text(&out.stderr),
        format!("memlens: {}\n", verdict["problem"].as_str().unwrap()),
        "no progress bar when stderr is not a terminal"
    );
    let quiet = memlens(&["profiler", "job", "--quiet"], &cwd, &[]);
    assert_eq!(
        (quiet.status.code(), text(&quiet.stderr)),
        (Some(2), String::new())
    );
    let dir = tempfile::tempdir().unwrap();
    let gen = dir.path().join("gen");
    let gen = gen.to_str().unwrap();
    let args = [
        "generate",
        "profiler",
        "--out",
        gen,
        "--roles",
        "1",
        "--ranks",
        "1",
        "--rows",
        "10",
        "--trace-mb",
        "0.01",
    ];
    let loud = memlens(&args, dir.path(), &[]);
    assert_eq!(text(&loud.stderr), format!("wrote 6 files under {gen}\n"));
    let quiet: Vec<&str> = args.iter().copied().chain(["--quiet"]).collect();
    assert_eq!(text(&memlens(&quiet, dir.path(), &[]).stderr), "");
    let json: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    let v: serde_json::Value =
        serde_json::from_slice(&memlens(&json, dir.path(), &[]).stdout).unwrap();
    assert_eq!(v["files"], 6);
}

#[test]
fn colour_only_when_allowed_and_never_with_no_color() {
    let dir = tempfile::tempdir().unwrap();
    let forced = memlens(
        &["inspect", "missing"],
        dir.path(),
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(
        text(&forced.stderr).starts_with("\x1b["),
        "{:?}",
        text(&forced.stderr)
    );
    let plain = memlens(
        &["inspect", "missing"],
        dir.path(),
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert_eq!(
        text(&plain.stderr),
        "memlens: missing: no such file or directory\n"
    );
}

#[test]
fn help_lists_the_exit_codes_and_completions_know_the_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let help = text(&memlens(&["--help"], dir.path(), &[]).stdout);
    for line in [
        "Exit codes (the same for every subcommand):",
        "  0  done",
        "  1  nothing to analyse:",
        "  2  bad input or usage:",
        "  3  `somas --fail-on-conflict` found overwrite conflicts",
    ] {
        assert!(help.contains(line), "{line}\n{help}");
    }
    let none = memlens(&[], dir.path(), &[]);
    assert_eq!(none.status.code(), Some(2));
    for shell in ["bash", "zsh", "fish"] {
        let out = memlens(&["completions", shell], dir.path(), &[]);
        assert_eq!(out.status.code(), Some(0));
        let script = text(&out.stdout);
        for word in [
            "profiler",
            "somas",
            "inspect",
            "generate",
            "fail-on-conflict",
        ] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
}

#[test]
fn version_names_the_commit_of_the_checkout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = memlens(&["--version"], root, &[]);
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    assert_eq!(
        text(&out.stdout),
        format!("memlens {} ({commit})\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn global_flags_may_come_before_the_subcommand() {
    let cwd = fixtures();
    for (before, after) in [
        (
            &["--json", "inspect", "somas"][..],
            &["inspect", "somas", "--json"][..],
        ),
        (
            &[
                "-q",
                "--json",
                "somas",
                "somas/Ascend_somas_offline_log_1.ir",
            ][..],
            &[
                "somas",
                "somas/Ascend_somas_offline_log_1.ir",
                "--json",
                "-q",
            ][..],
        ),
    ] {
        let a = memlens(before, &cwd, &[]);
        let b = memlens(after, &cwd, &[]);
        assert_eq!(a.status.code(), Some(0), "{before:?}: {}", text(&a.stderr));
        json(&a);
        assert_eq!(text(&a.stdout), text(&b.stdout), "{before:?}");
    }
}
