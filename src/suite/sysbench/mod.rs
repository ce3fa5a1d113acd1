//! The sysbench microbenchmark suite (spec §1, reference §1): the `sbtest`
//! tables, the tests of the current or classic order in their groups, each at
//! every thread count, with the settle steps between them.
//!
//! `catalog` lists the tests, `event` is what one event of a test sends,
//! `load` fills and settles the tables, `params` has the profiles, `run`
//! sends every test through the harness.

use crate::error::usage;
pub mod catalog;
pub mod compat;
mod connect;
pub mod event;
pub mod ignorable;
pub mod load;
pub mod lua;
pub mod params;
pub mod report;
pub mod rng;
pub mod run;
pub mod schema;
pub mod script_line;

use serde::{Deserialize, Serialize};

use crate::harness::{Harness, RunEnd};
use crate::suite::api::{PeerFlag, RunBasics, Workload, set, set_all};
use crate::suite::bounds::{Rows, Secs, Tables, Threads};
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use params::SysbenchParams;

/// The sysbench suite.
pub struct Sysbench;

/// What `--tests` completes to (shell completion): the names of the list the
/// command line being completed names (`--list classic`), else of the current
/// list, each with its group.
fn test_candidates() -> Vec<CompletionCandidate> {
    let words: Vec<String> = std::env::args().collect();
    let classic = words
        .windows(2)
        .any(|w| w[0] == "--list" && w[1] == "classic")
        || words.iter().any(|w| w == "--list=classic");
    let list = if classic {
        catalog::Order::Classic
    } else {
        catalog::Order::Current
    };
    catalog::order(list)
        .into_iter()
        .map(|t| CompletionCandidate::new(t.name).help(Some(t.group.title().into())))
        .collect()
}

/// What a user may set for a sysbench run (`rqps run --flag`, or the
/// snake_case key in a matrix file).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "sysbench options (--suite sysbench)")]
pub struct Options {
    /// The suite order: current (32 reported tests) or classic (42, with the .pre tests).
    #[arg(long, value_name = "current|classic",
          add = ArgValueCandidates::new(|| vec![CompletionCandidate::new("current"), CompletionCandidate::new("classic")]))]
    pub list: Option<String>,
    /// Run only these tests, in suite order (comma-separated; see `rqps tests`).
    #[arg(long, value_delimiter = ',', value_name = "A,B,..", add = ArgValueCandidates::new(test_candidates))]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub tests: Option<Vec<String>>,
    /// Client threads (one connection each); a list runs every test at each count.
    #[arg(long, value_delimiter = ',', value_name = "N,M,..")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub threads: Option<Vec<Threads>>,
    /// Number of sbtest tables.
    #[arg(long, value_name = "T")]
    pub tables: Option<Tables>,
    /// Rows per table.
    #[arg(long, value_name = "N")]
    pub table_size: Option<Rows>,
    /// Seconds each read test (and write-only) is measured.
    #[arg(long, value_name = "S")]
    pub read_secs: Option<Secs>,
    /// Seconds each write test is measured.
    #[arg(long, value_name = "S")]
    pub write_secs: Option<Secs>,
    /// Seconds of warm-up before each test, excluded from its statistics.
    #[arg(long, value_name = "S")]
    pub warmup_secs: Option<Secs>,
    /// Seconds of each unreported warm-up step (scan.warm, point-query.warm, ...).
    #[arg(long, value_name = "S")]
    pub warm_secs: Option<Secs>,
    /// Sleep budget of the settle step after the load and after the write tests.
    #[arg(long, value_name = "S")]
    pub settle_secs: Option<Secs>,
    /// Events (transactions) each measured test completes, all its threads together, as
    /// sysbench's --events: a test ends at its events or at --read-secs/--write-secs, whichever
    /// comes first; with --read-secs 0 --write-secs 0 (sysbench's --time=0) at its events alone.
    /// Warm-up steps keep their time.
    #[arg(long, value_name = "N")]
    pub events: Option<u64>,
    /// Distribution of ids, as sysbench's --rand-type: uniform (rqps's default, so stored
    /// figures keep their meaning; sysbench 1.0.20's default is special), special, gaussian,
    /// pareto, zipfian. update-zipf is always zipfian.
    #[arg(long, value_name = "TYPE",
          add = ArgValueCandidates::new(|| ["uniform", "special", "gaussian", "pareto", "zipfian"].into_iter().map(CompletionCandidate::new).collect::<Vec<_>>()))]
    pub rand_type: Option<String>,
    /// special and gaussian: uniform draws averaged per value (sysbench's default 12).
    #[arg(long, value_name = "N")]
    pub rand_spec_iter: Option<u32>,
    /// special: percent of the id range, around its middle, that is hot (default 1).
    #[arg(long, value_name = "PCT")]
    pub rand_spec_pct: Option<u32>,
    /// special: percent of draws that fall in the hot part (default 75).
    #[arg(long, value_name = "PCT")]
    pub rand_spec_res: Option<u32>,
    /// pareto: the h parameter, between 0 and 1 (default 0.2: about 80 % of draws in the
    /// lowest 20 % of ids).
    #[arg(long, value_name = "H")]
    pub rand_pareto_h: Option<f64>,
    /// zipfian and update-zipf: the exponent (theta), at least 0 (default 0.8).
    #[arg(long, value_name = "E")]
    pub rand_zipfian_exp: Option<f64>,
    /// sysbench's --rand-seed: with it, thread i draws the ids sysbench's i-th thread draws
    /// with the same seed and options. Without it (or 0), one is made from --seed, recorded
    /// but not compared: two runs of one command are repeats.
    #[arg(long, value_name = "N")]
    pub rand_seed: Option<u32>,
    /// auto: server-side prepared statements; disable: plain text statements.
    #[arg(long, value_name = "auto|disable", value_parser = ["auto", "disable"])]
    pub ps_mode: Option<String>,
    /// Use the sbtest tables already in the target instead of loading them.
    #[arg(long)]
    #[serde(default)]
    pub skip_prepare: bool,
    /// Run a sysbench Lua script instead of the suite's tests (sysbench 1.0's API, the script
    /// unchanged); its options and commands follow `--`, as sysbench takes them:
    /// `--script oltp_read_only.lua -- --tables=2 --table-size=10000 prepare run cleanup`
    /// (default commands: prepare, run, cleanup). A script is trusted code, as in sysbench: it
    /// runs with your rights (files, programs, any C function through ffi).
    #[arg(long, value_name = "FILE.lua")]
    pub script: Option<String>,
    /// With --script: sysbench's closing report (SQL statistics, latency, threads fairness) of
    /// each test on standard output, beside rqps's own line.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sysbench_report: bool,
    /// With --script: the most memory each of the script's Lua states (one per thread) may
    /// hold, in MiB (default 256; 0: no bound).
    #[arg(long, value_name = "MIB")]
    pub script_memory: Option<u64>,
    /// The script's options (--name=value) and commands, after `--`.
    #[arg(last = true, value_name = "SCRIPT ARGS")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub script_args: Option<Vec<String>>,
    /// read-only, read-write and write-only send their statements without BEGIN/COMMIT
    /// around the event (each statement commits on its own), as sysbench's --skip_trx.
    #[arg(long)]
    #[serde(default)]
    pub skip_trx: bool,
}

/// sysbench's flags that rqps spells otherwise (`--threads`, `--tables`,
/// `--table-size`, `--rand-type` and `--rand-seed` are spelt alike), and what to write instead.
const SYSBENCH_FLAGS: &[PeerFlag] = &[
    peer("--time", true, "--read-secs {} --write-secs {}"),
    peer("--warmup-time", true, "--warmup-secs {}"),
    peer("--table_size", true, "--table-size {}"),
    peer("--skip_trx", false, "--skip-trx"),
    peer("--db-ps-mode", true, "--ps-mode {}"),
    peer("--mysql_storage_engine", true, "--mysql-storage-engine {}"),
    peer(
        "--report-interval",
        true,
        "rqps has no --report-interval: it shows a progress line while a test runs and stores each test's per-second figures",
    ),
    peer("--db-driver", true, DB_URL),
    peer("--mysql-host", true, DB_URL),
    peer("--pgsql-host", true, DB_URL),
];

/// sysbench's scripts by name, as its users run them (`sysbench
/// oltp_read_only run`), and the tests that measure the same statements at
/// the scripts' default sizes; its commands, which `rqps run` runs in one.
const SYSBENCH_WORDS: &[crate::suite::api::PeerWord] = {
    use crate::suite::api::PeerWord as W;
    &[
        W {
            word: "oltp_point_select",
            instead: "--tests point-query",
        },
        W {
            word: "oltp_read_only",
            instead: "--tests read-only_range=100",
        },
        W {
            word: "oltp_read_write",
            instead: "--tests read-write_range=100",
        },
        W {
            word: "oltp_write_only",
            instead: "--tests write-only",
        },
        W {
            word: "oltp_update_index",
            instead: "--tests update-index",
        },
        W {
            word: "oltp_update_non_index",
            instead: "--tests update-nonindex",
        },
        W {
            word: "oltp_insert",
            instead: "--tests insert",
        },
        W {
            word: "oltp_delete",
            instead: "--tests delete",
        },
        W {
            word: "select_random_points",
            instead: "--tests random-points_range=10",
        },
        W {
            word: "prepare",
            instead: "",
        },
        W {
            word: "run",
            instead: "",
        },
        W {
            word: "cleanup",
            instead: "",
        },
    ]
};

const DB_URL: &str = "rqps names the server in one URL: --target mysql://user@host:port/db or postgres://user@host:port/db (or --server KIND for a throwaway one)";

const fn peer(flag: &'static str, value: bool, instead: &'static str) -> PeerFlag {
    PeerFlag {
        flag,
        value,
        instead,
    }
}

impl Workload for Sysbench {
    const PEER: (&'static str, &'static [PeerFlag]) = ("sysbench", SYSBENCH_FLAGS);
    const PEER_WORDS: &'static [crate::suite::api::PeerWord] = SYSBENCH_WORDS;
    const NAME: &'static str = "sysbench";
    const ABOUT: &'static str = "the sysbench microbenchmarks: point queries, range queries with and without aggregation, writes";
    const SPLITS: bool = true;
    /// Events are transactions (a test's statements), costs per statement.
    const UNITS: crate::harness::Units = crate::harness::Units::TRANSACTIONS_OF_STATEMENTS;
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "threads"),
            (Role::MeasuredSecs, "read-secs"),
            (Role::MeasuredSecs, "write-secs"),
            (Role::WarmupSecs, "warmup-secs"),
        ]
    };
    type Params = SysbenchParams;
    // The test list and order, the shape, the measured durations, the
    // distribution, the statement mode and transactions.
    const TREATMENTS: &'static [&'static str] = &["ps_mode"];
    const WORKLOAD: &'static [&'static str] = &[
        "list",
        "tests",
        "tables",
        "table_size",
        "read_secs",
        "write_secs",
        "events",
        "rand_type",
        "rand_spec_iter",
        "rand_spec_pct",
        "rand_spec_res",
        "rand_pareto_h",
        "rand_zipfian_exp",
        "skip_trx",
        "script",
    ];
    const RECORDED: &'static [&'static str] = &["script_plan"];

    fn params(common: &RunBasics, o: Options) -> Result<SysbenchParams, crate::error::Error> {
        let mut p = params::profile(&common.profile)
            .ok_or_else(|| usage(format!("unknown profile '{}'", common.profile)))?;
        if let Some(l) = &o.list {
            p.list = l.parse()?;
        }
        if let Some(t) = o.tests {
            p.tests = t
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if p.tests.is_empty() {
                return Err(usage("--tests needs at least one test name"));
            }
        }
        set_all(&mut p.threads, o.threads);
        set(&mut p.tables, o.tables);
        set(&mut p.table_size, o.table_size);
        set(&mut p.read_secs, o.read_secs);
        set(&mut p.write_secs, o.write_secs);
        set(&mut p.warmup_secs, o.warmup_secs);
        set(&mut p.warm_secs, o.warm_secs);
        set(&mut p.settle_secs, o.settle_secs);
        // sysbench's 0: no event bound.
        p.events = o.events.filter(|&n| n > 0);
        if let Some(r) = &o.rand_type {
            p.rand_type = r.parse()?;
        }
        set(&mut p.rand.rand_spec_iter, o.rand_spec_iter);
        set(&mut p.rand.rand_spec_pct, o.rand_spec_pct);
        set(&mut p.rand.rand_spec_res, o.rand_spec_res);
        set(&mut p.rand.rand_pareto_h, o.rand_pareto_h);
        set(&mut p.rand.rand_zipfian_exp, o.rand_zipfian_exp);
        if let Some(m) = &o.ps_mode {
            p.ps_mode = crate::suite::api::ps_mode(m)?;
        }
        p.skip_prepare = o.skip_prepare;
        p.skip_trx = o.skip_trx;
        p.seed = common.seed;
        if let Some(path) = &o.script {
            if common.part.is_some() {
                return Err(usage("--part does not split a --script run"));
            }
            // sysbench's --mysql-host and the like: in sysbench they set the
            // connection, which rqps takes from --target.
            if let Some(m) = connect::hint(o.script_args.as_deref().unwrap_or_default()) {
                return Err(usage(m));
            }
            let plan = lua::check(&lua::Inputs {
                path,
                args: o.script_args.as_deref().unwrap_or_default(),
                threads: &p.threads,
                secs: p.read_secs,
                warmup_secs: 0.0,
                rand_type: o.rand_type.is_some().then_some(p.rand_type),
                rand: p.rand,
                rand_seed: o
                    .rand_seed
                    .filter(|&s| s != 0)
                    .unwrap_or_else(|| params::rand_seed_from(p.seed)),
                seed: p.seed,
                ps_mode: p.ps_mode,
                skip_prepare: p.skip_prepare,
                memory_mib: o.script_memory.unwrap_or(lua::plan::DEFAULT_MEMORY_MIB),
                sysbench_report: o.sysbench_report,
            })?;
            // A seed given (to rqps, or on the script's command line) is
            // part of the experiment; a drawn one is recorded with the plan.
            let script_seed =
                lua::options::parse_args(o.script_args.as_deref().unwrap_or_default())
                    .map(|a| a.given)
                    .unwrap_or_default()
                    .into_iter()
                    .rev()
                    .find(|(n, _)| n == "rand_seed")
                    .is_some_and(|(_, v)| v.trim().parse::<f64>().is_ok_and(|s| s != 0.0));
            let seed_given = script_seed || o.rand_seed.is_some_and(|s| s != 0);
            // What the run's own parameters say is what the script runs.
            p.threads = plan.threads.clone();
            p.read_secs = plan.secs;
            p.events = plan.events;
            p.rand_type = plan.rand_type;
            p.rand = plan.rand;
            p.ps_mode = plan.ps_mode;
            p.rand_seed = if seed_given { plan.rand_seed } else { 0 };
            p.script_line = Some(script_line::of(&plan, seed_given));
            p.script = Some(plan);
            return Ok(p);
        }
        if o.sysbench_report || o.script_memory.is_some() {
            let flag = if o.sysbench_report {
                "--sysbench-report"
            } else {
                "--script-memory"
            };
            return Err(usage(format!(
                "{flag} applies to a sysbench Lua script: give --script FILE.lua"
            )));
        }
        if o.script_args.is_some() {
            return Err(usage(
                "arguments after -- are a script's: give the script with --script FILE.lua",
            ));
        }
        if let Some(part) = common.part {
            // Each client part runs its share of every thread count, with
            // its own ids, against tables loaded once before the parts start.
            if !p.skip_prepare {
                return Err(usage(format!(
                    "--part {part} runs one share of the load against tables already loaded: \
add --skip-prepare (load them once first, e.g. with a run without --part)"
                )));
            }
            p.threads = p
                .threads
                .iter()
                .map(|&t| part.share(t, "--threads"))
                .collect::<Result<_, _>>()?;
            p.seed = part.seed(p.seed);
            // Where the parts divide the tables, each part has its own.
            if p.tables % part.count == 0 {
                let share = p.tables / part.count;
                p.part_tables = Some(((part.index - 1) * share + 1, share));
            }
        }
        // The streams' seed: the one given (a client part's own, made from
        // it), else one made from the run's seed, stored either way.
        // A drawn one is 0: made from the run's seed when it runs
        // (SysbenchParams::glibc_seed), recorded as that, not compared.
        p.rand_seed = match (o.rand_seed.filter(|&s| s != 0), common.part) {
            (Some(s), None) => s,
            (Some(s), Some(part)) => params::rand_seed_from(part.seed(s.into())),
            (None, _) => 0,
        };
        p.steps()?;
        Ok(p)
    }

    fn step_count(p: &SysbenchParams) -> usize {
        if let Some(s) = &p.script {
            return s.threads.len() * s.commands.iter().filter(|c| *c == "run").count();
        }
        p.steps().map(|s| s.len()).unwrap_or(0)
    }

    fn estimate_secs(p: &SysbenchParams) -> f64 {
        if let Some(s) = &p.script {
            let runs = s.commands.iter().filter(|c| *c == "run").count();
            return (runs * s.threads.len()) as f64 * (s.secs + s.warmup_secs);
        }
        p.steps().map(|s| p.estimate_secs(&s)).unwrap_or(0.0)
    }

    /// sbtest rows (id, k, c CHAR(120), pad CHAR(60)) take about 250 bytes
    /// each with the k index and page overhead.
    fn load_bytes(p: &SysbenchParams) -> u64 {
        // A script's load is its own: rqps cannot tell its size.
        if p.skip_prepare || p.script.is_some() {
            return 0;
        }
        (p.tables as u64)
            .saturating_mul(p.table_size)
            .saturating_mul(250)
    }

    fn describe(p: &SysbenchParams) -> String {
        // The parameters first, as the other suites print theirs: what the
        // profile and the options given make.
        if let Some(s) = &p.script {
            return lua::describe(s);
        }
        let lower = |v: serde_json::Value| v.as_str().unwrap_or("").to_string();
        let threads: Vec<String> = p.threads.iter().map(|t| t.to_string()).collect();
        let steps = p.steps().unwrap_or_default();
        let mut out = format!(
            "profile {}: {} table(s) of {} rows; threads {}; {} s per read test, {} s per write \
             test, {} s warm-up each; {} list, {} ids, prepared statements {}; about {:.0} s \
             measured\n",
            p.profile,
            p.tables,
            p.table_size,
            threads.join(","),
            p.read_secs,
            p.write_secs,
            p.warmup_secs,
            lower(serde_json::json!(p.list)).to_lowercase(),
            rng::label(p.rand_type, &p.rand),
            lower(serde_json::json!(p.ps_mode)),
            p.estimate_secs(&steps)
        );
        if let Some(n) = p.events {
            out.push_str(&format!(
                "each test ends at {n} events or at its time, whichever comes first (0 s: no time limit)\n"
            ));
        }
        out.push_str(&format!(
            "{:<30} {:<10} {:>7}  reported\n",
            "test", "group", "secs"
        ));
        for t in steps {
            out.push_str(&format!(
                "{:<30} {:<10} {:>7}  {}\n",
                t.name,
                t.group.key(),
                p.secs(t.span),
                if t.reported { "yes" } else { "no" }
            ));
        }
        out
    }

    fn need(p: &SysbenchParams) -> crate::suite::api::Need {
        if let Some(s) = &p.script {
            // A thread's connection, and the state running init() and done();
            // statements as a script prepares them (the OLTP scripts: 9 per table).
            let threads = s.max_threads();
            let tables = s
                .options
                .iter()
                .find(|(n, _)| n == "tables")
                .and_then(|(_, v)| v.num());
            let per_connection = 9 * tables.unwrap_or(1.0).max(1.0) as usize + 2;
            return crate::suite::api::Need {
                connections: threads + 1,
                prepared: threads * per_connection,
                who: format!("{threads} script threads"),
                fewer: "run fewer threads".into(),
            };
        }
        let threads = p.threads.iter().copied().max().unwrap_or(1);
        // Tests run per table at one thread per table, and the load at most
        // one connection per table.
        let connections = threads.max(p.tables);
        // Each connection prepares its test's statements (at most 9) for
        // every table, and BEGIN and COMMIT.
        let per_connection = 9 * p.tables.max(1) + 2;
        crate::suite::api::Need {
            connections,
            prepared: connections * per_connection,
            who: if connections == threads {
                format!("{threads} sysbench threads")
            } else {
                format!("{} sysbench tables (one thread each)", p.tables)
            },
            fewer: "run fewer threads".into(),
        }
    }

    fn check_target(
        p: &SysbenchParams,
        driver: &dyn crate::engine::Driver,
    ) -> Result<(), crate::error::Error> {
        match &p.script {
            Some(s) => lua::check_target(s, driver),
            None => Ok(()),
        }
    }

    fn run(p: &SysbenchParams, h: &mut Harness<'_>) -> Result<RunEnd, crate::error::Error> {
        if let Some(s) = &p.script {
            return lua::run(s, h);
        }
        run::run(p, h)
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report::SECTION)
    }

    fn compat(p: &SysbenchParams) -> Option<crate::suite::api::CompatPlan> {
        Some(compat::plan(p))
    }
}

#[cfg(test)]
mod part_tests {
    use super::*;
    use crate::suite::part::ClientPart;

    fn part_params(part: &str, tables: usize, threads: usize) -> SysbenchParams {
        let common = RunBasics {
            profile: "ci".into(),
            seed: 7,
            part: Some(part.parse::<ClientPart>().unwrap()),
        };
        let o = Options {
            tables: Some(Tables::new(tables as u64).unwrap()),
            threads: Some(vec![Threads::new(threads as u64).unwrap()]),
            skip_prepare: true,
            ..Default::default()
        };
        Sysbench::params(&common, o).unwrap()
    }

    #[test]
    fn a_part_takes_its_share_of_threads_and_of_tables_where_they_divide() {
        let p = part_params("2/2", 4, 5);
        assert_eq!((p.threads.clone(), p.event_tables()), (vec![2], (3, 2)));
        let p = part_params("1/2", 4, 5);
        assert_eq!((p.threads.clone(), p.event_tables()), (vec![3], (1, 2)));
        // 3 tables do not divide into 2 parts: each part uses all of them.
        assert_eq!(part_params("2/2", 3, 4).event_tables(), (1, 3));
        assert_ne!(part_params("1/2", 4, 4).seed, part_params("2/2", 4, 4).seed);
    }
}
