//! The repository stands alone: no tracked file reads or points at anything outside the checkout.
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

/// `(line number, line)` of each line of `text` that contains `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<(usize, &'a str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
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

#[test]
fn the_scan_finds_what_it_looks_for() {
    // The matcher itself: a line naming a forbidden path is reported with its number.
    let text = format!("ok\nread {}/x here\nok", FORBIDDEN[0]);
    assert_eq!(lines_with(&text, FORBIDDEN[0]).len(), 1);
    assert_eq!(lines_with(&text, FORBIDDEN[0])[0].0, 2);
    assert!(lines_with("fixtures/somas", FORBIDDEN[0]).is_empty());
}
