//! When the inputs hold nothing to analyse: what was looked for, how far, and the closest things
//! found, with what to do about them — the words the CLI prints and the page can show.
//!
//! Family-free like the rest of [`crate::input`]: the families say what they look for
//! ([`Recognizer::looks_for`]) and what comes close ([`Recognizer::near_misses`]); the units say
//! whether they can be analysed ([`crate::input::UnitBody::analysable`]).

use super::classify::{Entry, Finding, Inventory, Recognizer, Unit, UnknownFile};
use super::paths::parent;
use serde::Serialize;
use std::fmt;

/// Findings listed at most; the rest are counted.
pub const MAX_FINDINGS: usize = 8;

/// Paths the user gave named at most in [`NothingToAnalyse::said`]; the rest are counted.
pub const MAX_GIVEN: usize = 4;

/// Why a search of the inputs found nothing to analyse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NothingToAnalyse {
    /// The paths the user gave (folders or files named, dropped or opened), as given; empty when
    /// the front end did not say ([`crate::input::InputSet::add_given`]).
    pub given: Vec<String>,
    /// What was looked for, in words (one item per kind of input).
    pub looked_for: Vec<String>,
    /// Files looked at (archive members included).
    pub files: u64,
    /// Folder levels below the given paths that held files (0: files given directly, or none).
    pub depth: usize,
    /// The closest things found, the most useful first.
    pub found: Vec<Finding>,
    /// Files found and not listed in `found`.
    pub more: u64,
}

/// `"a, b or c"`.
fn or_list(items: &[String]) -> String {
    match items.split_last() {
        None => "anything memlens reads".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for NothingToAnalyse {
    /// `nothing to analyse: looked for …` then one line per finding and its hint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let looked = or_list(&self.looked_for);
        if self.files == 0 {
            write!(
                f,
                "nothing to analyse: no files at all (looked for {looked})"
            )?;
        } else {
            write!(
                f,
                "nothing to analyse: looked for {looked} in {}, down to {}",
                plural(self.files, "file", "files"),
                plural(self.depth as u64, "folder level", "folder levels")
            )?;
        }
        if !self.found.is_empty() {
            write!(f, "\nfound:")?;
        }
        for finding in &self.found {
            write!(f, "\n  {}: {}", finding.path, finding.what)?;
            if let Some(hint) = &finding.hint {
                write!(f, "\n    hint: {hint}")?;
            }
        }
        if self.more > 0 {
            let more = plural(self.more, "other file", "other files");
            write!(f, "\n  and {more} memlens does not read")?;
        }
        Ok(())
    }
}

impl NothingToAnalyse {
    /// The whole message, said of what the user gave: `stuff: nothing to analyse: …`, the paths
    /// first (at most [`MAX_GIVEN`], the rest counted) — what `memlens PATH...` prints after
    /// `memlens: ` and the page shows for a drop. An empty folder lists no file, so its name is
    /// all that tells the user which drop or path it was. Without given paths, the message alone.
    pub fn said(&self) -> String {
        let shown = self.given.len().min(MAX_GIVEN);
        let mut names = self.given[..shown].join(", ");
        if self.given.len() > shown {
            names.push_str(&format!(" and {} more", self.given.len() - shown));
        }
        if names.is_empty() {
            self.to_string()
        } else {
            format!("{names}: {self}")
        }
    }
}

/// Whether `path` is `folder` or lies under it.
fn under(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path == folder
        || (path.starts_with(folder) && path.as_bytes().get(folder.len()) == Some(&b'/'))
}

/// A unit as a finding: what it is (its family's words on it alone, or its kind and one-line
/// summary) and its notes as the hint.
fn unit_finding(unit: &Unit) -> Finding {
    let body = unit.body();
    let notes = body.notes();
    Finding {
        path: unit.path().to_string(),
        what: body
            .alone()
            .unwrap_or_else(|| format!("{} ({})", unit.kind(), body.summary())),
        hint: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// Whether an unknown file's reason is the generic "not anything we read" (less useful to show
/// than a specific one such as "SOMAS solver log").
fn generic_reason(reason: &str) -> bool {
    reason.starts_with("not ") || reason.starts_with("binary file") || reason == "not read"
}

/// `None` when some unit is `wanted`; otherwise what the search looked for and found.
///
/// `entries` and `inventory` are a classified set's; `recognizers` are every family's (for near
/// misses), `looking_for` the families the caller analyses (for the words of what was looked for),
/// `given` the paths the user gave.
pub fn nothing_to_analyse(
    given: &[String],
    entries: &[Entry],
    inventory: &Inventory,
    recognizers: &[&dyn Recognizer],
    looking_for: &[&dyn Recognizer],
    wanted: &dyn Fn(&Unit) -> bool,
) -> Option<NothingToAnalyse> {
    if inventory.units.iter().any(wanted) {
        return None;
    }
    let unknown: Vec<&UnknownFile> = inventory.units_of::<UnknownFile>().collect();
    let unrecognised: Vec<&str> = unknown.iter().map(|u| u.path.as_str()).collect();
    let mut found: Vec<Finding> = recognizers
        .iter()
        .flat_map(|r| r.near_misses(&unrecognised))
        .collect();
    // Files inside a near miss (the raw data folder) are said by it.
    let covered = |path: &str| found.iter().any(|f| under(path, &f.path));
    let mut specific = Vec::new();
    let mut generic = 0u64;
    for u in &unknown {
        if covered(&u.path) {
            continue;
        }
        if generic_reason(&u.reason) {
            generic += 1;
        } else {
            specific.push(Finding {
                path: u.path.clone(),
                what: u.reason.clone(),
                hint: None,
            });
        }
    }
    // Recognised units that cannot be analysed here come before unknown files.
    let recognised: Vec<Finding> = inventory
        .units
        .iter()
        .filter(|u| u.get::<UnknownFile>().is_none())
        .map(unit_finding)
        .collect();
    found.extend(recognised);
    found.extend(specific);
    let mut more = generic;
    if found.len() > MAX_FINDINGS {
        more += (found.len() - MAX_FINDINGS) as u64;
        found.truncate(MAX_FINDINGS);
    }
    let depth = entries
        .iter()
        .map(|e| {
            let mut levels = 0;
            let mut dir = parent(&e.path);
            while !dir.is_empty() {
                levels += 1;
                dir = parent(dir);
            }
            levels
        })
        .max()
        .unwrap_or(0);
    Some(NothingToAnalyse {
        given: given.to_vec(),
        looked_for: looking_for
            .iter()
            .flat_map(|r| r.looks_for().iter().map(|s| s.to_string()))
            .collect(),
        files: entries.len() as u64,
        depth,
        found,
        more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::classify::{classify, FileView, Head, UnitBody};

    /// A family of `*.hello` files, whose raw form sits in `RAW_*` folders.
    struct Hello;

    #[derive(Debug, Serialize)]
    struct HelloFile {
        path: String,
        ready: bool,
    }

    impl UnitBody for HelloFile {
        fn kind(&self) -> &'static str {
            "hello"
        }
        fn path(&self) -> &str {
            &self.path
        }
        fn summary(&self) -> String {
            "a greeting".to_string()
        }
        fn analysable(&self) -> bool {
            self.ready
        }
    }

    impl Recognizer for Hello {
        fn describes(&self) -> &'static [&'static str] {
            &["a hello file"]
        }
        fn looks_for(&self) -> &'static [&'static str] {
            &["hello files (`*.hello`)"]
        }
        fn loose_head(&self, _path: &str, _size: u64) -> usize {
            8
        }
        fn recognize(&self, file: &FileView) -> Option<Unit> {
            file.path.ends_with(".hello").then(|| {
                Unit::new(HelloFile {
                    path: file.path.to_string(),
                    ready: file.head.bytes() != Some(b"draft"),
                })
            })
        }
        fn near_misses(&self, unrecognised: &[&str]) -> Vec<Finding> {
            let mut folders: Vec<String> = unrecognised
                .iter()
                .filter_map(|p| {
                    let i = p.find("RAW_")?;
                    let end = p[i..].find('/').map_or(p.len(), |j| i + j);
                    Some(p[..end].to_string())
                })
                .collect();
            folders.dedup();
            folders
                .into_iter()
                .map(|path| Finding {
                    path,
                    what: "raw hello data".to_string(),
                    hint: Some("say hello first".to_string()),
                })
                .collect()
        }
    }

    fn run(files: &[(&str, &[u8])]) -> Option<NothingToAnalyse> {
        let families: [&dyn Recognizer; 1] = [&Hello];
        let entries: Vec<Entry> = files
            .iter()
            .map(|(p, b)| Entry {
                path: p.to_string(),
                size: b.len() as u64,
            })
            .collect();
        let heads: Vec<Head> = files.iter().map(|(_, b)| Head::Bytes(b.to_vec())).collect();
        let inventory = classify(&entries, &heads, &families);
        nothing_to_analyse(&[], &entries, &inventory, &families, &families, &|u| {
            u.body().analysable()
        })
    }

    #[test]
    fn an_analysable_unit_means_nothing_to_explain() {
        assert_eq!(run(&[("d/a.hello", b"hi")]), None);
    }

    #[test]
    fn an_empty_input_says_so_and_what_was_looked_for() {
        let n = run(&[]).unwrap();
        assert_eq!(
            n.to_string(),
            "nothing to analyse: no files at all (looked for hello files (`*.hello`))"
        );
    }

    #[test]
    fn near_misses_first_then_units_that_cannot_be_read_then_specific_reasons() {
        let n = run(&[
            ("d/x/RAW_1/a.bin", b"\0\0"),
            ("d/x/RAW_1/b.bin", b"\0\0"),
            ("d/draft.hello", b"draft"),
            ("d/notes.txt", b"notes"),
            ("d/empty.txt", b""),
        ])
        .unwrap();
        assert_eq!((n.files, n.depth, n.more), (5, 3, 1));
        assert_eq!(
            n.to_string(),
            "nothing to analyse: looked for hello files (`*.hello`) in 5 files, down to 3 folder \
             levels\nfound:\n  d/x/RAW_1: raw hello data\n    hint: say hello first\n  \
             d/draft.hello: hello (a greeting)\n  d/empty.txt: empty file (0 bytes)\n  and 1 other \
             file memlens does not read"
        );
    }

    #[test]
    fn the_message_said_of_what_was_given_names_it_first() {
        let families: [&dyn Recognizer; 1] = [&Hello];
        let inventory = classify(&[], &[], &families);
        let said = |given: &[&str]| {
            let given: Vec<String> = given.iter().map(|g| g.to_string()).collect();
            nothing_to_analyse(&given, &[], &inventory, &families, &families, &|_| true)
                .unwrap()
                .said()
        };
        let rest = "nothing to analyse: no files at all (looked for hello files (`*.hello`))";
        assert_eq!(said(&[]), rest);
        assert_eq!(said(&["empty"]), format!("empty: {rest}"));
        assert_eq!(
            said(&["a", "b/c", "d", "e", "f", "g"]),
            format!("a, b/c, d, e and 2 more: {rest}")
        );
    }

    #[test]
    fn findings_are_capped_and_the_rest_counted() {
        let names: Vec<String> = (0..12).map(|i| format!("f{i:02}.txt")).collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let n = run(&files).unwrap();
        assert_eq!((n.found.len(), n.more, n.depth), (MAX_FINDINGS, 4, 0));
        assert_eq!(n.found[0].path, "f00.txt");
    }

    #[test]
    fn under_matches_whole_components() {
        assert!(under("a/b/c", "a/b"));
        assert!(under("a/b", "a/b"));
        assert!(!under("a/bc", "a/b"));
        assert!(under("x", ""));
    }
}
