//! Build script: the commit `memlens --version` prints, and (with the `page` feature) the list of
//! the page's files the `memlens serve` binary embeds.
//!
//! - The commit is `git rev-parse --short=12 HEAD` of the checkout, or `unknown` outside one (a
//!   source tarball, no git): a build never fails for want of git. Only native builds ask git, and
//!   they re-run only when this checkout's HEAD or branch moves, so the wasm builds are not redone
//!   for a commit.
//! - With `--features page`, every file under `www/` (as the development server serves it) is
//!   listed in `$OUT_DIR/page_files.rs` as `include_bytes!`; the build fails with what to run when
//!   the page was not built (`www/pkg/` missing). Without the feature nothing under `www/` is
//!   looked at, so editing the page never rebuilds the crate.

use std::path::{Path, PathBuf};
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

fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(items) = std::fs::read_dir(dir) else {
        return;
    };
    let mut items: Vec<_> = items.filter_map(|e| e.ok()).collect();
    items.sort_by_key(|e| e.file_name());
    for item in items {
        let name = item.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let path = item.path();
        if path.is_dir() {
            walk(&path, &child, out);
        } else {
            out.push((child, path));
        }
    }
}

/// Writes `$OUT_DIR/page_files.rs`: `pub static PAGE: &[(&str, &[u8])]`.
fn page(out_dir: &Path) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let www = manifest.join("www");
    println!("cargo:rerun-if-changed={}", www.display());
    if !www.join("pkg").join("memlens_bg.wasm").is_file() {
        panic!(
            "the `page` feature embeds the built page, and www/pkg/memlens_bg.wasm is missing: run \
             `npm run build` first (or build without `--features page` and pass `memlens serve \
             --www DIR`)"
        );
    }
    // Everything under www/, as the development server serves it (hidden files aside).
    let mut files = Vec::new();
    walk(&www, "", &mut files);
    let mut code = String::from(
        "/// The page's files, by path under `www/`.\npub static PAGE: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &files {
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    if let Err(e) = std::fs::write(out_dir.join("page_files.rs"), code) {
        panic!("cannot write page_files.rs: {e}");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    let commit = if wasm { None } else { commit() };
    println!(
        "cargo:rustc-env=MEMLENS_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    if !wasm && std::env::var_os("CARGO_FEATURE_PAGE").is_some() {
        let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
        page(&out_dir);
    }
}
