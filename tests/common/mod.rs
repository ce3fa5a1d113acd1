//! Helpers the end-to-end tests share: running the rqps binary and reading
//! what it wrote. Each test crate uses a part of them.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the rqps binary with `args` and waits for it.
pub fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .output()
        .expect("rqps runs")
}

/// Standard output, then standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Whether a missing server binary fails the test (`RQPS_REQUIRE_SERVERS=1`,
/// as CI sets it) instead of skipping it.
pub fn servers_required() -> bool {
    std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1")
}

/// Whether `kind`'s server binaries are here: `false` (the test skips it,
/// saying so) or, with [`servers_required`], a panic.
pub fn server_available(kind: rqps::engine::server::Recipe) -> bool {
    match rqps::engine::server::locate(kind, None) {
        Ok(_) => true,
        Err(e) if servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but: {e}"),
        Err(e) => {
            eprintln!("skipping {kind}: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
            false
        }
    }
}
