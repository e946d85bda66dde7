//! HTTP for `memlens serve`: the page's files with the development server's headers (CSP,
//! cross-origin isolation), and the engine's endpoints under `/api/`:
//!
//! | request | answer |
//! |---|---|
//! | `GET /api/engine` | what the engine is: `{engine, build, version, threads, roots}` |
//! | `GET /api/list?path=P` | the served folder `P` (the roots without `path`) |
//! | `POST /api/rpc` | one engine call, `{"call": name, …}` (see `engine.rs`) |
//! | `GET /api/job?id=N&seq=S` | a long call's progress and outcome, waiting up to 250 ms for news |
//!
//! The routes are a plain function from a [`Call`] to a [`Reply`]; the connections are handled
//! in `net.rs`. A path outside the served roots is answered 403 with the reason. Bound to
//! loopback, requests naming another host are refused, so a web page elsewhere cannot reach the
//! engine through a DNS name that resolves to 127.0.0.1.

use super::engine::{Answer, Engine, Failure};
use super::page::{self, Page};
use hyper::Method;
use serde_json::json;
use std::time::Duration;

/// The page's Content-Security-Policy: the same as its meta tag and the development server's.
pub const CSP: &str =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' \
                       blob:; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; \
                       font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

/// Largest request body read (a call with a long list of paths stays far below).
pub const MAX_BODY: usize = 64 << 20;

/// What every request shares.
pub struct Site {
    /// The engine (its roots may be empty: then the page alone is served).
    pub engine: Engine,
    /// The page's files.
    pub page: Page,
    /// Host names requests may carry; `None` accepts any (bound to a non-loopback address).
    pub hosts: Option<Vec<String>>,
}

/// One request, as the routes need it.
pub struct Call {
    /// The request's method.
    pub method: Method,
    /// The path, not yet percent-decoded.
    pub path: String,
    /// The query string (empty without one).
    pub query: String,
    /// The `Host` header, if any.
    pub host: Option<String>,
    /// The body of a POST (`None`: unreadable or over [`MAX_BODY`]).
    pub body: Option<Vec<u8>>,
}

/// One answer: every answer carries the same security headers (see `net.rs`).
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The `Cache-Control`.
    pub cache: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

/// The headers every answer carries besides its type and caching.
pub const HEADERS: [(&str, &str); 5] = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Embedder-Policy", "require-corp"),
];

fn text(status: u16, message: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        cache: "no-store",
        body: message.as_bytes().to_vec(),
    }
}

fn json_answer(body: String) -> Reply {
    Reply {
        status: 200,
        content_type: "application/json; charset=utf-8",
        cache: "no-store",
        body: body.into_bytes(),
    }
}

fn failure(f: Failure) -> Reply {
    match f {
        Failure::Bad(m) => text(400, &m),
        Failure::Forbidden(m) => text(403, &m),
        Failure::Missing(m) => text(404, &m),
    }
}

/// The value of query parameter `name`.
fn query(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn host_allowed(site: &Site, call: &Call) -> bool {
    let Some(allowed) = &site.hosts else {
        return true;
    };
    call.host
        .as_ref()
        .is_some_and(|h| allowed.contains(&h.to_ascii_lowercase()))
}

/// Answers one request.
pub fn handle(site: &Site, call: Call) -> Reply {
    if !host_allowed(site, &call) {
        return text(
            403,
            "memlens serve answers only requests for its own address (localhost); open the URL it printed",
        );
    }
    let params = call.query.as_str();
    let path = percent_encoding::percent_decode_str(&call.path)
        .decode_utf8_lossy()
        .into_owned();
    match (call.method.as_str(), path.as_str()) {
        ("GET", "/api/engine") => {
            let e = &site.engine;
            json_answer(
                json!({
                    "engine": "memlens",
                    "build": "native",
                    "version": env!("CARGO_PKG_VERSION"),
                    "commit": env!("MEMLENS_COMMIT"),
                    "threads": rayon::current_num_threads(),
                    "roots": e.roots().names(),
                })
                .to_string(),
            )
        }
        ("GET", "/api/list") => {
            let rel = query(params, "path");
            match site.engine.roots().list(rel.as_deref()) {
                Ok(entries) => json_answer(
                    json!({ "path": rel.unwrap_or_default(), "entries": entries }).to_string(),
                ),
                Err(r) => failure(r.into()),
            }
        }
        ("GET", "/api/job") => {
            let id = query(params, "id").and_then(|v| v.parse().ok());
            let seq = query(params, "seq")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let Some(id) = id else {
                return text(400, "/api/job needs ?id=N");
            };
            match site.engine.poll(id, seq, Duration::from_millis(250)) {
                Ok(Answer::Json(body)) => json_answer(body),
                Ok(Answer::Bytes(_)) => text(500, "a job answers JSON"),
                Err(f) => failure(f),
            }
        }
        ("POST", "/api/rpc") => {
            let Some(body) = &call.body else {
                return text(413, "request body unreadable or over 64 MiB");
            };
            let call: serde_json::Value = match serde_json::from_slice(body) {
                Ok(v) => v,
                Err(e) => return text(400, &format!("bad call: {e}")),
            };
            match site.engine.call(&call) {
                Ok(Answer::Json(body)) => json_answer(body),
                Ok(Answer::Bytes(bytes)) => Reply {
                    status: 200,
                    content_type: "application/octet-stream",
                    cache: "no-store",
                    body: bytes,
                },
                Err(f) => failure(f),
            }
        }
        (_, p) if p.starts_with("/api/") => text(404, &format!("no endpoint {p}")),
        ("GET" | "HEAD", _) => {
            let rel = path.trim_start_matches('/');
            let rel = if rel.is_empty() || rel.ends_with('/') {
                format!("{rel}index.html")
            } else {
                rel.to_string()
            };
            if rel.split('/').any(|c| c == ".." || c.is_empty()) || rel.contains('\\') {
                return text(403, "forbidden");
            }
            match site.page.get(&rel) {
                Some(bytes) => {
                    let body = if rel == "index.html" && !site.engine.roots().is_empty() {
                        page::mark_native(&bytes)
                    } else {
                        bytes
                    };
                    Reply {
                        status: 200,
                        content_type: page::mime(&rel),
                        cache: "no-cache",
                        body,
                    }
                }
                None => text(404, "not found"),
            }
        }
        _ => text(405, "method not allowed"),
    }
}
