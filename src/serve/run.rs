//! `rqps serve` itself: the folder checked and indexed, the address bound
//! (loopback unless the user names another), and each request routed to
//! its page.

use std::io::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::http::{self, Request, Response};
use super::index::Folder;
use super::paths::{self, Page};
use super::{page, reports, views};
use crate::error::{Error, failed, usage};

/// Worker threads: requests answered at once.
const WORKERS: usize = 8;

/// What `rqps serve` serves, and where.
pub struct ServeRequest {
    pub results: PathBuf,
    pub listen: SocketAddr,
    /// One line per request on standard error.
    pub log: bool,
}

/// Whether `host` (a `Host` header: `localhost:8080`, `[::1]:8080`) names
/// this machine's loopback.
fn loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Routes `req` to its page; a refusal answers 4xx with why. On a loopback
/// address (`loopback`), a request that names another host is refused: a
/// page elsewhere that points its name at 127.0.0.1 (DNS rebinding) reads
/// nothing.
pub fn handle(folder: &Folder, req: &Request, loopback: bool) -> Response {
    if loopback && req.host.as_deref().is_some_and(|h| !loopback_name(h)) {
        return page::error(
            403,
            None,
            "/",
            "this server listens on loopback and answers requests for localhost or 127.0.0.1 only; to serve other names, give --listen their address",
        );
    }
    let t = match paths::route(&req.target, req.accept.as_deref()) {
        Ok(t) => t,
        Err(r) => return page::error(r.status, None, "/", &r.why),
    };
    let path = req.target.split('?').next().unwrap_or("/");
    let answer = match &t.page {
        Page::Runs => views::runs(folder, &t),
        Page::Run(id) => views::run(folder, &t, id),
        Page::Compare => reports::compare(folder, &t),
        Page::History => reports::history(folder, &t),
        Page::Compat(file) => reports::compat(folder, &t, file.as_deref()),
    };
    answer.unwrap_or_else(|r| page::error(r.status, Some(&t), path, &r.why))
}

/// Serves `req.results` until the process is stopped (Ctrl-C).
pub fn serve(req: &ServeRequest) -> Result<i32, Error> {
    let meta = std::fs::metadata(&req.results)
        .map_err(|_| crate::report::load::no_results_dir(&req.results))?;
    if !meta.is_dir() {
        return Err(usage(format!(
            "--results {} is not a folder: give the results directory `rqps run --results` wrote",
            req.results.display()
        )));
    }
    let listener = TcpListener::bind(req.listen).map_err(|e| {
        usage(format!(
            "cannot listen on {}: {e}; give another address with --listen, e.g. --listen 127.0.0.1:8081",
            req.listen
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| failed(format!("cannot read the address listened on: {e}")))?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "warning: listening on {addr}: anyone who reaches it reads the results folder (no login, no TLS); the default, 127.0.0.1, serves this machine only"
        );
    }
    let started = Instant::now();
    let folder = Folder::open(req.results.clone());
    let runs = folder.snapshot().runs.len();
    eprintln!(
        "indexed {runs} runs of {} in {:.1} s",
        req.results.display(),
        started.elapsed().as_secs_f64()
    );
    // The first line on standard output is the address (port 0 picks one).
    // The scheme's slashes apart: a `//` in a string reads as a comment to
    // the import scan of tests/architecture.rs.
    println!(
        "serving {} at http:{}{addr}/ (Ctrl-C stops)",
        req.results.display(),
        "/".repeat(2)
    );
    let _ = std::io::stdout().flush();
    let log = req.log;
    let loopback = addr.ip().is_loopback();
    let handler: Arc<http::Handler> = Arc::new(move |r: &Request| {
        let t = Instant::now();
        let resp = handle(&folder, r, loopback);
        if log {
            // Never a panic for a closed standard error: the line is dropped.
            let shown: String = r.target.chars().take(200).collect();
            let _ = writeln!(
                std::io::stderr(),
                "{} {shown} {} {} ms",
                r.method,
                resp.status,
                t.elapsed().as_millis()
            );
        }
        resp
    });
    let e = http::serve(listener, WORKERS, handler);
    Err(failed(format!("rqps serve stopped: {e}")))
}

#[cfg(test)]
mod tests {
    use super::loopback_name;

    #[test]
    fn only_loopback_names_are_this_machine() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:8080",
            "127.0.0.2",
            "[::1]:8080",
            "LOCALHOST.",
            "a.localhost:1",
        ] {
            assert!(loopback_name(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "10.0.0.1:8080",
            "[::2]:80",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
        ] {
            assert!(!loopback_name(bad), "{bad}");
        }
    }
}
