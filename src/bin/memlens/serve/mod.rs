//! `memlens serve [PATH...]`: the page, and a native engine on the same origin that analyses the
//! files under PATH where they are (the way Perfetto's UI uses `trace_processor --httpd`). The
//! page finds the engine, lists the served files in its drop zone, and its worker sends the
//! analysis calls here instead of to WebAssembly; nothing is uploaded anywhere.

mod engine;
mod http;
mod net;
mod page;

use crate::ui::Ui;
use memlens::input::roots::ServedRoots;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `memlens serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Files or folders whose contents the page may open (nothing outside them is read).
    pub paths: Vec<PathBuf>,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on. Anything but loopback exposes the served files to whoever reaches
    /// this machine: prefer the default and an SSH port forward.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Serve the page from this folder (a built `www/`) instead of the one built into the binary.
    #[arg(long, value_name = "DIR")]
    pub www: Option<PathBuf>,
}

/// Serves until the process is stopped.
pub fn run(args: &Args, ui: Ui) -> Result<ExitCode, String> {
    ui.check_paths(&args.paths)?;
    let roots = ServedRoots::new(&args.paths).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        lines.join("\nmemlens: ")
    })?;
    let page = page::Page::find(args.www.as_deref())?;
    let listener = std::net::TcpListener::bind(SocketAddr::new(args.bind, args.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.bind, args.port))?;
    let port = listener.local_addr().map_or(args.port, |a| a.port());
    let loopback = args.bind.is_loopback();
    let shown = if args.bind.is_unspecified() || loopback {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        args.bind
    };
    let url = match shown {
        IpAddr::V6(a) => format!("http://[{a}]:{port}/"),
        IpAddr::V4(a) => format!("http://{a}:{port}/"),
    };
    let hosts = loopback.then(|| {
        ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .map(|h| format!("{h}:{port}"))
            .collect()
    });
    let served: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    if ui.json {
        println!(
            "{}",
            serde_json::json!({ "url": url, "roots": roots.names(), "page": page.describe() })
        );
    } else {
        println!("memlens serve: {url}");
        if served.is_empty() {
            println!(
                "  no PATH given: the page alone (files dropped on it are analysed in the tab)"
            );
        } else {
            println!(
                "  serving {} to the page's native engine",
                served.join(", ")
            );
        }
        println!("  with {}", page.describe());
        if loopback {
            println!(
                "  on a remote node: ssh -L {port}:localhost:{port} NODE, then open http://localhost:{port}/"
            );
        }
    }
    if !loopback {
        crate::ui::warn(&format!(
            "listening on {}:{port}: anyone who can reach this machine on that port can read the \
             served files; the default 127.0.0.1 and an SSH port forward keep them private",
            args.bind
        ));
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let site = Arc::new(http::Site {
        engine: engine::Engine::new(roots),
        page,
        hosts,
    });
    net::serve(listener, site)?;
    Ok(ExitCode::SUCCESS)
}
