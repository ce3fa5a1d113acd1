//! What TPC-C adds to reports ([`Section`]): its two groups (tpmC, and each
//! transaction's rate) with titles, so the generic tables set tpmC and every
//! transaction against the base with the usual marks and `rqps compare`
//! gates them; and a part with the context a TPC-C figure needs to be fair:
//! per name the isolation level in effect, keying, warehouses, terminals,
//! efficiency, whether the consistency check passed, the engine's
//! durability and buffer settings, and per transaction its retries, errors,
//! rollbacks and response times.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::check;
use super::detail::{Detail, KEY};
use super::draw::KINDS;
use crate::report::export::{Block, TCell, Table};
use crate::report::model::Report;
use crate::report::section::{Data, DataTable, GroupDef, Input, Part, Section, Val};
use crate::results::{RunDoc, Status};

/// The TPC-C section of reports.
pub struct TpccSection;

/// The one value the suite hands the registry.
pub static SECTION: TpccSection = TpccSection;

/// One name's context and figures, pooled over its repeats.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NameContext {
    pub name: String,
    pub engine: String,
    pub runs: usize,
    pub warehouses: BTreeSet<u32>,
    pub terminals: BTreeSet<usize>,
    pub keying: BTreeSet<bool>,
    /// The isolation levels in effect, as the engine names them.
    pub isolation: BTreeSet<String>,
    /// Mean over the repeats.
    pub tpmc: f64,
    pub efficiency_pct: f64,
    /// Repeats whose consistency check passed, and those checked.
    pub consistent: usize,
    pub checked: usize,
    /// The first violation found, if any.
    pub violation: Option<String>,
    /// The engine's fairness settings (its kind's `fairness_settings`) the
    /// latest run recorded.
    pub settings: BTreeMap<String, String>,
    /// Per transaction: summed counts, mean response times.
    pub kinds: BTreeMap<String, KindSum>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct KindSum {
    pub count: u64,
    pub per_sec: f64,
    pub retries: u64,
    pub errors: u64,
    pub rollbacks: u64,
    pub p90_ms: f64,
    pub p99_ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TpccPart {
    pub names: Vec<NameContext>,
}

impl Section for TpccSection {
    fn suite(&self) -> &'static str {
        KEY
    }

    fn groups(&self) -> Vec<GroupDef> {
        vec![
            GroupDef {
                key: "tpcc",
                title: "TPC-C: tpmC (New-Orders per minute)",
            },
            GroupDef {
                key: "tpcc transactions",
                title: "TPC-C: transactions per second by type",
            },
        ]
    }

    fn test_positions(&self, _base_runs: &[&RunDoc]) -> Option<HashMap<String, usize>> {
        let mut pos: HashMap<String, usize> = KINDS
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), i + 1))
            .collect();
        pos.insert("tpmC".into(), 0);
        Some(pos)
    }

    fn json_key(&self) -> Option<&'static str> {
        Some("tpcc")
    }

    fn csv_columns(&self) -> &'static [&'static str] {
        &[
            "tpcc_isolation",
            "tpcc_keying",
            "tpcc_warehouses",
            "tpcc_efficiency_pct",
            "tpcc_consistent",
            "tpcc_settings",
        ]
    }

    fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
        let names: Vec<NameContext> = input
            .names
            .iter()
            .filter_map(|n| context(n, input.runs))
            .collect();
        (!names.is_empty()).then(|| Arc::new(TpccPart { names }) as Arc<dyn Part>)
    }
}

/// The context of `name` from its TPC-C runs; `None` when it has none.
pub fn context(name: &str, runs: &[RunDoc]) -> Option<NameContext> {
    let runs: Vec<&RunDoc> = runs
        .iter()
        .filter(|r| r.name == name && r.suite == KEY)
        .collect();
    let last = runs.last()?;
    let mut c = NameContext {
        name: name.to_string(),
        engine: format!("{} {}", last.engine.name, last.engine.version),
        runs: runs.len(),
        warehouses: BTreeSet::new(),
        terminals: BTreeSet::new(),
        keying: BTreeSet::new(),
        isolation: BTreeSet::new(),
        tpmc: 0.0,
        efficiency_pct: 0.0,
        consistent: 0,
        checked: 0,
        violation: None,
        settings: crate::engine::registry::fairness_settings(&last.engine.name)
            .iter()
            .filter_map(|k| Some((k.to_string(), last.settings.get(*k)?.clone())))
            .collect(),
        kinds: BTreeMap::new(),
    };
    let mut measured = 0usize;
    for r in &runs {
        for t in &r.tests {
            if t.test == "consistency" && t.status != Status::Running {
                c.checked += 1;
                if t.status == Status::Ok {
                    c.consistent += 1;
                } else if c.violation.is_none() {
                    c.violation = t.reason.clone().or_else(|| {
                        t.detail::<check::Report>("tpcc_consistency")
                            .and_then(|rep| rep.first_violation())
                    });
                }
            }
            let Some(d) = t.detail::<Detail>("tpcc") else {
                continue;
            };
            if t.status != Status::Ok {
                continue;
            }
            measured += 1;
            c.warehouses.insert(d.warehouses);
            c.terminals.insert(d.terminals);
            c.keying.insert(d.keying);
            c.isolation.insert(d.isolation.clone());
            c.tpmc += d.tpmc;
            c.efficiency_pct += d.efficiency_pct;
            for (k, v) in &d.kinds {
                let s = c.kinds.entry(k.clone()).or_default();
                s.count += v.count;
                s.per_sec += v.per_sec;
                s.retries += v.retries;
                s.errors += v.errors;
                s.rollbacks += v.rollbacks;
                s.p90_ms += v.latency_ms.get("p90").copied().unwrap_or(0.0);
                s.p99_ms += v.latency_ms.get("p99").copied().unwrap_or(0.0);
            }
        }
    }
    if measured > 0 {
        let n = measured as f64;
        c.tpmc /= n;
        c.efficiency_pct /= n;
        for s in c.kinds.values_mut() {
            s.per_sec /= n;
            s.p90_ms /= n;
            s.p99_ms /= n;
        }
    }
    Some(c)
}

/// `on`, `off`, or both where repeats differ.
fn keying_text(v: &BTreeSet<bool>) -> String {
    v.iter()
        .map(|k| if *k { "on" } else { "off" })
        .collect::<Vec<_>>()
        .join(", ")
}

fn join<T: ToString>(v: &BTreeSet<T>) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

impl NameContext {
    fn consistency(&self) -> String {
        if self.checked == 0 {
            "not checked".into()
        } else if self.consistent == self.checked {
            format!("ok ({}/{})", self.consistent, self.checked)
        } else {
            format!("FAILED ({}/{} ok)", self.consistent, self.checked)
        }
    }
    fn settings_text(&self) -> String {
        self.settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl TpccPart {
    /// Each name's context: one record (CSV) and one row of the `tpcc context` table (TSV).
    fn context_data(&self) -> Data {
        let records = self
            .names
            .iter()
            .map(|c| {
                vec![
                    ("target", c.name.as_str().into()),
                    ("suite", KEY.into()),
                    ("test", "context".into()),
                    ("tpcc_isolation", join(&c.isolation).into()),
                    ("tpcc_keying", join(&c.keying).into()),
                    ("tpcc_warehouses", join(&c.warehouses).into()),
                    ("tpcc_efficiency_pct", Val::Fixed(c.efficiency_pct, 3)),
                    (
                        "tpcc_consistent",
                        format!("{}/{}", c.consistent, c.checked).into(),
                    ),
                    ("tpcc_settings", c.settings_text().into()),
                ]
            })
            .collect();
        let rows = self
            .names
            .iter()
            .map(|c| {
                vec![
                    c.name.as_str().into(),
                    join(&c.isolation).into(),
                    join(&c.keying).into(),
                    join(&c.warehouses).into(),
                    format!("{}/{}", c.consistent, c.checked).into(),
                    Val::Fixed(c.tpmc, 1),
                    Val::Fixed(c.efficiency_pct, 1),
                    c.settings_text().into(),
                ]
            })
            .collect();
        Data {
            records,
            tables: vec![DataTable {
                title: Some("tpcc context".into()),
                header: [
                    "name",
                    "isolation",
                    "keying",
                    "warehouses",
                    "consistent",
                    "tpmC",
                    "efficiency_pct",
                    "settings",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            }],
        }
    }
}

impl Part for TpccPart {
    fn title(&self) -> String {
        "TPC-C".into()
    }

    fn answer(&self, _report: &Report) -> Vec<Block> {
        // Efficiency (tpmC against the 12.86 per warehouse that keying and
        // think times allow) says something only when they are on.
        let keyed = self.names.iter().any(|c| c.keying.contains(&true));
        let mut header = vec![
            "name",
            "engine",
            "runs",
            "warehouses",
            "terminals",
            "keying",
            "isolation",
            "consistency",
            "tpmC",
        ];
        if keyed {
            header.push("efficiency %");
        }
        let mut out = vec![Block::Heading(
            2,
            "TPC-C context (what makes tpmC comparable)".into(),
        )];
        out.push(Block::Table(Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: self
                .names
                .iter()
                .map(|c| {
                    let mut row = vec![
                        TCell::from(c.name.as_str()),
                        c.engine.as_str().into(),
                        Val::Int(c.runs as i64).into(),
                        join(&c.warehouses).into(),
                        join(&c.terminals).into(),
                        keying_text(&c.keying).into(),
                        join(&c.isolation).into(),
                        c.consistency().into(),
                        Val::Fixed(c.tpmc, 0).into(),
                    ];
                    if keyed {
                        row.push(Val::Fixed(c.efficiency_pct, 1).into());
                    }
                    row
                })
                .collect(),
            left: 8,
        }));
        let mut bullets: Vec<String> = self
            .names
            .iter()
            .map(|c| {
                let s = c.settings_text();
                format!(
                    "{}: {}",
                    c.name,
                    if s.is_empty() {
                        "no durability or buffer settings recorded".into()
                    } else {
                        s
                    }
                )
            })
            .collect();
        bullets.extend(
            self.names
                .iter()
                .filter_map(|c| Some(format!("{}: {}", c.name, c.violation.as_ref()?))),
        );
        out.push(Block::Para(if keyed {
            "Durability and buffer settings; efficiency = tpmC / (12.86 x warehouses), the rate keying and think times allow:".into()
        } else {
            "Durability and buffer settings. Keying and think times are off (--keying turns them on), so tpmC is the engine's rate, not a rate per warehouse that TPC-C would allow:".into()
        }));
        out.push(Block::Bullets(bullets));
        out
    }

    fn blocks(&self, _report: &Report, _charts: bool) -> Vec<Block> {
        let mut out = Vec::new();
        out.push(Block::Heading(
            3,
            "TPC-C transactions (retries: serialization failures and deadlocks run again; rollbacks: the 1 % of New-Orders that roll back on purpose)".into(),
        ));
        let mut rows = Vec::new();
        for c in &self.names {
            for k in KINDS {
                let Some(s) = c.kinds.get(k) else { continue };
                rows.push(vec![
                    TCell::from(c.name.as_str()),
                    k.into(),
                    Val::Int(s.count as i64).into(),
                    Val::Fixed(s.per_sec, 1).into(),
                    Val::Int(s.retries as i64).into(),
                    Val::Int(s.errors as i64).into(),
                    Val::Int(s.rollbacks as i64).into(),
                    Val::Fixed(s.p90_ms, 2).into(),
                    Val::Fixed(s.p99_ms, 2).into(),
                ]);
            }
        }
        out.push(Block::Table(Table {
            header: [
                "name",
                "transaction",
                "count",
                "tx/s",
                "retries",
                "errors",
                "rollbacks",
                "p90 ms",
                "p99 ms",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
            left: 2,
        }));
        out
    }

    fn data(&self, _report: &Report) -> Data {
        self.context_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, tpmc: f64, isolation: &str, consistent: bool) -> RunDoc {
        let detail = serde_json::json!({
            "tpmc": tpmc, "tpm_total": tpmc * 2.0, "efficiency_pct": tpmc / 12.86 * 100.0,
            "warehouses": 1, "terminals": 2, "isolation": isolation, "keying": false,
            "kinds": {"new-order": {"count": 10, "per_sec": 1.0, "share_pct": 45.0,
                "retries": 2, "errors": 0, "rollbacks": 1,
                "latency_ms": {"p50": 1.0, "p90": 2.0, "p95": 3.0, "p99": 4.0, "p99.9": 5.0, "max": 6.0}}},
            "hw_per_new_order": {}
        });
        let test = |name: &str, status: &str, extra: serde_json::Value| {
            let mut t = serde_json::json!({
                "suite": "tpcc", "test": name, "group": "tpcc", "threads": 2,
                "reported": true, "status": status, "started": "", "secs": 1.0,
                "warmup_secs": 0.0, "qps": tpmc, "qps_unit": "tpmC", "tps": 0.0,
                "statements_per_sec": 0.0, "reads": 0, "writes": 0, "other": 0,
                "events": 0, "errors": 0, "reconnects": 0, "rows": 0,
                "latency_us": {"avg": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0},
                "per_second": []
            });
            for (k, v) in extra.as_object().unwrap() {
                t[k] = v.clone();
            }
            t
        };
        serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": format!("{name}{tpmc}"), "name": name, "suite": "tpcc",
            "status": "ok", "started": "", "command_line": [], "target": "",
            "engine": {"name": "mysql", "version": "10.11"}, "params": null,
            "settings": {"innodb_flush_log_at_trx_commit": "1", "max_connections": "151"},
            "host": {"arch": "x86_64", "cpus": 1, "hostname": "h", "os": "linux"},
            "tests": [
                test("tpmC", "ok", serde_json::json!({"tpcc": detail})),
                test("consistency", if consistent { "ok" } else { "failed" },
                    serde_json::json!({"reason": "consistency condition 2 (x) fails for warehouse 1 district 3"})),
            ]
        }))
        .unwrap()
    }

    #[test]
    fn context_pools_repeats_and_keeps_the_fairness_settings() {
        let runs = [
            run("a", 100.0, "REPEATABLE-READ", true),
            run("a", 300.0, "READ-COMMITTED", true),
            run("b", 50.0, "SERIALIZABLE", false),
        ];
        let a = context("a", &runs).unwrap();
        assert_eq!(a.runs, 2);
        assert!((a.tpmc - 200.0).abs() < 1e-9);
        assert_eq!(a.isolation.len(), 2);
        assert_eq!(a.consistency(), "ok (2/2)");
        assert_eq!(a.settings_text(), "innodb_flush_log_at_trx_commit=1");
        let no = &a.kinds["new-order"];
        assert_eq!((no.count, no.retries, no.rollbacks), (20, 4, 2));
        assert!((no.p90_ms - 2.0).abs() < 1e-9);
        let b = context("b", &runs).unwrap();
        assert_eq!(b.consistency(), "FAILED (0/1 ok)");
        assert!(b.violation.as_deref().unwrap().contains("condition 2"));
        assert!(context("c", &runs).is_none());
        let part = TpccPart { names: vec![a, b] };
        let tsv: Vec<String> = part.context_data().tables[0].rows[0]
            .iter()
            .map(|v| v.text("NA"))
            .collect();
        let tsv = tsv.join("\t");
        assert!(
            tsv.contains("a\tREAD-COMMITTED, REPEATABLE-READ\tfalse\t1\t2/2\t200.0"),
            "{tsv}"
        );
        let json: serde_json::Value = serde_json::to_value(&part).unwrap();
        assert_eq!(json["names"][1]["name"], "b");
    }
}
