//! rqps's sysbench generator (`suite::sysbench::rng`) against the installed
//! sysbench 1.0.20: a Lua script prints what `sysbench.rand.*` returns on a
//! seeded one-thread run, and the same calls on `SbRng::for_thread(seed, 0)`
//! must return the same values, value for value. The reference values are
//! made by sysbench at test time, never stored.
//!
//! The last test runs the native suite's read-write test and sysbench's
//! `oltp_read_write` on one throwaway MariaDB and compares the statements
//! its general log recorded.
//!
//! Without a `sysbench` binary (or MariaDB's) the tests skip, saying so,
//! unless `RQPS_REQUIRE_SERVERS=1`, in which case they fail.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use rqps::engine::Driver;
use rqps::engine::mysql::MysqlDriver;
use rqps::engine::server::{Server, ServerSpec};
use rqps::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType, SbRng};

/// Whether sysbench 1.0 is here (a skip says why; under
/// `RQPS_REQUIRE_SERVERS=1` its absence fails the test).
fn sysbench_available() -> bool {
    let why = match Command::new("sysbench").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("sysbench 1.0.") => return true,
        Ok(o) => format!(
            "`sysbench --version` says '{}', not sysbench 1.0",
            String::from_utf8_lossy(&o.stdout).trim()
        ),
        Err(e) => format!("no sysbench binary: {e} (Debian: apt-get install sysbench)"),
    };
    if common::servers_required() {
        panic!("RQPS_REQUIRE_SERVERS=1 but {why}");
    }
    eprintln!("skipping: {why} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
    false
}

/// Runs a Lua script with `sysbench OPTIONS script run` and returns the lines
/// its `io.write` calls printed (those starting with `=`), without the `=`.
fn sysbench_lines(lua: &str, options: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("draws.lua");
    std::fs::write(&script, lua).unwrap();
    let o = Command::new("sysbench")
        .args(options)
        .arg(&script)
        .arg("run")
        .current_dir(dir.path())
        .output()
        .expect("sysbench runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "sysbench {options:?}: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out.lines()
        .filter_map(|l| l.strip_prefix('='))
        .map(|l| l.replace("ULL", ""))
        .collect()
}

/// A script whose `event()` prints the Lua expressions `exprs`, one line per
/// event, values separated by spaces (doubles with 17 digits).
fn event_script(exprs: &[&str]) -> String {
    let parts: Vec<String> = exprs.iter().map(|e| format!("show({e})")).collect();
    format!(
        "local function show(v)\n  if type(v) == 'number' and v ~= math.floor(v) then\n    \
         return string.format('%.17g', v)\n  end\n  return tostring(v)\nend\n\
         function event()\n  io.write('=' .. table.concat({{{}}}, ' ') .. '\\n')\nend\n",
        parts.join(", ")
    )
}

/// sysbench's options for `kind` and `params` (its spellings), one thread,
/// `events` events, `--rand-seed=seed`.
fn options(seed: u32, events: usize, kind: Option<SbRandType>, p: &SbRandParams) -> Vec<String> {
    let mut o = vec![
        format!("--rand-seed={seed}"),
        "--threads=1".into(),
        format!("--events={events}"),
        format!("--rand-spec-iter={}", p.rand_spec_iter),
        format!("--rand-spec-pct={}", p.rand_spec_pct),
        format!("--rand-spec-res={}", p.rand_spec_res),
        format!("--rand-pareto-h={}", p.rand_pareto_h),
    ];
    if let Some(k) = kind {
        o.push(format!("--rand-type={}", k.name()));
    }
    o
}

fn assert_same(what: &str, sysbench: &[String], ours: &[String]) {
    assert_eq!(sysbench.len(), ours.len(), "{what}: line counts");
    if let Some(i) = (0..ours.len()).find(|&i| sysbench[i] != ours[i]) {
        panic!(
            "{what}: draw {} differs: sysbench '{}', rqps '{}'",
            i + 1,
            sysbench[i],
            ours[i]
        );
    }
}

/// `default(1, 100000)` 1000 times, for each distribution of 1.0.20 at its
/// defaults and once each with other parameters, with and without
/// `--rand-type` (sysbench's default is special). sysbench takes one more
/// draw after each event for its latency histogram, none with
/// `--percentile=0`.
#[test]
fn default_draws_sysbench_s_values_for_every_distribution_of_1_0_20() {
    if !sysbench_available() {
        return;
    }
    let d = SbRandParams::default();
    let other = SbRandParams {
        rand_spec_iter: 3,
        rand_spec_pct: 7,
        rand_spec_res: 40,
        rand_pareto_h: 0.35,
        ..d
    };
    let cases = [
        (Some(SbRandType::Uniform), d, 7, true),
        (Some(SbRandType::Gaussian), d, 11, true),
        (Some(SbRandType::Special), d, 13, true),
        (Some(SbRandType::Pareto), d, 17, true),
        (None, d, 19, true),
        (Some(SbRandType::Gaussian), other, 23, true),
        (Some(SbRandType::Special), other, 29, true),
        (Some(SbRandType::Pareto), other, 31, true),
        (Some(SbRandType::Special), d, 37, false),
    ];
    const EVENTS: usize = 1000;
    let script = event_script(&["sysbench.rand.default(1, 100000)"]);
    for (kind, params, seed, histogram) in cases {
        let mut opts = options(seed, EVENTS, kind, &params);
        if !histogram {
            opts.push("--percentile=0".into());
        }
        let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
        let theirs = sysbench_lines(&script, &opts);
        let dist = SbDist::new(kind.unwrap_or(SbRandType::Special), params).unwrap();
        let mut rng = SbRng::for_thread(seed, 0, dist);
        let ours: Vec<String> = (0..EVENTS)
            .map(|_| {
                let v = rng.default(1, 100_000);
                if histogram {
                    rng.skip_histogram_slot();
                }
                v.to_string()
            })
            .collect();
        assert_same(&format!("{opts:?}"), &theirs, &ours);
        // Not a constant stream: the comparison means something.
        let distinct: BTreeSet<&String> = ours.iter().collect();
        assert!(distinct.len() > 10, "{opts:?}: {} distinct", distinct.len());
    }
}

/// Every named function of 1.0.20's `sysbench.rand` but `unique` (its
/// seed cannot be reproduced: see `SbUnique::seeded`), mixed in one stream,
/// on ranges that exercise its uint32 arithmetic (one value, the whole
/// 32-bit range, a range above 2^31, a reversed range).
#[test]
fn every_sysbench_rand_function_draws_sysbench_s_values() {
    if !sysbench_available() {
        return;
    }
    let exprs = [
        "sysbench.rand.uniform(1, 100)",
        "sysbench.rand.uniform(5, 5)",
        "sysbench.rand.uniform(0, 4294967295)",
        "sysbench.rand.uniform(3000000000, 4000000000)",
        "sysbench.rand.gaussian(1, 1000)",
        "sysbench.rand.special(1, 1000000)",
        "sysbench.rand.pareto(1, 1000)",
        "sysbench.rand.pareto(10, 5)",
        "sysbench.rand.uniform_uint64()",
        "sysbench.rand.uniform_double()",
        "sysbench.rand.string('###########-@@@-x#')",
    ];
    const EVENTS: usize = 300;
    let params = SbRandParams::default();
    let opts = options(41, EVENTS, Some(SbRandType::Uniform), &params);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let theirs = sysbench_lines(&event_script(&exprs), &opts);

    let dist = SbDist::new(SbRandType::Uniform, params).unwrap();
    let mut r = SbRng::for_thread(41, 0, dist);
    let ours: Vec<String> = (0..EVENTS)
        .map(|_| {
            let line = [
                r.uniform(1, 100).to_string(),
                r.uniform(5, 5).to_string(),
                r.uniform(0, u32::MAX).to_string(),
                r.uniform(3_000_000_000, 4_000_000_000).to_string(),
                r.gaussian(1, 1000).to_string(),
                r.special(1, 1_000_000).to_string(),
                r.pareto(1, 1000).to_string(),
                r.pareto(10, 5).to_string(),
                r.uniform_uint64().to_string(),
                format!("{:?}", r.uniform_double()),
                r.string("###########-@@@-x#"),
            ]
            .join(" ");
            r.skip_histogram_slot();
            line
        })
        .collect();
    // Doubles: sysbench prints 17 significant digits, Rust the shortest
    // exact form; both parse to the same double.
    let normal = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                l.split(' ')
                    .map(|w| match w.contains('.') {
                        true => w.parse::<f64>().map(|d| d.to_bits().to_string()).unwrap(),
                        false => w.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    assert_same("sysbench.rand.*", &normal(&theirs), &normal(&ours));
}

/// With four threads, each thread's stream is one of `for_thread(seed, i)`
/// for i in 0..4, and every one is used: which thread gets which is the
/// order they start in, which varies from run to run.
#[test]
fn four_threads_draw_rqps_s_four_streams_in_some_order() {
    if !sysbench_available() {
        return;
    }
    let lua = "function thread_init()\n  local t = {}\n  for i = 1, 20 do\n    \
               t[#t + 1] = tostring(sysbench.rand.uniform_uint64())\n  end\n  \
               io.write('=' .. table.concat(t, ' ') .. '\\n')\nend\nfunction event() end\n";
    let theirs: BTreeSet<String> =
        sysbench_lines(lua, &["--rand-seed=99", "--threads=4", "--events=1"])
            .into_iter()
            .collect();
    let dist = SbDist::sysbench_default();
    let ours: BTreeSet<String> = (0..4)
        .map(|i| {
            let mut r = SbRng::for_thread(99, i, dist);
            (0..20)
                .map(|_| r.uniform_uint64().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(ours.len(), 4);
    assert_eq!(theirs, ours);
}

/// The native read-write test with `--rand-type special --rand-seed 5` and
/// one thread sends what `sysbench oltp_read_write` sends with the same
/// seed: the same statements with the same ids, `c` and `pad` values, in
/// the same order (30 events of 20 statements, with BEGIN and COMMIT).
#[test]
fn the_native_read_write_test_sends_sysbench_s_statements_with_a_seed() {
    if !sysbench_available() || !common::server_available(&rqps::engine::mysql::server::RECIPE) {
        return;
    }
    let srv = Server::start(
        &ServerSpec::new(&rqps::engine::mysql::server::RECIPE),
        &mut |n| eprintln!("note: {n}"),
    )
    .expect("MariaDB starts");
    let dir = tempfile::tempdir().unwrap();
    // In the data directory: the server writes there.
    let log = srv.data_dir().join("general.log");
    let root = MysqlDriver::new(&srv.url()).unwrap();
    let mut conn = root.require_sql().unwrap().connect().unwrap();
    // A user without a password, on a server that only this test reaches:
    // sysbench takes passwords on its command line only.
    for sql in [
        "CREATE USER sb@'127.0.0.1'".to_string(),
        "GRANT ALL ON *.* TO sb@'127.0.0.1'".to_string(),
        format!("SET GLOBAL general_log_file = '{}'", log.display()),
        "SET GLOBAL general_log = 1".to_string(),
    ] {
        conn.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let port = srv.port().to_string();
    let sb = |cmd: &str, extra: &[&str]| {
        let mut args = vec![
            "oltp_read_write".to_string(),
            "--db-driver=mysql".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={port}"),
            "--mysql-user=sb".into(),
            format!("--mysql-db={}", srv.database()),
            "--tables=1".into(),
            "--table-size=2000".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(cmd.into());
        let o = Command::new("sysbench").args(&args).output().unwrap();
        assert!(o.status.success(), "sysbench {cmd}: {}", common::text(&o));
    };
    sb("prepare", &[]);
    let len = || {
        std::fs::metadata(&log)
            .map(|m| m.len() as usize)
            .unwrap_or(0)
    };
    let at = len();
    sb(
        "run",
        &[
            "--threads=1",
            "--events=30",
            "--rand-seed=5",
            "--rand-type=special",
        ],
    );
    let theirs = common::logged_statements(&log, at);
    assert_eq!(theirs.len(), 30 * 20, "sysbench's statements: {theirs:?}");

    let at = len();
    let results = dir.path().join("results");
    let target = format!("mysql://sb@127.0.0.1:{port}/{}", srv.database());
    let o = common::rqps(&[
        "run",
        "--target",
        &target,
        "--results",
        results.to_str().unwrap(),
        "--busy-threshold",
        "100",
        "-q",
        "--profile",
        "ci",
        "--skip-prepare",
        "--tables",
        "1",
        "--table-size",
        "2000",
        "--tests",
        "read-write_range=100",
        "--threads",
        "1",
        "--warmup-secs",
        "0",
        "--write-secs",
        "0.3",
        "--rand-type",
        "special",
        "--rand-seed",
        "5",
    ]);
    assert!(o.status.success(), "rqps run: {}", common::text(&o));
    let ours = common::logged_statements(&log, at);
    assert!(
        ours.len() >= theirs.len(),
        "rqps sent {} statements",
        ours.len()
    );
    if let Some(i) = (0..theirs.len()).find(|&i| theirs[i] != ours[i]) {
        panic!(
            "statement {} differs:\n  sysbench: {}\n  rqps:     {}",
            i + 1,
            theirs[i],
            ours[i]
        );
    }
}
