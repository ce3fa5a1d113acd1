//! From a results directory to a [`Report`]: read every run, pool the runs
//! of a name as repeats, keep the results that count, and compare each
//! target with the base test by test. The caller's sections
//! ([`Options::sections`]) order and title the groups of their suites and
//! build their own parts; a suite without a section is tabulated as stored.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::compare::{self, Rules};
use super::model::*;
use super::section::{Built, Input, Section};
use super::stats;
use crate::error::{Error, usage};
use crate::results::{self, RunDoc, TestResult};

/// What to compare.
#[derive(Clone, Debug)]
pub struct Options {
    pub base: String,
    /// Targets in this order; `None`: every other name, in the order first stored.
    pub targets: Option<Vec<String>>,
    pub rules: Rules,
    /// Count unreported warm-up steps too.
    pub all: bool,
    /// One per suite the caller knows (the suite registry); results of a
    /// suite without one still make rows of the generic tables.
    pub sections: Vec<&'static dyn Section>,
    /// The parameters that make each suite's workload (the suite registry's):
    /// a name that differs from the base in one of them, or in the suite, is
    /// not compared. A suite without an entry is checked on its name alone.
    pub workloads: Vec<WorkloadKeys>,
    /// The engine kinds' fairness settings and option keys (the engine
    /// registry's).
    pub engines: EngineKeys,
    /// Compare names whose workload is not the base's too, saying so on top.
    pub allow_mismatch: bool,
}

/// Every run under `dir` (directories holding a `run.json`), oldest first,
/// and a warning for each one that could not be read.
pub fn read_results(dir: &Path) -> Result<(Vec<RunDoc>, Vec<String>), Error> {
    read_results_keeping(dir, results::Keep::All)
}

/// [`read_results`], keeping of each run only what `keep` says (see
/// [`results::Keep`]).
pub fn read_results_keeping(
    dir: &Path,
    keep: results::Keep,
) -> Result<(Vec<RunDoc>, Vec<String>), Error> {
    if !dir.exists() {
        return Err(no_results_dir(dir));
    }
    let entries = std::fs::read_dir(dir).map_err(|source| results::StoreError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    Ok(read_dirs(&dirs, keep))
}

/// The runs in `dirs` (run directories), read in parallel keeping what
/// `keep` says, oldest first, and a warning for each one that could not be
/// read or is one part of a split load.
pub fn read_dirs(dirs: &[PathBuf], keep: results::Keep) -> (Vec<RunDoc>, Vec<String>) {
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    let read = crate::util::par_map(dirs, |d| results::read_run_keeping(d, keep));
    for (d, r) in dirs.iter().zip(read) {
        match r {
            // One share of a split load is not the target's result: `rqps merge` makes that.
            Ok(r) if r.part.as_ref().is_some_and(|p| p.count > 1) => warnings.push(format!(
                "skipped run {} ({}): it is part {}/{} of a split load; merge the parts with `rqps merge` and report the merged run",
                r.run_id,
                r.name,
                r.part.as_ref().map_or(0, |p| p.index),
                r.part.as_ref().map_or(0, |p| p.count)
            )),
            Ok(r) => runs.push(r),
            Err(e) => warnings.push(format!("skipped unreadable run {}: {e}", d.display())),
        }
    }
    runs.sort_by(|a, b| (&a.started, &a.run_id).cmp(&(&b.started, &b.run_id)));
    (runs, warnings)
}

/// A results directory that is not there: the user's mistake, with what to
/// do (every command that reads results says it the same way).
pub fn no_results_dir(dir: &Path) -> Error {
    crate::error::usage(format!(
        "no results directory {}: `rqps run` stores runs there, or give --results DIR",
        dir.display()
    ))
}

/// Names in the order their first run was stored.
pub fn names(runs: &[RunDoc]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.name) {
            out.push(r.name.clone());
        }
    }
    out
}

fn unknown_name(name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!(
            "no target named '{name}': the results directory holds no runs (`rqps run --name {name}` stores one)"
        )
    } else {
        format!(
            "no target named '{name}'{}; the results hold: {}",
            crate::util::suggest::hint(name, known.iter().map(String::as_str)),
            known.join(", ")
        )
    }
}

/// A report or comparison that names no base: the names the results hold,
/// so the user can pick one (`rqps report --base wal`).
pub fn no_base(dir: &Path, command: &str) -> Error {
    let names = match read_results(dir) {
        Ok((runs, _)) => names(&runs),
        Err(e) => return e,
    };
    match names.first() {
        None => crate::error::usage(format!(
            "{command} needs --base NAME, and {} holds no runs yet: `rqps run --name NAME` stores one",
            dir.display()
        )),
        Some(first) => crate::error::usage(format!(
            "{command} needs --base NAME, the run name the others are compared with; {} holds {} (e.g. `{command}{} --base {}`)",
            dir.display(),
            names.join(", "),
            crate::cmdline::results_arg(dir),
            crate::cmdline::shell_word(first)
        )),
    }
}

type Key = (String, String, usize);

pub use super::model::BUSY_MARK;

/// A counted result and the run it came from.
struct Found<'a> {
    run: &'a RunDoc,
    test: &'a TestResult,
}

/// Where a row goes: its suite's place among the sections, its group's
/// place in the suite, then its test's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    suite: usize,
    group: usize,
    test: usize,
}

/// The order and titles of the generic tables, from the sections where they
/// say, else from the order the base stored its results in.
struct Layout<'a> {
    sections: &'a [&'static dyn Section],
    /// (suite, group) and (suite, test) in the order the base stored them.
    seen_groups: HashMap<(String, String), usize>,
    seen_tests: HashMap<(String, String), usize>,
    /// Test positions a section gave, by suite.
    positions: HashMap<String, Option<HashMap<String, usize>>>,
    unknown_suites: Vec<String>,
}

impl<'a> Layout<'a> {
    fn new(sections: &'a [&'static dyn Section], base_runs: &[&RunDoc]) -> Self {
        let mut seen_groups = HashMap::new();
        let mut seen_tests = HashMap::new();
        let mut unknown_suites: Vec<String> = Vec::new();
        for t in base_runs.iter().flat_map(|r| r.tests.iter()) {
            let n = seen_groups.len();
            seen_groups
                .entry((t.suite.clone(), t.group.clone()))
                .or_insert(n);
            let n = seen_tests.len();
            seen_tests
                .entry((t.suite.clone(), t.test.clone()))
                .or_insert(n);
            if !sections.iter().any(|s| s.suite() == t.suite) && !unknown_suites.contains(&t.suite)
            {
                unknown_suites.push(t.suite.clone());
            }
        }
        unknown_suites.sort();
        let positions = sections
            .iter()
            .map(|s| (s.suite().to_string(), s.test_positions(base_runs)))
            .collect();
        Layout {
            sections,
            seen_groups,
            seen_tests,
            positions,
            unknown_suites,
        }
    }

    fn section(&self, suite: &str) -> Option<&'static dyn Section> {
        self.sections.iter().copied().find(|s| s.suite() == suite)
    }

    /// Whether results of `suite` are rows of the generic tables.
    fn tabulated(&self, suite: &str) -> bool {
        self.section(suite).is_none_or(|s| s.in_tables())
    }

    /// The place and the group title of a row; `Err` (a warning) when its
    /// suite's section does not know its group.
    fn place(&self, suite: &str, group: &str, test: &str) -> Result<(Place, String), UnknownGroup> {
        let suite_rank = match self.sections.iter().position(|s| s.suite() == suite) {
            Some(i) => i,
            None => {
                self.sections.len()
                    + self
                        .unknown_suites
                        .iter()
                        .position(|s| s == suite)
                        .unwrap_or(self.unknown_suites.len())
            }
        };
        let key = |v: &str| (suite.to_string(), v.to_string());
        let defs = self.section(suite).map(|s| s.groups()).unwrap_or_default();
        let (group_rank, title) = if defs.is_empty() {
            (
                self.seen_groups
                    .get(&key(group))
                    .copied()
                    .unwrap_or(usize::MAX),
                format!("{suite}: {group}"),
            )
        } else {
            match defs.iter().position(|d| d.key == group) {
                Some(i) => (i, defs[i].title.to_string()),
                None => {
                    return Err(UnknownGroup {
                        group: group.to_string(),
                    });
                }
            }
        };
        let test_rank = match self.positions.get(suite) {
            Some(Some(pos)) => pos.get(test).copied().unwrap_or(usize::MAX),
            _ => self
                .seen_tests
                .get(&key(test))
                .copied()
                .unwrap_or(usize::MAX),
        };
        Ok((
            Place {
                suite: suite_rank,
                group: group_rank,
                test: test_rank,
            },
            title,
        ))
    }
}

/// A stored row whose group its suite's report section does not list (a
/// result from a newer rqps): left out of the tables, with a warning.
#[derive(Debug, thiserror::Error)]
#[error("unknown report group '{group}', left out")]
struct UnknownGroup {
    group: String,
}

fn side(found: &[Found]) -> Side {
    let qps: Vec<f64> = found.iter().map(|f| f.test.qps).collect();
    let samples: Vec<Sample> = found
        .iter()
        .map(|f| Sample {
            run_id: f.run.run_id.clone(),
            engine_version: f.run.engine.version.clone(),
            qps: f.test.qps,
            tps: f.test.tps,
            errors: f.test.errors,
            latency_us: f.test.latency_us.clone(),
            hw: f.test.hw.as_deref().and_then(HwFigures::from_cost),
            busy: f
                .test
                .warnings
                .iter()
                .any(|w| w.starts_with(results::BUSY_WARNING)),
            limit: f.test.hw.as_ref().and_then(|h| h.limit.clone()),
        })
        .collect();
    let hw = compare::hw_mean(samples.iter().filter_map(|s| s.hw.as_ref()));
    let mut by_t: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
    for f in found {
        for s in &f.test.per_second {
            let e = by_t.entry(s.t).or_insert((0.0, 0));
            e.0 += s.qps;
            e.1 += 1;
        }
    }
    let per_second = by_t
        .into_iter()
        .map(|(t, (sum, n))| [t as f64, sum / n as f64])
        .collect();
    // Spread under 1 % of the median is measurement grain, not a scale for outliers.
    let outliers = stats::outliers(&qps, 3.5, 0.01 * stats::median(&qps))
        .into_iter()
        .map(|i| samples[i].run_id.clone())
        .collect();
    Side {
        n: samples.len(),
        qps: stats::geomean(&qps).unwrap_or(0.0),
        samples,
        hw,
        per_second,
        outliers,
    }
}

fn info(name: &str, runs: &[&RunDoc]) -> TargetInfo {
    // Its repeats: a run that measured nothing (a script's `prepare`) is
    // none, unless the name has nothing else.
    let measured: Vec<&RunDoc> = runs.iter().copied().filter(|r| r.measures).collect();
    let runs = if measured.is_empty() {
        runs
    } else {
        &measured[..]
    };
    let mut versions: Vec<String> = Vec::new();
    for r in runs {
        if !versions.contains(&r.engine.version) {
            versions.push(r.engine.version.clone());
        }
    }
    TargetInfo {
        name: name.to_string(),
        engine: runs
            .first()
            .map(|r| r.engine.name.clone())
            .unwrap_or_default(),
        versions,
        runs: runs
            .iter()
            .map(|r| RunRef {
                run_id: r.run_id.clone(),
                started: r.started.clone(),
                status: r.status.to_string(),
                engine_version: r.engine.version.clone(),
            })
            .collect(),
    }
}

/// The run parameters that describe the workload (the seed and the test and
/// thread selection left out: they differ without making results unequal).
fn params_map(r: &RunDoc, workloads: &[WorkloadKeys]) -> BTreeMap<String, String> {
    let recorded = workloads
        .iter()
        .find(|w| w.suite == r.suite)
        .map_or(&[][..], |w| w.recorded);
    let mut m = BTreeMap::new();
    if let Some(o) = r.params.as_object() {
        for (k, v) in o {
            if ["seed", "tests", "threads"].contains(&k.as_str()) || recorded.contains(&k.as_str())
            {
                continue;
            }
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            m.insert(k.clone(), s);
        }
    }
    m
}

/// A stored parameter as a mismatch names it: strings bare, whole numbers
/// without `.0`, lists in brackets.
fn param_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        serde_json::Value::Array(a) => {
            format!(
                "[{}]",
                a.iter().map(param_text).collect::<Vec<_>>().join(",")
            )
        }
        v => v.to_string(),
    }
}

/// Where `other`'s workload is not `base`'s: the suite, else the parameters
/// its suite declares in `workloads`, in that order. A parameter one run
/// lacks (stored before it existed) is not a difference.
pub fn workload_differences(
    base: &RunDoc,
    other: &RunDoc,
    workloads: &[WorkloadKeys],
) -> Vec<ValueDiff> {
    if base.suite != other.suite {
        return vec![ValueDiff {
            name: "suite".into(),
            base: Some(base.suite.clone()),
            target: Some(other.suite.clone()),
        }];
    }
    let keys = workloads
        .iter()
        .find(|w| w.suite == base.suite)
        .map(|w| w.params)
        .unwrap_or(&[]);
    keys.iter()
        .filter_map(|k| {
            let (b, t) = (base.params.get(*k)?, other.params.get(*k)?);
            (b != t).then(|| ValueDiff {
                name: k.to_string(),
                base: Some(param_text(b)),
                target: Some(param_text(t)),
            })
        })
        .collect()
}

/// Where the workload of a name's runs is not the base's: suite by suite,
/// the latest run of each suite both ran ([`workload_differences`]); when
/// they ran no suite in common, the suites. A suite only one ran is no
/// difference of workload (its tests are missing cells, and say so).
fn name_differences(
    base: &[&RunDoc],
    other: &[&RunDoc],
    workloads: &[WorkloadKeys],
) -> Vec<ValueDiff> {
    let suites = |runs: &[&RunDoc]| {
        let mut v: Vec<String> = Vec::new();
        for r in runs {
            if !v.contains(&r.suite) {
                v.push(r.suite.clone());
            }
        }
        v
    };
    fn latest<'a>(runs: &[&'a RunDoc], suite: &str) -> Option<&'a RunDoc> {
        runs.iter().rev().find(|r| r.suite == suite).copied()
    }
    let (sb, so) = (suites(base), suites(other));
    let common: Vec<&String> = sb.iter().filter(|s| so.contains(s)).collect();
    if common.is_empty() {
        return vec![ValueDiff {
            name: "suite".into(),
            base: Some(sb.join(",")),
            target: Some(so.join(",")),
        }];
    }
    common
        .into_iter()
        .filter_map(|s| {
            Some(workload_differences(
                latest(base, s)?,
                latest(other, s)?,
                workloads,
            ))
        })
        .flatten()
        .collect()
}

fn host_map(r: &RunDoc) -> BTreeMap<String, String> {
    let h = &r.host;
    let mut m = BTreeMap::new();
    m.insert("cpus".into(), h.cpus.to_string());
    m.insert("arch".into(), h.arch.clone());
    if let Some(v) = &h.cpu_model {
        m.insert("cpu_model".into(), v.clone());
    }
    if let Some(v) = h.mem_total_kb {
        m.insert("mem_total_kb".into(), v.to_string());
    }
    if let Some(v) = &h.kernel {
        m.insert("kernel".into(), v.clone());
    }
    m
}

fn config_lines(r: &RunDoc) -> &[String] {
    r.server
        .as_ref()
        .map(|s| s.config.as_slice())
        .unwrap_or(&[])
}

fn engine_label(r: &RunDoc) -> String {
    format!("{} {}", r.engine.name, r.engine.version)
}

/// A name's latest run that measured something (a run of commands alone,
/// a script's `prepare` or `cleanup`, is not what its tests ran in), else
/// its latest.
fn last_measured<'a>(runs: &[&'a RunDoc]) -> &'a RunDoc {
    runs.iter()
        .rev()
        .find(|r| r.measures)
        .or(runs.last())
        .copied()
        .expect("a name has runs")
}

/// The base's latest run against the target's latest run.
fn differences(
    target: &str,
    base: &RunDoc,
    other: &RunDoc,
    workloads: &[WorkloadKeys],
) -> Differences {
    let (config_base_only, config_target_only) =
        compare::diff_lines(config_lines(base), config_lines(other));
    let settings = compare::diff_maps(&base.settings, &other.settings);
    let mut set_by_config = compare::config_keys(config_lines(base));
    set_by_config.extend(compare::config_keys(config_lines(other)));
    Differences {
        target: target.to_string(),
        base_engine: engine_label(base),
        target_engine: engine_label(other),
        settings_from_config: settings
            .iter()
            .filter(|v| set_by_config.contains(&compare::setting_key(&v.name)))
            .map(|v| v.name.clone())
            .collect(),
        settings,
        config_base_only,
        config_target_only,
        params: compare::diff_maps(&params_map(base, workloads), &params_map(other, workloads)),
        host: compare::diff_maps(&host_map(base), &host_map(other)),
    }
}

/// The stored parameters rqps adds to every run that change what serves
/// the work: CPU budgets and TLS (engine options are their kinds' keys).
const ADDED_TREATMENTS: [&str; 3] = ["server_cpus", "client_cpus", "tls"];

/// The stored parameters that make an experiment of `suite`
/// ([`experiment_differences`]): its workload, its own treatments, what
/// rqps adds and the engine kinds' options.
pub fn experiment_keys<'a>(
    suite: &str,
    workloads: &'a [WorkloadKeys],
    engines: &'a EngineKeys,
) -> Vec<&'a str> {
    let w = workloads.iter().find(|w| w.suite == suite);
    w.map_or(&[][..], |w| w.params)
        .iter()
        .chain(w.map_or(&[][..], |w| w.treatments))
        .copied()
        .chain(ADDED_TREATMENTS)
        .chain(engines.options.iter().copied())
        .collect()
}

/// Where `new` is not the same experiment as `stored`, two runs of one
/// suite under one name: its engine and version, its engine's fairness
/// settings (durability, isolation, memory), its `--config` lines, the
/// parameters of its workload (`workloads`) and of its treatments (the
/// suite's own, `ps_mode` or `protocol`, and what rqps adds: engine
/// options, CPU budgets, TLS). Thread counts, warm-ups, load options, the
/// profile's name and the seed are not part of it. Empty: they are
/// repeats. The names read as `config`, `engine`, `setting X`, `parameter X`.
pub fn experiment_differences(
    stored: &RunDoc,
    new: &RunDoc,
    workloads: &[WorkloadKeys],
    engines: &EngineKeys,
) -> Vec<ValueDiff> {
    let mut out = Vec::new();
    if engine_label(stored) != engine_label(new) {
        out.push(ValueDiff {
            name: "engine".into(),
            base: Some(engine_label(stored)),
            target: Some(engine_label(new)),
        });
    }
    for key in engines.fairness_settings(&new.engine.name) {
        let (b, t) = (stored.settings.get(*key), new.settings.get(*key));
        if b != t {
            out.push(ValueDiff {
                name: format!("setting {key}"),
                base: b.cloned(),
                target: t.cloned(),
            });
        }
    }
    let (only_stored, only_new) = compare::diff_lines(config_lines(stored), config_lines(new));
    if !only_stored.is_empty() || !only_new.is_empty() {
        let file = |r: &RunDoc| {
            r.server
                .as_ref()
                .and_then(|s| s.config_file.clone())
                .unwrap_or_else(|| "no --config".into())
        };
        out.push(ValueDiff {
            name: "config".into(),
            base: Some(file(stored)),
            target: Some(format!(
                "{} ({} line(s) differ)",
                file(new),
                only_stored.len() + only_new.len()
            )),
        });
    }
    let workload = workload_differences(stored, new, workloads);
    let named: Vec<String> = workload.iter().map(|d| d.name.clone()).collect();
    out.extend(workload.into_iter().map(|d| ValueDiff {
        name: format!("parameter {}", d.name),
        ..d
    }));
    if stored.suite == new.suite {
        let own = workloads
            .iter()
            .find(|w| w.suite == new.suite)
            .map_or(&[][..], |w| w.treatments);
        let engine_options = engines.options.iter().copied();
        let treatments: Vec<&str> = own
            .iter()
            .copied()
            .chain(ADDED_TREATMENTS)
            .chain(engine_options)
            .collect();
        for d in compare::diff_maps(&params_map(stored, workloads), &params_map(new, workloads)) {
            if treatments.contains(&d.name.as_str()) && !named.contains(&d.name) {
                out.push(ValueDiff {
                    name: format!("parameter {}", d.name),
                    ..d
                });
            }
        }
    }
    out
}

/// `config no --config → other.conf, parameter ps_mode auto → disable`:
/// differences as one phrase, the first value the stored one's.
pub fn differences_text(d: &[ValueDiff]) -> String {
    let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(not set)".into());
    d.iter()
        .map(|d| format!("{} {} → {}", d.name, v(&d.base), v(&d.target)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`differences_text`] in at most about `width` characters: each value
/// without the words both share (a script's options: the ones that differ
/// alone), each cut to its share with `…`, and at most three differences,
/// then how many more.
pub fn differences_brief(d: &[ValueDiff], width: usize) -> String {
    const NAMED: usize = 3;
    let shown = d.len().min(NAMED);
    let more = d.len() - shown;
    let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(not set)".into());
    let pairs: Vec<(&str, String, String)> = d[..shown]
        .iter()
        .map(|d| {
            let (b, t) = crate::report::model::without_shared_words(&v(&d.base), &v(&d.target));
            (d.name.as_str(), b, t)
        })
        .collect();
    // The widest cap on a value that keeps the whole within `width`: short
    // values whole, the long ones cut alike.
    let fixed: usize = pairs
        .iter()
        .map(|(n, _, _)| n.chars().count() + 5)
        .sum::<usize>()
        + if more > 0 { 12 } else { 0 };
    let total = |cap: usize| {
        fixed
            + pairs
                .iter()
                .map(|(_, b, t)| b.chars().count().min(cap) + t.chars().count().min(cap))
                .sum::<usize>()
    };
    let longest = pairs
        .iter()
        .map(|(_, b, t)| b.chars().count().max(t.chars().count()))
        .max()
        .unwrap_or(0);
    let cap = (8..=longest.max(8))
        .rev()
        .find(|&c| total(c) <= width)
        .unwrap_or(8);
    let cut = crate::report::model::cut;
    let mut parts: Vec<String> = pairs
        .iter()
        .map(|(n, b, t)| format!("{n} {} → {}", cut(b, cap), cut(t, cap)))
        .collect();
    if more > 0 {
        parts.push(format!("and {more} more"));
    }
    parts.join(", ")
}

/// [`repeat_warnings`] of every name in `names`, in that order.
fn every_repeat_warning(runs: &[RunDoc], names: &[&String], opts: &Options) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        let of = runs_of(runs, name);
        repeat_warnings(name, &of, &opts.workloads, &opts.engines, &mut out);
    }
    out
}

/// Repeats under one name should be the same experiment
/// ([`experiment_differences`]): say where not, once per run that differs
/// from the name's latest run of its suite.
fn repeat_warnings(
    name: &str,
    runs: &[&RunDoc],
    workloads: &[WorkloadKeys],
    engines: &EngineKeys,
    out: &mut Vec<String>,
) {
    for (i, r) in runs.iter().enumerate() {
        // Runs of another suite under the name are no repeats of these, nor
        // is a run that measured nothing (a script's `prepare`).
        let Some(last) = runs.iter().rev().find(|x| x.suite == r.suite && x.measures) else {
            continue;
        };
        if !r.measures {
            continue;
        }
        if std::ptr::eq(*last, *r) || runs[..i].iter().any(|x| x.run_id == r.run_id) {
            continue;
        }
        let d = experiment_differences(r, last, workloads, engines);
        if !d.is_empty() {
            out.push(format!(
                "repeats of {name} are not the same experiment: from run {} to run {}, {}; they are pooled all the same (store such runs under another --name)",
                r.run_id,
                last.run_id,
                differences_text(&d)
            ));
        }
    }
}

/// Reads `dir` and builds the comparison. Errors are the user's (unknown
/// names, nothing to compare); unreadable runs become warnings.
pub fn load(dir: &Path, opts: &Options) -> Result<Report, Error> {
    let (runs, mut warnings) = read_results_keeping(dir, results::Keep::Report)?;
    let (records, record_warnings) = results::compat::read_all(dir);
    warnings.extend(record_warnings);
    let mut report = build_in(&runs, &records, opts, &crate::cmdline::results_arg(dir))?;
    warnings.append(&mut report.warnings);
    report.warnings = warnings;
    Ok(report)
}

/// Builds the comparison from runs already read (oldest first), with no
/// compatibility record.
pub fn build(runs: &[RunDoc], opts: &Options) -> Result<Report, Error> {
    build_with(runs, &[], opts)
}

/// [`build`], with the compatibility records of the results directory:
/// a target of another engine than the base's has the ratios of the tests
/// whose statements differ in semantics left out of the summaries
/// ([`super::guard`]).
pub fn build_with(
    runs: &[RunDoc],
    records: &[results::compat::CompatRecord],
    opts: &Options,
) -> Result<Report, Error> {
    build_in(runs, records, opts, "")
}

/// [`build_with`] for runs the caller read from the results directory `dir`
/// (`rqps serve` reads only the names it compares): the commands the report
/// suggests name `dir`, as [`load`]'s do, so the answer is `load`'s.
pub fn build_from_dir(
    runs: &[RunDoc],
    records: &[results::compat::CompatRecord],
    opts: &Options,
    dir: &Path,
) -> Result<Report, Error> {
    build_in(runs, records, opts, &crate::cmdline::results_arg(dir))
}

/// [`build_with`] for the runs of a results directory: `results`, ` --results
/// DIR` or nothing, goes into the commands the report suggests.
fn build_in(
    runs: &[RunDoc],
    records: &[results::compat::CompatRecord],
    opts: &Options,
    results: &str,
) -> Result<Report, Error> {
    let known = names(runs);
    let mut targets = target_names(&known, opts)?;
    let base_runs = runs_of(runs, &opts.base);
    let (not_compared, unlike) = like_with_like(&mut targets, runs, &base_runs, opts);
    let refusals = || {
        not_compared
            .iter()
            .map(|m| m.refusal(&opts.base))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if targets.is_empty() && opts.targets.is_some() {
        return Err(usage(refusals()));
    }
    let all_names: Vec<&String> = std::iter::once(&opts.base).chain(targets.iter()).collect();

    let layout = Layout::new(&opts.sections, &base_runs);
    let mut warnings = Vec::new();
    let repeats_differ = every_repeat_warning(runs, &all_names, opts);
    let Counted {
        found,
        groups_of,
        skipped,
    } = counted(runs, &all_names, &layout, opts, &mut warnings);
    let (row_keys, keys) = row_keys(&found, &groups_of, &layout, &mut warnings);

    // Every row's sides first: a target's verdicts pool the variance over
    // all its rows (compare::relative_all).
    let sides: Vec<(Side, Vec<Option<Side>>)> = keys
        .iter()
        .map(|(_, _, key)| {
            let targets = (1..all_names.len())
                .map(|i| found[i].get(key).map(|f| side(f)))
                .collect();
            (side(found[0].get(key).map_or(&[], Vec::as_slice)), targets)
        })
        .collect();
    let rels = relatives(&sides, all_names.len() - 1, opts.rules);
    let (mut blocks, thread_counts) = group_blocks(keys, sides, &rels, &groups_of, &found);
    let compat = {
        let latest: Vec<&RunDoc> = all_names
            .iter()
            .map(|n| *runs_of(runs, n).last().expect("a compared name has runs"))
            .collect();
        super::guard::apply(&mut blocks, &all_names, &latest, records, results)
    };

    let (overall, overall_summary) = summarize(&mut blocks, targets.len(), opts.rules);

    let sweep = thread_counts.len() > 1;
    let rows = RowsOf {
        blocks: &blocks,
        found: &found,
        row_keys: &row_keys,
        sweep,
    };
    row_warnings(&rows, &opts.base, &targets, &mut warnings);
    let names: Vec<&str> = all_names.iter().map(|n| n.as_str()).collect();
    let input = Input {
        base: &opts.base,
        names: &names,
        runs,
        rules: opts.rules,
        all: opts.all,
    };
    // The base alone is a study of its thread sweep: the generic rows'
    // scalability section, and no section's part (parts compare names).
    let parts: Vec<Built> = if targets.is_empty() {
        Vec::new()
    } else {
        opts.sections
            .iter()
            .filter_map(|&section| {
                Some(Built {
                    section,
                    part: section.build(&input)?,
                })
            })
            .collect()
    };
    if targets.is_empty() && !has_curve(&blocks) {
        let mut why = format!(
            "nothing to compare: the results hold no other name with the workload of '{}', and it ran no test at two thread counts (run another target with --name, or a thread sweep with --threads 1,2,4)",
            opts.base
        );
        if !not_compared.is_empty() {
            why = format!("{}; {why}", refusals());
        }
        return Err(usage(why));
    }
    if blocks.is_empty() && parts.is_empty() {
        return Err(usage(format!(
            "'{}' has no counted result (status ok{}) to compare with",
            opts.base,
            if opts.all { "" } else { ", reported" }
        )));
    }

    let base_last = last_measured(&base_runs);
    let target_info: Vec<TargetInfo> = targets.iter().map(|t| info(t, &runs_of(runs, t))).collect();
    let differences = targets
        .iter()
        .map(|t| {
            let last = last_measured(&runs_of(runs, t));
            differences(t, base_last, last, &opts.workloads)
        })
        .collect();
    let flame_graphs = crate::report::profile::flame_sets(runs, &opts.base, &targets);
    Ok(Report {
        base: opts.base.clone(),
        targets,
        noise_floor: opts.rules.noise_floor,
        alpha: opts.rules.alpha,
        all: opts.all,
        base_info: info(&opts.base, &base_runs),
        target_info,
        differences,
        thread_counts: thread_counts.into_iter().collect(),
        groups: blocks,
        overall,
        overall_summary,
        not_compared,
        unlike,
        repeats_differ,
        skipped,
        warnings,
        compat,
        sections: opts.sections.clone(),
        parts,
        flame_graphs,
    })
}

/// Each group's and the whole report's geometric mean of every target's
/// ratios, and their intervals and verdicts; returns the whole report's.
fn summarize(
    blocks: &mut [GroupBlock],
    ntargets: usize,
    rules: Rules,
) -> (Vec<Option<f64>>, Vec<Option<RelativeQps>>) {
    let geo = |rows: &mut dyn Iterator<Item = &Row>| -> Vec<Option<f64>> {
        let rows: Vec<&Row> = rows.collect();
        (0..ntargets)
            .map(|i| {
                let r: Vec<f64> = rows
                    .iter()
                    .filter_map(|row| row.cells[i].as_ref())
                    .filter(|c| c.excluded.is_none())
                    .map(|c| c.rel.ratio)
                    .collect();
                stats::geomean(&r)
            })
            .collect()
    };
    let summary = |rows: &mut dyn Iterator<Item = &Row>| -> Vec<Option<RelativeQps>> {
        let rows: Vec<&Row> = rows.collect();
        (0..ntargets)
            .map(|i| {
                let rels: Vec<&RelativeQps> = rows
                    .iter()
                    .filter_map(|row| row.cells[i].as_ref())
                    .filter(|c| c.excluded.is_none())
                    .map(|c| &c.rel)
                    .collect();
                compare::group_rel(&rels, rules)
            })
            .collect()
    };
    for b in blocks.iter_mut() {
        b.geomean = geo(&mut b.rows.iter());
        b.summary = summary(&mut b.rows.iter());
    }
    let overall = geo(&mut blocks.iter().flat_map(|b| b.rows.iter()));
    let overall_summary = summary(&mut blocks.iter().flat_map(|b| b.rows.iter()));
    (overall, overall_summary)
}

/// The runs stored under `name`, oldest first.
fn runs_of<'a>(runs: &'a [RunDoc], name: &str) -> Vec<&'a RunDoc> {
    runs.iter().filter(|r| r.name == name).collect()
}

/// The targets in report order: `--targets`, each checked, else every name
/// but the base.
fn target_names(known: &[String], opts: &Options) -> Result<Vec<String>, Error> {
    if !known.contains(&opts.base) {
        return Err(usage(unknown_name(&opts.base, known)));
    }
    Ok(match &opts.targets {
        Some(t) => {
            let mut v: Vec<String> = Vec::new();
            for n in t {
                if !known.contains(n) {
                    return Err(usage(unknown_name(n, known)));
                }
                if *n == opts.base {
                    return Err(usage(format!(
                        "'{n}' is the base; name it once, with --base"
                    )));
                }
                if !v.contains(n) {
                    v.push(n.clone());
                }
            }
            v
        }
        None => known.iter().filter(|n| **n != opts.base).cloned().collect(),
    })
}

/// Like with like: a target whose workload is not the base's is left out
/// (the first list), or with `--allow-mismatch` compared and named on top
/// (the second).
fn like_with_like(
    targets: &mut Vec<String>,
    runs: &[RunDoc],
    base_runs: &[&RunDoc],
    opts: &Options,
) -> (Vec<Mismatch>, Vec<Mismatch>) {
    let mut not_compared = Vec::new();
    let mut unlike = Vec::new();
    targets.retain(|t| {
        let differences = name_differences(base_runs, &runs_of(runs, t), &opts.workloads);
        if differences.is_empty() {
            return true;
        }
        let m = Mismatch {
            target: t.clone(),
            differences,
        };
        if opts.allow_mismatch {
            unlike.push(m);
            true
        } else {
            not_compared.push(m);
            false
        }
    });
    (not_compared, unlike)
}

/// The counted results of each name (the base first), by row key.
struct Counted<'a> {
    found: Vec<BTreeMap<Key, Vec<Found<'a>>>>,
    /// The group each row key's results store.
    groups_of: HashMap<Key, String>,
    /// Results not counted (failed, or not ok).
    skipped: Vec<Skipped>,
}

/// Sorts each name's results: those counted in the tables, those skipped,
/// and the warnings they carry.
fn counted<'a>(
    runs: &'a [RunDoc],
    all_names: &[&String],
    layout: &Layout,
    opts: &Options,
    warnings: &mut Vec<String>,
) -> Counted<'a> {
    let mut skipped = Vec::new();
    // name → key → counted results
    let mut found: Vec<BTreeMap<Key, Vec<Found>>> = Vec::new();
    let mut groups_of: HashMap<Key, String> = HashMap::new();
    for name in all_names {
        let mut m: BTreeMap<Key, Vec<Found>> = BTreeMap::new();
        let nruns = runs_of(runs, name);
        for run in nruns {
            let mut busy_steps = 0usize;
            for t in &run.tests {
                if !t.reported && !opts.all {
                    continue;
                }
                if t.status != crate::results::Status::Ok {
                    skipped.push(Skipped {
                        target: name.to_string(),
                        run_id: run.run_id.clone(),
                        test: t.test.clone(),
                        threads: t.threads,
                        status: t.status.to_string(),
                        reason: t.reason.clone(),
                    });
                    continue;
                }
                for w in &t.warnings {
                    if w.starts_with(results::BUSY_WARNING) {
                        busy_steps += 1;
                        continue;
                    }
                    warnings.push(format!(
                        "{name} {} t={} in run {}: {w}",
                        t.test, t.threads, run.run_id
                    ));
                }
                if !layout.tabulated(&t.suite) {
                    continue;
                }
                let key = (t.suite.clone(), t.test.clone(), t.threads);
                groups_of
                    .entry(key.clone())
                    .or_insert_with(|| t.group.clone());
                m.entry(key).or_default().push(Found { run, test: t });
            }
            // Once per run, not once per step: the results carry the mark.
            if busy_steps > 0 {
                warnings.push(format!(
                    "{name} run {}: {} before {busy_steps} of its steps; their results are marked {BUSY_MARK} and may be off",
                    run.run_id,
                    results::BUSY_WARNING
                ));
            }
        }
        found.push(m);
    }
    Counted {
        found,
        groups_of,
        skipped,
    }
}

/// The rows: every key of a test the base ran (at any thread count), in
/// layout order with its group's title; a key of a group its section does
/// not know is a warning.
fn row_keys(
    found: &[BTreeMap<Key, Vec<Found>>],
    groups_of: &HashMap<Key, String>,
    layout: &Layout,
    warnings: &mut Vec<String>,
) -> (BTreeSet<Key>, Vec<(Place, String, Key)>) {
    let mut keys: Vec<(Place, String, Key)> = Vec::new();
    // Thread counts are compared cell by cell: a thread count that only a
    // target ran, of a test the base ran, is a row too, its base cell `-`.
    let base_tests: BTreeSet<(&str, &str)> = found[0]
        .keys()
        .map(|k| (k.0.as_str(), k.1.as_str()))
        .collect();
    let row_keys: BTreeSet<Key> = found
        .iter()
        .flat_map(|m| m.keys())
        .filter(|k| base_tests.contains(&(k.0.as_str(), k.1.as_str())))
        .cloned()
        .collect();
    for key in &row_keys {
        let g = &groups_of[key];
        match layout.place(&key.0, g, &key.1) {
            Ok((place, title)) => keys.push((place, title, key.clone())),
            Err(w) => warnings.push(format!("{} t={}: {w}", key.1, key.2)),
        }
    }
    keys.sort_by(|(pa, _, a), (pb, _, b)| {
        (pa.suite, pa.group, &groups_of[a], pa.test, &a.1, a.2).cmp(&(
            pb.suite,
            pb.group,
            &groups_of[b],
            pb.test,
            &b.1,
            b.2,
        ))
    });
    (row_keys, keys)
}

/// `rels[i][row]`: target i's relative QPS at each row.
fn relatives(
    sides: &[(Side, Vec<Option<Side>>)],
    ntargets: usize,
    rules: Rules,
) -> Vec<Vec<Option<RelativeQps>>> {
    let qps = |s: &Side| s.samples.iter().map(|x| x.qps).collect::<Vec<f64>>();
    (0..ntargets)
        .map(|i| {
            let rows: Vec<(usize, Vec<f64>, Vec<f64>)> = sides
                .iter()
                .enumerate()
                .filter_map(|(r, (b, t))| Some((r, qps(t[i].as_ref()?), qps(b))))
                .collect();
            let pairs: Vec<(&[f64], &[f64])> = rows
                .iter()
                .map(|(_, t, b)| (t.as_slice(), b.as_slice()))
                .collect();
            let mut out = vec![None; sides.len()];
            for ((r, _, _), rel) in rows.iter().zip(compare::relative_all(&pairs, rules)) {
                out[*r] = rel;
            }
            out
        })
        .collect()
}

/// The rows in groups (a block holds one group of one suite), and the
/// thread counts they cover.
fn group_blocks(
    keys: Vec<(Place, String, Key)>,
    sides: Vec<(Side, Vec<Option<Side>>)>,
    rels: &[Vec<Option<RelativeQps>>],
    groups_of: &HashMap<Key, String>,
    found: &[BTreeMap<Key, Vec<Found>>],
) -> (Vec<GroupBlock>, BTreeSet<usize>) {
    let mut thread_counts = BTreeSet::new();
    let mut blocks: Vec<GroupBlock> = Vec::new();
    for (r, ((_, title, key), (base_side, target_sides))) in keys.into_iter().zip(sides).enumerate()
    {
        thread_counts.insert(key.2);
        let group = groups_of[&key].clone();
        // A thread count the base did not run: the targets' sides, compared with nothing.
        let unpaired: Vec<Option<Side>> = if base_side.n == 0 {
            target_sides.clone()
        } else {
            Vec::new()
        };
        let cells = target_sides
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let s = s?;
                let mut rel = rels[i][r].clone()?;
                // A verdict from a busy machine is said as such ([`RelativeQps::cell`]).
                rel.busy = s.busy() || base_side.busy();
                let hw_rel = match (&s.hw, &base_side.hw) {
                    (None, None) => None,
                    (t, b) => Some(compare::hw_rel(
                        t.as_ref().unwrap_or(&HwFigures::default()),
                        b.as_ref().unwrap_or(&HwFigures::default()),
                    )),
                };
                Some(Cell {
                    side: s,
                    rel,
                    hw_rel,
                    excluded: None,
                })
            })
            .collect();
        let row = Row {
            suite: key.0.clone(),
            group: group.clone(),
            test: key.1.clone(),
            threads: key.2,
            unit: found
                .iter()
                .find_map(|m| m.get(&key))
                .map(|f| f[0].test.qps_unit.clone())
                .unwrap_or_default(),
            base: base_side,
            cells,
            unpaired,
        };
        // A block holds one group of one suite.
        match blocks.last_mut() {
            Some(b) if b.group == group && b.rows[0].suite == row.suite => b.rows.push(row),
            _ => blocks.push(GroupBlock {
                group,
                title,
                rows: vec![row],
                geomean: Vec::new(),
                summary: Vec::new(),
            }),
        }
    }
    (blocks, thread_counts)
}

/// The rows built, with the counted results they came from.
struct RowsOf<'a, 'b> {
    blocks: &'b [GroupBlock],
    found: &'b [BTreeMap<Key, Vec<Found<'a>>>],
    row_keys: &'b BTreeSet<Key>,
    sweep: bool,
}

/// Warnings of the rows: outlier repeats, base rows a target lacks, and a
/// target's results of tests the base did not run.
fn row_warnings(rows: &RowsOf, base: &String, targets: &[String], warnings: &mut Vec<String>) {
    let (blocks, sweep) = (rows.blocks, rows.sweep);
    for row in blocks.iter().flat_map(|b| b.rows.iter()) {
        let sides = std::iter::once((base, Some(&row.base))).chain(
            targets
                .iter()
                .zip(row.cells.iter().map(|c| c.as_ref().map(|c| &c.side))),
        );
        for (name, s) in sides {
            let Some(s) = s else { continue };
            for id in &s.outliers {
                let q = s.samples.iter().find(|x| &x.run_id == id).map(|x| x.qps);
                let med = stats::median(&s.samples.iter().map(|x| x.qps).collect::<Vec<_>>());
                warnings.push(format!(
                    "outlier repeat: {name} {} run {id}: QPS {:.0} against a median of {med:.0} (modified z-score > 3.5)",
                    row.label(sweep),
                    q.unwrap_or(f64::NAN)
                ));
            }
        }
    }
    for (i, t) in targets.iter().enumerate() {
        let lacking: Vec<String> = blocks
            .iter()
            .flat_map(|b| b.rows.iter())
            .filter(|r| r.base_ran() && r.cells[i].is_none())
            .map(|r| r.label(sweep))
            .collect();
        if !lacking.is_empty() {
            let total = blocks
                .iter()
                .flat_map(|b| b.rows.iter())
                .filter(|r| r.base_ran())
                .count();
            let shown: Vec<&str> = lacking.iter().map(String::as_str).take(8).collect();
            warnings.push(format!(
                "{t} has no counted result for {} of the base's {total} test(s): {}{}",
                lacking.len(),
                shown.join(", "),
                if lacking.len() > 8 { ", ..." } else { "" }
            ));
        }
        let extra = rows.found[i + 1]
            .keys()
            .filter(|k| !rows.row_keys.contains(*k))
            .count();
        if extra > 0 {
            warnings.push(format!(
                "{t} has {extra} result(s) of tests the base did not run (other tests or suite); not compared"
            ));
        }
    }
}

/// Whether some test of `blocks` has results at two thread counts or more.
fn has_curve(blocks: &[GroupBlock]) -> bool {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for row in blocks.iter().flat_map(|b| b.rows.iter()) {
        let t = seen
            .entry((row.suite.as_str(), row.test.as_str()))
            .or_insert(row.threads);
        if *t != row.threads {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tls_tests {
    use super::*;

    fn run(name: &str, params: serde_json::Value) -> RunDoc {
        serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": name, "name": name, "suite": "s",
            "status": "ok", "started": name, "command_line": [], "target": "",
            "engine": {"name": "e", "version": "1"}, "params": params,
            "host": {"arch": "x86_64", "cpus": 1, "hostname": "h", "os": "linux"},
            "tests": []
        }))
        .unwrap()
    }

    #[test]
    fn a_brief_difference_names_the_words_that_differ_in_a_line_s_share() {
        let d = |name: &str, b: &str, t: &str| ValueDiff {
            name: name.into(),
            base: Some(b.into()),
            target: Some(t.into()),
        };
        let line =
            |o: &str| format!("/usr/share/sysbench/oltp_read_only.lua --tables=2 {o} --time=30");
        let diffs = vec![
            d(
                "parameter script",
                &line("--table-size=100"),
                &line("--table-size=200"),
            ),
            d("engine", "mariadb 10.11.19", "mariadb 11.4.5"),
            d("parameter ps_mode", "auto", "disable"),
            d("setting x", &"a".repeat(500), "b"),
        ];
        let text = differences_brief(&diffs, 150);
        assert!(
            text.starts_with("parameter script --table-size=100 → --table-size=200, engine "),
            "{text}"
        );
        assert!(text.ends_with(", and 1 more"), "{text}");
        assert!(
            text.chars().count() <= 170,
            "{}: {text}",
            text.chars().count()
        );
        let long = differences_brief(&diffs[3..], 100);
        assert!(long.contains('…') && long.chars().count() < 110, "{long}");
    }

    #[test]
    fn what_differs_shows_tls_when_only_one_target_used_it_or_they_used_another() {
        let plain = run("a", serde_json::json!({"profile": "ci"}));
        let tls13 = run(
            "b",
            serde_json::json!({"profile": "ci", "tls": "TLSv1.3 TLS13_AES_256_GCM_SHA384"}),
        );
        let tls12 = run(
            "c",
            serde_json::json!({"profile": "ci", "tls": "TLSv1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}),
        );
        let d = differences("b", &plain, &tls13, &[]);
        assert_eq!(d.params.len(), 1, "{:?}", d.params);
        assert_eq!(d.params[0].name, "tls");
        assert_eq!(d.params[0].base, None);
        assert_eq!(
            d.params[0].target.as_deref(),
            Some("TLSv1.3 TLS13_AES_256_GCM_SHA384")
        );
        let d = differences("c", &tls13, &tls12, &[]);
        assert_eq!(d.params.len(), 1);
        assert_eq!(d.params[0].name, "tls");
        assert!(differences("a", &plain, &plain, &[]).params.is_empty());
    }
}

#[cfg(test)]
mod workload_tests {
    use super::*;

    fn run(name: &str, suite: &str, params: serde_json::Value) -> RunDoc {
        serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": format!("{name}-{suite}"), "name": name, "suite": suite,
            "status": "ok", "started": "", "command_line": [], "target": "",
            "engine": {"name": "e", "version": "1"}, "params": params,
            "host": {"arch": "x86_64", "cpus": 1, "hostname": "h", "os": "linux"},
            "tests": []
        }))
        .unwrap()
    }

    const KEYS: &[WorkloadKeys] = &[WorkloadKeys {
        suite: "s",
        params: &["rows", "secs", "tests"],
        treatments: &["ps_mode"],
        recorded: &[],
    }];

    #[test]
    fn workloads_differ_in_the_declared_parameters_only_in_declared_order() {
        let base = run(
            "a",
            "s",
            serde_json::json!({"rows": 2000, "secs": 1.0, "tests": [], "tls": "x", "seed": 1}),
        );
        let same = run(
            "b",
            "s",
            serde_json::json!({"rows": 2000, "secs": 1.0, "tests": [], "tls": "y", "seed": 2}),
        );
        assert!(workload_differences(&base, &same, KEYS).is_empty());
        let big = run(
            "c",
            "s",
            serde_json::json!({"rows": 100000, "secs": 3.0, "tests": ["p", "q"]}),
        );
        let m = Mismatch {
            target: "c".into(),
            differences: workload_differences(&base, &big, KEYS),
        };
        assert_eq!(
            m.named(),
            "c (rows 100000 vs 2000, secs 3 vs 1, tests [p,q] vs [])"
        );
        // A parameter one side lacks (stored before it existed) is no difference.
        let old = run("d", "s", serde_json::json!({"rows": 2000}));
        assert!(workload_differences(&base, &old, KEYS).is_empty());
        // A suite without declared keys is checked on its name alone.
        let x = run("x", "t", serde_json::json!({"rows": 1}));
        let y = run("y", "t", serde_json::json!({"rows": 2}));
        assert!(workload_differences(&x, &y, KEYS).is_empty());
        assert_eq!(workload_differences(&base, &x, KEYS)[0].name, "suite");
    }

    #[test]
    fn names_are_compared_suite_by_suite_and_by_suite_when_they_share_none() {
        let p = serde_json::json!({"rows": 2000});
        let a = [run("a", "s", p.clone()), run("a", "t", p.clone())];
        let b = [run("b", "t", p.clone()), run("b", "s", p.clone())];
        fn refs(v: &[RunDoc]) -> Vec<&RunDoc> {
            v.iter().collect()
        }
        // Latest runs of different suites, but each suite alike.
        assert!(name_differences(&refs(&a), &refs(&b), KEYS).is_empty());
        let c = [run("c", "u", p.clone())];
        let d = name_differences(&refs(&a), &refs(&c), KEYS);
        assert_eq!(
            (d[0].base.as_deref(), d[0].target.as_deref()),
            (Some("s,t"), Some("u"))
        );
        let e = [run("e", "s", serde_json::json!({"rows": 9}))];
        assert_eq!(name_differences(&refs(&a), &refs(&e), KEYS)[0].name, "rows");
        // Repeats: only runs of one suite are compared.
        let mut w = Vec::new();
        repeat_warnings("a", &refs(&a), KEYS, &EngineKeys::default(), &mut w);
        assert!(w.is_empty(), "{w:?}");
        let r = [
            run("a", "s", p.clone()),
            run("a", "s", serde_json::json!({"rows": 9})),
        ];
        repeat_warnings("a", &refs(&r), KEYS, &EngineKeys::default(), &mut w);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("are not the same experiment")
                && w[0].contains("parameter rows 2000 → 9"),
            "{w:?}"
        );
    }

    #[test]
    fn repeats_are_one_experiment_in_workload_and_treatments_not_in_load_options() {
        let p = |ps: &str, skip: bool| serde_json::json!({"rows": 2000, "ps_mode": ps, "skip_prepare": skip, "seed": 1});
        let a = run("a", "s", p("auto", false));
        assert!(
            experiment_differences(
                &a,
                &run("a", "s", p("auto", true)),
                KEYS,
                &EngineKeys::default()
            )
            .is_empty()
        );
        let d = experiment_differences(
            &a,
            &run("a", "s", p("disable", false)),
            KEYS,
            &EngineKeys::default(),
        );
        assert_eq!(differences_text(&d), "parameter ps_mode auto → disable");
        let mut b = run("a", "s", p("auto", false));
        b.engine.version = "2".into();
        b.params["tls"] = "TLSv1.3".into();
        let d = experiment_differences(&a, &b, KEYS, &EngineKeys::default());
        assert_eq!(
            differences_text(&d),
            "engine e 1 → e 2, parameter tls (not set) → TLSv1.3"
        );
    }

    #[test]
    fn the_engine_keys_the_caller_gives_are_the_ones_compared() {
        let p = serde_json::json!({"rows": 2000, "e_option": "x"});
        let a = run("a", "s", p.clone());
        let mut b = run("a", "s", serde_json::json!({"rows": 2000, "e_option": "y"}));
        b.settings.insert("durable".into(), "off".into());
        let none = EngineKeys::default();
        assert!(experiment_differences(&a, &b, KEYS, &none).is_empty());
        let keys = EngineKeys {
            fairness: vec![(&["E"], &["durable"])],
            options: vec!["e_option"],
        };
        assert_eq!(
            differences_text(&experiment_differences(&a, &b, KEYS, &keys)),
            "setting durable (not set) → off, parameter e_option x → y"
        );
    }
}
