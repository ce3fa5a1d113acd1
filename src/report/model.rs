//! The comparison every exporter renders: built once by [`crate::report::load`],
//! serialized whole by the JSON exporter.

use serde::Serialize;

use super::doc::{Block, Data};
use crate::harness::measure::Latency;

pub use super::doc::{Shade, Verdict};

/// Relative QPS of one target at one test and thread count.
#[derive(Clone, Debug, Serialize)]
pub struct RelativeQps {
    /// Ratio of geometric means, target / base.
    pub ratio: f64,
    /// 95 % confidence interval of the ratio (moderated t on log QPS); absent when untested.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p: Option<f64>,
    /// Degrees of freedom of the moderated test: the test's own plus the prior's.
    pub df: Option<f64>,
    pub verdict: Verdict,
    pub shade: Shade,
    /// A repeat on either side (or, for a group, of any of its tests) ran
    /// while the machine was busy: the verdict may be noise, so it is shown
    /// marked ([`BUSY_MARK`]) and not coloured.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub busy: bool,
}

/// The mark after a verdict or a value measured while the machine was busy.
pub use crate::results::BUSY_MARK;

impl RelativeQps {
    /// The verdict's cell: its ratio and mark, coloured by its shade, or
    /// marked busy and not coloured.
    pub fn cell(&self) -> super::doc::TCell {
        if self.busy {
            super::doc::TCell::shaded(super::doc::Val::BusyRel(self.ratio, self.verdict), None)
        } else {
            super::doc::TCell::shaded(
                super::doc::Val::Relative(self.ratio, self.verdict),
                Some(self.shade),
            )
        }
    }
}

/// Per-operation hardware figures (spec §5), the mean over the repeats that
/// have them: the one declaration in `results/`.
pub use crate::results::PerOp as HwFigures;

/// One per-op figure of a target relative to the base (reference §5.2 rules).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum HwRatio {
    Ratio(f64),
    /// Both are 0: printed "1".
    BothZero,
    /// Only the base is 0: printed "inf".
    Inf,
    /// Either side was not measured.
    Na,
}

impl std::fmt::Display for HwRatio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HwRatio::Ratio(r) => write!(f, "{r:.2}"),
            HwRatio::BothZero => f.write_str("1"),
            HwRatio::Inf => f.write_str("inf"),
            HwRatio::Na => f.write_str("NA"),
        }
    }
}

/// One stored result counted in a comparison (one repeat).
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub run_id: String,
    pub engine_version: String,
    pub qps: f64,
    pub tps: f64,
    pub errors: u64,
    pub latency_us: Latency,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw: Option<HwFigures>,
    /// The machine was busy before the step ([`crate::results::BUSY_WARNING`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub busy: bool,
    /// What limited this repeat (absent in results stored before rqps measured it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::results::Limit>,
}

/// All repeats of one target at one test and thread count.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub n: usize,
    /// Geometric mean of the repeats' QPS.
    pub qps: f64,
    pub samples: Vec<Sample>,
    /// Mean per-op hardware figures over the repeats that have them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw: Option<HwFigures>,
    /// Per-second QPS, the mean over the repeats at each second: `[t, qps]`.
    pub per_second: Vec<[f64; 2]>,
    /// Run ids of repeats whose QPS is an outlier (modified z-score > 3.5).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<String>,
}

impl Side {
    /// Whether a repeat ran while the machine was busy.
    pub fn busy(&self) -> bool {
        self.samples.iter().any(|s| s.busy)
    }

    /// The limit most of the repeats named (`by`, none counting as a name
    /// too; the earliest on a tie), as its first repeat with it measured;
    /// `None` where no repeat stored one.
    pub fn limit(&self) -> Option<&crate::results::Limit> {
        let limits: Vec<&crate::results::Limit> = self
            .samples
            .iter()
            .filter_map(|s| s.limit.as_ref())
            .collect();
        let count = |by: &Option<String>| limits.iter().filter(|l| &l.by == by).count();
        let mut best: Option<&crate::results::Limit> = None;
        for l in &limits {
            if best.is_none_or(|b| count(&l.by) > count(&b.by)) {
                best = Some(l);
            }
        }
        best
    }
}

/// One target's side of a row, compared with the base.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub side: Side,
    pub rel: RelativeQps,
    /// Per-op figures relative to the base, in [`HwFigures::TITLES`] order;
    /// absent when neither has figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw_rel: Option<Vec<HwRatio>>,
    /// Why this ratio is left out of the group summaries: a compatibility
    /// record (`rqps compat`) says the two engines answer this test's
    /// statements differently, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
}

/// The unit to name next to a value of `unit`: `None` for a rate of
/// statements or queries (what "QPS" says), else the unit itself (a scan
/// counts `Krows/s`).
pub fn unit_note(unit: &str) -> Option<&str> {
    const QPS: [&str; 4] = ["", "statements/s", "queries/s", "qps"];
    (!QPS.contains(&unit)).then_some(unit)
}

/// One test at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub suite: String,
    /// The report group its suite stores (`point`, `write`, ...).
    pub group: String,
    pub test: String,
    pub threads: usize,
    /// Unit of `qps` (`statements/s`, or `Krows/s` for scan).
    pub unit: String,
    pub base: Side,
    /// One per target, in [`Report::targets`] order; `None` where the target
    /// has no counted result for this test and thread count.
    pub cells: Vec<Option<Cell>>,
    /// Where the base has no result ([`Row::base_ran`]): each target's side,
    /// compared with nothing (its cell is `None`); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpaired: Vec<Option<Side>>,
}

impl Row {
    /// Whether the base has results here; a row it lacks is a thread count
    /// only targets ran, shown with `-` for the base and compared nowhere.
    pub fn base_ran(&self) -> bool {
        self.base.n > 0
    }

    /// The results of name `i` (0 the base, then the targets in order), compared or not.
    pub fn side(&self, i: usize) -> Option<&Side> {
        if i == 0 {
            return Some(&self.base).filter(|s| s.n > 0);
        }
        match self.cells.get(i - 1) {
            Some(Some(c)) => Some(&c.side),
            _ => self.unpaired.get(i - 1)?.as_ref(),
        }
    }

    /// The unit to name next to the row's values (see [`unit_note`]).
    pub fn unit_note(&self) -> Option<&str> {
        unit_note(&self.unit)
    }

    /// `test` alone, or `test t=N` when the report covers several thread counts.
    pub fn label(&self, sweep: bool) -> String {
        if sweep {
            format!("{} t={}", self.test, self.threads)
        } else {
            self.test.clone()
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupBlock {
    /// The group key of its rows (all of one suite).
    pub group: String,
    pub title: String,
    pub rows: Vec<Row>,
    /// Geometric mean of each target's ratios over the group's rows.
    pub geomean: Vec<Option<f64>>,
    /// Each target's geometric mean with its interval and verdict
    /// ([`crate::report::compare::group_rel`]), what the summary shows.
    pub summary: Vec<Option<RelativeQps>>,
}

/// One stored run of a target.
#[derive(Clone, Debug, Serialize)]
pub struct RunRef {
    pub run_id: String,
    pub started: String,
    pub status: String,
    pub engine_version: String,
}

/// A target (or the base): every run stored under its name.
#[derive(Clone, Debug, Serialize)]
pub struct TargetInfo {
    pub name: String,
    pub engine: String,
    /// Engine versions of its runs, distinct, in run order.
    pub versions: Vec<String>,
    pub runs: Vec<RunRef>,
}

impl TargetInfo {
    pub fn version(&self) -> String {
        self.versions.join(", ")
    }
}

/// One value that differs between the base and a target.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ValueDiff {
    pub name: String,
    pub base: Option<String>,
    pub target: Option<String>,
}

/// What differs between the base and one target, besides the code under test.
#[derive(Clone, Debug, Serialize)]
pub struct Differences {
    pub target: String,
    pub base_engine: String,
    pub target_engine: String,
    /// Server settings (`SHOW GLOBAL VARIABLES`, `pg_settings`).
    pub settings: Vec<ValueDiff>,
    /// The names in `settings` that the base's or the target's config sets:
    /// differences the user made, shown first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settings_from_config: Vec<String>,
    /// Config file lines only the base has, and only the target has.
    pub config_base_only: Vec<String>,
    pub config_target_only: Vec<String>,
    /// Run parameters (table size, durations, ...; the seed excepted).
    pub params: Vec<ValueDiff>,
    /// The host (CPU model, CPUs, memory, kernel).
    pub host: Vec<ValueDiff>,
}

impl Differences {
    pub fn is_empty(&self) -> bool {
        self.base_engine == self.target_engine
            && self.settings.is_empty()
            && self.config_base_only.is_empty()
            && self.config_target_only.is_empty()
            && self.params.is_empty()
            && self.host.is_empty()
    }
}

/// Two values of three words or more (a script's command line) without the words
/// both have, when some are shared and some are not.
pub fn without_shared_words(a: &str, b: &str) -> (String, String) {
    let (wa, wb): (Vec<&str>, Vec<&str>) = (
        a.split_whitespace().collect(),
        b.split_whitespace().collect(),
    );
    if wa.len() < 3 && wb.len() < 3 {
        return (a.to_string(), b.to_string());
    }
    let only = |x: &[&str], y: &[&str]| -> Vec<String> {
        x.iter()
            .filter(|w| !y.contains(w))
            .map(|w| w.to_string())
            .collect()
    };
    let (oa, ob) = (only(&wa, &wb), only(&wb, &wa));
    let word = |v: Vec<String>| {
        if v.is_empty() {
            "(none)".to_string()
        } else {
            v.join(" ")
        }
    };
    (word(oa), word(ob))
}

/// `s` in at most `n` characters, `…` where cut.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A target whose workload is not the base's: the parameters that make the
/// workload (its suite's [`WorkloadKeys`], and the suite itself) where they differ.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mismatch {
    pub target: String,
    /// `name`, the target's value and the base's, in the order the suite declares them.
    pub differences: Vec<ValueDiff>,
}

impl Mismatch {
    /// At most this many differences are named in [`Mismatch::named`].
    const NAMED: usize = 3;

    /// `big (table_size 100000 vs 2000, read_secs 3 vs 1)`: the target and
    /// its first differences, the target's value first.
    pub fn named(&self) -> String {
        let shown: Vec<String> = self
            .differences
            .iter()
            .take(Self::NAMED)
            .map(|d| {
                let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(not set)".into());
                // Long values (a script's command line) by the words that
                // differ, cut to a line's share.
                let (t, b) = without_shared_words(&v(&d.target), &v(&d.base));
                format!("{} {} vs {}", d.name, cut(&t, 60), cut(&b, 60))
            })
            .collect();
        let more = self.differences.len().saturating_sub(Self::NAMED);
        let more = if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        };
        format!("{} ({}{more})", self.target, shown.join(", "))
    }

    /// The line on top of a report that leaves the target out, and the
    /// error of `rqps compare`.
    pub fn refusal(&self, base: &str) -> String {
        format!(
            "not compared: {}: another workload than {base}'s; run it with the same options, or pass --allow-mismatch to compare anyway",
            self.named()
        )
    }
}

/// The run parameters (keys of [`crate::results::RunDoc::params`]) that make
/// one suite's workload: base and target must agree on them to be compared.
/// Every other parameter (engine options, CPU budgets, TLS, the profile's
/// name, the seed, thread counts) may differ: that is what a comparison is for.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadKeys {
    pub suite: &'static str,
    pub params: &'static [&'static str],
    /// The suite's own treatments: how the same work reaches the server
    /// (`ps_mode`, `protocol`), compared and shown under what differs, but
    /// part of what makes a name's repeats one experiment.
    pub treatments: &'static [&'static str],
    /// Stored parameters that are a record only: never compared, nor shown
    /// under what differs.
    pub recorded: &'static [&'static str],
}

/// What reports know of the engine kinds, given by their caller (the
/// engine registry, read by `plan`): the report does not import the
/// engines.
#[derive(Clone, Debug, Default)]
pub struct EngineKeys {
    /// Each kind's fairness settings (durability, isolation, memory), by
    /// the names its runs store (`engine.name`, any case).
    pub fairness: Vec<(&'static [&'static str], &'static [&'static str])>,
    /// The keys of every kind's options (`mysql_storage_engine`): treatments.
    pub options: Vec<&'static str>,
}

impl EngineKeys {
    /// The fairness settings of the engine `name`; none for a name no kind
    /// answers to.
    pub fn fairness_settings(&self, name: &str) -> &'static [&'static str] {
        self.fairness
            .iter()
            .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
            .map_or(&[], |(_, s)| s)
    }
}

/// A stored result that was not counted.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub target: String,
    pub run_id: String,
    pub test: String,
    pub threads: usize,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Skipped {
    /// The note a report gives it: `not counted: pg16 scan t=1 in run R: failed (why)`.
    pub fn line(&self) -> String {
        format!(
            "not counted: {} {} t={} in run {}: {}{}",
            self.target,
            self.test,
            self.threads,
            self.run_id,
            self.status,
            self.reason
                .as_ref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default()
        )
    }
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub base: String,
    pub targets: Vec<String>,
    pub noise_floor: f64,
    /// Significance level of the moderated t-test.
    pub alpha: f64,
    /// Warm-up steps included (`--all`).
    pub all: bool,
    pub base_info: TargetInfo,
    pub target_info: Vec<TargetInfo>,
    pub differences: Vec<Differences>,
    /// Thread counts in the report, ascending; more than one makes a sweep.
    pub thread_counts: Vec<usize>,
    pub groups: Vec<GroupBlock>,
    /// Geometric mean of each target's ratios over every row.
    pub overall: Vec<Option<f64>>,
    /// [`Report::overall`] with its interval and verdict.
    pub overall_summary: Vec<Option<RelativeQps>>,
    /// Names whose workload is not the base's, left out of the comparison.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<Mismatch>,
    /// Targets compared although their workload is not the base's (`--allow-mismatch`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unlike: Vec<Mismatch>,
    /// Names whose stored repeats are not one experiment (they are pooled
    /// all the same), one line each, said on top.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repeats_differ: Vec<String>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
    /// For each target whose engine is not the base's: the compatibility
    /// record that guards the comparison, or that none was made, in one
    /// line (see [`crate::report::guard`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compat: Vec<String>,
    /// The sections the report was built with (their hooks label rows).
    #[serde(skip)]
    pub sections: Vec<&'static dyn Section>,
    /// What the sections built, in section order; the JSON exporter writes
    /// each under its section's key (see [`super::section`]).
    #[serde(skip)]
    pub parts: Vec<Built>,
    /// Flame graphs of the tests that carry CPU profiles (`--cpu-profile`);
    /// empty otherwise. Only the HTML report shows them.
    #[serde(skip)]
    pub flame_graphs: Vec<crate::report::profile::FlameSet>,
}

impl Report {
    /// The sections whose JSON key and CSV columns this report carries: those
    /// that built a part, and those [`Section::always_listed`].
    pub fn listed_sections(&self) -> impl Iterator<Item = &'static dyn Section> + '_ {
        self.sections.iter().copied().filter(|s| {
            s.always_listed() || self.parts.iter().any(|b| b.section.suite() == s.suite())
        })
    }

    pub fn sweep(&self) -> bool {
        self.thread_counts.len() > 1
    }

    /// An A/A comparison: every target ran what the base ran (engine,
    /// settings, config, parameters and host alike, the seed aside), so
    /// the differences it shows are noise.
    pub fn identical(&self) -> bool {
        !self.targets.is_empty()
            && self.not_compared.is_empty()
            && self.unlike.is_empty()
            && self.differences.len() == self.targets.len()
            && self.differences.iter().all(Differences::is_empty)
    }

    /// The largest change any compared test shows, as a fraction (0.11:
    /// 11 % faster or slower): how large the noise of an A/A comparison is.
    pub fn widest_change(&self) -> Option<f64> {
        self.groups
            .iter()
            .flat_map(|g| &g.rows)
            .flat_map(|r| r.cells.iter().flatten())
            .map(|c| c.rel.ratio)
            .filter(|x| x.is_finite() && *x > 0.0)
            .map(|x| if x >= 1.0 { x - 1.0 } else { 1.0 / x - 1.0 })
            .reduce(f64::max)
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.groups.iter().flat_map(|g| g.rows.iter())
    }

    /// Every name: the base first, then the targets.
    pub fn names(&self) -> Vec<&str> {
        std::iter::once(self.base.as_str())
            .chain(self.targets.iter().map(String::as_str))
            .collect()
    }

    /// The section of `suite`, when the report was given one.
    pub fn section(&self, suite: &str) -> Option<&'static dyn Section> {
        self.sections.iter().copied().find(|s| s.suite() == suite)
    }

    pub fn info(&self, i: usize) -> &TargetInfo {
        if i == 0 {
            &self.base_info
        } else {
            &self.target_info[i - 1]
        }
    }
}

/// When a change counts.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// A verdict needs |ratio − 1| above this (0.02 = 2 %).
    pub noise_floor: f64,
    /// ... and a p-value below this.
    pub alpha: f64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            noise_floor: 0.02,
            alpha: 0.05,
        }
    }
}

/// One row of `rqps compare`.
#[derive(Clone, Debug)]
pub struct GateRow {
    pub label: String,
    pub base_qps: f64,
    pub target_qps: f64,
    pub ratio: f64,
    pub ci: Option<(f64, f64)>,
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// Significantly below the threshold (or, untested, below it).
    pub fails: bool,
}

/// The outcome of `rqps compare`.
#[derive(Clone, Debug)]
pub struct Gate {
    pub rows: Vec<GateRow>,
    /// Base rows the target has no result for.
    pub missing: Vec<String>,
    /// The base's tests that the target failed (in any run) or has no result
    /// for, each once: `label (failed: reason)`, `label (no result)`. Any of
    /// them fails the gate.
    pub broken: Vec<String>,
    /// Base rows too rare to gate (a section's own rule, such as an operation
    /// drawn a few times in a short step) that the target has no result for:
    /// listed so the user sees they were not compared, never a failure.
    pub not_compared: Vec<String>,
    /// Rows a compatibility record leaves out (the engines answer the
    /// test's statements differently): `label: reason`, never a failure.
    pub excluded: Vec<String>,
}

impl Gate {
    pub fn failures(&self) -> impl Iterator<Item = &GateRow> {
        self.rows.iter().filter(|r| r.fails)
    }
}

// The suites' part of a report.
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::results::RunDoc;

/// What a section builds its part from.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The name every other is compared with.
    pub base: &'a str,
    /// Every name of the report, the base first, then the targets in order.
    pub names: &'a [&'a str],
    /// Every run read (oldest first), of these names and others.
    pub runs: &'a [RunDoc],
    /// The statistics rules of the comparison.
    pub rules: Rules,
    /// Warm-up steps asked for too (`--all`).
    pub all: bool,
}

/// One report group of a suite: the key its results store and the title
/// its table is shown under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupDef {
    pub key: &'static str,
    pub title: &'static str,
}

/// A suite's contribution to reports. Every method has a default that suits
/// a suite with nothing but test × threads × QPS results.
pub trait Section: Send + Sync {
    /// The suite name its results and runs store (`TestResult::suite`).
    fn suite(&self) -> &'static str;

    /// Whether the suite's results are rows of the generic tables; a suite
    /// that reports only through its own [`Part`] says no.
    fn in_tables(&self) -> bool {
        true
    }

    /// The suite's report groups in the order they are shown. Empty: any
    /// group, in the order the base stored them. Not empty: a result of
    /// another group is left out of the tables with a warning.
    fn groups(&self) -> Vec<GroupDef> {
        Vec::new()
    }

    /// Where each test goes within its group, from the base's runs; `None`:
    /// the order the base stored them in. Tests without a position go last,
    /// by name.
    fn test_positions(&self, _base_runs: &[&RunDoc]) -> Option<HashMap<String, usize>> {
        None
    }

    /// A row's label in the reference TSV layout.
    fn tsv_label(&self, test: &str) -> String {
        test.to_string()
    }

    /// The end-of-run table of one of the suite's runs; `None`: the generic
    /// table of groups.
    fn run_table(&self, _doc: &RunDoc, _all: bool) -> Option<String> {
        None
    }

    /// The key of the part in the JSON report; `None`: the section adds no
    /// key. The key is there when the section built a part, or (written
    /// `null`) when [`Section::always_listed`].
    fn json_key(&self) -> Option<&'static str> {
        None
    }

    /// CSV columns that only the part's records fill, after the generic ones,
    /// in reports with a part of this section (or [`Section::always_listed`]).
    fn csv_columns(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the JSON key and CSV columns are in every report, part or not:
    /// only for the layout that reports had before suites were plug-ins, so
    /// that a report of a new suite's results never changes the columns of
    /// reports without them.
    fn always_listed(&self) -> bool {
        false
    }

    /// The section's own model of a comparison; `None` when the names have
    /// nothing for it.
    fn build(&self, _input: &Input) -> Option<Arc<dyn Part>> {
        None
    }
}

impl fmt::Debug for dyn Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Section({})", self.suite())
    }
}

/// A section's model of one comparison. It builds neutral content only, and
/// every exporter renders that content once: readable [`Block`]s (term, md,
/// html), [`Data`] records and tables (csv, tsv), and the part itself,
/// serialized by the JSON exporter ([`PartJson`], which every `Serialize`
/// part has).
pub trait Part: PartJson + fmt::Debug + Send + Sync {
    /// The report's title when it has no generic table (`Insert Benchmark`).
    fn title(&self) -> String;

    /// The readable blocks (term, md, html), after the generic tables. With
    /// `charts`, chart blocks too ([`crate::report::export::Chart::Drawn`]).
    fn blocks(&self, report: &Report, charts: bool) -> Vec<Block>;

    /// The records (CSV, after the generic rows, filling the generic columns
    /// they have and [`Section::csv_columns`]) and tables (TSV, after the
    /// generic table).
    fn data(&self, _report: &Report) -> Data {
        Data::default()
    }

    /// Adds the part's rows (and the base rows the first target lacks) to
    /// the `rqps compare` gate of the first target at `threshold`.
    fn gate(&self, _report: &Report, _threshold: f64, _gate: &mut Gate) {}
}

/// A part as JSON, the value of [`Section::json_key`]; the JSON exporter
/// serializes it (pretty-printed, fields in declaration order).
pub trait PartJson {
    fn to_json(&self) -> serde_json::Result<String>;
}

impl<T: Serialize> PartJson for T {
    fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }
}

/// A built part with the section it came from.
#[derive(Clone, Debug)]
pub struct Built {
    pub section: &'static dyn Section,
    pub part: Arc<dyn Part>,
}
