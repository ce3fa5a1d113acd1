//! CPU profiles as numbers (`rqps report --explain`) and flame graphs.
//!
//! Contract: the figures per operation of one profile come from
//! [`crate::harness::profile`] (self and inclusive µs/op, sampling error
//! `√samples × period / ops`); this module pools a name's repeats, ranks
//! base against target by the largest increase of self µs/op
//! ([`compare`], [`explain`]) and draws flame graphs whose counts are
//! picoseconds of CPU per operation ([`flame_graph`], [`diff_flame_graph`]),
//! so that runs of different lengths compare.

use crate::results::{CpuProfile, ProfileSide};

pub use crate::harness::profile::{CHECK_TOLERANCE, Costs, FnCost, check_total, costs, side_costs};

pub use crate::results::parse_folded as parse;

/// One row of the base/target table: a function's self µs/op on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    pub name: String,
    pub base_us: f64,
    pub target_us: f64,
    /// Sampling error of the difference.
    pub error_us: f64,
    pub base_incl_us: f64,
    pub target_incl_us: f64,
}

impl DiffRow {
    pub fn diff(&self) -> f64 {
        self.target_us - self.base_us
    }
}

/// Every function of either side, by the largest increase of self µs/op first.
pub fn compare(base: &Costs, target: &Costs) -> Vec<DiffRow> {
    let names: std::collections::BTreeSet<&str> = base
        .functions
        .iter()
        .chain(&target.functions)
        .map(|f| f.name.as_str())
        .collect();
    let mut rows: Vec<DiffRow> = names
        .into_iter()
        .map(|n| {
            let b = base.get(n);
            let t = target.get(n);
            let bs = b.map(|f| f.self_samples).unwrap_or(0);
            let ts = t.map(|f| f.self_samples).unwrap_or(0);
            DiffRow {
                name: n.to_string(),
                base_us: b.map(|f| f.self_us).unwrap_or(0.0),
                target_us: t.map(|f| f.self_us).unwrap_or(0.0),
                error_us: (base.error_of(bs).powi(2) + target.error_of(ts).powi(2)).sqrt(),
                base_incl_us: b.map(|f| f.incl_us).unwrap_or(0.0),
                target_incl_us: t.map(|f| f.incl_us).unwrap_or(0.0),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.diff()
            .partial_cmp(&a.diff())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.name.cmp(&b.name))
    });
    rows
}

/// Folded stacks with counts in picoseconds per operation, so that two
/// profiles of different lengths compare per operation.
fn per_op_folded(folded: &str, period_ns: u64, ops: f64) -> String {
    let mut out = String::new();
    for (stack, n) in parse(folded) {
        let ps = (n as f64 * period_ns as f64 * 1000.0 / ops.max(1e-9)).round() as u64;
        if ps > 0 {
            out.push_str(&format!("{stack} {ps}\n"));
        }
    }
    out
}

/// A flame graph (SVG) of one profile, its widths in CPU time per operation.
pub fn flame_graph(title: &str, p: &CpuProfile, side: &ProfileSide) -> Option<String> {
    let folded = per_op_folded(&side.stacks()?, p.period_ns, p.ops);
    render(title, &folded)
}

/// A differential flame graph of `target` against `base`: the target's
/// stacks, red where they cost more CPU per operation than in the base,
/// blue where less.
pub fn diff_flame_graph(
    title: &str,
    base: (&CpuProfile, &ProfileSide),
    target: (&CpuProfile, &ProfileSide),
) -> Option<String> {
    let b = per_op_folded(&base.1.stacks()?, base.0.period_ns, base.0.ops);
    let t = per_op_folded(&target.1.stacks()?, target.0.period_ns, target.0.ops);
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        b.as_bytes(),
        t.as_bytes(),
        &mut diff,
    )
    .ok()?;
    render(title, &String::from_utf8_lossy(&diff))
}

fn render(title: &str, folded: &str) -> Option<String> {
    if folded.trim().is_empty() {
        return None;
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "ps/op".into();
    opts.deterministic = true;
    // Shown as images in the HTML report, which carries no script.
    opts.no_javascript = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg).ok()?;
    String::from_utf8(svg).ok()
}

/// One name's profiles of one test at one thread count, pooled over its
/// repeats: the stacks and operations added up (same sample period).
#[derive(Clone, Debug, PartialEq)]
pub struct Pooled {
    pub threads: usize,
    pub repeats: usize,
    pub engine_is: String,
    pub profile: CpuProfile,
}

fn add_side(into: &mut Option<ProfileSide>, from: &Option<ProfileSide>) {
    let Some(from) = from else { return };
    let merged = match into.as_ref() {
        None => from.stacks(),
        Some(have) => have
            .stacks()
            .zip(from.stacks())
            .map(|(a, b)| format!("{a}{b}")),
    };
    if let Some(text) = merged {
        let samples = parse(&text).iter().map(|(_, n)| n).sum();
        *into = Some(ProfileSide::new(&crate::results::Folded { text, samples }));
    }
}

/// The profiles of `test` in the runs named `name`, per thread count.
pub fn pooled(runs: &[crate::results::RunDoc], name: &str, test: &str) -> Vec<Pooled> {
    let mut out: Vec<Pooled> = Vec::new();
    for run in runs.iter().filter(|r| r.name == name) {
        for t in run
            .tests
            .iter()
            .filter(|t| t.test == test && t.status == crate::results::Status::Ok)
        {
            let Some(p) = &t.cpu_profile else { continue };
            match out.iter_mut().find(|o| o.threads == t.threads) {
                Some(o) if o.profile.period_ns == p.period_ns => {
                    o.repeats += 1;
                    o.profile.ops += p.ops;
                    add_side(&mut o.profile.engine, &p.engine);
                    add_side(&mut o.profile.client, &p.client);
                }
                Some(_) => {}
                None => out.push(Pooled {
                    threads: t.threads,
                    repeats: 1,
                    engine_is: p.engine_is.clone(),
                    profile: (**p).clone(),
                }),
            }
        }
    }
    out.sort_by_key(|p| p.threads);
    out
}

/// Whether any test of these runs carries a profile.
pub fn any_profile(runs: &[crate::results::RunDoc]) -> bool {
    runs.iter()
        .flat_map(|r| &r.tests)
        .any(|t| t.cpu_profile.is_some())
}

fn us(v: f64) -> String {
    format!("{v:.2}")
}

/// The `--explain` table of one side (engine or client) of a base and a
/// target: the `top` functions by largest increase of self µs/op.
fn side_table(
    what: &str,
    base_name: &str,
    base: &Costs,
    target_name: &str,
    target: &Costs,
    top: usize,
    out: &mut String,
) {
    use std::fmt::Write as _;
    let rows = compare(base, target);
    let w = rows
        .iter()
        .take(top)
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 60);
    let _ = writeln!(
        out,
        "  {what}: self CPU µs per operation, by largest increase (± = sampling error)"
    );
    let _ = writeln!(
        out,
        "    {:<w$}  {:>12}  {:>12}  {:>9}  {:>7}  {:>12}  {:>12}",
        "function",
        trunc(base_name, 12),
        trunc(target_name, 12),
        "diff",
        "±",
        "incl base",
        "incl target"
    );
    for r in rows.iter().take(top) {
        let _ = writeln!(
            out,
            "    {:<w$}  {:>12}  {:>12}  {:>+9.2}  {:>7.2}  {:>12}  {:>12}",
            trunc(&r.name, w),
            us(r.base_us),
            us(r.target_us),
            r.diff(),
            r.error_us,
            us(r.base_incl_us),
            us(r.target_incl_us)
        );
    }
    let _ = writeln!(
        out,
        "    {:<w$}  {:>12}  {:>12}  {:>+9.2}  {:>7.2}",
        "all samples",
        format!("{:.2}±{:.2}", base.total_us, base.error_us),
        format!("{:.2}±{:.2}", target.total_us, target.error_us),
        target.total_us - base.total_us,
        (base.error_us.powi(2) + target.error_us.powi(2)).sqrt()
    );
}

fn trunc(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// What `rqps report --explain` lacks to compare profiles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    #[error(
        "'{base}' has no CPU profile of test '{test}': run it with --cpu-profile (matrix: cpu_profile = true)"
    )]
    NoBaseProfile { base: String, test: String },
    #[error("no target has a CPU profile of test '{test}' at a thread count of '{base}'")]
    NoTargetProfile { base: String, test: String },
}

/// `rqps report --explain TEST`: per thread count and target, the top
/// functions of base and target side by side. `Err` says what is missing.
pub fn explain(
    runs: &[crate::results::RunDoc],
    base: &str,
    targets: &[String],
    test: &str,
    top: usize,
) -> Result<String, ExplainError> {
    use std::fmt::Write as _;
    let b = pooled(runs, base, test);
    if b.is_empty() {
        return Err(ExplainError::NoBaseProfile {
            base: base.to_string(),
            test: test.to_string(),
        });
    }
    let mut out = String::new();
    let mut shown = 0;
    for name in targets {
        let t = pooled(runs, name, test);
        if t.is_empty() {
            let _ = writeln!(
                out,
                "{test}: '{name}' has no CPU profile of this test (run it with --cpu-profile)\n"
            );
            continue;
        }
        for tp in &t {
            let Some(bp) = b.iter().find(|x| x.threads == tp.threads) else {
                continue;
            };
            shown += 1;
            let _ = writeln!(
                out,
                "{test} t={}: {name} ({} repeat(s), {:.0} ops) against {base} ({} repeat(s), {:.0} ops); one sample = {} µs of CPU",
                tp.threads,
                tp.repeats,
                tp.profile.ops,
                bp.repeats,
                bp.profile.ops,
                tp.profile.period_ns as f64 / 1000.0
            );
            let sides = [
                (
                    format!("engine ({})", tp.engine_is),
                    &bp.profile.engine,
                    &tp.profile.engine,
                ),
                (
                    "client (rqps)".to_string(),
                    &bp.profile.client,
                    &tp.profile.client,
                ),
            ];
            for (what, bs, ts) in sides {
                let (Some(bs), Some(ts)) = (bs, ts) else {
                    continue;
                };
                let (Some(bc), Some(tc)) =
                    (side_costs(&bp.profile, bs), side_costs(&tp.profile, ts))
                else {
                    continue;
                };
                side_table(&what, base, &bc, name, &tc, top, &mut out);
            }
            out.push('\n');
        }
    }
    if shown == 0 && out.is_empty() {
        return Err(ExplainError::NoTargetProfile {
            base: base.to_string(),
            test: test.to_string(),
        });
    }
    Ok(out)
}

/// The flame graphs of one test at one thread count (engine profiles).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlameSet {
    pub test: String,
    pub threads: usize,
    /// What the engine profile covers (`server`, `rqps process`).
    pub engine_is: String,
    /// The base's flame graph (SVG).
    pub base: String,
    /// Per target: its name, its flame graph, and the differential one
    /// against the base.
    pub targets: Vec<(String, String, String)>,
}

/// The flame graphs of every test that the base and a target both profiled,
/// in the base's test order; empty when no run carries a profile.
pub fn flame_sets(
    runs: &[crate::results::RunDoc],
    base: &str,
    targets: &[String],
) -> Vec<FlameSet> {
    if !any_profile(runs) {
        return Vec::new();
    }
    let mut tests: Vec<String> = Vec::new();
    for r in runs.iter().filter(|r| r.name == base) {
        for t in r.tests.iter().filter(|t| t.cpu_profile.is_some()) {
            if !tests.contains(&t.test) {
                tests.push(t.test.clone());
            }
        }
    }
    let mut out = Vec::new();
    for test in &tests {
        let b = pooled(runs, base, test);
        let others: Vec<(&String, Vec<Pooled>)> =
            targets.iter().map(|n| (n, pooled(runs, n, test))).collect();
        for bp in &b {
            let Some(bs) = &bp.profile.engine else {
                continue;
            };
            let mut set = FlameSet {
                test: test.clone(),
                threads: bp.threads,
                engine_is: bp.engine_is.clone(),
                ..Default::default()
            };
            for (name, pooled) in &others {
                let Some(tp) = pooled.iter().find(|p| p.threads == bp.threads) else {
                    continue;
                };
                let Some(ts) = &tp.profile.engine else {
                    continue;
                };
                let graph = flame_graph(
                    &format!(
                        "{name}: {test} t={} ({}), CPU per operation",
                        bp.threads, bp.engine_is
                    ),
                    &tp.profile,
                    ts,
                );
                let diff = diff_flame_graph(
                    &format!(
                        "{name} against {base}: {test} t={} (red: more CPU per operation, blue: less)",
                        bp.threads
                    ),
                    (&bp.profile, bs),
                    (&tp.profile, ts),
                );
                if let (Some(g), Some(d)) = (graph, diff) {
                    set.targets.push((name.to_string(), g, d));
                }
            }
            if set.targets.is_empty() {
                continue;
            }
            if let Some(g) = flame_graph(
                &format!(
                    "{base}: {test} t={} ({}), CPU per operation",
                    bp.threads, bp.engine_is
                ),
                &bp.profile,
                bs,
            ) {
                set.base = g;
                out.push(set);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOLDED: &str = "main;exec;_bt_compare 30\nmain;exec 10\nmain;parse;parse 5\n";

    #[test]
    fn self_and_inclusive_costs_come_from_the_samples_and_the_operations() {
        // 45 samples of 1 ms over 1000 operations: 45 µs/op.
        let c = costs(FOLDED, 1_000_000, 1000.0);
        assert_eq!(c.samples, 45);
        assert!((c.total_us - 45.0).abs() < 1e-9);
        assert!((c.error_us - 45f64.sqrt()).abs() < 1e-9);
        let bt = c.get("_bt_compare").unwrap();
        assert_eq!((bt.self_samples, bt.incl_samples), (30, 30));
        let exec = c.get("exec").unwrap();
        assert_eq!((exec.self_samples, exec.incl_samples), (10, 40));
        assert!((exec.incl_us - 40.0).abs() < 1e-9);
        // Recursion counts once per stack.
        assert_eq!(c.get("parse").unwrap().incl_samples, 5);
        assert_eq!(c.get("main").unwrap().incl_samples, 45);
        assert_eq!(c.functions[0].name, "_bt_compare");
    }

    #[test]
    fn a_total_far_from_the_measured_cpu_is_warned_about() {
        let c = costs(FOLDED, 1_000_000, 1000.0);
        assert_eq!(check_total(&c, 45.0, "server", "server cpu/o"), None);
        assert_eq!(check_total(&c, 47.0, "server", "server cpu/o"), None);
        let w = check_total(&c, 90.0, "server", "server cpu/o").expect("a warning");
        assert!(w.contains("45.00 ± 6.71") && w.contains("90.00"), "{w}");
    }

    #[test]
    fn the_comparison_ranks_the_largest_increase_first() {
        let base = costs(FOLDED, 1_000_000, 1000.0);
        let target = costs(
            "main;exec;_bt_compare 30\nmain;exec 10\nmain;parse;raw_parser 40\n",
            1_000_000,
            2000.0,
        );
        let rows = compare(&base, &target);
        assert_eq!(rows[0].name, "raw_parser");
        assert!((rows[0].diff() - 20.0).abs() < 1e-9);
        assert_eq!(rows.last().unwrap().name, "_bt_compare");
        assert!((rows.last().unwrap().diff() + 15.0).abs() < 1e-9);
    }

    #[test]
    fn flame_graphs_render_per_operation() {
        let f = crate::results::Folded {
            text: FOLDED.into(),
            samples: 45,
        };
        let side = ProfileSide::new(&f);
        let p = CpuProfile {
            period_ns: 1_000_000,
            ops: 1000.0,
            engine_is: "server".into(),
            engine: Some(side.clone()),
            client: None,
        };
        assert_eq!(side.stacks().as_deref(), Some(FOLDED));
        let svg = flame_graph("base", &p, &side).unwrap();
        assert!(svg.contains("<svg") && svg.contains("_bt_compare"));
        let d = diff_flame_graph("diff", (&p, &side), (&p, &side)).unwrap();
        assert!(d.contains("<svg") && d.contains("_bt_compare"));
    }
}
