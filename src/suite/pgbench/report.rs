//! What pgbench adds to reports ([`Section`]): its groups with titles (TPS
//! over all scripts, and each script's TPS), so the generic tables set them
//! against the base with the usual statistics and `rqps compare` gates them;
//! and a part with each script's per-statement latency (as `pgbench -r`)
//! per name, against the base's, with the context a pgbench figure needs
//! (protocol, scale, failures and retries, the balances check).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::check::Change;
use super::params::KEY;
use super::stats::{Detail, ScriptDetail};
use crate::report::export::{Block, TCell, Table};
use crate::report::model::Report;
use crate::report::section::{Data, DataTable, GroupDef, Input, Part, Section, Val};
use crate::results::{RunDoc, Status};

/// The pgbench section of reports.
pub struct PgbenchSection;

/// The one value the suite hands the registry.
pub static SECTION: PgbenchSection = PgbenchSection;

/// One name's context, over its runs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NameContext {
    pub name: String,
    pub runs: usize,
    pub protocol: String,
    pub scale: u32,
    pub failed: u64,
    pub retries: u64,
    /// Runs whose balances check passed, and those checked.
    pub balanced: usize,
    pub checked: usize,
}

/// One command of one script at one client count: its mean latency per
/// name (milliseconds), `None` where the name did not run it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StatementRow {
    pub script: String,
    pub clients: usize,
    pub line: u32,
    pub text: String,
    pub latency_ms: Vec<Option<f64>>,
}

/// One script at one client count: TPS per name.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScriptRow {
    pub script: String,
    pub clients: usize,
    pub weight: u32,
    pub tps: Vec<Option<f64>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PgbenchPart {
    pub base: String,
    pub names: Vec<String>,
    pub context: Vec<NameContext>,
    pub scripts: Vec<ScriptRow>,
    pub statements: Vec<StatementRow>,
}

impl Section for PgbenchSection {
    fn suite(&self) -> &'static str {
        KEY
    }
    fn groups(&self) -> Vec<GroupDef> {
        vec![
            GroupDef {
                key: "pgbench",
                title: "pgbench: transactions per second, all scripts",
            },
            GroupDef {
                key: "pgbench scripts",
                title: "pgbench: transactions per second by script",
            },
            GroupDef {
                key: "pgbench checks",
                title: "pgbench: checks",
            },
        ]
    }
    fn json_key(&self) -> Option<&'static str> {
        Some(KEY)
    }
    fn csv_columns(&self) -> &'static [&'static str] {
        &CSV_COLUMNS
    }
    fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
        build(input.base, input.names, input.runs).map(|p| Arc::new(p) as Arc<dyn Part>)
    }

    fn run_table(&self, doc: &RunDoc, all: bool) -> Option<String> {
        Some(run_table(doc, all))
    }
}

/// Milliseconds from a stored microsecond figure, as pgbench prints them.
fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// The end of a run as a pgbench user reads it: per client count the
/// transactions, failures, TPS and latency in milliseconds; per script its
/// share; the checks; then the hardware cost per transaction.
pub fn run_table(doc: &RunDoc, all: bool) -> String {
    use crate::report::table::{TextTable, hw_table, num};
    let mut out = format!(
        "pgbench on {} {} ({}), {}\n",
        doc.engine.name, doc.engine.version, doc.name, doc.status
    );
    if let Some(l) = &doc.load {
        out.push_str(&format!(
            "initialisation: {} rows in {:.1} s, {:.0} rows/s\n",
            l.rows, l.secs, l.rows_per_sec
        ));
    }
    let shown = |t: &&crate::results::TestResult| {
        (all || t.reported) && t.status != Status::Running && t.suite == KEY
    };
    let mut main = TextTable::new(&[
        "clients",
        "transactions",
        "failed",
        "TPS",
        "latency avg ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "status",
    ]);
    let mut context = None;
    for t in doc
        .tests
        .iter()
        .filter(shown)
        .filter(|t| t.group == "pgbench")
    {
        let d = t.detail::<Detail>(KEY);
        if let Some(d) = &d {
            context = Some(format!(
                "scaling factor {}, query mode {}, maximum number of tries {}",
                d.scale,
                d.protocol.name(),
                d.max_tries
            ));
        }
        main.row(vec![
            t.threads.to_string(),
            t.events.to_string(),
            d.as_ref().map_or(0, |d| d.failed).to_string(),
            num(t.tps),
            ms(t.latency_us.avg),
            ms(t.latency_us.p50),
            ms(t.latency_us.p95),
            ms(t.latency_us.p99),
            ms(t.latency_us.max),
            t.status.to_string(),
        ]);
    }
    if let Some(c) = context {
        out.push_str(&format!("{c}\n"));
    }
    out.push_str(&format!("\npgbench: all scripts\n{}", main.render()));
    let mut scripts = TextTable::new(&[
        "script",
        "clients",
        "weight",
        "transactions",
        "TPS",
        "latency avg ms",
        "failed",
        "retried",
        "status",
    ]);
    let mut any = false;
    for t in doc.tests.iter().filter(shown) {
        let Some(sd) = t.detail::<ScriptDetail>("pgbench_script") else {
            continue;
        };
        any = true;
        scripts.row(vec![
            sd.name.clone(),
            t.threads.to_string(),
            sd.weight.to_string(),
            sd.count.to_string(),
            num(sd.tps),
            format!("{:.3}", sd.latency_ms_avg),
            sd.failed.to_string(),
            sd.retried.to_string(),
            t.status.to_string(),
        ]);
    }
    if any {
        out.push_str(&format!("\npgbench: by script\n{}", scripts.render()));
    }
    // The check is not a reported test (it has no rate), but it is shown.
    for t in doc.tests.iter().filter(|t| {
        t.suite == KEY
            && t.status != Status::Running
            && (t.detail::<Change>("pgbench_balances").is_some() || t.test == "balances")
    }) {
        out.push_str(&format!(
            "\nbalances check: {}{}\n",
            t.status,
            t.reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
    }
    let groups: Vec<(String, String)> = SECTION
        .groups()
        .iter()
        .map(|g| (g.key.to_string(), g.title.to_string()))
        .collect();
    out.push_str(&hw_table(doc, all, &groups));
    out
}

/// The columns only pgbench's CSV records fill.
pub const CSV_COLUMNS: [&str; 6] = [
    "pgbench_script",
    "pgbench_clients",
    "pgbench_line",
    "pgbench_statement",
    "pgbench_latency_ms",
    "pgbench_rel_latency",
];

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per command line: the statement's text and, per name, each run's latency.
type Lines = BTreeMap<u32, (String, Vec<Vec<f64>>)>;
/// A script at a client count: name, clients, weight, per name each run's
/// TPS, and its lines.
type Gathered = (String, usize, u32, Vec<Vec<f64>>, Lines);

fn build(base: &str, names: &[&str], runs: &[RunDoc]) -> Option<PgbenchPart> {
    let mut context = Vec::new();
    // (script, clients) -> per name: TPS of each run, and per line the
    // latencies of each run with the statement's text.
    let mut scripts: Vec<Gathered> = Vec::new();
    let n = names.len();
    for (ni, name) in names.iter().enumerate() {
        let mine: Vec<&RunDoc> = runs
            .iter()
            .filter(|r| r.name == *name && r.suite == KEY)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut ctx = NameContext {
            name: name.to_string(),
            runs: mine.len(),
            protocol: String::new(),
            scale: 0,
            failed: 0,
            retries: 0,
            balanced: 0,
            checked: 0,
        };
        for run in &mine {
            for t in run.tests.iter().filter(|t| t.suite == KEY) {
                if let Some(d) = t.detail::<Detail>(KEY) {
                    ctx.protocol = d.protocol.name().to_string();
                    ctx.scale = d.scale;
                    ctx.failed += d.failed;
                    ctx.retries += d.retries;
                }
                if t.detail::<Change>("pgbench_balances").is_some() || t.test == "balances" {
                    ctx.checked += 1;
                    if t.status == Status::Ok {
                        ctx.balanced += 1;
                    }
                }
                let Some(sd) = t.detail::<ScriptDetail>("pgbench_script") else {
                    continue;
                };
                if t.status != Status::Ok {
                    continue;
                }
                let pos = scripts
                    .iter()
                    .position(|s| s.0 == sd.name && s.1 == t.threads)
                    .unwrap_or_else(|| {
                        scripts.push((
                            sd.name.clone(),
                            t.threads,
                            sd.weight,
                            vec![Vec::new(); n],
                            BTreeMap::new(),
                        ));
                        scripts.len() - 1
                    });
                let entry = &mut scripts[pos];
                entry.3[ni].push(sd.tps);
                for st in &sd.statements {
                    let line = entry
                        .4
                        .entry(st.line)
                        .or_insert_with(|| (st.text.clone(), vec![Vec::new(); n]));
                    if st.count > 0 {
                        line.1[ni].push(st.latency_ms_avg);
                    }
                }
            }
        }
        context.push(ctx);
    }
    if scripts.is_empty() {
        return None;
    }
    let mut script_rows = Vec::new();
    let mut statements = Vec::new();
    for (script, clients, weight, tps, lines) in scripts {
        script_rows.push(ScriptRow {
            script: script.clone(),
            clients,
            weight,
            tps: tps.iter().map(|v| mean(v)).collect(),
        });
        for (line, (text, lat)) in lines {
            statements.push(StatementRow {
                script: script.clone(),
                clients,
                line,
                text,
                latency_ms: lat.iter().map(|v| mean(v)).collect(),
            });
        }
    }
    Some(PgbenchPart {
        base: base.to_string(),
        names: names.iter().map(|s| s.to_string()).collect(),
        context,
        scripts: script_rows,
        statements,
    })
}

fn ratio(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
        _ => None,
    }
}

fn cell(v: Option<f64>, digits: usize, rel: Option<f64>) -> TCell {
    match (v, rel) {
        (Some(v), Some(r)) => format!("{v:.digits$} ({r:.2})").into(),
        (Some(v), None) => format!("{v:.digits$}").into(),
        _ => TCell::from(String::new()),
    }
}

impl Part for PgbenchPart {
    fn title(&self) -> String {
        "pgbench".into()
    }

    fn blocks(&self, _report: &Report, _charts: bool) -> Vec<Block> {
        let base_i = self.names.iter().position(|n| *n == self.base).unwrap_or(0);
        let mut out = vec![
            Block::Heading(2, "pgbench: scripts and statements".into()),
            Block::Para(format!(
                "Per script and client count, transactions per second of each name with its ratio \
to {} in brackets (above 1 is faster); then each statement's mean latency in milliseconds \
(as pgbench -r), with its ratio to {} (above 1 is slower). Means over each name's runs.",
                self.base, self.base
            )),
        ];
        let mut header = vec!["script".to_string(), "clients".into(), "weight".into()];
        header.extend(self.names.iter().map(|n| format!("{n} tps")));
        out.push(Block::Table(Table {
            header,
            rows: self
                .scripts
                .iter()
                .map(|s| {
                    let mut row = vec![
                        TCell::from(s.script.clone()),
                        Val::Int(s.clients as i64).into(),
                        Val::Int(s.weight as i64).into(),
                    ];
                    let b = s.tps.get(base_i).copied().flatten();
                    row.extend(
                        s.tps.iter().enumerate().map(|(i, v)| {
                            cell(*v, 1, if i == base_i { None } else { ratio(*v, b) })
                        }),
                    );
                    row
                })
                .collect(),
            left: 1,
        }));
        let mut header = vec![
            "script".to_string(),
            "clients".into(),
            "line".into(),
            "statement".into(),
        ];
        header.extend(self.names.iter().map(|n| format!("{n} ms")));
        out.push(Block::Table(Table {
            header,
            rows: self
                .statements
                .iter()
                .map(|s| {
                    let mut row = vec![
                        TCell::from(s.script.clone()),
                        Val::Int(s.clients as i64).into(),
                        Val::Int(s.line as i64).into(),
                        TCell::from(s.text.clone()),
                    ];
                    let b = s.latency_ms.get(base_i).copied().flatten();
                    row.extend(
                        s.latency_ms.iter().enumerate().map(|(i, v)| {
                            cell(*v, 3, if i == base_i { None } else { ratio(*v, b) })
                        }),
                    );
                    row
                })
                .collect(),
            left: 4,
        }));
        out.push(Block::Bullets(
            self.context
                .iter()
                .map(|c| {
                    format!(
                        "{}: {} run(s), protocol {}, scale {}, {} failed transaction(s), {} retries{}",
                        c.name,
                        c.runs,
                        c.protocol,
                        c.scale,
                        c.failed,
                        c.retries,
                        if c.checked > 0 {
                            format!(", balances hold in {} of {} checks", c.balanced, c.checked)
                        } else {
                            String::new()
                        }
                    )
                })
                .collect(),
        ));
        out
    }

    fn data(&self, _report: &Report) -> Data {
        let base_i = self.names.iter().position(|n| *n == self.base).unwrap_or(0);
        let mut records = Vec::new();
        for s in &self.statements {
            let b = s.latency_ms.get(base_i).copied().flatten();
            for (i, name) in self.names.iter().enumerate() {
                let Some(ms) = s.latency_ms.get(i).copied().flatten() else {
                    continue;
                };
                records.push(vec![
                    ("target", name.as_str().into()),
                    ("pgbench_script", s.script.as_str().into()),
                    ("pgbench_clients", Val::Int(s.clients as i64)),
                    ("pgbench_line", Val::Int(s.line as i64)),
                    ("pgbench_statement", s.text.as_str().into()),
                    ("pgbench_latency_ms", Val::Fixed(ms, 4)),
                    (
                        "pgbench_rel_latency",
                        Val::fixed(ratio(Some(ms), b), 3, Val::Empty),
                    ),
                ]);
            }
        }
        let mut header: Vec<String> = ["script", "clients", "line", "statement"]
            .map(String::from)
            .to_vec();
        header.extend(self.names.iter().map(|n| format!("{n} ms")));
        let rows = self
            .statements
            .iter()
            .map(|s| {
                let mut row: Vec<Val> = vec![
                    s.script.as_str().into(),
                    Val::Int(s.clients as i64),
                    Val::Int(s.line as i64),
                    s.text.as_str().into(),
                ];
                row.extend(s.latency_ms.iter().map(|v| Val::fixed(*v, 4, Val::Empty)));
                row
            })
            .collect();
        Data {
            records,
            tables: vec![DataTable {
                title: None,
                header,
                rows,
            }],
        }
    }
}
