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
//! A path outside the served roots is answered 403 with the reason. Bound to loopback, requests
//! naming another host are refused, so a web page elsewhere cannot reach the engine through a
//! DNS name that resolves to 127.0.0.1.

use super::engine::{Answer, Engine, Failure};
use super::page::{self, Page};
use serde_json::json;
use std::io::Read;
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, StatusCode};

/// The page's Content-Security-Policy: the same as its meta tag and the development server's.
pub const CSP: &str =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' \
                       blob:; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; \
                       font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

/// Largest request body read (a call with a long list of paths stays far below).
const MAX_BODY: u64 = 64 << 20;

/// What every request shares.
pub struct Site {
    /// The engine (its roots may be empty: then the page alone is served).
    pub engine: Engine,
    /// The page's files.
    pub page: Page,
    /// Host names requests may carry; `None` accepts any (bound to a non-loopback address).
    pub hosts: Option<Vec<String>>,
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn respond(request: Request, status: u16, content_type: &str, body: Vec<u8>, cache: &str) {
    let mut response = Response::from_data(body).with_status_code(StatusCode(status));
    for (name, value) in [
        ("Content-Type", content_type),
        ("Cache-Control", cache),
        ("Content-Security-Policy", CSP),
        ("X-Content-Type-Options", "nosniff"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Embedder-Policy", "require-corp"),
        // One request per connection: with kept-alive connections a page load that needs more
        // than the browser's six parallel connections stalled (the seventh request never answered).
        ("Connection", "close"),
    ] {
        if let Some(h) = header(name, value) {
            response.add_header(h);
        }
    }
    // The client may have gone (a closed tab): nothing to do about it.
    let _ = request.respond(response);
}

fn text(request: Request, status: u16, message: &str) {
    respond(
        request,
        status,
        "text/plain; charset=utf-8",
        message.as_bytes().to_vec(),
        "no-store",
    );
}

fn json_answer(request: Request, body: String) {
    respond(
        request,
        200,
        "application/json; charset=utf-8",
        body.into_bytes(),
        "no-store",
    );
}

fn failure(request: Request, f: Failure) {
    match f {
        Failure::Bad(m) => text(request, 400, &m),
        Failure::Forbidden(m) => text(request, 403, &m),
        Failure::Missing(m) => text(request, 404, &m),
    }
}

/// The value of query parameter `name`.
fn query(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn host_allowed(site: &Site, request: &Request) -> bool {
    let Some(allowed) = &site.hosts else {
        return true;
    };
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_ascii_lowercase());
    host.is_some_and(|h| allowed.contains(&h))
}

/// Answers one request.
pub fn handle(site: &Site, mut request: Request) {
    if !host_allowed(site, &request) {
        return text(
            request,
            403,
            "memlens serve answers only requests for its own address (localhost); open the URL it printed",
        );
    }
    let url = request.url().to_string();
    let (path, params) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let path = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    let method = request.method().clone();
    match (method, path.as_str()) {
        (Method::Get, "/api/engine") => {
            let e = &site.engine;
            json_answer(
                request,
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
        (Method::Get, "/api/list") => {
            let rel = query(params, "path");
            match site.engine.roots().list(rel.as_deref()) {
                Ok(entries) => json_answer(
                    request,
                    json!({ "path": rel.unwrap_or_default(), "entries": entries }).to_string(),
                ),
                Err(r) => failure(request, r.into()),
            }
        }
        (Method::Get, "/api/job") => {
            let id = query(params, "id").and_then(|v| v.parse().ok());
            let seq = query(params, "seq")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let Some(id) = id else {
                return text(request, 400, "/api/job needs ?id=N");
            };
            match site.engine.poll(id, seq, Duration::from_millis(250)) {
                Ok(Answer::Json(body)) => json_answer(request, body),
                Ok(Answer::Bytes(_)) => text(request, 500, "a job answers JSON"),
                Err(f) => failure(request, f),
            }
        }
        (Method::Post, "/api/rpc") => {
            let mut body = Vec::new();
            let read = request
                .as_reader()
                .take(MAX_BODY + 1)
                .read_to_end(&mut body);
            if read.is_err() || body.len() as u64 > MAX_BODY {
                return text(request, 413, "request body unreadable or over 64 MiB");
            }
            let call: serde_json::Value = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(e) => return text(request, 400, &format!("bad call: {e}")),
            };
            match site.engine.call(&call) {
                Ok(Answer::Json(body)) => json_answer(request, body),
                Ok(Answer::Bytes(bytes)) => {
                    respond(request, 200, "application/octet-stream", bytes, "no-store")
                }
                Err(f) => failure(request, f),
            }
        }
        (_, p) if p.starts_with("/api/") => text(request, 404, &format!("no endpoint {p}")),
        (Method::Get | Method::Head, _) => {
            let rel = path.trim_start_matches('/');
            let rel = if rel.is_empty() || rel.ends_with('/') {
                format!("{rel}index.html")
            } else {
                rel.to_string()
            };
            if rel.split('/').any(|c| c == ".." || c.is_empty()) || rel.contains('\\') {
                return text(request, 403, "forbidden");
            }
            match site.page.get(&rel) {
                Some(bytes) => {
                    let body = if rel == "index.html" && !site.engine.roots().is_empty() {
                        page::mark_native(&bytes)
                    } else {
                        bytes
                    };
                    respond(request, 200, page::mime(&rel), body, "no-cache")
                }
                None => text(request, 404, "not found"),
            }
        }
        _ => text(request, 405, "method not allowed"),
    }
}
