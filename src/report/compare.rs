//! The rules of a comparison: relative QPS with its test and verdict, the
//! colour of a value, per-op hardware ratios, what differs between two
//! configurations, and the gate `rqps compare` applies.

use std::collections::BTreeMap;

pub use super::model::{Gate, GateRow, Rules};
use super::model::{HwFigures, HwRatio, RelativeQps, Report, Shade, ValueDiff, Verdict};
use super::stats;

/// Red at or below this ratio, green at or above [`GREEN_AT`].
pub const RED_AT: f64 = 0.95;
pub const GREEN_AT: f64 = 1.05;

/// Relative QPS of `target` against `base` (the repeats' QPS) as one test
/// alone: [`relative_all`] with a single pair, so with no other test to pool
/// with, the classic pooled t-test on log(QPS).
pub fn relative(target: &[f64], base: &[f64], rules: Rules) -> Option<RelativeQps> {
    relative_all(&[(target, base)], rules).pop().flatten()
}

/// Relative QPS of every `(target, base)` pair of one comparison (the tests
/// of one run pair): the ratio of geometric means, and with two or more
/// repeats on each side the moderated t-test on log(QPS) (limma, Smyth 2004),
/// each test's variance shrunk toward the one pooled over all the pairs
/// (three or more) that have repeats. The repeats of a run share one
/// machine's noise, so the pool tells what a single test's two repeats
/// cannot. `None` for a pair where a side has no positive QPS.
pub fn relative_all(pairs: &[(&[f64], &[f64])], rules: Rules) -> Vec<Option<RelativeQps>> {
    let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let logs: Vec<(Vec<f64>, Vec<f64>)> = pairs.iter().map(|(t, b)| (ln(t), ln(b))).collect();
    let pooled: Vec<(f64, f64)> = logs
        .iter()
        .filter_map(|(t, b)| stats::pooled_variance(t, b))
        .collect();
    let prior = stats::fit_prior(&pooled);
    pairs
        .iter()
        .zip(&logs)
        .map(|((target, base), (lt, lb))| {
            let ratio = stats::geomean(target)? / stats::geomean(base)?;
            let m = stats::moderated(lt, lb, prior.as_ref(), 1.0 - rules.alpha);
            let verdict = verdict(ratio, m.map(|m| m.p), rules);
            Some(RelativeQps {
                ratio,
                ci_low: m.map(|m| m.ci_low.exp()),
                ci_high: m.map(|m| m.ci_high.exp()),
                p: m.map(|m| m.p),
                df: m.map(|m| m.df),
                verdict,
                shade: shade(ratio, verdict),
                busy: false,
            })
        })
        .collect()
}

/// Faster or slower only when p < alpha and the change exceeds the noise
/// floor; `~` otherwise; untested without a p-value (one repeat on a side).
pub fn verdict(ratio: f64, p: Option<f64>, rules: Rules) -> Verdict {
    let Some(p) = p else {
        return Verdict::Untested;
    };
    if p < rules.alpha && (ratio - 1.0).abs() > rules.noise_floor {
        if ratio > 1.0 {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else {
        Verdict::Same
    }
}

/// Red ≤ 0.95, green ≥ 1.05, grey between, judged on the value as printed
/// (two decimals) so the colour always agrees with the number; `~` is grey.
pub fn shade(ratio: f64, verdict: Verdict) -> Shade {
    if verdict == Verdict::Same {
        return Shade::Grey;
    }
    let shown = (ratio * 100.0).round() / 100.0;
    if shown <= RED_AT {
        Shade::Red
    } else if shown >= GREEN_AT {
        Shade::Green
    } else {
        Shade::Grey
    }
}

/// The geometric mean of a group's relative QPS with its interval and
/// verdict, from its tests' intervals: the mean of the tests' log ratios,
/// whose variance is the sum of their squared standard errors over n² (each
/// standard error read back from the test's interval and its degrees of
/// freedom), with Welch–Satterthwaite degrees of freedom. The tests are
/// taken as independent; the interval is at 1 − alpha, and the verdict
/// follows the tests' rule ([`verdict`]). Untested (`?`, no interval) when
/// any test is; `None` for no test. Coloured only when `+` or `-` and
/// beyond the thresholds ([`summary_shade`]).
pub fn group_rel(tests: &[&RelativeQps], rules: Rules) -> Option<RelativeQps> {
    let logs: Vec<f64> = tests.iter().map(|r| r.ratio.ln()).collect();
    let n = logs.len() as f64;
    if logs.is_empty() || logs.iter().any(|l| !l.is_finite()) {
        return None;
    }
    let diff = stats::mean(&logs);
    let ratio = diff.exp();
    let untested = RelativeQps {
        ratio,
        ci_low: None,
        ci_high: None,
        p: None,
        df: None,
        verdict: Verdict::Untested,
        shade: Shade::Grey,
        busy: tests.iter().any(|r| r.busy),
    };
    let level = 1.0 - rules.alpha;
    // (variance of the test's log ratio, its degrees of freedom)
    let mut parts: Vec<(f64, f64)> = Vec::new();
    for r in tests {
        let (Some(lo), Some(hi), Some(df)) = (r.ci_low, r.ci_high, r.df) else {
            return Some(untested);
        };
        let q = stats::t_quantile(0.5 + level / 2.0, df);
        let se = (hi.ln() - lo.ln()) / (2.0 * q);
        if !se.is_finite() {
            return Some(untested);
        }
        parts.push((se * se, df));
    }
    let sum: f64 = parts.iter().map(|p| p.0).sum();
    let se = sum.sqrt() / n;
    let df = if sum > 0.0 {
        sum * sum / parts.iter().map(|(v, d)| v * v / d).sum::<f64>()
    } else {
        parts.iter().map(|p| p.1).sum()
    };
    let (p, half) = if se > 0.0 {
        let t = diff / se;
        (
            (2.0 * stats::t_cdf(-t.abs(), df)).min(1.0),
            stats::t_quantile(0.5 + level / 2.0, df) * se,
        )
    } else {
        (if diff == 0.0 { 1.0 } else { 0.0 }, 0.0)
    };
    let verdict = verdict(ratio, Some(p), rules);
    Some(RelativeQps {
        ratio,
        ci_low: Some((diff - half).exp()),
        ci_high: Some((diff + half).exp()),
        p: Some(p),
        df: Some(df),
        verdict,
        shade: summary_shade(ratio, verdict),
        busy: tests.iter().any(|r| r.busy),
    })
}

/// A summary's colour: red or green only for a significant change beyond
/// the noise floor (`+`, `-`) past the thresholds; grey otherwise, `?` too.
pub fn summary_shade(ratio: f64, verdict: Verdict) -> Shade {
    match verdict {
        Verdict::Faster | Verdict::Slower => shade(ratio, verdict),
        Verdict::Same | Verdict::Untested => Shade::Grey,
    }
}

/// One per-op figure relative to the base: "1" when both are 0, "inf" when only the base is.
pub fn hw_ratio(target: Option<f64>, base: Option<f64>) -> HwRatio {
    match (target, base) {
        (Some(t), Some(b)) if b == 0.0 && t == 0.0 => HwRatio::BothZero,
        (Some(_), Some(0.0)) => HwRatio::Inf,
        (Some(t), Some(b)) => HwRatio::Ratio(t / b),
        _ => HwRatio::Na,
    }
}

pub fn hw_rel(target: &HwFigures, base: &HwFigures) -> Vec<HwRatio> {
    target
        .values()
        .iter()
        .zip(base.values())
        .map(|(t, b)| hw_ratio(*t, b))
        .collect()
}

/// The mean of each figure over the repeats that have it.
pub fn hw_mean<'a>(figs: impl Iterator<Item = &'a HwFigures>) -> Option<HwFigures> {
    let mut sum = [0.0; 7];
    let mut n = [0usize; 7];
    for f in figs {
        for (i, v) in f.values().iter().enumerate() {
            if let Some(v) = v {
                sum[i] += v;
                n[i] += 1;
            }
        }
    }
    let mut out = [None; 7];
    for i in 0..7 {
        if n[i] > 0 {
            out[i] = Some(sum[i] / n[i] as f64);
        }
    }
    let f = HwFigures::from_values(out);
    (!f.is_empty()).then_some(f)
}

/// Settings that differ between any two throwaway instances of the same engine and
/// config (ports, paths in their temp dirs, ids), so they are no difference worth showing.
fn instance_specific(key: &str, a: Option<&String>, b: Option<&String>) -> bool {
    const KEYS: &[&str] = &[
        "port",
        "report_port",
        "pid_file",
        "socket",
        "server_uuid",
        "hostname",
        "report_host",
        "general_log_file",
        "slow_query_log_file",
        "external_pid_file",
        "unix_socket_directories",
    ];
    let temp = |v: Option<&String>| v.is_some_and(|v| v.contains("/rqps-"));
    KEYS.contains(&key) || (temp(a) && temp(b))
}

/// Keys whose values differ, or that only one side has; values that differ only
/// because two throwaway instances ran are left out.
pub fn diff_maps(
    base: &BTreeMap<String, String>,
    target: &BTreeMap<String, String>,
) -> Vec<ValueDiff> {
    let mut keys: Vec<&String> = base.keys().chain(target.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| base.get(*k) != target.get(*k))
        .filter(|k| !instance_specific(k, base.get(*k), target.get(*k)))
        .map(|k| ValueDiff {
            name: k.clone(),
            base: base.get(k).cloned(),
            target: target.get(k).cloned(),
        })
        .collect()
}

/// A setting's name as configs and settings lists may spell it: lower case,
/// `-` as `_` (my.cnf accepts both).
pub fn setting_key(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

/// The setting names a config sets (`name = value`, `name=value`; comments,
/// `[sections]` and lines without `=` left out), as [`setting_key`]s.
pub fn config_keys(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.starts_with('#') && !l.starts_with(';') && !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        // SQLite's lines may start with PRAGMA.
        .map(|(k, _)| setting_key(k))
        .map(|k| match k.strip_prefix("pragma ") {
            Some(name) => name.trim().to_string(),
            None => k,
        })
        .filter(|k| !k.is_empty())
        .collect()
}

/// Config lines (trimmed, blank and `#` comment lines left out) that only
/// `base` has, and that only `target` has.
pub fn diff_lines(base: &[String], target: &[String]) -> (Vec<String>, Vec<String>) {
    let clean = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    };
    let (b, t) = (clean(base), clean(target));
    (
        b.iter().filter(|l| !t.contains(l)).cloned().collect(),
        t.iter().filter(|l| !b.contains(l)).cloned().collect(),
    )
}

/// Applies `--fail-below` to the first target of `report`: its generic rows,
/// then the rows the sections' parts add. A row fails when
/// its whole 95 % interval lies below `threshold` (a significant shortfall)
/// and the drop exceeds the noise floor; with one repeat on a side, when the
/// bare ratio is below `threshold` (marked untested).
pub fn gate(report: &Report, threshold: f64) -> Gate {
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let mut excluded = Vec::new();
    let sweep = report.sweep();
    for row in report.rows().filter(|r| r.base_ran()) {
        let label = row.label(sweep);
        let Some(Some(cell)) = row.cells.first() else {
            missing.push(label);
            continue;
        };
        if let Some(why) = &cell.excluded {
            excluded.push(format!("{label}: {why}"));
            continue;
        }
        let rel = &cell.rel;
        rows.push(GateRow {
            label,
            base_qps: row.base.qps,
            target_qps: cell.side.qps,
            ratio: rel.ratio,
            ci: rel.ci_low.zip(rel.ci_high),
            p: rel.p,
            verdict: rel.verdict,
            fails: gate_fails(rel, threshold, report.noise_floor),
        });
    }
    let mut gate = Gate {
        rows,
        missing,
        broken: Vec::new(),
        not_compared: Vec::new(),
        excluded,
    };
    for b in &report.parts {
        b.part.gate(report, threshold, &mut gate);
    }
    gate.broken = broken(report, &gate);
    gate
}

/// The base's tests that the first target failed in any of its runs
/// (`failed`, `interrupted`, `killed`, still `running`), with the reason, then those it
/// has no counted result for at all; each test once, the first failure's
/// reason kept.
fn broken(report: &Report, gate: &Gate) -> Vec<String> {
    let Some(target) = report.targets.first() else {
        return Vec::new();
    };
    let sweep = report.sweep();
    // The label of the base's row for a test, when the base has one: a
    // generic row, or a row a section's part added (`ibench l.i0`).
    let label_of = |test: &str, threads: usize| -> Option<String> {
        report
            .rows()
            .find(|r| r.test == test && r.threads == threads && r.base_ran())
            .map(|r| r.label(sweep))
            .or_else(|| {
                gate.rows
                    .iter()
                    .map(|g| &g.label)
                    .chain(&gate.missing)
                    .find(|l| l.rsplit_once(' ').is_some_and(|(_, t)| t == test))
                    .cloned()
            })
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for s in report.skipped.iter().filter(|s| &s.target == target) {
        let Some(label) = label_of(&s.test, s.threads) else {
            continue;
        };
        if out.iter().all(|(l, _)| *l != label) {
            let why = match &s.reason {
                Some(r) => format!("{}: {}", s.status, r.lines().next().unwrap_or("")),
                None => s.status.clone(),
            };
            out.push((label, format!("{why}, run {}", s.run_id)));
        }
    }
    for m in &gate.missing {
        if out.iter().all(|(l, _)| l != m) {
            out.push((m.clone(), "no result".into()));
        }
    }
    out.into_iter()
        .map(|(label, why)| format!("{label} ({why})"))
        .collect()
}

/// Significantly below `threshold`, or (untested) simply below it.
pub fn gate_fails(rel: &RelativeQps, threshold: f64, noise_floor: f64) -> bool {
    match (rel.ci_high, rel.verdict) {
        (_, Verdict::Untested) => rel.ratio < threshold,
        (Some(hi), _) => hi < threshold && 1.0 - rel.ratio > noise_floor,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rules = Rules {
        noise_floor: 0.02,
        alpha: 0.05,
    };

    #[test]
    fn verdict_needs_significance_and_the_noise_floor() {
        assert_eq!(verdict(0.90, Some(0.01), R), Verdict::Slower);
        assert_eq!(verdict(1.10, Some(0.01), R), Verdict::Faster);
        // Significant but within the 2 % floor: ~.
        assert_eq!(verdict(0.99, Some(0.0001), R), Verdict::Same);
        assert_eq!(verdict(1.015, Some(0.0001), R), Verdict::Same);
        // Large but not significant: ~.
        assert_eq!(verdict(0.80, Some(0.06), R), Verdict::Same);
        assert_eq!(verdict(0.80, Some(0.05), R), Verdict::Same);
        // One repeat: untested, whatever the ratio.
        assert_eq!(verdict(0.5, None, R), Verdict::Untested);
        // A larger floor swallows a 3 % change.
        let wide = Rules {
            noise_floor: 0.05,
            ..R
        };
        assert_eq!(verdict(0.97, Some(0.001), wide), Verdict::Same);
        assert_eq!(verdict(0.97, Some(0.001), R), Verdict::Slower);
    }

    #[test]
    fn relative_with_repeats_and_without() {
        // Three repeats each, 10 % slower with little spread: slower.
        let r = relative(&[900.0, 905.0, 910.0], &[1000.0, 1003.0, 998.0], R).unwrap();
        assert!((r.ratio - 0.9050).abs() < 0.001, "{r:?}");
        assert_eq!(r.verdict, Verdict::Slower);
        assert_eq!(r.shade, Shade::Red);
        assert!(r.ci_low.unwrap() < r.ratio && r.ratio < r.ci_high.unwrap());
        // Noisy repeats: ~ and grey although the ratio is far from 1.
        let r = relative(&[700.0, 1100.0, 900.0], &[1000.0, 1003.0, 998.0], R).unwrap();
        assert_eq!(r.verdict, Verdict::Same);
        assert_eq!(r.shade, Shade::Grey);
        // One repeat on a side: untested, coloured by the ratio alone.
        let r = relative(&[800.0], &[1000.0, 1010.0], R).unwrap();
        assert_eq!(r.verdict, Verdict::Untested);
        assert_eq!((r.p, r.ci_low), (None, None));
        assert_eq!(r.shade, Shade::Red);
        assert!(relative(&[0.0], &[1000.0], R).is_none());
    }

    /// Issue 16's simulation: 30 tests, 2 repeats a side, log-normal noise
    /// whose σ runs from 1 % to 4 % across the tests, one test 10 % slower
    /// (a different one in each pair, so every σ takes its turn).
    #[test]
    fn moderated_verdicts_catch_a_ten_percent_drop_with_two_repeats() {
        use rand::SeedableRng;
        use rand::rngs::SmallRng;
        use rand_distr::{Distribution, Normal};
        const TESTS: usize = 30;
        const PAIRS: usize = 200;
        let mut rng = SmallRng::seed_from_u64(16);
        let unit = Normal::new(0.0, 1.0).unwrap();
        let (mut caught, mut welch_caught, mut false_flags) = (0, 0, 0);
        for pair in 0..PAIRS {
            let shifted = pair % TESTS;
            let mut draw = |sigma: f64, shift: f64| -> Vec<f64> {
                (0..2)
                    .map(|_| 1000.0 * (shift + sigma * unit.sample(&mut rng)).exp())
                    .collect()
            };
            let sides: Vec<(Vec<f64>, Vec<f64>)> = (0..TESTS)
                .map(|t| {
                    let sigma = 0.01 + 0.03 * t as f64 / (TESTS - 1) as f64;
                    let shift = if t == shifted { 0.9f64.ln() } else { 0.0 };
                    (draw(sigma, shift), draw(sigma, 0.0))
                })
                .collect();
            let pairs: Vec<(&[f64], &[f64])> = sides
                .iter()
                .map(|(t, b)| (t.as_slice(), b.as_slice()))
                .collect();
            let rels = relative_all(&pairs, R);
            for (t, rel) in rels.iter().enumerate() {
                let v = rel.as_ref().unwrap().verdict;
                if t == shifted {
                    caught += usize::from(v == Verdict::Slower);
                } else {
                    false_flags += usize::from(v != Verdict::Same);
                }
            }
            // Yesterday's test, for scale: Welch on the one test alone.
            let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
            let (t, b) = &sides[shifted];
            let w = stats::welch(&ln(t), &ln(b), 0.95).unwrap();
            welch_caught += usize::from(verdict(w.diff.exp(), Some(w.p), R) == Verdict::Slower);
        }
        let power = caught as f64 / PAIRS as f64;
        let fp = false_flags as f64 / (PAIRS * (TESTS - 1)) as f64;
        println!(
            "moderated t: -10% caught in {:.1}% of {PAIRS} pairs, unshifted tests flagged {:.2}% \
             of the time (Welch alone: {:.1}%)",
            100.0 * power,
            100.0 * fp,
            100.0 * welch_caught as f64 / PAIRS as f64
        );
        assert!(power >= 0.80, "power {power}");
        assert!(fp <= 0.05, "false positives {fp}");
    }

    /// Three tests at 0.90 with intervals of ±1 %: the group is `-` at 0.90,
    /// its interval narrower than any test's (the mean of three); the same
    /// ratios with intervals of ±40 % (in log) are `~` and grey; one untested test
    /// makes the group `?`, grey although 0.90 is past the red threshold.
    #[test]
    fn a_groups_verdict_comes_from_its_tests_intervals() {
        let rel = |ratio: f64, half: f64| RelativeQps {
            ratio,
            ci_low: Some(ratio * (-half).exp()),
            ci_high: Some(ratio * half.exp()),
            p: Some(0.01),
            df: Some(4.0),
            verdict: Verdict::Slower,
            shade: Shade::Red,
            busy: false,
        };
        let tight = [rel(0.9, 0.01), rel(0.9, 0.01), rel(0.9, 0.01)];
        let g = group_rel(&tight.iter().collect::<Vec<_>>(), R).unwrap();
        assert!((g.ratio - 0.9).abs() < 1e-12, "{g:?}");
        assert_eq!((g.verdict, g.shade), (Verdict::Slower, Shade::Red));
        let width = g.ci_high.unwrap().ln() - g.ci_low.unwrap().ln();
        // se of the mean = se / √3; Welch–Satterthwaite df = 3 × 4 = 12.
        let se = 0.01 / stats::t_quantile(0.975, 4.0) / 3f64.sqrt();
        assert!((g.df.unwrap() - 12.0).abs() < 1e-9, "{g:?}");
        assert!(
            (width - 2.0 * stats::t_quantile(0.975, 12.0) * se).abs() < 1e-9,
            "{g:?}"
        );
        let wide = [rel(0.9, 0.4), rel(0.9, 0.4), rel(0.9, 0.4)];
        let g = group_rel(&wide.iter().collect::<Vec<_>>(), R).unwrap();
        assert_eq!((g.verdict, g.shade), (Verdict::Same, Shade::Grey), "{g:?}");
        let mut one = tight.clone();
        one[1].ci_low = None;
        one[1].ci_high = None;
        one[1].df = None;
        let g = group_rel(&one.iter().collect::<Vec<_>>(), R).unwrap();
        assert_eq!((g.verdict, g.shade), (Verdict::Untested, Shade::Grey));
        assert!(g.ci_low.is_none() && (g.ratio - 0.9).abs() < 1e-12);
        // Significant but within the noise floor: ~, grey.
        let small = [rel(0.99, 0.001), rel(0.99, 0.001)];
        let g = group_rel(&small.iter().collect::<Vec<_>>(), R).unwrap();
        assert_eq!((g.verdict, g.shade), (Verdict::Same, Shade::Grey));
        assert!(group_rel(&[], R).is_none());
    }

    #[test]
    fn colour_thresholds() {
        use Verdict::*;
        assert_eq!(shade(0.95, Slower), Shade::Red);
        assert_eq!(shade(0.9549, Untested), Shade::Red); // prints 0.95
        assert_eq!(shade(0.956, Slower), Shade::Grey); // prints 0.96
        assert_eq!(shade(1.0, Untested), Shade::Grey);
        assert_eq!(shade(1.044, Faster), Shade::Grey); // prints 1.04
        assert_eq!(shade(1.049, Faster), Shade::Green); // prints 1.05
        assert_eq!(shade(1.05, Faster), Shade::Green);
        assert_eq!(shade(1.5, Untested), Shade::Green);
        // ~ overrides the thresholds.
        assert_eq!(shade(0.5, Same), Shade::Grey);
        assert_eq!(shade(2.0, Same), Shade::Grey);
    }

    #[test]
    fn hw_ratio_rules() {
        assert_eq!(hw_ratio(Some(0.0), Some(0.0)), HwRatio::BothZero);
        assert_eq!(hw_ratio(Some(3.0), Some(0.0)), HwRatio::Inf);
        assert_eq!(hw_ratio(Some(3.0), Some(2.0)), HwRatio::Ratio(1.5));
        assert_eq!(hw_ratio(Some(0.0), Some(2.0)), HwRatio::Ratio(0.0));
        assert_eq!(hw_ratio(None, Some(2.0)), HwRatio::Na);
        assert_eq!(HwRatio::BothZero.to_string(), "1");
        assert_eq!(HwRatio::Inf.to_string(), "inf");
        assert_eq!(HwRatio::Ratio(1.234).to_string(), "1.23");
        let m = hw_mean(
            [
                HwFigures {
                    cpu_us_per_op: Some(10.0),
                    cs_per_op: Some(1.0),
                    ..Default::default()
                },
                HwFigures {
                    cpu_us_per_op: Some(20.0),
                    ..Default::default()
                },
            ]
            .iter(),
        )
        .unwrap();
        assert_eq!((m.cpu_us_per_op, m.cs_per_op), (Some(15.0), Some(1.0)));
        assert_eq!(m.reads_per_op, None);
        assert!(hw_mean([HwFigures::default()].iter()).is_none());
    }

    #[test]
    fn settings_and_config_diff() {
        let m = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let base = m(&[("shared_buffers", "128MB"), ("fsync", "on"), ("jit", "on")]);
        let target = m(&[
            ("shared_buffers", "1GB"),
            ("fsync", "on"),
            ("wal_level", "minimal"),
        ]);
        let d = diff_maps(&base, &target);
        let names: Vec<_> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["jit", "shared_buffers", "wal_level"]);
        assert_eq!(d[0].target, None);
        assert_eq!(d[1].base.as_deref(), Some("128MB"));
        assert_eq!(d[1].target.as_deref(), Some("1GB"));
        assert_eq!(d[2].base, None);
        assert!(diff_maps(&base, &base).is_empty());

        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (b, t) = diff_lines(
            &lines(&["# mine", "shared_buffers = 128MB", " fsync = on ", ""]),
            &lines(&["fsync = on", "shared_buffers = 1GB"]),
        );
        assert_eq!(b, ["shared_buffers = 128MB"]);
        assert_eq!(t, ["shared_buffers = 1GB"]);
    }

    #[test]
    fn config_keys_are_the_names_a_config_sets() {
        let lines: Vec<String> = [
            "# tuned",
            "[mysqld]",
            "innodb-flush-log-at-trx-commit = 2",
            "shared_buffers=1GB",
            "skip-name-resolve",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            config_keys(&lines),
            ["innodb_flush_log_at_trx_commit", "shared_buffers"]
        );
        assert_eq!(setting_key("Max-Connections"), "max_connections");
        // SQLite's config: PRAGMA optional.
        let sqlite: Vec<String> = ["PRAGMA journal_mode=DELETE", "synchronous = OFF"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(config_keys(&sqlite), ["journal_mode", "synchronous"]);
    }

    #[test]
    fn instance_paths_and_ports_are_not_differences() {
        let m = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let a = m(&[
            ("port", "33877"),
            ("datadir", "/tmp/rqps-mariadb-AA/data/"),
            ("innodb_flush_log_at_trx_commit", "1"),
        ]);
        let b = m(&[
            ("port", "45771"),
            ("datadir", "/tmp/rqps-mariadb-BB/data/"),
            ("innodb_flush_log_at_trx_commit", "2"),
        ]);
        let d = diff_maps(&a, &b);
        assert_eq!(
            d.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["innodb_flush_log_at_trx_commit"]
        );
    }
}
