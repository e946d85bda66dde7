//! Git LFS pointer files: a clone made without `git lfs` (or a download of a repository's files
//! from a web page) holds, in place of each large file tracked by LFS, a text of about 130 bytes
//! naming the object (`version https://git-lfs.github.com/spec/v1`, `oid sha256:…`, `size N`).
//! Committed profiler output is often tracked this way: read as a trace, a CSV, a pickle or a
//! database, such a file fails with a message about its first bytes that does not say what
//! happened; these functions tell it apart so that the message can.

use crate::source::Source;

/// The first line of every pointer file (the spec's current URL and the one of its first drafts).
const VERSIONS: [&[u8]; 2] = [
    b"version https://git-lfs.github.com/spec/v1",
    b"version https://hawser.github.com/spec/v1",
];

/// The spec's limit on a pointer file's size: a longer file is not a pointer.
pub const MAX_POINTER_BYTES: u64 = 1024;

/// Whether `head`, a file's first bytes (the whole of a small file), is a Git LFS pointer; its
/// inner value is the size of the object it stands for when the `size` line is readable.
pub fn pointer(head: &[u8]) -> Option<Option<u64>> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = lines.next()?;
    if !VERSIONS.contains(&first) {
        return None;
    }
    let size = lines
        .filter_map(|l| l.strip_prefix(b"size "))
        .find_map(|digits| std::str::from_utf8(digits).ok()?.trim().parse::<u64>().ok());
    Some(size)
}

/// [`pointer`] of the file `src`: `None` for a file longer than a pointer can be, or unreadable.
pub fn pointer_in(src: &dyn Source) -> Option<Option<u64>> {
    if src.len() > MAX_POINTER_BYTES {
        return None;
    }
    let head = src.read_range(0, src.len() as usize).ok()?;
    pointer(&head)
}

/// `d`, a reader's refusal of `src`, said of a pointer file when `src` is one (at no line or byte:
/// the whole file is the pointer), as it was otherwise.
pub fn explain(src: &dyn Source, mut d: crate::diag::Diagnostic) -> crate::diag::Diagnostic {
    if let Some(size) = pointer_in(src) {
        d.message = said(size);
        (d.line, d.byte, d.field) = (None, None, None);
    }
    d
}

/// What a pointer file is, in the words of a diagnostic or of an unknown file's reason.
pub fn said(size: Option<u64>) -> String {
    let object = match size {
        Some(n) => format!(
            "the {} file it stands for",
            crate::profiler::size_class::bytes_text(n)
        ),
        None => "the file it stands for".to_string(),
    };
    format!(
        "a Git LFS pointer, not the file itself: {object} was never downloaded (run `git lfs pull` \
         in the repository it came from, then open the file again)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    /// A pointer as `git lfs` writes it (keys sorted, LF line ends); the object is the 870 MB
    /// `trace_view.json` of a public repository, whose clone holds only this text.
    const POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n\
oid sha256:760b7f89de48e87cca2ef79508e042ac7408ca16d48eeddee11b7855177942b6\n\
size 870601265\n";

    #[test]
    fn a_pointer_gives_its_object_size() {
        assert_eq!(pointer(POINTER), Some(Some(870_601_265)));
        // Line ends converted to CRLF by a checkout, and the spec's first URL.
        let crlf: Vec<u8> = POINTER
            .split(|&b| b == b'\n')
            .flat_map(|l| l.iter().copied().chain(*b"\r\n"))
            .collect();
        assert_eq!(pointer(&crlf), Some(Some(870_601_265)));
        let hawser = b"version https://hawser.github.com/spec/v1\nsize 12\n";
        assert_eq!(pointer(hawser), Some(Some(12)));
        // A pointer whose size line is missing or damaged is still one.
        assert_eq!(
            pointer(b"version https://git-lfs.github.com/spec/v1\nsize x\n"),
            Some(None)
        );
    }

    #[test]
    fn other_files_are_not_pointers() {
        for text in [
            &b"[{\"ph\": \"X\"}]"[..],
            b"Name,Size(KB),Allocation Time(us)\r\n",
            b"\x80\x04\x95",
            b"version https://git-lfs.github.com/spec/v2\nsize 1\n",
            b"  version https://git-lfs.github.com/spec/v1\n",
            b"",
        ] {
            assert_eq!(pointer(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_source_is_a_pointer_only_when_small() {
        let src = BytesSource::new("trace_view.json", POINTER.to_vec());
        assert_eq!(pointer_in(&src), Some(Some(870_601_265)));
        let mut long = POINTER.to_vec();
        long.resize(MAX_POINTER_BYTES as usize + 1, b' ');
        assert_eq!(pointer_in(&BytesSource::new("x", long)), None);
    }

    #[test]
    fn a_refusal_of_a_pointer_is_said_of_the_pointer() {
        let refusal = || {
            crate::diag::Diagnostic::error("trace_view.json", "expected a JSON array").at_byte(0)
        };
        let d = explain(
            &BytesSource::new("trace_view.json", POINTER.to_vec()),
            refusal(),
        );
        assert_eq!(d.message, said(Some(870_601_265)));
        assert_eq!((d.file.as_str(), d.byte), ("trace_view.json", None));
        let other = BytesSource::new("trace_view.json", b"{}".to_vec());
        assert_eq!(explain(&other, refusal()), refusal());
    }

    #[test]
    fn the_words_name_the_size_and_the_command() {
        assert_eq!(
            said(Some(870_601_265)),
            "a Git LFS pointer, not the file itself: the 830.3 MiB file it stands for was \
             never downloaded (run `git lfs pull` in the repository it came from, then open the \
             file again)"
        );
        assert!(said(None).contains("the file it stands for was never downloaded"));
    }
}
