//! Output conventions shared by every subcommand: paths checked before anything runs, the
//! message on inputs with nothing to analyse, a progress bar on a terminal only, `--quiet`, and
//! colour that turns plain when piped or when `NO_COLOR` is set.

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memlens::input::{roots, NothingToAnalyse};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Options every subcommand honours.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// `--json`: one JSON document on stdout.
    pub json: bool,
    /// `--quiet`: no progress and no notes on stderr (errors still go there).
    pub quiet: bool,
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default();
const TITLE: Style = Style::new().bold();

/// Prints `memlens: MESSAGE` on stderr (the prefix red on a terminal).
pub fn error(message: &str) {
    anstream::eprintln!("{ERROR}memlens:{ERROR:#} {message}");
}

/// Prints `memlens: warning: MESSAGE` on stderr (yellow on a terminal), even with `--quiet`.
pub fn warn(message: &str) {
    anstream::eprintln!("{WARNING}memlens: warning:{WARNING:#} {message}");
}

/// A bold line on stdout (plain when piped).
pub fn title(text: &str) {
    anstream::println!("{TITLE}{text}{TITLE:#}");
}

impl Ui {
    /// Refuses paths that do not exist or cannot be looked at: each named, with a close name
    /// when there is one. The caller exits with code 2.
    pub fn check_paths(&self, paths: &[PathBuf]) -> Result<(), String> {
        let problems = roots::check(paths);
        if problems.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        Err(lines.join("\nmemlens: "))
    }

    /// Prints why `paths` hold nothing to analyse (on stderr, even with `--quiet`: it is the
    /// answer). The caller exits with code 1.
    pub fn nothing(&self, paths: &[PathBuf], nothing: &NothingToAnalyse, other_families: bool) {
        let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        // The core's words, which name the paths (the set recorded them as given).
        let text = nothing.said();
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("");
        anstream::eprintln!("{ERROR}memlens:{ERROR:#} {first}");
        for line in lines {
            match line.trim_start().strip_prefix("hint: ") {
                Some(hint) => {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    anstream::eprintln!("{indent}{HINT}hint:{HINT:#} {hint}");
                }
                None => anstream::eprintln!("{line}"),
            }
        }
        if other_families {
            anstream::eprintln!(
                "{HINT}hint:{HINT:#} `memlens {}` analyses whatever the paths hold",
                given.join(" ")
            );
        }
    }

    /// A note on stderr, unless `--quiet`.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            anstream::eprintln!("{text}");
        }
    }

    /// A progress bar over `total` bytes on stderr: drawn only when stderr is a terminal and
    /// `--quiet` is not given, so pipes and logs get no control characters.
    pub fn progress(&self, total: u64, what: &str) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() || total == 0 {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}, \
             {eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(what.to_string());
        bar
    }
}
