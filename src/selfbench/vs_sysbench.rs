//! `rqps bench vs-sysbench`: the cost of rqps's client against sysbench on
//! throwaway servers (alternating rounds so drift hits both contenders).
//! With `--tls` both clients speak TLS to servers that accept nothing else,
//! so the cost per query compares like with like; without it both speak
//! plaintext, whatever the caller's environment (`PGSSLMODE`) says.

use clap::Args;

use super::measure::{
    BenchError, ChildUsage, NoResult, Quartiles, run_measured, run_measured_usage,
    throwaway_with_tls,
};
use crate::engine::server::Server;
use crate::suite::sysbench::load::{LoadParams, load};

#[derive(Args, Clone, Debug)]
pub struct VsArgs {
    /// Engines to start throwaway servers of: mariadb, postgres (the system's), or a
    /// release from `rqps engine install` (postgres@16.15, mariadb@11.4.5).
    #[arg(long, value_delimiter = ',', default_value = "mariadb,postgres")]
    pub engines: Vec<String>,
    /// Client threads (connections; each tool runs at each count): 2 is the
    /// bar of small runs, 16 to 64 the counts of MySQL studies.
    #[arg(long, value_delimiter = ',', default_value = "2,16,64")]
    pub threads: Vec<usize>,
    /// Rounds; each round runs sysbench and rqps once per thread count, alternating who goes first.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds per run.
    #[arg(long, default_value_t = 10)]
    pub secs: u64,
    /// Rows in the one sbtest table.
    #[arg(long, default_value_t = 100_000)]
    pub table_size: u64,
    /// Both tools over TLS, to compare the client cost with TLS like with
    /// like. Each server gets a CA and a certificate made for this run and
    /// accepts TCP clients over TLS only, so neither tool can fall back to
    /// plaintext. sysbench runs with --mysql-ssl=on (in a directory holding
    /// the cacert.pem, client-cert.pem and client-key.pem its MySQL driver
    /// reads) or PGSSLMODE=require; rqps with ssl-mode=REQUIRED or
    /// sslmode=require. The header says which TLS each negotiated. Without
    /// --tls both run in plaintext.
    #[arg(long)]
    pub tls: bool,
    /// Also run rqps with a thread per connection (--client-threads 0) in
    /// each round, and compare rqps's default placement with it: the
    /// default should match its QPS at no more CPU per query.
    #[arg(long)]
    pub per_connection: bool,
    /// Skip the system-call count: after a thread count's rounds, each
    /// contender runs once more under `strace -f -c` (not timed) and the
    /// system calls per query are printed.
    #[arg(long)]
    pub no_syscalls: bool,
}

/// A child process's result: queries, QPS, user and system CPU seconds,
/// voluntary and involuntary context switches, and the TLS it used when it
/// says (rqps stores it with its results).
struct ClientRun {
    queries: f64,
    qps: f64,
    user: f64,
    sys: f64,
    vcs: f64,
    ivcs: f64,
    tls: Option<String>,
}

/// The files sysbench 1.0's MySQL driver reads with `--mysql-ssl=on`, from
/// its working directory (their names are fixed). With libmariadb 3.3
/// (Debian 12) all three must exist, it checks the server's certificate
/// against `cacert.pem`, and the server checks the client certificate
/// against its CA: without the files the connection fails with "TLS/SSL
/// error: No such file or directory", with another CA with "self-signed
/// certificate in certificate chain".
const SYSBENCH_MYSQL_TLS_FILES: [&str; 3] = ["cacert.pem", "client-cert.pem", "client-key.pem"];

/// A working directory for sysbench that holds the files its MySQL driver
/// reads for TLS (see [`SYSBENCH_MYSQL_TLS_FILES`]), copied (0600) from the
/// server's.
fn sysbench_tls_dir(server: &Server, dir: &std::path::Path) -> Result<(), BenchError> {
    let files = server
        .tls_files()
        .ok_or_else(|| BenchError::NoResult(NoResult::NoTls))?;
    for (name, from) in
        SYSBENCH_MYSQL_TLS_FILES
            .iter()
            .zip([&files.ca, &files.client_cert, &files.client_key])
    {
        let to = dir.join(name);
        std::fs::copy(from, &to).map_err(BenchError::io(format!(
            "cannot copy {} to {}",
            from.display(),
            to.display()
        )))?;
    }
    Ok(())
}

/// sysbench's `oltp_point_select` on `server`, ready for `run`: its driver
/// flags, the password in the environment, and TLS when `tls_dir` (the
/// working directory [`sysbench_tls_dir`] filled) is given. Returns the
/// command and how its TLS is set, for the header.
fn sysbench_command(
    server: &Server,
    a: &VsArgs,
    threads: usize,
    tls_dir: Option<&std::path::Path>,
) -> Result<(std::process::Command, &'static str), BenchError> {
    let port = server.port().to_string();
    let mut cmd = std::process::Command::new("sysbench");
    let tls_setting = match server.recipe().key() {
        "mariadb" => {
            cmd.args([
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
                &format!("--mysql-port={port}"),
                "--mysql-user=root",
                "--mysql-db=sbtest",
            ]);
            match tls_dir {
                Some(dir) => {
                    cmd.arg("--mysql-ssl=on").current_dir(dir);
                    "--mysql-ssl=on"
                }
                None => "--mysql-ssl=off",
            }
        }
        "postgres" => {
            cmd.args([
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                &format!("--pgsql-port={port}"),
                "--pgsql-user=postgres",
                "--pgsql-db=sbtest",
            ]);
            // Set either way: a PGSSLMODE of the caller's must not decide.
            let (mode, said) = match tls_dir {
                Some(_) => ("require", "PGSSLMODE=require"),
                None => ("disable", "PGSSLMODE=disable"),
            };
            cmd.env("PGSSLMODE", mode);
            said
        }
        other => {
            return Err(NoResult::NotSysbenchEngine {
                engine: other.to_string(),
            }
            .into());
        }
    };
    cmd.env(password_env(server), server.password())
        .arg("oltp_point_select")
        .args(["--tables=1", "--rand-type=uniform", "--skip_trx=on"])
        .arg(format!("--table-size={}", a.table_size))
        .arg(format!("--threads={threads}"));
    Ok((cmd, tls_setting))
}

fn sysbench_run(
    server: &Server,
    a: &VsArgs,
    threads: usize,
    tls_dir: Option<&std::path::Path>,
) -> Result<ClientRun, BenchError> {
    let (mut cmd, _) = sysbench_command(server, a, threads, tls_dir)?;
    let (out, usage) = run_measured_usage(cmd.arg(format!("--time={}", a.secs)).arg("run"))?;
    sysbench_result(&out, usage)
}

/// A sysbench run's figures: its queries and QPS from its output, its CPU
/// and context switches from `usage`.
fn sysbench_result(out: &str, usage: ChildUsage) -> Result<ClientRun, BenchError> {
    // "    queries:                             123456 (12345.67 per sec.)"
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("queries:"))
        .ok_or_else(|| BenchError::NoResult(NoResult::NoQueriesLine))?;
    let mut nums = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty());
    let queries: f64 = nums
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| BenchError::NoResult(NoResult::NoQueryCount))?;
    let qps: f64 = nums
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| BenchError::NoResult(NoResult::NoQps))?;
    Ok(ClientRun {
        queries,
        qps,
        user: usage.user,
        sys: usage.sys,
        vcs: usage.voluntary_cs as f64,
        ivcs: usage.involuntary_cs as f64,
        tls: None,
    })
}

/// What TLS sysbench negotiates with `server`, learnt from a run of one
/// query before the measured ones: its MySQL driver prints the cipher with
/// `--mysql-debug=on` (not the version); its pgsql driver prints nothing,
/// so the server's log of that login says, when the server logs it.
fn sysbench_tls(
    server: &Server,
    a: &VsArgs,
    tls_dir: &std::path::Path,
) -> Result<String, BenchError> {
    let (mut cmd, setting) = sysbench_command(server, a, 1, Some(tls_dir))?;
    let debug = server.recipe().key() == "mariadb";
    if debug {
        cmd.arg("--mysql-debug=on");
    }
    let offset = server.log_len();
    let (out, _, _) = run_measured(cmd.args(["--events=1", "--time=0", "run"]))?;
    // DEBUG: mysql_get_ssl_cipher(con): "TLS_AES_256_GCM_SHA384"
    let printed = out
        .lines()
        .find_map(|l| l.split_once("mysql_get_ssl_cipher(con): \""))
        .map(|(_, rest)| format!("cipher {}", rest.trim_end_matches('"')));
    let said = printed.or_else(|| server.logged_tls_since(offset));
    Ok(format!(
        "{setting}: {}",
        said.as_deref()
            .unwrap_or("TLS (the version and cipher are not reported)")
    ))
}

/// The environment variable the server's clients (sysbench's libpq or
/// libmariadb, rqps's drivers) read a password from when none is given, so
/// it never goes on a command line.
fn password_env(server: &Server) -> &'static str {
    if server.recipe().key() == "postgres" {
        "PGPASSWORD"
    } else {
        "MYSQL_PWD"
    }
}

/// Where rqps runs a step's connections: its default (the client core on
/// as many client threads as CPUs), or a thread per connection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placing {
    Default,
    PerConnection,
}

/// `rqps run` of point-query on `server`, writing its JSON to `json`.
fn rqps_command(
    server: &Server,
    a: &VsArgs,
    threads: usize,
    dir: &std::path::Path,
    placing: Placing,
) -> Result<std::process::Command, BenchError> {
    let exe =
        std::env::current_exe().map_err(BenchError::io("cannot find rqps's own executable"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.env(password_env(server), server.password())
        .args(["run", "--target"])
        // TLS required when the server requires it, else none.
        .arg(server.url_without_password_for_config(&[]))
        .args([
            "--skip-prepare",
            "--tests",
            "point-query",
            "--tables",
            "1",
            "--warmup-secs",
            "0",
            "-q",
        ])
        .arg("--table-size")
        .arg(a.table_size.to_string())
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--read-secs")
        .arg(a.secs.to_string())
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--json")
        .arg(dir.join("vs.json"));
    // The default placement is rqps's own choice, whatever the caller's
    // environment says.
    cmd.env_remove(crate::harness::placement::DEFAULT_ENV);
    if placing == Placing::PerConnection {
        cmd.args(["--client-threads", "0"]);
    }
    Ok(cmd)
}

fn rqps_run(
    server: &Server,
    a: &VsArgs,
    threads: usize,
    dir: &std::path::Path,
    placing: Placing,
) -> Result<ClientRun, BenchError> {
    let (_, usage) = run_measured_usage(&mut rqps_command(server, a, threads, dir, placing)?)?;
    rqps_result(dir, usage)
}

/// An rqps run's figures: its queries and QPS from the JSON it wrote in
/// `dir`, its CPU and context switches from `usage`.
fn rqps_result(dir: &std::path::Path, usage: ChildUsage) -> Result<ClientRun, BenchError> {
    let json = dir.join("vs.json");
    let bytes =
        std::fs::read(&json).map_err(BenchError::io(format!("cannot read {}", json.display())))?;
    let doc: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|source| BenchError::Json {
            path: json.clone(),
            source,
        })?;
    let t = &doc["tests"][0];
    let queries = (t["reads"].as_u64().unwrap_or(0)
        + t["writes"].as_u64().unwrap_or(0)
        + t["other"].as_u64().unwrap_or(0)) as f64;
    Ok(ClientRun {
        queries,
        qps: t["qps"].as_f64().unwrap_or(0.0),
        user: usage.user,
        sys: usage.sys,
        vcs: usage.voluntary_cs as f64,
        ivcs: usage.involuntary_cs as f64,
        tls: doc["params"]["tls"].as_str().map(str::to_string),
    })
}

/// The lines after a thread count's rounds: the CPU and QPS ratios over all
/// rounds, context switches, and the median of the rounds' ratios.
fn print_summary(threads: usize, a: &VsArgs, sb_all: &[ClientRun], rq_all: &[ClientRun]) {
    let sum = |v: &[ClientRun], f: &dyn Fn(&ClientRun) -> f64| v.iter().map(f).sum::<f64>();
    let per_q =
        |v: &[ClientRun], f: &dyn Fn(&ClientRun) -> f64| sum(v, f) * 1e6 / sum(v, &|c| c.queries);
    let (sb_u, rq_u) = (per_q(sb_all, &|c| c.user), per_q(rq_all, &|c| c.user));
    let (sb_t, rq_t) = (
        per_q(sb_all, &|c| c.user + c.sys),
        per_q(rq_all, &|c| c.user + c.sys),
    );
    let (sb_q, rq_q) = (
        sum(sb_all, &|c| c.qps) / a.rounds as f64,
        sum(rq_all, &|c| c.qps) / a.rounds as f64,
    );
    let cs_q = |v: &[ClientRun], f: &dyn Fn(&ClientRun) -> f64| {
        sum(v, f) / sum(v, &|c| c.queries).max(1.0)
    };
    println!(
        "{threads:>3}  all: user us/q rqps/sysbench = {:.2} (target <= 0.5), total client us/q {:.2} vs {:.2}, QPS rqps/sysbench = {:.3}",
        rq_u / sb_u,
        rq_t,
        sb_t,
        rq_q / sb_q
    );
    println!(
        "{threads:>3}  all: context switches/q rqps {:.3} (voluntary {:.3}, involuntary {:.3}) vs sysbench {:.3} ({:.3}, {:.3})",
        cs_q(rq_all, &|c| c.vcs + c.ivcs),
        cs_q(rq_all, &|c| c.vcs),
        cs_q(rq_all, &|c| c.ivcs),
        cs_q(sb_all, &|c| c.vcs + c.ivcs),
        cs_q(sb_all, &|c| c.vcs),
        cs_q(sb_all, &|c| c.ivcs)
    );
    // Round by round (each pair ran back to back), the done-when
    // figures of issue 30: QPS >= 1 and total client CPU <= 0.9.
    let median = |f: &dyn Fn(&ClientRun, &ClientRun) -> f64| {
        let v: Vec<f64> = sb_all.iter().zip(rq_all).map(|(s, r)| f(s, r)).collect();
        Quartiles::of(&v).map_or(f64::NAN, |q| q.median)
    };
    println!(
        "{threads:>3}  median of {} rounds: QPS rqps/sysbench = {:.3}, total client us/q rqps/sysbench = {:.2}",
        a.rounds,
        median(&|s, r| r.qps / s.qps),
        median(&|s, r| ((r.user + r.sys) / r.queries.max(1.0))
            / ((s.user + s.sys) / s.queries.max(1.0)))
    );
}

/// The line that compares rqps's default placement (`rq`) with a thread per
/// connection (`pc`) over all rounds: the default should be at least as
/// fast at no more CPU per query.
fn print_placements(threads: usize, rq: &[ClientRun], pc: &[ClientRun]) {
    let sum = |v: &[ClientRun], f: &dyn Fn(&ClientRun) -> f64| v.iter().map(f).sum::<f64>();
    let per_q = |v: &[ClientRun], f: &dyn Fn(&ClientRun) -> f64| {
        sum(v, f) * 1e6 / sum(v, &|c| c.queries).max(1.0)
    };
    let qps = |v: &[ClientRun]| sum(v, &|c| c.qps) / v.len().max(1) as f64;
    let cs = |v: &[ClientRun]| sum(v, &|c| c.vcs + c.ivcs) / sum(v, &|c| c.queries).max(1.0);
    let (rq_t, pc_t) = (
        per_q(rq, &|c| c.user + c.sys),
        per_q(pc, &|c| c.user + c.sys),
    );
    println!(
        "{threads:>3}  default / a thread per connection: QPS {:.3} (target >= 1), total client us/q {:.2} vs {:.2} = {:.2} (target <= 1), user {:.2}, context switches/q {:.3} vs {:.3}",
        qps(rq) / qps(pc),
        rq_t,
        pc_t,
        rq_t / pc_t,
        per_q(rq, &|c| c.user) / per_q(pc, &|c| c.user),
        cs(rq),
        cs(pc)
    );
}

/// The system calls a client makes for its queries: sends, reads and waits
/// on sockets (OpenSSL and rqps's TLS write and read with `write` and
/// `read`), and the futex waits of threads handing work to each other.
/// rqps's sampler reads `/proc` with `read` too, a few times a second: a
/// share of a call per query only in runs of a second or two.
const QUERY_CALLS: [&str; 19] = [
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "read",
    "write",
    "readv",
    "writev",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "futex",
    "sched_yield",
    "clock_nanosleep",
    "nanosleep",
];

/// System calls of one run, per query: all of them, those of
/// [`QUERY_CALLS`], and the most made.
struct Syscalls {
    per_query: f64,
    for_queries: f64,
    top: Vec<(String, f64)>,
}

impl std::fmt::Display for Syscalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let top: Vec<String> = self
            .top
            .iter()
            .map(|(name, n)| format!("{name} {n:.2}"))
            .collect();
        write!(
            f,
            "{:.2} ({}; all {:.2})",
            self.for_queries,
            top.join(", "),
            self.per_query
        )
    }
}

/// The calls by name in `strace -c`'s summary (`% time seconds usecs/call
/// calls errors syscall` rows; the total row is left out).
fn strace_summary(text: &str) -> Vec<(String, u64)> {
    let mut calls: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.last()?;
            if f.len() < 5 || name == "total" || f[0].parse::<f64>().is_err() {
                return None;
            }
            Some((name.to_string(), f[3].parse().ok()?))
        })
        .collect();
    calls.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    calls
}

/// `cmd` under `strace -f -c` (every thread), its summary written to `out`.
fn traced(cmd: &std::process::Command, out: &std::path::Path) -> std::process::Command {
    let mut t = std::process::Command::new("strace");
    t.args(["-f", "-c", "-o"])
        .arg(out)
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        t.current_dir(d);
    }
    t
}

/// One run of `cmd` under strace: its system calls per query, the query
/// count read by `figures` from its output.
fn count_syscalls(
    cmd: &std::process::Command,
    dir: &std::path::Path,
    figures: &dyn Fn(&str, ChildUsage) -> Result<ClientRun, BenchError>,
) -> Result<Syscalls, BenchError> {
    let file = dir.join("strace.txt");
    let (out, usage) = run_measured_usage(&mut traced(cmd, &file))?;
    let run = figures(&out, usage)?;
    let text = std::fs::read_to_string(&file)
        .map_err(BenchError::io(format!("cannot read {}", file.display())))?;
    let calls = strace_summary(&text);
    let q = run.queries.max(1.0);
    let sum = |pick: &dyn Fn(&str) -> bool| {
        calls
            .iter()
            .filter(|(name, _)| pick(name))
            .map(|(_, n)| *n as f64)
            .sum::<f64>()
            / q
    };
    Ok(Syscalls {
        per_query: sum(&|_| true),
        for_queries: sum(&|name| QUERY_CALLS.contains(&name)),
        top: calls
            .iter()
            .filter(|(name, _)| QUERY_CALLS.contains(&name.as_str()))
            .take(3)
            .map(|(name, n)| (name.clone(), *n as f64 / q))
            .collect(),
    })
}

/// The system calls per query of each contender at `threads`, each from a
/// run of its own under `strace -f -c` (slowed, so not timed): the count
/// is the client's, and the same at any speed but for the share of waits.
fn print_syscalls(
    server: &Server,
    a: &VsArgs,
    threads: usize,
    tls_dir: Option<&std::path::Path>,
    dir: &std::path::Path,
) {
    let strace = std::process::Command::new("strace").arg("-V").output();
    if !strace.is_ok_and(|o| o.status.success()) {
        println!("{threads:>3}  system calls/q: not counted (strace is not installed)");
        return;
    }
    let mut parts = Vec::new();
    let sysbench = sysbench_command(server, a, threads, tls_dir).and_then(|(mut cmd, _)| {
        cmd.arg(format!("--time={}", a.secs)).arg("run");
        count_syscalls(&cmd, dir, &|out, usage| sysbench_result(out, usage))
    });
    let mut placings = vec![("rqps", Placing::Default)];
    if a.per_connection {
        placings.push(("rqps, a thread per connection,", Placing::PerConnection));
    }
    for (name, placing) in placings {
        let counted = rqps_command(server, a, threads, dir, placing)
            .and_then(|cmd| count_syscalls(&cmd, dir, &|_, usage| rqps_result(dir, usage)));
        parts.push(match counted {
            Ok(c) => format!("{name} {c}"),
            Err(e) => format!("{name} not counted ({e})"),
        });
    }
    parts.push(match sysbench {
        Ok(c) => format!("sysbench {c}"),
        Err(e) => format!("sysbench not counted ({e})"),
    });
    println!(
        "{threads:>3}  system calls/q on sockets and waits (strace -f -c, a run of its own): {}",
        parts.join("; ")
    );
}

pub fn vs_sysbench(a: &VsArgs) -> Result<(), BenchError> {
    if a.rounds == 0
        || a.secs == 0
        || a.table_size == 0
        || a.threads.is_empty()
        || a.threads.contains(&0)
    {
        return Err(BenchError::Args(
            "--rounds, --secs, --table-size and --threads must be more than 0",
        ));
    }
    for engine in &a.engines {
        let (kind, server, _, driver) = throwaway_with_tls(engine, a.tls)?;
        load(
            driver.as_ref(),
            &LoadParams {
                tables: 1,
                table_size: a.table_size,
                seed: 1,
            },
            &mut |_| {},
        )
        .map_err(BenchError::engine("loading the table"))?;
        let dir =
            tempfile::tempdir().map_err(BenchError::io("cannot create a temporary directory"))?;
        let sb_dir =
            tempfile::tempdir().map_err(BenchError::io("cannot create a temporary directory"))?;
        let tls_dir = if a.tls {
            sysbench_tls_dir(&server, sb_dir.path())?;
            Some(sb_dir.path())
        } else {
            None
        };
        println!(
            "\n{} ({}), point-query / oltp_point_select, {} rows, {} s per run",
            kind,
            server.binary_version(),
            a.table_size,
            a.secs
        );
        if let Some(d) = tls_dir {
            println!(
                "TLS required by the server (a CA and certificates made for this run); sysbench {}",
                sysbench_tls(&server, a, d)?
            );
        }
        println!(
            "{:>3} {:>5}  {:>10} {:>10} {:>10} {:>10} {:>8}   {:>10} {:>10} {:>10} {:>10} {:>8}",
            "thr",
            "round",
            "sb qps",
            "sb usr us",
            "sb sys us",
            "sb tot us",
            "sb cs/q",
            "rqps qps",
            "rqps usr",
            "rqps sys",
            "rqps tot",
            "rqps cs/q"
        );
        for &threads in &a.threads {
            let (mut sb_all, mut rq_all, mut pc_all) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..a.rounds {
                let rqps = |placing| rqps_run(&server, a, threads, dir.path(), placing);
                let per_connection = || match a.per_connection {
                    true => rqps(Placing::PerConnection).map(Some),
                    false => Ok(None),
                };
                // Who goes first alternates, so that drift hits all alike.
                let (sb, rq, pc) = if r % 2 == 0 {
                    let s = sysbench_run(&server, a, threads, tls_dir)?;
                    let q = rqps(Placing::Default)?;
                    (s, q, per_connection()?)
                } else {
                    let p = per_connection()?;
                    let q = rqps(Placing::Default)?;
                    (sysbench_run(&server, a, threads, tls_dir)?, q, p)
                };
                let us = |c: &ClientRun, v: f64| v * 1e6 / c.queries.max(1.0);
                // Context switches per query, voluntary and involuntary together.
                let cs = |c: &ClientRun| (c.vcs + c.ivcs) / c.queries.max(1.0);
                println!(
                    "{threads:>3} {:>5}  {:>10.0} {:>10.2} {:>10.2} {:>10.2} {:>8.3}   {:>10.0} {:>10.2} {:>10.2} {:>10.2} {:>8.3}",
                    r + 1,
                    sb.qps,
                    us(&sb, sb.user),
                    us(&sb, sb.sys),
                    us(&sb, sb.user + sb.sys),
                    cs(&sb),
                    rq.qps,
                    us(&rq, rq.user),
                    us(&rq, rq.sys),
                    us(&rq, rq.user + rq.sys),
                    cs(&rq)
                );
                if let Some(p) = pc {
                    println!(
                        "{threads:>3} {:>5}  {:>52}   {:>10.0} {:>10.2} {:>10.2} {:>10.2} {:>8.3}",
                        r + 1,
                        "rqps, a thread per connection:",
                        p.qps,
                        us(&p, p.user),
                        us(&p, p.sys),
                        us(&p, p.user + p.sys),
                        cs(&p)
                    );
                    pc_all.push(p);
                }
                sb_all.push(sb);
                rq_all.push(rq);
            }
            print_summary(threads, a, &sb_all, &rq_all);
            if !pc_all.is_empty() {
                print_placements(threads, &rq_all, &pc_all);
            }
            if a.tls {
                let mut used: Vec<&str> = rq_all
                    .iter()
                    .map(|c| c.tls.as_deref().unwrap_or("no TLS"))
                    .collect();
                used.dedup();
                println!(
                    "{threads:>3}  rqps {}: {}",
                    server.tls_param(&[]).unwrap_or_default(),
                    used.join(", ")
                );
            }
            if !a.no_syscalls {
                print_syscalls(&server, a, threads, tls_dir, dir.path());
            }
        }
        server.stop()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `strace -f -c`'s summary as strace 6.1 writes it: rows with and
    /// without errors, the rules and the total left out, most calls first.
    #[test]
    fn the_strace_summary_gives_each_calls_count_and_not_the_total() {
        let text = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.20    0.052000           3     16050           sendto
 30.10    0.025600           1     16074        12 recvfrom
  8.70    0.007400           7      1040           epoll_pwait2
  0.00    0.000000           0         3         1 openat
------ ----------- ----------- --------- --------- ----------------
100.00    0.085000           2     33167        13 total
";
        assert_eq!(
            strace_summary(text),
            [
                ("recvfrom".to_string(), 16074),
                ("sendto".to_string(), 16050),
                ("epoll_pwait2".to_string(), 1040),
                ("openat".to_string(), 3),
            ]
        );
        assert!(strace_summary("").is_empty());
        assert!(
            strace_summary("strace: ptrace(PTRACE_SEIZE): Operation not permitted\n").is_empty()
        );
    }

    /// The traced command runs the same program, arguments, environment
    /// and directory under strace.
    #[test]
    fn a_traced_command_is_the_command_under_strace() {
        let mut cmd = std::process::Command::new("sysbench");
        cmd.args(["--threads=16", "run"])
            .env("MYSQL_PWD", "x")
            .env_remove("RQPS_CLIENT_THREADS")
            .current_dir("/tmp");
        let t = traced(&cmd, std::path::Path::new("/tmp/s.txt"));
        assert_eq!(t.get_program(), "strace");
        let args: Vec<_> = t.get_args().collect();
        assert_eq!(
            args,
            [
                "-f",
                "-c",
                "-o",
                "/tmp/s.txt",
                "--",
                "sysbench",
                "--threads=16",
                "run"
            ]
        );
        let envs: Vec<_> = t.get_envs().collect();
        assert!(envs.contains(&("MYSQL_PWD".as_ref(), Some("x".as_ref()))));
        assert!(envs.contains(&("RQPS_CLIENT_THREADS".as_ref(), None)));
        assert_eq!(t.get_current_dir(), Some(std::path::Path::new("/tmp")));
    }
}
