//! The repository stands alone: no tracked file reads or points at anything outside the checkout,
//! and the Markdown files name only paths the repository has.
//! Every tracked file (code, tests, scripts, docs, fixtures) is scanned for a path into a folder
//! beside the checkout, an absolute path of a build machine, or the name of a note kept outside
//! the repository. Skipped, with a message, only when this is not a git checkout (a source tarball)
//! or git is not installed.

use std::path::Path;
use std::process::Command;

/// What no tracked file may contain. Built with `concat!` so this file does not match itself.
const FORBIDDEN: &[&str] = &[
    // A folder beside the checkout (tests once read samples from there).
    concat!("..", "/shared"),
    concat!("shared", "/samples"),
    concat!("shared", "/reference"),
    // Absolute paths of the machines the project is built on.
    concat!("/wo", "rk/"),
    concat!("/fa", "rm/"),
    // Notes kept outside the repository: what the project needs from them is stated in `docs/`,
    // in its own words.
    concat!("ascend", "-formats.md"),
    concat!("somas", "-formats.md"),
    concat!("somas", "-tool-readme.md"),
    concat!("rl-insight", "-memory-parser-guide.md"),
    concat!("torch-npu", "-db.md"),
    concat!("wasm", "-threads.md"),
];

/// Tracked files, or `None` when there is no git checkout to ask.
fn tracked_files(root: &Path) -> Option<Vec<String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let list = String::from_utf8(out.stdout).ok()?;
    Some(
        list.split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// True when `needle` occurs in `line`; an absolute-path needle (`/…/`) only where a path starts,
/// not inside another path (a conda build folder in a third-party snapshot's frames ends in a
/// folder of that name on that build machine, not ours).
fn contains(line: &str, needle: &str) -> bool {
    if !needle.starts_with('/') {
        return line.contains(needle);
    }
    line.match_indices(needle).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
    })
}

/// `(line number, line)` of each line of `text` that contains `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<(usize, &'a str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| contains(l, needle))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

#[test]
fn no_tracked_file_points_outside_the_checkout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(files) = tracked_files(root) else {
        eprintln!("not a git checkout (or no git): nothing to scan");
        return;
    };
    assert!(
        files.iter().any(|f| f == "Cargo.toml"),
        "git ls-files listed no Cargo.toml: {} files",
        files.len()
    );
    let mut found = Vec::new();
    for rel in &files {
        // A file deleted in the working tree but still in the index is not read by anything.
        let Ok(bytes) = std::fs::read(root.join(rel)) else {
            continue;
        };
        // Binary fixtures are scanned too: a path inside a database or archive would still be
        // outside the checkout (lossy decoding keeps the ASCII of such a path intact).
        let text = String::from_utf8_lossy(&bytes);
        for needle in FORBIDDEN {
            for (n, line) in lines_with(&text, needle) {
                let shown: String = line.chars().take(160).collect();
                found.push(format!("{rel}:{n}: `{needle}` in: {}", shown.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} reference(s) to outside the checkout:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Top-level folders of the repository: a backticked word starting with one of them is a path.
const TOP: &[&str] = &[
    "src/",
    "tests/",
    "docs/",
    "scripts/",
    "fixtures/",
    "benches/",
    "www/",
    "fuzz/",
];

/// Repository paths a Markdown text names: backticked words under a top-level folder, and relative
/// link targets (resolved against `dir`, the Markdown file's folder). Names with placeholders
/// (`<target>`, `*`, `{a,b}`, `…`) are not paths of one file and are left out.
fn named_paths(text: &str, dir: &str) -> Vec<String> {
    let re = regex::Regex::new(r"`([^`\s]+)`|\]\(([^)\s#]+)").expect("valid regex");
    let mut out = Vec::new();
    for c in re.captures_iter(text) {
        let path = if let Some(word) = c.get(1) {
            word.as_str().to_string()
        } else {
            let target = c.get(2).map_or("", |m| m.as_str());
            if target.contains(':') {
                continue; // a URL
            }
            normalize(&format!("{dir}/{target}"))
        };
        let path = path.split(':').next().unwrap_or("").trim_end_matches('/');
        if !TOP.iter().any(|t| path.starts_with(t)) || path.contains(['<', '>', '*', '{', '}', '…'])
        {
            continue;
        }
        out.push(path.to_string());
    }
    out
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// True when git ignores `path`: a build output the docs may name before it exists.
fn ignored(root: &Path, path: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["check-ignore", "-q", "--no-index", path])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn docs_name_only_files_that_exist() {
    // After a file or folder is renamed, a README or manual still naming the old path misleads
    // whoever reads the repository alone.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(files) = tracked_files(root) else {
        eprintln!("not a git checkout (or no git): nothing to check");
        return;
    };
    let mut known: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for f in &files {
        known.insert(f);
        let mut end = f.len();
        while let Some(i) = f[..end].rfind('/') {
            known.insert(&f[..i]);
            end = i;
        }
    }
    let mut missing = Vec::new();
    for rel in files.iter().filter(|f| f.ends_with(".md")) {
        let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
            continue;
        };
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        for path in named_paths(&text, dir) {
            if !known.contains(path.as_str()) && !ignored(root, &path) {
                missing.push(format!("{rel}: `{path}`"));
            }
        }
    }
    missing.dedup();
    assert!(
        missing.is_empty(),
        "{} path(s) named in Markdown files that the repository does not have:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn named_paths_reads_backticks_and_links() {
    let text =
        "see `docs/somas.md` and [the fixtures](../fixtures/README.md), `fuzz/logs/<t>.log`, \
                `cargo test`, [web](https://example.org/src/x) and `src/lib.rs:12`";
    assert_eq!(
        named_paths(text, "docs"),
        ["docs/somas.md", "fixtures/README.md", "src/lib.rs"]
    );
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    // The matcher itself: a line naming a forbidden path is reported with its number.
    let text = format!("ok\nread {}/x here\nok", FORBIDDEN[0]);
    assert_eq!(lines_with(&text, FORBIDDEN[0]).len(), 1);
    assert_eq!(lines_with(&text, FORBIDDEN[0])[0].0, 2);
    assert!(lines_with("fixtures/somas", FORBIDDEN[0]).is_empty());
    let machine = FORBIDDEN[3];
    assert_eq!(lines_with(&format!("see {machine}x"), machine).len(), 1);
    assert_eq!(lines_with(&format!("'{machine}x'"), machine).len(), 1);
    assert!(lines_with(&format!("/croot/split_17{machine}x.c"), machine).is_empty());
}
