//! Build script: the commit `memlens --version` prints.
//!
//! The commit is `git rev-parse --short=12 HEAD` of the checkout, or `unknown` outside one (a
//! source tarball, no git): a build never fails for want of git. Only native builds ask git, and
//! they re-run only when this checkout's HEAD or branch moves, so the wasm builds are not redone
//! for a commit.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// The commit of HEAD, and tells cargo to re-run when HEAD or its branch moves.
fn commit() -> Option<String> {
    let head = PathBuf::from(git(&["rev-parse", "--git-path", "HEAD"])?);
    let mut watched = vec![head.clone()];
    if let Ok(text) = std::fs::read_to_string(&head) {
        if let Some(reference) = text.trim().strip_prefix("ref: ") {
            if let Some(path) = git(&["rev-parse", "--git-path", reference]) {
                watched.push(PathBuf::from(path));
            }
            if let Some(path) = git(&["rev-parse", "--git-path", "packed-refs"]) {
                watched.push(PathBuf::from(path));
            }
        }
    }
    // A path that does not exist would make cargo re-run the script on every build.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    let commit = if wasm { None } else { commit() };
    println!(
        "cargo:rustc-env=MEMLENS_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
}
