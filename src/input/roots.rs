//! Paths named on the command line: those that cannot be used at all (they do not exist, or
//! cannot be looked at), found before anything is listed so the user reads the path they typed,
//! not an empty result; and the roots `memlens serve` shares, with the rule that nothing outside
//! them is ever read ([`ServedRoots`]).

use crate::source::{list_paths, ListedFile, SourceError};
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

/// Why a served path is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Outside the served roots (`..`, an absolute path, a symbolic link leading out, an unknown
    /// root): the server answers 403 with the message.
    Outside(String),
    /// Inside the roots but not there (404).
    Missing(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Outside(m) | Refusal::Missing(m) => f.write_str(m),
        }
    }
}

/// One entry of a served folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ListedEntry {
    /// The name (last path component).
    pub name: String,
    /// `dir` or `file`.
    pub kind: &'static str,
    /// Size in bytes (0 for folders).
    pub size: u64,
}

/// The files and folders `memlens serve` shares, each named by its last component: a served path
/// is `<root name>/<path under it>`, `/`-separated. Every path is resolved to a canonical path
/// that must lie under its root's canonical path, so `..`, absolute paths and symbolic links
/// leading out of a root are refused.
#[derive(Debug, Clone)]
pub struct ServedRoots {
    roots: Vec<(String, PathBuf)>,
}

impl ServedRoots {
    /// The roots at `paths` (canonicalised); the problems when one cannot be used or two share a
    /// name.
    pub fn new(paths: &[PathBuf]) -> Result<ServedRoots, Vec<PathProblem>> {
        let mut problems = check(paths);
        let mut roots: Vec<(String, PathBuf)> = Vec::new();
        if problems.is_empty() {
            for p in paths {
                let canonical = match p.canonicalize() {
                    Ok(c) => c,
                    Err(e) => {
                        problems.push(PathProblem {
                            path: p.display().to_string(),
                            message: format!("cannot be resolved: {e}"),
                        });
                        continue;
                    }
                };
                let name = canonical
                    .file_name()
                    .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned());
                if roots.iter().any(|(n, _)| *n == name) {
                    problems.push(PathProblem {
                        path: p.display().to_string(),
                        message: format!(
                            "another served path is also named {name}: serve folders with \
                             different names"
                        ),
                    });
                    continue;
                }
                roots.push((name, canonical));
            }
        }
        if problems.is_empty() {
            Ok(ServedRoots { roots })
        } else {
            Err(problems)
        }
    }

    /// The roots' names, in the order given.
    pub fn names(&self) -> Vec<&str> {
        self.roots.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Whether nothing is served.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The file or folder on disk that the served path `rel` names.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, Refusal> {
        let outside = |why: &str| Refusal::Outside(format!("{rel}: {why}"));
        // `/x`, `\\x` and drive letters (`C:`).
        if rel.starts_with('/') || rel.starts_with('\\') || rel.as_bytes().get(1) == Some(&b':') {
            return Err(outside(
                "an absolute path: only paths under the served folders can be read",
            ));
        }
        let parts: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        if parts
            .iter()
            .any(|c| *c == ".." || *c == "." || c.contains('\\'))
        {
            return Err(outside(
                "'..', '.' and '\\' are not allowed: only paths under the served folders can be read",
            ));
        }
        let Some((first, rest)) = parts.split_first() else {
            return Err(outside("an empty path"));
        };
        let Some((_, root)) = self.roots.iter().find(|(n, _)| n == first) else {
            return Err(outside(&format!(
                "{first} is not a served folder (served: {})",
                self.names().join(", ")
            )));
        };
        let joined = rest.iter().fold(root.clone(), |p, c| p.join(c));
        let canonical = joined
            .canonicalize()
            .map_err(|e| Refusal::Missing(format!("{rel}: {e}")))?;
        if !canonical.starts_with(root) {
            return Err(outside(
                "a symbolic link leading out of the served folder: not followed",
            ));
        }
        Ok(canonical)
    }

    /// The files under the served paths `rels` (files or folders), as [`crate::source::list_paths`]
    /// lists them (named from the picked path's own name, as a browser drop names them); every
    /// path is checked before anything is listed, and a file inside that is a symbolic link
    /// leading out of its root is left unread: it comes back among the errors, so it still shows
    /// up, as unreadable.
    pub fn files(&self, rels: &[String]) -> Result<(Vec<ListedFile>, Vec<SourceError>), Refusal> {
        let disk = rels
            .iter()
            .map(|r| self.resolve(r))
            .collect::<Result<Vec<_>, _>>()?;
        let (listed, mut errors) = list_paths(&disk);
        let mut kept = Vec::with_capacity(listed.len());
        for f in listed {
            let inside = f
                .disk_path
                .canonicalize()
                .is_ok_and(|c| self.roots.iter().any(|(_, root)| c.starts_with(root)));
            if inside {
                kept.push(f);
            } else {
                errors.push(SourceError {
                    name: f.rel_path,
                    offset: 0,
                    message: "a symbolic link leading out of the served folder: not read"
                        .to_string(),
                });
            }
        }
        Ok((kept, errors))
    }

    /// The entries of the served folder `rel`, folders first then files, each by name; `None`
    /// (or an empty path) lists the roots.
    pub fn list(&self, rel: Option<&str>) -> Result<Vec<ListedEntry>, Refusal> {
        let entry = |name: String, path: &Path| -> Option<ListedEntry> {
            // Symbolic links leading out of the root are left out of listings too.
            let md = std::fs::metadata(path).ok()?;
            Some(ListedEntry {
                name,
                kind: if md.is_dir() { "dir" } else { "file" },
                size: if md.is_dir() { 0 } else { md.len() },
            })
        };
        let rel = rel.map(str::trim).filter(|r| !r.is_empty());
        let Some(rel) = rel else {
            return Ok(self
                .roots
                .iter()
                .filter_map(|(n, p)| entry(n.clone(), p))
                .collect());
        };
        let dir = self.resolve(rel)?;
        let root = self
            .roots
            .iter()
            .map(|(_, p)| p)
            .find(|p| dir.starts_with(p))
            .cloned()
            .unwrap_or_default();
        let items = std::fs::read_dir(&dir).map_err(|e| Refusal::Missing(format!("{rel}: {e}")))?;
        let mut out: Vec<ListedEntry> = items
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let path = e.path();
                let inside = path.canonicalize().ok()?.starts_with(&root);
                inside
                    .then(|| entry(e.file_name().to_string_lossy().into_owned(), &path))
                    .flatten()
            })
            .collect();
        out.sort_by(|a, b| a.kind.cmp(b.kind).then(a.name.cmp(&b.name)));
        Ok(out)
    }
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

    fn served() -> (tempfile::TempDir, ServedRoots) {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job");
        std::fs::create_dir_all(job.join("run/sub")).unwrap();
        std::fs::write(job.join("run/a.csv"), "a").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), job.join("out.txt")).unwrap();
            std::os::unix::fs::symlink(job.join("run/a.csv"), job.join("in.csv")).unwrap();
        }
        let roots = ServedRoots::new(&[job]).unwrap();
        (dir, roots)
    }

    #[test]
    fn served_paths_resolve_under_their_root_only() {
        let (dir, roots) = served();
        let job = dir.path().join("job").canonicalize().unwrap();
        assert_eq!(roots.names(), ["job"]);
        assert_eq!(roots.resolve("job/run/a.csv"), Ok(job.join("run/a.csv")));
        assert_eq!(roots.resolve("job"), Ok(job.clone()));
        for (rel, why) in [
            ("job/../secret.txt", "'..', '.' and '\\' are not allowed"),
            ("/etc/passwd", "an absolute path"),
            ("other/x", "other is not a served folder (served: job)"),
            ("", "an empty path"),
        ] {
            match roots.resolve(rel) {
                Err(Refusal::Outside(m)) => assert!(m.contains(why), "{rel}: {m}"),
                other => panic!("{rel}: {other:?}"),
            }
        }
        assert!(matches!(
            roots.resolve("job/none.csv"),
            Err(Refusal::Missing(_))
        ));
        #[cfg(unix)]
        {
            match roots.resolve("job/out.txt") {
                Err(Refusal::Outside(m)) => assert!(m.contains("symbolic link"), "{m}"),
                other => panic!("{other:?}"),
            }
            assert_eq!(roots.resolve("job/in.csv"), Ok(job.join("run/a.csv")));
        }
    }

    #[test]
    fn listings_show_folders_first_and_leave_out_links_leading_out() {
        let (_dir, roots) = served();
        let names = |l: Vec<ListedEntry>| -> Vec<(String, &'static str)> {
            l.into_iter().map(|e| (e.name, e.kind)).collect()
        };
        assert_eq!(
            names(roots.list(None).unwrap()),
            [("job".to_string(), "dir")]
        );
        let top = names(roots.list(Some("job")).unwrap());
        let mut expected = vec![("run".to_string(), "dir")];
        if cfg!(unix) {
            expected.push(("in.csv".to_string(), "file"));
        }
        assert_eq!(top, expected);
        assert!(matches!(
            roots.list(Some("job/..")),
            Err(Refusal::Outside(_))
        ));
    }

    #[test]
    fn two_roots_with_one_name_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["a/job", "b/job"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let err =
            ServedRoots::new(&[dir.path().join("a/job"), dir.path().join("b/job")]).unwrap_err();
        assert!(err[0].message.contains("also named job"), "{err:?}");
    }
}
