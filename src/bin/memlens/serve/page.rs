//! The page's files for `memlens serve`: embedded in the binary when it was built with
//! `--features page` (after `npm run build`), else read from a folder on disk (`--www DIR`, or
//! this checkout's `www/` when it still exists).

use std::path::{Path, PathBuf};

#[cfg(feature = "page")]
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/page_files.rs"));
}

/// Where the page's files come from.
pub enum Page {
    /// Built into the binary.
    #[cfg_attr(not(feature = "page"), allow(dead_code))]
    Embedded(&'static [(&'static str, &'static [u8])]),
    /// A folder holding the built page.
    Folder(PathBuf),
}

impl Page {
    /// The page to serve: `www` when given, else the embedded one, else the checkout's `www/`.
    pub fn find(www: Option<&Path>) -> Result<Page, String> {
        let built = |dir: &Path| dir.join("pkg").join("memlens_bg.wasm").is_file();
        if let Some(dir) = www {
            if !dir.join("index.html").is_file() {
                return Err(format!(
                    "{}: no index.html: not the page's folder",
                    dir.display()
                ));
            }
            if !built(dir) {
                return Err(format!(
                    "{}: the page is not built (pkg/memlens_bg.wasm is missing): run `npm run build`",
                    dir.display()
                ));
            }
            return Ok(Page::Folder(dir.to_path_buf()));
        }
        #[cfg(feature = "page")]
        return Ok(Page::Embedded(embedded::PAGE));
        #[cfg(not(feature = "page"))]
        {
            let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("www");
            if built(&checkout) {
                return Ok(Page::Folder(checkout));
            }
            Err(format!(
                "this memlens was built without the page (no --features page) and {} holds no \
                 built page: run `npm run build && cargo build --release --features page` in the \
                 checkout, or pass --www DIR (a built www/ folder)",
                checkout.display()
            ))
        }
    }

    /// Where the page comes from, in words.
    pub fn describe(&self) -> String {
        match self {
            Page::Embedded(files) => {
                format!("the page built into this binary ({} files)", files.len())
            }
            Page::Folder(dir) => format!("the page in {}", dir.display()),
        }
    }

    /// The bytes of the page file at `rel` (`/`-separated, no `..`: the caller checked).
    pub fn get(&self, rel: &str) -> Option<Vec<u8>> {
        match self {
            Page::Embedded(files) => files
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, b)| b.to_vec()),
            Page::Folder(dir) => {
                let path = rel.split('/').fold(dir.clone(), |p, c| p.join(c));
                std::fs::read(path).ok()
            }
        }
    }
}

/// The content type of a page file, by extension (the development server's table).
pub fn mime(rel: &str) -> &'static str {
    let ext = rel.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json; charset=utf-8",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "ir" => "text/plain; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `index.html` with the marker that tells the page a native engine answers on its origin.
pub fn mark_native(index: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(index);
    let marker = "<meta name=\"memlens-engine\" content=\"native\">";
    match text.find("<meta charset=\"utf-8\">") {
        Some(i) => {
            let at = i + "<meta charset=\"utf-8\">".len();
            format!("{}\n{marker}{}", &text[..at], &text[at..]).into_bytes()
        }
        None => format!("{marker}\n{text}").into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_goes_after_the_charset() {
        let page = b"<!doctype html>\n<head>\n<meta charset=\"utf-8\">\n<title>x</title>";
        assert_eq!(
            String::from_utf8(mark_native(page)).unwrap(),
            "<!doctype html>\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"memlens-engine\" \
             content=\"native\">\n<title>x</title>"
        );
        assert_eq!(mime("pkg/memlens_bg.wasm"), "application/wasm");
        assert_eq!(mime("app.JS"), "text/javascript; charset=utf-8");
    }

    #[test]
    fn a_folder_page_serves_its_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("index.html"), "<html>").unwrap();
        std::fs::write(dir.path().join("pkg/memlens_bg.wasm"), "wasm").unwrap();
        let page = Page::find(Some(dir.path())).unwrap();
        assert_eq!(
            page.get("pkg/memlens_bg.wasm").as_deref(),
            Some(&b"wasm"[..])
        );
        assert_eq!(page.get("none.js"), None);
        std::fs::remove_file(dir.path().join("pkg/memlens_bg.wasm")).unwrap();
        assert!(Page::find(Some(dir.path())).is_err());
    }
}
