//! `rqps bench vs-sysbench --tls` end to end, on real throwaway MariaDB and
//! PostgreSQL servers and the real sysbench: both tools run over TLS and
//! their figures are reported; and a server started to require TLS refuses
//! a plaintext client (sysbench's and rqps's alike) while it lets the same
//! client in over TLS, so the comparison cannot measure plaintext by mistake.
//!
//! Without sysbench or the server binaries these tests print why and pass,
//! unless `RQPS_REQUIRE_SERVERS=1`, in which case they fail.

mod common;
use common::{server_available, servers_required, text};
use std::process::Command;

use rqps::engine::server::{Recipe, Server, ServerSpec};
use rqps::engine::target::Target;

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

/// Whether sysbench runs here (see [`server_available`]).
fn sysbench_available() -> bool {
    match Command::new("sysbench").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        r if servers_required() => {
            panic!("RQPS_REQUIRE_SERVERS=1 but sysbench does not run: {r:?}")
        }
        _ => {
            eprintln!("skipping: no sysbench (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
            false
        }
    }
}

/// The numbers in `line` after `label`, up to the next letter.
fn number_after(line: &str, label: &str) -> f64 {
    let at = line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line:?}"))
        + label.len();
    line[at..]
        .trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line:?}"))
}

#[test]
fn vs_sysbench_with_tls_runs_both_tools_over_tls_on_both_servers_and_reports_their_figures() {
    if !sysbench_available() || !server_available(MARIADB) || !server_available(PG) {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "bench",
            "vs-sysbench",
            "--tls",
            "--engines",
            "mariadb,postgres",
            "--rounds",
            "1",
            "--secs",
            "1",
            "--table-size",
            "1000",
            "--threads",
            "1",
            "--per-connection",
        ])
        .output()
        .expect("rqps runs");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    // One section per engine, in the order asked for.
    let sections: Vec<&str> = out
        .split("point-query / oltp_point_select")
        .skip(1)
        .collect();
    assert_eq!(sections.len(), 2, "{out}");
    assert!(
        out.find("\nMariaDB (") < out.find("\nPostgreSQL ("),
        "{out}"
    );
    for (section, sysbench_tls, rqps_tls) in [
        (
            sections[0],
            "sysbench --mysql-ssl=on: cipher TLS",
            "rqps ssl-mode=REQUIRED: TLSv1.",
        ),
        (
            sections[1],
            "sysbench PGSSLMODE=require: TLSv1.",
            "rqps sslmode=require: TLSv1.",
        ),
    ] {
        assert!(section.contains("TLS required by the server"), "{section}");
        // What each tool negotiated: sysbench's from its own driver or the
        // server's log of its login, rqps's from its stored results.
        assert!(section.contains(sysbench_tls), "{section}");
        assert!(section.contains(rqps_tls), "{section}");
        let round = section
            .lines()
            .find(|l| l.trim_start().starts_with("1     1"))
            .unwrap_or_else(|| panic!("no round line in {section}"));
        let figures: Vec<f64> = round
            .split_whitespace()
            .skip(2)
            .map(|n| n.parse().unwrap())
            .collect();
        // sb qps, usr, sys, tot, cs/q; rqps qps, usr, sys, tot, cs/q.
        assert_eq!(figures.len(), 10, "{round}");
        // User or system time alone may round to 0 in a 1 s round (rusage
        // counts in clock ticks; seen under load 9 on 2 cores), never the
        // QPS or the total.
        assert!(
            figures.iter().all(|f| f.is_finite() && *f >= 0.0),
            "{round}"
        );
        assert!([0, 3, 5, 8].iter().all(|&i| figures[i] > 0.0), "{round}");
        let all = section
            .lines()
            .find(|l| l.contains("all: "))
            .unwrap_or_else(|| panic!("no summary in {section}"));
        for label in [
            "rqps/sysbench = ",
            "total client us/q ",
            " vs ",
            "QPS rqps/sysbench = ",
        ] {
            let n = number_after(all, label);
            assert!(n.is_finite() && n > 0.0, "{label}{n} in {all}");
        }
        // Both clients wait for replies: each switches context.
        let cs = section
            .lines()
            .find(|l| l.contains("all: context switches/q"))
            .unwrap_or_else(|| panic!("no context switches in {section}"));
        for label in ["rqps ", "vs sysbench "] {
            let n = number_after(cs, label);
            assert!(n.is_finite() && n > 0.0, "{label}{n} in {cs}");
        }
        // rqps with a thread per connection, and the default against it.
        let pc = section
            .lines()
            .find(|l| l.contains("rqps, a thread per connection:"))
            .unwrap_or_else(|| panic!("no thread-per-connection round in {section}"));
        assert!(
            number_after(pc, "rqps, a thread per connection:") > 0.0,
            "{pc}"
        );
        let placements = section
            .lines()
            .find(|l| l.contains("default / a thread per connection: "))
            .unwrap_or_else(|| panic!("no placement comparison in {section}"));
        for label in ["QPS ", "total client us/q ", "context switches/q "] {
            let n = number_after(placements, label);
            assert!(n.is_finite() && n > 0.0, "{label}{n} in {placements}");
        }
        // Each contender's system calls per query, from a run under strace
        // (CI installs it): at least a send and a read per query.
        let calls = section
            .lines()
            .find(|l| l.contains("system calls/q on sockets and waits"))
            .unwrap_or_else(|| panic!("no system calls in {section}"));
        let counted = !calls.contains("strace is not installed") || servers_required();
        for label in counted
            .then_some(["): rqps ", "rqps, a thread per connection, ", "; sysbench "])
            .into_iter()
            .flatten()
        {
            let n = number_after(calls, label);
            assert!((2.0..50.0).contains(&n), "{label}{n} in {calls}");
        }
        // The medians of the rounds' ratios, issue 30's done-when figures.
        let median = section
            .lines()
            .find(|l| l.contains("median of 1 rounds: "))
            .unwrap_or_else(|| panic!("no medians in {section}"));
        for label in ["QPS rqps/sysbench = ", "total client us/q rqps/sysbench = "] {
            let n = number_after(median, label);
            assert!(n.is_finite() && n > 0.0, "{label}{n} in {median}");
        }
    }
}

/// sysbench's oltp_point_select `run` of one query on `server`, over TLS
/// when `tls`, with the password in the environment.
fn sysbench_once(server: &Server, tls: bool, cwd: &std::path::Path) -> std::process::Output {
    let port = server.port();
    let mut cmd = Command::new("sysbench");
    cmd.current_dir(cwd);
    if server.recipe().key() == "postgres" {
        cmd.args([
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            "--pgsql-user=postgres",
        ])
        .arg(format!("--pgsql-port={port}"))
        .env("PGPASSWORD", server.password())
        .env("PGSSLMODE", if tls { "require" } else { "disable" });
    } else {
        cmd.args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            "--mysql-user=root",
        ])
        .arg(format!("--mysql-port={port}"))
        .arg(format!("--mysql-ssl={}", if tls { "on" } else { "off" }))
        .env("MYSQL_PWD", server.password());
    }
    cmd.args([
        "--pgsql-db=sbtest",
        "--mysql-db=sbtest",
        "oltp_point_select",
        "--tables=1",
        "--table-size=10",
        "--events=1",
        "--time=0",
        "prepare",
    ])
    .output()
    .expect("sysbench runs")
}

#[test]
fn a_server_started_to_require_tls_refuses_plaintext_clients_and_admits_them_over_tls() {
    if !sysbench_available() || !server_available(MARIADB) || !server_available(PG) {
        return;
    }
    for kind in [MARIADB, PG] {
        let spec = ServerSpec {
            require_tls: true,
            ..ServerSpec::new(kind)
        };
        let server = Server::start(&spec, &mut |n| eprintln!("note: {n}"))
            .unwrap_or_else(|e| panic!("starting {kind}: {e}"));
        let files = server.tls_files().expect("certificates were made");
        let key = server.recipe().key();

        // rqps's own driver: refused in plaintext, admitted with the URL
        // the server gives its own runs (TLS required).
        let plain = format!("{}?{}", server.url(), kind.tls_param(false));
        let e = match Target::parse(&plain).unwrap().server_driver().unwrap() {
            Ok(d) => d
                .version()
                .expect_err("a plaintext login to a TLS-only server"),
            Err(e) => e,
        };
        assert!(e.to_string().contains("requires TLS"), "{key}: {e}");
        let url = server.url_for_config(&[]);
        assert!(url.ends_with(kind.tls_param(true)), "{url}");
        let driver = Target::parse(&url)
            .unwrap()
            .server_driver()
            .unwrap()
            .unwrap();
        driver
            .version()
            .unwrap_or_else(|e| panic!("{key} over TLS: {e}"));
        assert!(driver.tls().is_some(), "{key}: no TLS on {url}");

        // sysbench: the same; its MySQL driver reads the CA and a client
        // certificate from its working directory.
        let cwd = tempfile::tempdir().unwrap();
        for (name, from) in [
            ("cacert.pem", &files.ca),
            ("client-cert.pem", &files.client_cert),
            ("client-key.pem", &files.client_key),
        ] {
            std::fs::copy(from, cwd.path().join(name)).unwrap();
        }
        let o = sysbench_once(&server, false, cwd.path());
        assert!(
            !o.status.success(),
            "{key}: sysbench in plaintext got in: {}",
            text(&o)
        );
        // MariaDB 10.11 refuses a plaintext login under
        // require_secure_transport as a wrong password; PostgreSQL finds no
        // rule for a connection without encryption.
        let refusal = if key == "postgres" {
            "no encryption"
        } else {
            "error 1045: Access denied"
        };
        assert!(text(&o).contains(refusal), "{key}: {}", text(&o));
        let o = sysbench_once(&server, true, cwd.path());
        assert!(o.status.success(), "{key}: sysbench over TLS: {}", text(&o));
        server.stop().unwrap();
    }
}
