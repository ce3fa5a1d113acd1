//! Measured intervals are honest (issue 40, item 2; issue 38, moment 7): a
//! test that completed no transaction, or whose measured interval was cut
//! short, is `failed` with the reason, in its line, in `show`, in the
//! report and in the `rqps compare` gate. The misbehaving peer is real: a
//! TCP proxy in front of a throwaway PostgreSQL that, on the Nth
//! `pg_sleep` of a connection, forwards half of the reply and holds the rest.
//!
//! Without PostgreSQL's binaries the test says so and passes, unless
//! `RQPS_REQUIRE_SERVERS=1`.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{read_json, rqps, server_available, text};
use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

/// What the proxy looks for in what a client sends.
const TRIGGER: &[u8] = b"pg_sleep";

/// A proxy to `upstream` on a loopback port. On each connection, once the
/// client has sent [`TRIGGER`] `stall_at` times, the server's next reply is
/// cut in the middle: its first half is forwarded, the rest never is (the
/// connection stays open). `None`: it forwards everything.
fn proxy(upstream: u16, stall_at: Option<usize>) -> u16 {
    let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in l.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let seen = Arc::new(AtomicUsize::new(0));
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let counted = seen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                while let Ok(n) = c_in.read(&mut buf) {
                    if n == 0 || {
                        if buf[..n].windows(TRIGGER.len()).any(|w| w == TRIGGER) {
                            counted.fetch_add(1, Ordering::SeqCst);
                        }
                        s_out.write_all(&buf[..n]).is_err()
                    } {
                        break;
                    }
                }
                let _ = s_out.shutdown(std::net::Shutdown::Both);
            });
            let (mut s_in, mut c_out) = (server, client);
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                while let Ok(n) = s_in.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if stall_at.is_some_and(|k| seen.load(Ordering::SeqCst) >= k) {
                        // Mid-message: a reply's first half, and silence.
                        let _ = c_out.write_all(&buf[..n.div_ceil(2).min(n - 1).max(1)]);
                        return;
                    }
                    if c_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = c_out.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    port
}

/// `rqps run --suite pgbench` of `script` through `port`, 2 s measured.
fn run(dir: &Path, srv: &Server, port: u16, name: &str) -> Output {
    let url = format!(
        "postgres://{}@127.0.0.1:{port}/{}?sslmode=disable",
        srv.user(),
        srv.database()
    );
    let script = dir.join("sleep.sql");
    std::fs::write(&script, "SELECT pg_sleep(0.1);\n").unwrap();
    let results = dir.join("r");
    rqps(&[
        "run",
        "--suite",
        "pgbench",
        "--script",
        script.to_str().unwrap(),
        "--skip-init",
        "--time",
        "2",
        "--clients",
        "1",
        "--message-timeout",
        "3",
        "--name",
        name,
        "--results",
        results.to_str().unwrap(),
        "--target",
        &url,
        "--password-file",
        srv.password_file().to_str().unwrap(),
    ])
}

/// The stored pgbench test of the run named `name`.
fn stored(dir: &Path, name: &str) -> serde_json::Value {
    let results = dir.join("r");
    for run in std::fs::read_dir(&results).unwrap().flatten() {
        let doc = read_json(&run.path().join("run.json"));
        if doc["name"] == name {
            let tests = run.path().join("tests");
            let f = std::fs::read_dir(tests)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().contains("pgbench"))
                .unwrap();
            return read_json(&f);
        }
    }
    panic!("no run named {name}");
}

#[test]
fn a_test_cut_short_or_without_work_is_failed_everywhere_and_an_honest_one_is_ok() {
    if !server_available(PG) {
        return;
    }
    let srv = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    let r = r.to_str().unwrap();

    // Quiet: the proxy forwards everything; the test is ok.
    let o = run(d.path(), &srv, proxy(srv.port(), None), "honest");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = stored(d.path(), "honest");
    assert_eq!(t["status"], "ok", "{t}");
    assert!(t["events"].as_u64().unwrap() >= 5, "{t}");

    // The first transaction's reply stops mid-message; the message timeout
    // (3 s) ends it after the 2 s measured: not one transaction completed.
    let o = run(d.path(), &srv, proxy(srv.port(), Some(1)), "lost");
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    let t = stored(d.path(), "lost");
    assert_eq!(t["status"], "failed", "{t}");
    let why = t["reason"].as_str().unwrap();
    assert!(
        why.starts_with("no work: not one transaction completed in the 2.0 s measured"),
        "{why}"
    );
    assert!(why.contains("in the middle of a message"), "{why}");
    // The live line says it.
    assert!(
        all.lines()
            .any(|l| l.contains("failed: no work: not one transaction")),
        "{all}"
    );

    // The fifth reply stops: half a second of the two measured.
    let o = run(d.path(), &srv, proxy(srv.port(), Some(5)), "short");
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    let t = stored(d.path(), "short");
    assert_eq!(t["status"], "failed", "{t}");
    let why = t["reason"].as_str().unwrap();
    assert!(
        why.starts_with("cut short: the measured interval reached"),
        "{why}"
    );
    assert!(why.contains("% measured)"), "{why}");
    assert!(why.contains("in the middle of a message"), "{why}");
    assert!(t["events"].as_u64().unwrap() >= 3, "{t}");

    // `show` says why, the report does not count them, the gate fails.
    let show = text(&rqps(&["show", "--results", r]));
    assert!(show.contains("failed: pgbench t=1: cut short"), "{show}");
    let rep = rqps(&["report", "--results", r, "--base", "honest"]);
    let rep_text = text(&rep);
    assert!(
        rep_text.contains("not counted: lost pgbench t=1")
            && rep_text.contains("failed (no work: not one transaction"),
        "{rep_text}"
    );
    for (target, says) in [("lost", "no work"), ("short", "cut short")] {
        let gate = rqps(&[
            "compare",
            "--results",
            r,
            "--base",
            "honest",
            "--target",
            target,
        ]);
        let g = text(&gate);
        assert_eq!(gate.status.code(), Some(1), "{g}");
        assert!(g.contains("FAIL:") && g.contains(says), "{g}");
    }
}
