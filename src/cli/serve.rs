//! `rqps serve`: its arguments, as the typed request of [`crate::serve`].

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use clap::Args;

use crate::error::Error;
use crate::serve::ServeRequest;

#[derive(Args, Debug)]
#[command(
    after_help = "Pages: /runs (filter by name, suite, engine, status), /compare?base=A&target=B \
(the answer of `rqps report --base A --targets B`), /history?suite=S&name=GLOB (change points, \
as `rqps history`), /run/RUN-ID (one run: context, results, hardware per operation, per-second \
series, CPU profiles) and /compat (compatibility records). Add ?format=json, or send Accept: \
application/json, for the page's JSON.\n\nExamples:\n  rqps serve --results rqps-results\n  \
rqps serve --results nightly --listen 127.0.0.1:9000\n  \
rqps serve --listen 0.0.0.0:8080   # the whole network reads it (no login, no TLS)"
)]
pub struct ServeArgs {
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    pub results: PathBuf,
    /// Address and port to listen on: HOST:PORT, or a PORT on 127.0.0.1. The default serves
    /// this machine only; another address serves everyone who reaches it, without login.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR", value_parser = listen_addr)]
    pub listen: SocketAddr,
    /// No line per request on standard error.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `8080`, `127.0.0.1:8080`, `[::1]:8080` or `localhost:8080`.
fn listen_addr(s: &str) -> Result<SocketAddr, Error> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    s.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            crate::error::usage(format!(
                "'{s}' is not HOST:PORT or a PORT (e.g. 127.0.0.1:8080)"
            ))
        })
}

pub fn serve(a: &ServeArgs) -> Result<i32, Error> {
    crate::serve::serve(&ServeRequest {
        results: a.results.clone(),
        listen: a.listen,
        log: !a.quiet,
    })
}
