//! Paths named on the command line that cannot be used at all (they do not exist, or cannot be
//! looked at), found before anything is listed so the user reads the path they typed, not an
//! empty result.

use std::fmt;
use std::path::{Path, PathBuf};

/// A path that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathProblem {
    /// The path as given.
    pub path: String,
    /// What is wrong, in words, with a suggestion when one is close.
    pub message: String,
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The entries of `dir` whose names are close to `name` (a typo, another case), closest first.
fn close_names(dir: &Path, name: &str) -> Vec<String> {
    let Ok(items) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let lower = name.to_lowercase();
    let mut close: Vec<(usize, String)> = items
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|other| {
            let distance = strsim::levenshtein(&lower, &other.to_lowercase());
            // About one typo per four characters, at least one.
            (distance <= (name.chars().count() / 4).max(1)).then_some((distance, other))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Why `path`, which cannot be looked at, is missing: a close name beside it, or the nearest
/// folder above it that exists.
fn missing(path: &Path) -> String {
    let mut message = "no such file or directory".to_string();
    // A bare name's parent is "" (the working folder), and names beside it are shown bare too.
    let parent = path.parent().unwrap_or(Path::new(""));
    let parent_dir = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if parent_dir.is_dir() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let close = close_names(parent_dir, &name);
        if !close.is_empty() {
            let names: Vec<String> = close
                .iter()
                .map(|n| parent.join(n).display().to_string())
                .collect();
            message.push_str(&format!(" (did you mean {}?)", names.join(" or ")));
        }
        return message;
    }
    let mut up = parent.parent();
    while let Some(dir) = up {
        let shown = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if shown.is_dir() {
            message.push_str(&format!(
                " (the nearest folder above it that exists is {})",
                shown.display()
            ));
            break;
        }
        up = dir.parent();
    }
    message
}

/// The problems of `roots`, in the order given; empty when every path can be looked at.
pub fn check(roots: &[PathBuf]) -> Vec<PathProblem> {
    roots
        .iter()
        .filter_map(|root| {
            let message = match std::fs::metadata(root) {
                Ok(_) => return None,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing(root),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    "permission denied".to_string()
                }
                Err(e) => format!("cannot be looked at: {e}"),
            };
            Some(PathProblem {
                path: root.display().to_string(),
                message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_paths_have_no_problem() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.csv"), "x").unwrap();
        assert_eq!(
            check(&[dir.path().to_path_buf(), dir.path().join("a.csv")]),
            []
        );
    }

    #[test]
    fn a_typo_is_named_with_the_close_names_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("job_ascend_pt")).unwrap();
        std::fs::create_dir(dir.path().join("other")).unwrap();
        let typo = dir.path().join("job_ascned_pt");
        let problems = check(std::slice::from_ref(&typo));
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].to_string(),
            format!(
                "{}: no such file or directory (did you mean {}?)",
                typo.display(),
                dir.path().join("job_ascend_pt").display()
            )
        );
    }

    #[test]
    fn a_missing_folder_names_the_nearest_one_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("no/such/path");
        let problems = check(std::slice::from_ref(&deep));
        assert_eq!(
            problems[0].message,
            format!(
                "no such file or directory (the nearest folder above it that exists is {})",
                dir.path().display()
            )
        );
    }
}
