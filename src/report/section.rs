//! What a suite contributes to a report, so that `report/` names no suite.
//!
//! The contract: the caller (the CLI, through the suite registry) hands
//! [`crate::report::load::Options::sections`] one [`Section`] per suite it
//! knows. A section does two things, both optional:
//!
//! - It tunes the generic tables. Every result of a suite whose section says
//!   [`Section::in_tables`] (and every result of a suite with no section at
//!   all) becomes a row of the test × threads × name tables that every format
//!   renders and `rqps compare` gates. The section may name its report groups
//!   with their titles and order ([`Section::groups`]), the order of its tests
//!   ([`Section::test_positions`]), the label of a row in the reference TSV
//!   ([`Section::tsv_label`]) and the end-of-run table of one of its runs
//!   ([`Section::run_table`]). Without these, groups and tests follow the order
//!   the base stored them in and a group's title is `suite: group`.
//! - It builds a model of its own from the loaded runs ([`Section::build`]):
//!   a [`Part`] stored in the report. A part builds neutral content only:
//!   blocks (headings, notes, tables of cells with their colour, charts) for
//!   term, md and html; typed [`Record`]s and [`DataTable`]s ([`Data`]) for
//!   csv and tsv; and itself, `Serialize`, as the JSON value. It never
//!   formats, quotes or serializes: each exporter renders that content once,
//!   so a new column or format is one change in one exporter. A part also
//!   adds rows to the `rqps compare` gate. Exporters stay behind their one
//!   `Exporter` trait and iterate over the parts.
//!
//! `report/` must not import `crate::suite`: the sections come in from the
//! caller, which is what keeps a new suite a folder and a registry line.
//!
//! The traits live in [`super::model`], beside the report they plug into, so
//! that the model does not depend on a module that depends on it.

pub use super::doc::{Data, DataTable, Record, Val};
pub use super::model::{Built, GroupDef, Input, Part, PartJson, Section};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::GateRow;
    use crate::report::compare::{Gate, Rules};
    use crate::report::export::Block;
    use crate::report::export::{Chart, Format, exporter};
    use crate::report::load::{Options, build};
    use crate::report::model::Report;
    use crate::report::model::Verdict;
    use crate::results::RunDoc;
    use std::sync::Arc;

    /// A suite report/ knows nothing of, with a part of its own.
    struct Probe;
    static PROBE: Probe = Probe;

    #[derive(Debug, serde::Serialize)]
    struct ProbePart {
        value: u32,
        names: Vec<String>,
    }

    impl Section for Probe {
        fn suite(&self) -> &'static str {
            "probe"
        }
        fn in_tables(&self) -> bool {
            false
        }
        fn json_key(&self) -> Option<&'static str> {
            Some("probe")
        }
        fn csv_columns(&self) -> &'static [&'static str] {
            &["probe_value"]
        }
        fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
            let any = input
                .runs
                .iter()
                .any(|r| r.tests.iter().any(|t| t.suite == "probe"));
            any.then(|| {
                Arc::new(ProbePart {
                    value: 42,
                    names: input.names.iter().map(|n| n.to_string()).collect(),
                }) as Arc<dyn Part>
            })
        }
    }

    /// The probe, listed in every report's JSON and CSV like the layout of
    /// the suites that came before plug-ins.
    struct Listed;
    static LISTED: Listed = Listed;

    impl Section for Listed {
        fn suite(&self) -> &'static str {
            PROBE.suite()
        }
        fn in_tables(&self) -> bool {
            false
        }
        fn json_key(&self) -> Option<&'static str> {
            PROBE.json_key()
        }
        fn csv_columns(&self) -> &'static [&'static str] {
            PROBE.csv_columns()
        }
        fn always_listed(&self) -> bool {
            true
        }
    }

    impl Part for ProbePart {
        fn title(&self) -> String {
            "Probe".into()
        }
        fn blocks(&self, _report: &Report, charts: bool) -> Vec<Block> {
            let mut v = vec![Block::Para(format!("probe of {}", self.names.join("+")))];
            if charts {
                v.push(Block::Chart(Chart::Drawn {
                    svg: "<svg id=\"probe\"></svg>".into(),
                    small: true,
                }));
            }
            v
        }
        fn data(&self, _report: &Report) -> Data {
            Data {
                records: vec![vec![("target", "a".into()), ("probe_value", Val::Int(42))]],
                tables: vec![DataTable {
                    title: None,
                    header: vec!["probe".into(), "value".into()],
                    rows: vec![vec!["probe".into(), Val::Num(42.0)]],
                }],
            }
        }
        fn gate(&self, _report: &Report, _threshold: f64, gate: &mut Gate) {
            gate.rows.push(GateRow {
                label: "probe".into(),
                base_qps: 1.0,
                target_qps: 0.5,
                ratio: 0.5,
                ci: None,
                p: None,
                verdict: Verdict::Slower,
                fails: true,
            });
        }
    }

    fn run(name: &str) -> RunDoc {
        serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": name, "name": name, "suite": "probe",
            "status": "ok", "started": name, "command_line": [], "target": "",
            "engine": {"name": "e", "version": "1"}, "params": null,
            "host": {"arch": "x86_64", "cpus": 1, "hostname": "h", "os": "linux"},
            "tests": [{
                "suite": "probe", "test": "p", "group": "g", "threads": 1,
                "reported": true, "status": "ok", "started": "", "secs": 1.0,
                "warmup_secs": 0.0, "qps": 1.0, "qps_unit": "", "tps": 0.0,
                "statements_per_sec": 0.0, "reads": 0, "writes": 0, "other": 0,
                "events": 0, "errors": 0, "reconnects": 0, "rows": 0,
                "latency_us": {"avg": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0},
                "per_second": []
            }]
        }))
        .unwrap()
    }

    #[test]
    fn a_sections_part_reaches_every_format_and_the_gate() {
        let opts = Options {
            base: "a".into(),
            targets: None,
            rules: Rules::default(),
            all: false,
            sections: vec![&PROBE],
            workloads: Vec::new(),
            engines: Default::default(),
            allow_mismatch: false,
        };
        let r = build(&[run("a"), run("b")], &opts).unwrap();
        assert!(r.groups.is_empty(), "the probe keeps out of the tables");
        let out = |f: Format| exporter(f, false).render(&r);
        let term = out(Format::Term);
        assert!(term.starts_with("Probe: b against a\n"), "{term}");
        assert!(
            term.contains("probe of a+b") && !term.contains("<svg"),
            "{term}"
        );
        assert!(out(Format::Md).contains("probe of a+b"));
        assert!(
            out(Format::Html)
                .contains("<div class=\"charts\"><div class=\"chart\"><svg id=\"probe\">")
        );
        // The CSV keeps only the columns some row fills: here the first and
        // the section's own.
        let csv = out(Format::Csv);
        assert_eq!(csv, "target,probe_value\na,42\n");
        assert_eq!(out(Format::Tsv), "probe\tvalue\nprobe\t42\n");
        let json: serde_json::Value = serde_json::from_str(&out(Format::Json)).unwrap();
        assert_eq!(json["probe"]["value"], 42);
        assert_eq!(json["probe"]["names"], serde_json::json!(["a", "b"]));
        let g = crate::report::compare::gate(&r, 0.95);
        assert_eq!(
            g.failures().map(|r| r.label.as_str()).collect::<Vec<_>>(),
            ["probe"]
        );
    }

    #[test]
    fn a_section_that_built_nothing_adds_no_column_and_no_key_unless_always_listed() {
        let mut a = run("a");
        let mut b = run("b");
        for t in a.tests.iter_mut().chain(b.tests.iter_mut()) {
            t.suite = "other".into();
        }
        let report = |sections: Vec<&'static dyn Section>| {
            let opts = Options {
                base: "a".into(),
                targets: None,
                rules: Rules::default(),
                all: false,
                sections,
                workloads: Vec::new(),
                engines: Default::default(),
                allow_mismatch: false,
            };
            build(&[a.clone(), b.clone()], &opts).unwrap()
        };
        let r = report(vec![&PROBE]);
        assert!(r.parts.is_empty());
        assert_eq!(r.groups[0].title, "other: g");
        let json = exporter(Format::Json, false).render(&r);
        assert!(!json.contains("probe"), "{json}");
        let csv = exporter(Format::Csv, false).render(&r);
        assert!(
            !csv.lines().next().unwrap().contains("probe_value"),
            "{csv}"
        );

        // Always listed: the JSON key is there, empty; the CSV column is
        // not, since no row fills it (the CSV keeps only filled columns).
        let r = report(vec![&LISTED]);
        let json = exporter(Format::Json, false).render(&r);
        assert!(json.ends_with("\n  \"probe\": null\n}\n"), "{json}");
        let csv = exporter(Format::Csv, false).render(&r);
        assert!(
            !csv.lines().next().unwrap().contains("probe_value"),
            "{csv}"
        );
    }
}
