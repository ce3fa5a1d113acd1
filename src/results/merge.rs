//! Merging client parts (`rqps run --part I/N`) into one run, as if one
//! client had driven the whole load: counts and rates summed, latency
//! histograms added exactly (every part stores its HDR histogram), the
//! per-second series summed second by second, and each part's client host and
//! hardware figures kept beside the merged result.

use std::collections::BTreeMap;

use super::{Latency, OpStats, PartInfo, RunDoc, Status, TestResult};
use super::{decode_histogram, encode_histogram};

/// Why parts cannot be merged: one line naming the run, part or test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error(
        "run {run_id} ({name}) is not a client part (it ran without --part): rqps merge combines the runs of `rqps run --part I/N`"
    )]
    NotAPart { run_id: String, name: String },
    #[error("{name} repeat {repeat}: {what}")]
    Parts {
        name: String,
        repeat: usize,
        what: PartsError,
    },
}

/// What is wrong with the parts of one name and repeat.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartsError {
    #[error("run {run_id} is part {index} of {count}, the others of {others}")]
    Counts {
        run_id: String,
        index: usize,
        count: usize,
        others: usize,
    },
    #[error("a part was given twice (parts {indexes:?} of {count})")]
    Twice { indexes: Vec<usize>, count: usize },
    #[error("part {} of {count} is missing (found {})", join(missing), join(found))]
    Missing {
        missing: Vec<usize>,
        found: Vec<usize>,
        count: usize,
    },
    #[error(
        "part {index} (run {run_id}) ran other tests than part 1 (run {first}): parts must run the same plan"
    )]
    OtherTests {
        index: usize,
        run_id: String,
        first: String,
    },
    #[error(
        "test {test} of part {index} has no stored latency histogram, so its percentiles cannot be merged exactly (rerun the part with this rqps)"
    )]
    NoHistogram { test: String, index: usize },
    #[error("test {test}: cannot add part {index}'s histogram: {why}")]
    Histogram {
        test: String,
        index: usize,
        why: String,
    },
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Merges every (name, repeat) group of `runs`, which must be client parts
/// each found once; the merged runs come in name, then repeat order.
pub fn merge(runs: Vec<RunDoc>) -> Result<Vec<RunDoc>, MergeError> {
    let mut groups: BTreeMap<(String, usize), Vec<RunDoc>> = BTreeMap::new();
    for r in runs {
        if r.part.is_none() {
            return Err(MergeError::NotAPart {
                run_id: r.run_id,
                name: r.name,
            });
        }
        groups
            .entry((r.name.clone(), r.repeat))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((name, repeat), parts)| {
            merge_group(parts).map_err(|what| MergeError::Parts { name, repeat, what })
        })
        .collect()
}

fn worst(a: Status, b: Status) -> Status {
    let rank = |s: Status| match s {
        Status::Ok => 0,
        Status::Running => 1,
        Status::Interrupted => 2,
        Status::Killed => 3,
        Status::Failed => 4,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// The parts of one name and repeat, as one run.
fn merge_group(mut parts: Vec<RunDoc>) -> Result<RunDoc, PartsError> {
    let info = |r: &RunDoc| r.part.clone().expect("only parts are grouped");
    parts.sort_by_key(|r| info(r).index);
    let count = info(&parts[0]).count;
    if let Some(r) = parts.iter().find(|r| info(r).count != count) {
        return Err(PartsError::Counts {
            run_id: r.run_id.clone(),
            index: info(r).index,
            count: info(r).count,
            others: count,
        });
    }
    let indexes: Vec<usize> = parts.iter().map(|r| info(r).index).collect();
    if indexes != (1..=count).collect::<Vec<_>>() {
        let missing: Vec<usize> = (1..=count).filter(|i| !indexes.contains(i)).collect();
        return Err(if missing.is_empty() {
            PartsError::Twice { indexes, count }
        } else {
            PartsError::Missing {
                missing,
                found: indexes,
                count,
            }
        });
    }
    let first = &parts[0];
    for r in &parts[1..] {
        let same = r.suite == first.suite
            && r.tests.len() == first.tests.len()
            && r.tests
                .iter()
                .zip(&first.tests)
                .all(|(a, b)| a.suite == b.suite && a.test == b.test);
        if !same {
            return Err(PartsError::OtherTests {
                index: info(r).index,
                run_id: r.run_id.clone(),
                first: first.run_id.clone(),
            });
        }
    }
    let late: Vec<String> = parts
        .iter()
        .map(info)
        .filter(|p| p.late)
        .map(|p| {
            format!(
                "part {}/{} began {:.1} s after --start-at (late): the parts did not all run together",
                p.index, p.count, p.late_secs
            )
        })
        .collect();
    let mut tests = Vec::with_capacity(first.tests.len());
    for i in 0..first.tests.len() {
        let of: Vec<(&PartInfo, &TestResult)> = parts
            .iter()
            .map(|r| (r.part.as_ref().expect("parts"), &r.tests[i]))
            .collect();
        let mut t = merge_test(&of)?;
        t.warnings.extend(late.iter().cloned());
        tests.push(t);
    }
    let mut doc = first.clone();
    doc.status = parts.iter().fold(Status::Ok, |s, r| worst(s, r.status));
    doc.started = parts
        .iter()
        .map(|r| r.started.clone())
        .min()
        .unwrap_or_default();
    doc.finished = parts.iter().filter_map(|r| r.finished.clone()).max();
    doc.params = merged_params(&parts);
    doc.load = None;
    doc.part = None;
    doc.merged_from = parts
        .iter()
        .map(|r| PartInfo {
            run_id: Some(r.run_id.clone()),
            host: Some(r.host.clone()),
            ..info(r)
        })
        .collect();
    doc.tests = tests;
    Ok(doc)
}

/// Part 1's parameters with `threads` the sum of the parts' shares.
fn merged_params(parts: &[RunDoc]) -> serde_json::Value {
    let mut p = parts[0].params.clone();
    let shares: Vec<Vec<u64>> = parts
        .iter()
        .filter_map(|r| {
            r.params
                .get("threads")?
                .as_array()?
                .iter()
                .map(|v| v.as_u64())
                .collect()
        })
        .collect();
    if shares.len() == parts.len()
        && let Some(o) = p.as_object_mut()
    {
        let total: Vec<u64> = (0..shares[0].len())
            .map(|i| shares.iter().filter_map(|s| s.get(i)).sum())
            .collect();
        o.insert("threads".into(), total.into());
    }
    p
}

/// One test of every part, as one result.
fn merge_test(of: &[(&PartInfo, &TestResult)]) -> Result<TestResult, PartsError> {
    let (_, first) = of[0];
    let mut t = first.clone();
    let sum_u = |f: fn(&TestResult) -> u64| of.iter().map(|(_, r)| f(r)).sum::<u64>();
    let sum_f = |f: fn(&TestResult) -> f64| of.iter().map(|(_, r)| f(r)).sum::<f64>();
    t.threads = of.iter().map(|(_, r)| r.threads).sum();
    t.status = of.iter().fold(Status::Ok, |s, (_, r)| worst(s, r.status));
    let reasons: Vec<String> = of
        .iter()
        .filter_map(|(p, r)| Some(format!("part {}: {}", p.index, r.reason.as_ref()?)))
        .collect();
    t.reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    t.started = of
        .iter()
        .map(|(_, r)| r.started.clone())
        .min()
        .unwrap_or_default();
    t.secs = of.iter().map(|(_, r)| r.secs).fold(0.0, f64::max);
    t.qps = sum_f(|r| r.qps);
    t.tps = sum_f(|r| r.tps);
    t.statements_per_sec = sum_f(|r| r.statements_per_sec);
    t.reads = sum_u(|r| r.reads);
    t.writes = sum_u(|r| r.writes);
    t.other = sum_u(|r| r.other);
    t.events = sum_u(|r| r.events);
    t.errors = sum_u(|r| r.errors);
    t.reconnects = sum_u(|r| r.reconnects);
    t.rows = sum_u(|r| r.rows);
    // Latency: the parts' histograms added, bucket by bucket.
    let mut hist: Option<hdrhistogram::Histogram<u64>> = None;
    for (p, r) in of {
        let h = r
            .histogram
            .as_deref()
            .and_then(decode_histogram)
            .ok_or_else(|| PartsError::NoHistogram {
                test: r.test.clone(),
                index: p.index,
            })?;
        match &mut hist {
            None => hist = Some(h),
            Some(m) => m.add(&h).map_err(|e| PartsError::Histogram {
                test: r.test.clone(),
                index: p.index,
                why: format!("{e:?}"),
            })?,
        }
    }
    let hist = hist.expect("at least one part");
    t.latency_us = Latency::from_histogram(&hist);
    t.histogram = encode_histogram(&hist);
    // Per operation kind: counts and rates add up; their latencies were not
    // stored as histograms, so they are left out rather than averaged.
    let mut ops: BTreeMap<String, OpStats> = BTreeMap::new();
    for (_, r) in of {
        for (k, o) in &r.ops {
            let m = ops.entry(k.clone()).or_default();
            m.count += o.count;
            m.per_sec += o.per_sec;
            m.errors += o.errors;
        }
    }
    if !ops.is_empty() {
        t.warnings.push(
            "per-operation latencies are not merged (only the event histogram is stored); their counts and rates are summed".into(),
        );
    }
    t.ops = ops;
    // Per second: the seconds every part has, summed.
    let n = of
        .iter()
        .map(|(_, r)| r.per_second.len())
        .min()
        .unwrap_or(0);
    t.per_second = (0..n)
        .map(|k| {
            let mut s = first.per_second[k].clone();
            s.qps = of.iter().map(|(_, r)| r.per_second[k].qps).sum();
            s.tps = of.iter().map(|(_, r)| r.per_second[k].tps).sum();
            s.errors = of.iter().map(|(_, r)| r.per_second[k].errors).sum();
            s
        })
        .collect();
    // Hardware figures are each client host's: kept per part, not summed.
    t.hw = None;
    t.part_hw = of.iter().map(|(_, r)| r.hw.as_deref().cloned()).collect();
    // Server counters every part saw over overlapping intervals do not add up.
    t.status_delta = Default::default();
    t.warnings = of
        .iter()
        .flat_map(|(p, r)| {
            r.warnings
                .iter()
                .map(move |w| format!("part {}/{}: {w}", p.index, p.count))
        })
        .chain(
            t.warnings
                .iter()
                .filter(|w| !first.warnings.contains(w))
                .cloned(),
        )
        .collect();
    Ok(t)
}
