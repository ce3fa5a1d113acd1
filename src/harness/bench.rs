//! What the benchmarks of rqps itself share: the process's CPU time, a child
//! process measured with its own CPU, and a throwaway server to measure on.

use std::sync::Arc;

use crate::engine::Driver;
use crate::engine::registry;
use crate::engine::server::{Recipe, Server, ServerSpec};

/// CPU seconds (user + system) this process has used.
pub fn cpu_secs() -> f64 {
    // SAFETY: rusage is plain data, and getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Runs `cmd` to completion and returns its stdout with its rusage.
pub fn run_measured(cmd: &mut std::process::Command) -> Result<(String, f64, f64), String> {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps the child we spawned and fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    if r < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{:?} failed: {out}{err}", cmd.get_program()));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((out, tv(ru.ru_utime), tv(ru.ru_stime)))
}

/// A throwaway server of `engine` (postgres or mariadb), its URL and a driver for it.
pub fn throwaway(engine: &str) -> Result<(Recipe, Server, String, Arc<dyn Driver>), String> {
    let kind = registry::server_by_name(engine).map_err(|e| e.to_string())?;
    let server = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("{n}"))
        .map_err(|e| e.to_string())?;
    let url = server.url();
    let driver = crate::engine::target::Target::parse(&url)
        .map_err(|e| e.to_string())?
        .server_driver()
        .ok_or("not a server URL")?
        .map_err(|e| e.to_string())?;
    Ok((kind, server, url, driver))
}
