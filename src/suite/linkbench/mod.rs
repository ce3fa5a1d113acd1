//! LinkBench, the social-graph benchmark (spec `linkbench-tpcc.md` Part A):
//! a load of nodes, links and counts, then request steps at each requester
//! count, then a check that the counts agree with the links.
//!
//! Modules: `schema` (the three tables as data), `dist` (the mix, Zipf ids,
//! the two id-to-out-degree mappings of `--outdegree`, payloads),
//! `reference` (the reference driver's shuffle, random numbers and type
//! split, for the default mapping and its table `nlinks.dat`),
//! `load` (parallel loaders), `request` (one requester), `check` (the counts
//! check), `report` (the report section).

pub mod check;
pub mod compat;
pub mod detail;
pub mod dist;
pub mod load;
pub mod reference;
pub mod report;
pub mod request;
pub mod schema;

use crate::harness::TestFailure;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::usage;
use crate::harness::runner::stop_requested;
use crate::harness::{Harness, Per, RunEnd, TimedStep, Timing, Verdict};
use crate::results::TestResult;
use crate::suite::api::{RunBasics, Workload, set, set_all};
use crate::suite::bounds::{Rows, Secs, Threads};
pub use detail::{Detail, KEY, LoadFigures, OpFigures, RequestFigures};
use dist::{Graph, IdDists, MIX, Mix, Outdegree};
use request::{ReqStats, RequestSetup, Requester};

/// The LinkBench suite.
pub struct Linkbench;

/// What a user may set (`rqps run --suite linkbench --flag`, or the matrix key).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "linkbench options (--suite linkbench)")]
pub struct Options {
    /// Requesters (client threads, two connections each); a list runs a
    /// request step at each count, named P<requesters>.
    #[arg(long, value_delimiter = ',', value_name = "N,M,..")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub requesters: Option<Vec<Threads>>,
    /// Nodes the load makes (ids 1..=N); links follow the out-degree distribution.
    #[arg(long, value_name = "N")]
    pub nodes: Option<Rows>,
    /// How ids get their out-degrees: reference (default; the same links as
    /// LinkBench at maxid1 = N + 1) or smooth (ci's default: under reference
    /// one node has 961963 links at any N). See docs/suites/linkbench.md.
    #[arg(long, value_enum, value_name = "MAPPING")]
    pub outdegree: Option<Outdegree>,
    /// Link loader threads.
    #[arg(long, value_name = "N")]
    pub loaders: Option<Threads>,
    /// Measured seconds of each request step (the longest it runs).
    #[arg(long = "lb-secs", value_name = "S")]
    #[serde(rename = "lb_secs")]
    pub secs: Option<Secs>,
    /// Seconds of warm-up before each request step's measurement.
    #[arg(long = "lb-warmup-secs", value_name = "S")]
    #[serde(rename = "lb_warmup_secs")]
    pub warmup_secs: Option<Secs>,
    /// Measured requests per requester; the step ends when every requester
    /// made them (or at --lb-secs). 0: no count, the duration alone.
    #[arg(long, value_name = "N")]
    pub requests: Option<Rows>,
    /// Requests per second per requester, Poisson arrivals; 0: unthrottled.
    #[arg(long, value_name = "R")]
    pub request_rate: Option<f64>,
    /// Most rows one list scan returns.
    #[arg(long, value_name = "N")]
    pub list_limit: Option<Rows>,
    /// Failed requests after which a requester gives up.
    #[arg(long, value_name = "N")]
    pub max_failures: Option<Rows>,
    /// Build the id1_type index after the load (its own step) instead of before it.
    #[arg(long, value_name = "BOOL")]
    pub index_after_load: Option<bool>,
    /// Load the tables afresh (false: run against the tables a previous load left).
    #[arg(long = "lb-load", value_name = "BOOL")]
    #[serde(rename = "lb_load")]
    pub load: Option<bool>,
}

/// Checked parameters, stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub profile: String,
    pub seed: u64,
    pub requesters: Vec<usize>,
    pub nodes: u64,
    /// Results stored before the option existed were made with `smooth`.
    #[serde(default = "smooth")]
    pub outdegree: Outdegree,
    pub loaders: usize,
    pub secs: f64,
    pub warmup_secs: f64,
    pub requests: u64,
    pub request_rate: f64,
    pub list_limit: usize,
    pub max_failures: u64,
    pub index_after_load: bool,
    pub load: bool,
}

fn smooth() -> Outdegree {
    Outdegree::Smooth
}

/// The profile's defaults.
fn profile(common: &RunBasics) -> Params {
    let base = Params {
        profile: common.profile.clone(),
        seed: common.seed,
        requesters: vec![1, 4],
        nodes: 100_000,
        outdegree: Outdegree::Reference,
        loaders: 4,
        secs: 30.0,
        warmup_secs: 5.0,
        requests: 0,
        request_rate: 0.0,
        list_limit: 10_000,
        max_failures: 100,
        index_after_load: false,
        load: true,
    };
    match common.profile.as_str() {
        "ci" => Params {
            requesters: vec![1, 2],
            nodes: 5_000,
            // The reference's mapping gives one node 961,963 links at any
            // node count (98.5 % of the 976,519 links at 5,000 nodes): a
            // load of seconds becomes one of a minute. ci keeps the graph
            // small with rqps's smooth mapping (23,398 links).
            outdegree: Outdegree::Smooth,
            loaders: 2,
            secs: 1.0,
            warmup_secs: 0.2,
            ..base
        },
        "small-server" => Params {
            requesters: vec![1, 4, 16],
            nodes: 1_000_000,
            loaders: 8,
            secs: 300.0,
            warmup_secs: 30.0,
            index_after_load: true,
            ..base
        },
        "large-server" => Params {
            requesters: vec![1, 4, 16, 64],
            nodes: 10_000_000,
            loaders: 10,
            secs: 900.0,
            warmup_secs: 60.0,
            index_after_load: true,
            ..base
        },
        _ => base,
    }
}

fn secs_ok(v: f64, zero_ok: bool) -> bool {
    v.is_finite() && v <= 86_400.0 && (v > 0.0 || (zero_ok && v == 0.0))
}

/// The step names, in order.
fn steps(p: &Params) -> Vec<String> {
    let mut v = Vec::new();
    if p.load {
        v.push("load".to_string());
        if p.index_after_load {
            v.push("index".into());
        }
    }
    v.extend(p.requesters.iter().map(|r| format!("P{r}")));
    v.push("check".into());
    v
}

/// Seeds the smooth mapping's shuffles (the reference's have their own).
const GRAPH_SEED: u64 = 0x004C_4247_5241_5048;

impl Workload for Linkbench {
    const NAME: &'static str = "linkbench";
    const ABOUT: &'static str = "LinkBench: a social graph's nodes, links and counts, loaded then requested in the Facebook mix";
    const PROFILES: &'static [&'static str] = &["quick", "ci", "small-server", "large-server"];
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "requesters"),
            (Role::MeasuredSecs, "lb-secs"),
            (Role::WarmupSecs, "lb-warmup-secs"),
        ]
    };
    type Params = Params;
    // Requesters are the thread counts, compared cell by cell; loaders and
    // the index build only change how the same graph is loaded.
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "operation",
        per_op: "operation",
    };
    const WORKLOAD: &'static [&'static str] = &[
        "nodes",
        "outdegree",
        "secs",
        "requests",
        "request_rate",
        "list_limit",
    ];

    fn params(common: &RunBasics, o: Options) -> Result<Params, crate::error::Error> {
        let mut p = profile(common);
        set_all(&mut p.requesters, o.requesters);
        set(&mut p.nodes, o.nodes);
        set(&mut p.outdegree, o.outdegree);
        set(&mut p.loaders, o.loaders);
        set(&mut p.secs, o.secs);
        set(&mut p.warmup_secs, o.warmup_secs);
        set(&mut p.requests, o.requests);
        set(&mut p.request_rate, o.request_rate);
        set(&mut p.list_limit, o.list_limit);
        set(&mut p.max_failures, o.max_failures);
        set(&mut p.index_after_load, o.index_after_load);
        set(&mut p.load, o.load);
        if p.requesters.is_empty() || p.requesters.iter().any(|&r| r == 0 || r > 10_000) {
            return Err(usage(
                "--requesters must list requester counts from 1 to 10000, e.g. --requesters 1,4,16",
            ));
        }
        if p.nodes < 2 || p.nodes > 1_000_000_000 {
            return Err(usage(format!(
                "--nodes must be from 2 to 1000000000, got {}",
                p.nodes
            )));
        }
        if p.loaders == 0 || p.loaders > 1024 {
            return Err(usage(format!(
                "--loaders must be from 1 to 1024, got {}",
                p.loaders
            )));
        }
        if !secs_ok(p.secs, false) {
            return Err(usage(format!(
                "--lb-secs must be a number of seconds in (0, 86400], got {:?}",
                p.secs
            )));
        }
        if !secs_ok(p.warmup_secs, true) {
            return Err(usage(format!(
                "--lb-warmup-secs must be a number of seconds in [0, 86400], got {:?}",
                p.warmup_secs
            )));
        }
        let max_rate = crate::suite::bounds::MAX_RATE as f64;
        if !(p.request_rate.is_finite() && (0.0..=max_rate).contains(&p.request_rate)) {
            return Err(usage(format!(
                "--request-rate must be requests per second per requester, 0 to {max_rate}, got {:?}",
                p.request_rate
            )));
        }
        if p.list_limit == 0 || p.list_limit > 1_000_000 {
            return Err(usage(format!(
                "--list-limit must be from 1 to 1000000, got {}",
                p.list_limit
            )));
        }
        if p.max_failures == 0 {
            return Err(usage(
                "--max-failures must be at least 1 (a requester gives up at that many failed requests)",
            ));
        }
        Ok(p)
    }

    fn step_count(p: &Params) -> usize {
        steps(p).len()
    }

    fn estimate_secs(p: &Params) -> f64 {
        p.requesters.len() as f64 * (p.secs + p.warmup_secs)
    }

    fn describe(p: &Params) -> String {
        let mut s = String::new();
        for name in steps(p) {
            let line = match name.as_str() {
                "load" => format!(
                    "load: {} nodes and {} over 2 link types ({}), {} link loader(s){}",
                    p.nodes,
                    links_line(p),
                    match p.outdegree {
                        Outdegree::Reference => format!(
                            "reference out-degrees: one node has {}",
                            dist::OutDegree::reference().max()
                        ),
                        Outdegree::Smooth => "smooth out-degrees".into(),
                    },
                    p.loaders,
                    if p.index_after_load {
                        ", id1_type index after the load"
                    } else {
                        ""
                    }
                ),
                "index" => "index: build id1_type on the loaded links".into(),
                "check" => "check: counttable against the visible links".into(),
                step => {
                    let mut l = format!(
                        "{step}: {} requester(s), {:.1} s warm-up, {:.1} s measured",
                        &step[1..],
                        p.warmup_secs,
                        p.secs
                    );
                    if p.requests > 0 {
                        l.push_str(&format!(" or {} requests each", p.requests));
                    }
                    if p.request_rate > 0.0 {
                        l.push_str(&format!(", {} requests/s each", p.request_rate));
                    }
                    l
                }
            };
            s.push_str(&line);
            s.push('\n');
        }
        s
    }

    fn load_bytes(p: &Params) -> u64 {
        if !p.load {
            return 0;
        }
        p.nodes
            .saturating_mul(NODE_BYTES)
            .saturating_add(expected_links(p).0.saturating_mul(LINK_BYTES))
    }

    fn need(p: &Params) -> crate::suite::api::Need {
        let requesters = p.requesters.iter().copied().max().unwrap_or(1);
        // Two connections per requester (reads, writes); the load's link
        // loaders and its node loader.
        let by_requesters = 2 * requesters > p.loaders;
        crate::suite::api::Need {
            connections: (2 * requesters).max(p.loaders + 1),
            // At most 16 statements per connection (the list scans by
            // size included).
            prepared: 16 * (2 * requesters).max(p.loaders + 1),
            who: if by_requesters {
                format!("{requesters} LinkBench requesters")
            } else {
                format!("{} LinkBench loaders", p.loaders)
            },
            fewer: if by_requesters {
                "run fewer requesters".into()
            } else {
                "run fewer loaders (--loaders)".into()
            },
        }
    }

    fn run(p: &Params, h: &mut Harness<'_>) -> Result<RunEnd, crate::error::Error> {
        if !p.load {
            let found = h.driver.require_sql().and_then(|db| {
                db.connect()?.query_scalar(&format!(
                    "SELECT COUNT(*) FROM {} WHERE id <= {}",
                    schema::NODE,
                    p.nodes
                ))
            });
            if let Err(e) = found {
                return Err(crate::error::failed(format!(
                    "--lb-load false needs the tables of an earlier linkbench load, but reading {} failed ({e}): run once without --lb-load false",
                    schema::NODE
                )));
            }
        }
        let mut end = RunEnd::Ok;
        let graph_seed = GRAPH_SEED;
        for (i, name) in steps(p).into_iter().enumerate() {
            if stop_requested() {
                return Ok(RunEnd::Interrupted);
            }
            let r = match name.as_str() {
                "load" => {
                    let r = run_load(p, h, graph_seed)?;
                    if r.status == crate::results::Status::Failed {
                        // Without its tables no later step can run.
                        return Err(crate::error::failed(r.reason.unwrap_or_default()));
                    }
                    r
                }
                "index" => run_index(h)?,
                "check" => run_check(h)?,
                _ => {
                    let requesters = p.requesters[i - steps_before_requests(p)];
                    run_requests(p, h, requesters, graph_seed, i)?
                }
            };
            if !end.after(&r) {
                break;
            }
        }
        Ok(end)
    }

    fn line(label: &str, r: &TestResult) -> String {
        report::result_line(label, r)
    }

    fn compat(p: &Params) -> Option<crate::suite::api::CompatPlan> {
        Some(compat::plan(&compat::Shape {
            nodes: p.nodes,
            outdegree: p.outdegree,
            seed: p.seed,
            graph_seed: GRAPH_SEED,
            list_limit: p.list_limit,
            max_failures: p.max_failures,
        }))
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report::SECTION)
    }
}

/// Above this many nodes the plan estimates the links instead of counting them.
const COUNT_LINKS_UP_TO: u64 = 20_000_000;

/// The links the load will make, as the plan shows them: counted exactly
/// (the mapping is deterministic) up to [`COUNT_LINKS_UP_TO`] nodes.
fn links_line(p: &Params) -> String {
    let (links, counted) = expected_links(p);
    if counted {
        format!("{links} links")
    } else {
        format!("about {links} links")
    }
}

/// The links the load makes: counted up to [`COUNT_LINKS_UP_TO`] nodes, else
/// estimated from the distribution's mean (the second value says which).
fn expected_links(p: &Params) -> (u64, bool) {
    let graph = Graph::new(p.nodes, GRAPH_SEED, p.outdegree);
    if p.nodes <= COUNT_LINKS_UP_TO {
        (graph.total_links(), true)
    } else {
        ((p.nodes as f64 * graph.distribution().mean()) as u64, false)
    }
}

/// Bytes on disk per node row: the lognormal payload's mean (median 128
/// bytes, sigma 1: 128 * e^0.5 = 211) plus the id, type, version and time.
const NODE_BYTES: u64 = 250;
/// Bytes on disk per link: the row (keys, visibility, time, version, a
/// payload of mean 8 * e^0.5 = 13 bytes) twice, since the covering id1_type
/// index holds it all again, plus its share of counttable.
const LINK_BYTES: u64 = 160;

fn steps_before_requests(p: &Params) -> usize {
    if !p.load {
        0
    } else if p.index_after_load {
        2
    } else {
        1
    }
}

fn run_load(
    p: &Params,
    h: &mut Harness<'_>,
    graph_seed: u64,
) -> Result<TestResult, crate::error::Error> {
    h.test(
        "load".into(),
        TestResult::running(
            Linkbench::NAME,
            "load".into(),
            "load",
            p.loaders,
            true,
            "links/s",
        ),
        |run| {
            let driver = run.driver.clone();
            let db = driver.require_sql()?;
            load::create_tables(db, !p.index_after_load)
                .map_err(TestFailure::when("could not create the tables"))?;
            let graph = Graph::new(p.nodes, graph_seed, p.outdegree);
            let out = run
                .load(p.nodes, "nodes", |_, shown| {
                    load_showing(&driver, p, &graph, shown).map(|out| {
                        let rows = (out.nodes + out.links + out.counts) as f64;
                        (out, rows)
                    })
                })
                .map_err(TestFailure::new)?;
            let secs = out.secs.max(1e-9);
            let r = &mut run.result;
            r.secs = out.secs;
            r.qps = out.links as f64 / secs;
            r.tps = out.nodes as f64 / secs;
            r.statements_per_sec = r.qps;
            r.writes = out.nodes + out.links + out.counts;
            r.events = out.links;
            r.rows = out.nodes + out.links + out.counts;
            r.errors = out.retries;
            r.status = if stop_requested() {
                crate::results::Status::Interrupted
            } else {
                crate::results::Status::Ok
            };
            let lf = LoadFigures {
                nodes: out.nodes,
                links: out.links,
                counts: out.counts,
                nodes_per_sec: out.nodes as f64 / out.node_secs.max(1e-9),
                links_per_sec: out.links as f64 / out.link_secs.max(1e-9),
                node_secs: out.node_secs,
                link_secs: out.link_secs,
                mean_out_degree: out.links as f64 / out.nodes.max(1) as f64,
                distribution_mean: graph.distribution().mean(),
                expected_links: Some(graph.total_links()),
                retries: out.retries,
                index_secs: None,
            };
            run.result.set_detail(
                KEY,
                &Detail {
                    load: Some(lf),
                    ..Default::default()
                },
            );
            Ok(())
        },
    )
}

/// The load's loaders, with a look at their counts every 200 ms for the
/// bar (nodes done, links so far).
fn load_showing(
    driver: &Arc<dyn crate::engine::Driver>,
    p: &Params,
    graph: &Graph,
    shown: &crate::harness::LoadProgress,
) -> Result<load::LoadOut, load::LoadError> {
    let progress = load::Progress::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let n = progress.nodes.load(std::sync::atomic::Ordering::Relaxed);
                let l = progress.links.load(std::sync::atomic::Ordering::Relaxed);
                shown.done(n);
                shown.note(format!("nodes, {l} links"));
            }
        });
        let out = load::load(
            driver,
            graph,
            p.loaders,
            p.seed,
            &progress,
            &load::wall_clock(),
        );
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    })
}

fn run_index(h: &mut Harness<'_>) -> Result<TestResult, crate::error::Error> {
    h.test(
        "index".into(),
        TestResult::running(Linkbench::NAME, "index".into(), "load", 1, true, "links/s"),
        |run| {
            let driver = run.driver.clone();
            let db = driver.require_sql()?;
            let links = db
                .connect()
                .and_then(|mut c| c.query_scalar(&format!("SELECT COUNT(*) FROM {}", schema::LINK)))
                .map_err(TestFailure::when("could not count the links"))?
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0);
            let secs = run
                .measured("link", |_| {
                    load::build_index(db).map(|secs| (secs, links as f64))
                })
                .map_err(TestFailure::when("could not build id1_type"))?;
            let r = &mut run.result;
            r.secs = secs;
            r.qps = links as f64 / secs.max(1e-9);
            r.statements_per_sec = 1.0 / secs.max(1e-9);
            r.events = 1;
            r.rows = links;
            r.status = crate::results::Status::Ok;
            r.set_detail(
                KEY,
                &Detail {
                    load: Some(LoadFigures {
                        links,
                        index_secs: Some(secs),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            );
            Ok(())
        },
    )
}

fn run_check(h: &mut Harness<'_>) -> Result<TestResult, crate::error::Error> {
    let result = TestResult::running(
        Linkbench::NAME,
        "check".into(),
        "check",
        1,
        false,
        "pairs/s",
    );
    h.check("check", result, "pair", |run| {
        let driver = run.driver.clone();
        let db = driver.require_sql()?;
        let out = check::check(db).map_err(TestFailure::when("could not run the counts check"))?;
        let r = &mut run.result;
        r.errors = out.mismatched + out.stray;
        let verdict = Verdict {
            checked: out.pairs,
            violation: (!out.ok()).then(|| out.reason()),
        };
        r.set_detail(
            KEY,
            &Detail {
                check: Some(out),
                ..Default::default()
            },
        );
        Ok(verdict)
    })
}

fn run_requests(
    p: &Params,
    h: &mut Harness<'_>,
    requesters: usize,
    graph_seed: u64,
    index: usize,
) -> Result<TestResult, crate::error::Error> {
    let name = format!("P{requesters}");
    h.test(
        name.clone(),
        TestResult::running(Linkbench::NAME, name, "request", requesters, true, "ops/s"),
        |run| {
            let driver = run.driver.clone();
            let shared = Arc::new(RequestSetup {
                graph: Graph::new(p.nodes, graph_seed, p.outdegree),
                ids: IdDists::new(p.nodes, graph_seed, p.outdegree),
                mix: Mix::new(&MIX),
                list_limit: p.list_limit,
                rate: p.request_rate,
                requests: (p.requests > 0).then_some(p.requests),
                max_failures: p.max_failures,
                max_retries: 10,
                clock: load::wall_clock(),
                only: None,
            });
            let mut workers = (0..requesters)
                .map(|i| {
                    Requester::new(
                        driver.clone(),
                        shared.clone(),
                        p.seed
                            ^ ((index * 10_007 + i) as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(TestFailure::when("could not start the requesters"))?;
            let timing = Timing::measured(p.warmup_secs, p.secs);
            let step = run.timed(&mut workers, TimedStep::new(timing, Per::Event));
            run.result.qps = run.result.tps;
            run.result.qps_unit = "ops/s".into();
            let mut stats = ReqStats::default();
            for w in &workers {
                stats.add(&w.stats);
            }
            let gave_up = workers.iter().filter(|w| w.gave_up).count();
            let secs = step.secs.max(1e-9);
            let ops = step
                .kinds
                .iter()
                .map(|k| {
                    let q = |v: f64| {
                        if k.hist.is_empty() {
                            0.0
                        } else {
                            k.hist.value_at_quantile(v) as f64 / 1000.0
                        }
                    };
                    OpFigures {
                        op: k.name.clone().unwrap_or_default(),
                        count: k.events,
                        ops_per_sec: k.events as f64 / secs,
                        errors: k.errors,
                        mean_us: if k.hist.is_empty() {
                            0.0
                        } else {
                            k.hist.mean() / 1000.0
                        },
                        p25_us: q(0.25),
                        p50_us: q(0.50),
                        p75_us: q(0.75),
                        p95_us: q(0.95),
                        p99_us: q(0.99),
                        max_us: if k.hist.is_empty() {
                            0.0
                        } else {
                            k.hist.max() as f64 / 1000.0
                        },
                    }
                })
                .collect();
            if gave_up > 0 {
                run.warn(format!(
                    "{gave_up} of {requesters} requester(s) gave up after {} failed requests",
                    p.max_failures
                ));
                if gave_up == requesters && run.result.status == crate::results::Status::Ok {
                    run.result.status = crate::results::Status::Failed;
                    run.result.reason = Some(format!(
                        "every requester gave up after {} failed requests; the last error: {}",
                        p.max_failures,
                        workers
                            .iter()
                            .find_map(|w| w.last_error.clone())
                            .unwrap_or_default()
                    ));
                }
            }
            let rf = RequestFigures {
                requesters,
                ops_per_sec: run.result.tps,
                ops,
                stats,
                gave_up,
            };
            run.result.set_detail(
                KEY,
                &Detail {
                    request: Some(rf),
                    ..Default::default()
                },
            );
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(profile: &str) -> RunBasics {
        RunBasics {
            profile: profile.into(),
            seed: 1,
            part: None,
        }
    }

    #[test]
    fn the_reference_mapping_is_the_default_and_ci_keeps_smooth() {
        let p = Linkbench::params(&common("quick"), Options::default()).unwrap();
        assert_eq!(p.outdegree, Outdegree::Reference);
        let p = Linkbench::params(&common("ci"), Options::default()).unwrap();
        assert_eq!(p.outdegree, Outdegree::Smooth);
        let o = Options {
            outdegree: Some(Outdegree::Reference),
            ..Options::default()
        };
        let p = Linkbench::params(&common("ci"), o).unwrap();
        assert_eq!(p.outdegree, Outdegree::Reference);
        // Stored with the run, and a matrix key.
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["outdegree"], "reference");
        let o: Options = toml::from_str("outdegree = \"smooth\"").unwrap();
        assert_eq!(o.outdegree, Some(Outdegree::Smooth));
        assert!(toml::from_str::<Options>("outdegree = \"left\"").is_err());
    }

    #[test]
    fn the_load_size_follows_the_links_the_mapping_makes_and_is_zero_without_a_load() {
        let quick = Linkbench::params(&common("quick"), Options::default()).unwrap();
        // 100,000 nodes and the reference's 1,368,899 links.
        assert_eq!(
            Linkbench::load_bytes(&quick),
            100_000 * NODE_BYTES + 1_368_899 * LINK_BYTES
        );
        let smooth = Options {
            outdegree: Some(Outdegree::Smooth),
            ..Options::default()
        };
        let p = Linkbench::params(&common("quick"), smooth).unwrap();
        assert_eq!(
            Linkbench::load_bytes(&p),
            100_000 * NODE_BYTES + 472_765 * LINK_BYTES
        );
        let no_load = Options {
            load: Some(false),
            ..Options::default()
        };
        let p = Linkbench::params(&common("quick"), no_load).unwrap();
        assert_eq!(Linkbench::load_bytes(&p), 0);
    }

    #[test]
    fn results_stored_before_the_option_read_as_smooth() {
        let p = Linkbench::params(&common("quick"), Options::default()).unwrap();
        let mut json = serde_json::to_value(&p).unwrap();
        json.as_object_mut().unwrap().remove("outdegree");
        let old: Params = serde_json::from_value(json).unwrap();
        assert_eq!(old.outdegree, Outdegree::Smooth);
    }
}
