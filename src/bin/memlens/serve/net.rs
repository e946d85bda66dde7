//! The connections of `memlens serve`: hyper's HTTP/1.1 on a single-threaded tokio runtime.
//! Every connection is a task on that runtime, so any number of them (a browser opens six at
//! once and keeps them alive, plus speculative ones that may never send a request) are read at
//! the same time and none waits for another to close. Each request's route runs on tokio's
//! blocking threads, because engine calls and the job long-poll block.

use super::http::{self, Call, Reply, Site};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// Serves `listener` until the process is stopped (or the runtime cannot start).
pub fn serve(listener: std::net::TcpListener, site: Arc<Site>) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot set up the listening socket: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| format!("cannot set up the listening socket: {e}"))?;
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                // Out of file descriptors or a connection reset before it was accepted: wait a
                // little instead of spinning, then go on serving the others.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let site = site.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| answer(site.clone(), request));
                // A client that goes away mid-answer (a closed tab) ends only its connection.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// Answers one request: reads its body (POST only), runs the route off the runtime's thread and
/// adds the headers every answer carries.
async fn answer(
    site: Arc<Site>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = if parts.method == hyper::Method::POST {
        Limited::new(body, http::MAX_BODY)
            .collect()
            .await
            .ok()
            .map(|b| b.to_bytes().to_vec())
    } else {
        Some(Vec::new())
    };
    let call = Call {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or_default().to_string(),
        host: parts
            .headers
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string),
        body,
    };
    let reply = tokio::task::spawn_blocking(move || http::handle(&site, call))
        .await
        .unwrap_or_else(|_| Reply {
            status: 500,
            content_type: "text/plain; charset=utf-8",
            cache: "no-store",
            body: b"the request's handler failed".to_vec(),
        });
    Ok(response(reply))
}

fn response(reply: Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(reply.cache));
    for (name, value) in http::HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
