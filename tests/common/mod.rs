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
