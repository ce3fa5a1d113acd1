//! Compatibility records (`rqps compat`): what a reference engine and each
//! target answered to the statements rqps's suites send, kept in the
//! results directory beside the runs, as
//! `<results>/compat/<stamp>-<reference>.json`, so that a report comparing
//! runs of two engines can say which tests did not do the same work.
//!
//! An engine is known by what its runs store ([`EngineInfo`]: the driver's
//! engine name and the version it reports), so a record applies to every
//! run of the same engine and version.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{EngineInfo, StoreError, read_result_file};
use crate::util::{file_safe, now_stamp, write_atomic};

/// The folder of the results directory that holds the records.
pub const DIR: &str = "compat";

/// How far a statement (or a test, or a probe) got on a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// The reference's results and behaviour.
    Semantics,
    /// Parsed and run, with another answer.
    Syntax,
    /// The connection took it, the engine refused it (a syntax error, an
    /// unknown function or type, a feature it lacks).
    Protocol,
    /// Never answered: the connection failed, or the target's worker
    /// stopped before it (an earlier statement failed).
    None,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::Semantics,
        Level::Syntax,
        Level::Protocol,
        Level::None,
    ];

    /// How reports name it.
    pub fn key(self) -> &'static str {
        match self {
            Level::Semantics => "semantics",
            Level::Syntax => "syntax",
            Level::Protocol => "protocol",
            Level::None => "none",
        }
    }

    /// What it means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Level::Semantics => "same answers as the reference",
            Level::Syntax => "accepted, other answers",
            Level::Protocol => "refused by the engine",
            Level::None => "not answered",
        }
    }
}

/// An engine as runs store it, with the name the user gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineId {
    /// The name the record shows (`pg18`, `h2`), the user's or made from
    /// the engine and version.
    pub label: String,
    /// What runs of it store: engine name and version.
    pub engine: EngineInfo,
    /// How it was reached (a throwaway server, a URL), credentials redacted.
    pub target: String,
}

impl EngineId {
    /// Whether a run's engine is this one: the same product and version
    /// (however it logged in).
    pub fn is(&self, e: &EngineInfo) -> bool {
        self.engine.name == e.name && self.engine.version == e.version
    }
}

/// One statement shape's answers compared, over every time a test sent it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatementCompat {
    pub suite: String,
    pub test: String,
    /// The statement as the target's worker prepared it (`?` placeholders).
    pub sql: String,
    pub level: Level,
    /// How many times it was sent, and how many answers matched.
    pub sent: u64,
    pub matched: u64,
}

/// The first place a target's answer is not the reference's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub suite: String,
    pub test: String,
    pub level: Level,
    /// What differs, in one line (`rows differ`, `refused`, `table sbtest1
    /// differs after the test`).
    pub what: String,
    /// The statement with its parameters written in as literals, ready to
    /// paste into the engine's client (empty for a table's checksum).
    pub statement: String,
    pub reference: String,
    pub target: String,
}

/// A test's verdict on one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestCompat {
    pub suite: String,
    pub test: String,
    /// Other stored test names the same statements make.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    pub level: Level,
    /// Statements sent, and how many were at each level.
    pub statements: u64,
    /// Why it is not at [`Level::Semantics`]: the first difference, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the test was not checked: the link to an engine failed (the
    /// connection broke, a reply could not be read), so its `level` says
    /// nothing about the engine. A record with such a test excludes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_checked: Option<String>,
}

impl TestCompat {
    /// Whether a stored result named `test` of `suite` is this test's. A
    /// name in `also` that ends in `*` stands for its stem followed by a
    /// number (LinkBench's request steps `P1`, `P4`, ...).
    pub fn covers(&self, suite: &str, test: &str) -> bool {
        let matches = |pattern: &str| match pattern.strip_suffix('*') {
            Some(stem) => test
                .strip_prefix(stem)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
            None => pattern == test,
        };
        self.suite == suite && (self.test == test || self.also.iter().any(|a| matches(a)))
    }
}

/// One probe outside the suites (a protocol feature, an isolation
/// behaviour, an error class) on one engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// `protocol`, `isolation` or `errors`.
    pub area: String,
    pub name: String,
    /// What the engine did, in a few words.
    pub seen: String,
    /// Whether that is what the reference did (always true for the reference).
    pub same: bool,
    /// The statements that show it, for trying by hand.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub how: String,
    /// Why the probe was not checked: the link to the engine failed in it
    /// (a connection that broke or could not be made), so what it saw says
    /// nothing about the engine and is no level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_checked: Option<String>,
}

/// A suite invariant after a concurrent run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConditionResult {
    pub suite: String,
    pub name: String,
    pub holds: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Whether a suite's results on a target can be set beside upstream's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteVerdict {
    pub suite: String,
    pub comparable: bool,
    /// One line: why not, or what was checked.
    pub reason: String,
}

/// Everything checked on one engine (the reference or a target).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineCompat {
    pub id: EngineId,
    /// Why the engine was not checked at all (it could not be opened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
    pub statements: Vec<StatementCompat>,
    pub tests: Vec<TestCompat>,
    /// The first differences, in the order they were found.
    pub differences: Vec<Difference>,
    pub probes: Vec<ProbeResult>,
    pub conditions: Vec<ConditionResult>,
    pub suites: Vec<SuiteVerdict>,
}

impl EngineCompat {
    /// Statements at each level, in [`Level::ALL`] order.
    pub fn counts(&self) -> [u64; 4] {
        let mut c = [0; 4];
        for s in &self.statements {
            c[Level::ALL.iter().position(|l| *l == s.level).unwrap_or(3)] += 1;
        }
        c
    }

    /// The test of `suite` whose results are stored as `test`, if checked.
    pub fn test(&self, suite: &str, test: &str) -> Option<&TestCompat> {
        self.tests.iter().find(|t| t.covers(suite, test))
    }

    /// The tests the link failed in: not checked, whatever their level.
    pub fn unchecked(&self) -> impl Iterator<Item = &TestCompat> {
        self.tests.iter().filter(|t| t.not_checked.is_some())
    }

    /// The probes the link failed in: not checked, whatever they saw.
    pub fn unchecked_probes(&self) -> impl Iterator<Item = &ProbeResult> {
        self.probes.iter().filter(|p| p.not_checked.is_some())
    }

    /// Whether every test and probe was checked and the engine was not left
    /// out: only then may the record's word leave a test out of a comparison.
    pub fn whole(&self) -> bool {
        self.left_out.is_none()
            && self.unchecked().next().is_none()
            && self.unchecked_probes().next().is_none()
    }
}

/// A suite that took part, and what it loaded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteInfo {
    pub suite: String,
    pub load: String,
    pub tests: usize,
    /// Why it was left out, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

/// One `rqps compat` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompatRecord {
    pub rqps_version: String,
    pub started: String,
    pub finished: String,
    /// The command line, credentials redacted.
    pub command_line: Vec<String>,
    pub seed: u64,
    pub suites: Vec<SuiteInfo>,
    /// The rules answers were compared by, one line each.
    pub rules: Vec<String>,
    pub reference: EngineCompat,
    pub targets: Vec<EngineCompat>,
}

impl CompatRecord {
    /// The engine of the record (reference or target) that is `e`.
    pub fn engine(&self, e: &EngineInfo) -> Option<&EngineCompat> {
        std::iter::once(&self.reference)
            .chain(&self.targets)
            .find(|c| c.id.is(e))
    }
}

impl CompatRecord {
    /// What makes the record unfit to leave anything out, one line per
    /// engine: left out, or tests the link failed in. Empty: it is whole.
    pub fn gaps(&self) -> Vec<String> {
        std::iter::once(&self.reference)
            .chain(&self.targets)
            .flat_map(|e| {
                let mut gaps = Vec::new();
                if let Some(why) = &e.left_out {
                    gaps.push(format!("{} could not be checked: {why}", e.id.label));
                    return gaps;
                }
                let n = e.unchecked().count();
                if n > 0 {
                    gaps.push(format!(
                        "{}: {n} of {} test(s) not checked, the link failed ({})",
                        e.id.label,
                        e.tests.len(),
                        e.unchecked()
                            .next()
                            .and_then(|t| t.not_checked.as_deref())
                            .unwrap_or("")
                    ));
                }
                let n = e.unchecked_probes().count();
                if n > 0 {
                    gaps.push(format!(
                        "{}: {n} of {} probe(s) not checked, the link failed ({})",
                        e.id.label,
                        e.probes.len(),
                        e.unchecked_probes()
                            .next()
                            .and_then(|p| p.not_checked.as_deref())
                            .unwrap_or("")
                    ));
                }
                gaps
            })
            .collect()
    }
}

/// Writes `record` under `<results>/compat/`, returning its path.
pub fn store(results: &Path, record: &CompatRecord) -> Result<PathBuf, StoreError> {
    let dir = results.join(DIR);
    std::fs::create_dir_all(&dir).map_err(|source| StoreError::Write {
        what: "compatibility records directory",
        path: dir.clone(),
        source,
    })?;
    let base = format!("{}-{}", now_stamp(), file_safe(&record.reference.id.label));
    let mut n = 1;
    let path = loop {
        let name = if n == 1 {
            format!("{base}.json")
        } else {
            format!("{base}-{n}.json")
        };
        let p = dir.join(name);
        if !p.exists() || n > 1000 {
            break p;
        }
        n += 1;
    };
    let bytes = serde_json::to_vec_pretty(record).map_err(|source| StoreError::Encode {
        what: "compatibility record",
        source,
    })?;
    write_atomic(&path, &bytes).map_err(|source| StoreError::Write {
        what: "compatibility record",
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Every record under `<results>/compat/`, oldest first, and a warning for
/// each file that could not be read. No folder: none.
pub fn read_all(results: &Path) -> (Vec<CompatRecord>, Vec<String>) {
    let (named, warnings) = read_all_named(results);
    (named.into_iter().map(|(_, r)| r).collect(), warnings)
}

/// [`read_all`], each record with its file (`rqps serve` names them in its pages).
pub fn read_all_named(results: &Path) -> (Vec<(PathBuf, CompatRecord)>, Vec<String>) {
    let dir = results.join(DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for f in files {
        match read_result_file(&f)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<CompatRecord>(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => out.push((f, r)),
            Err(e) => warnings.push(format!(
                "skipped unreadable compatibility record {}: {e}",
                f.display()
            )),
        }
    }
    (out, warnings)
}

/// The newest record that checked both `a` and `b` (one as the reference,
/// or both as targets of one reference), with the two engines' sides. A
/// record that left either out, or could not check a test on either (the
/// link failed), is passed over: its word is not whole.
pub fn covering<'a>(
    records: &'a [CompatRecord],
    a: &EngineInfo,
    b: &EngineInfo,
) -> Option<(&'a CompatRecord, &'a EngineCompat, &'a EngineCompat)> {
    records.iter().rev().find_map(|r| {
        let (x, y) = (r.engine(a)?, r.engine(b)?);
        (x.whole() && y.whole()).then_some((r, x, y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(label: &str, name: &str, version: &str) -> EngineCompat {
        EngineCompat {
            id: EngineId {
                label: label.into(),
                engine: EngineInfo {
                    name: name.into(),
                    version: version.into(),
                    auth: None,
                },
                target: String::new(),
            },
            left_out: None,
            statements: Vec::new(),
            tests: Vec::new(),
            differences: Vec::new(),
            probes: Vec::new(),
            conditions: Vec::new(),
            suites: Vec::new(),
        }
    }

    fn record(reference: EngineCompat, targets: Vec<EngineCompat>) -> CompatRecord {
        CompatRecord {
            rqps_version: "0".into(),
            started: "s".into(),
            finished: "f".into(),
            command_line: Vec::new(),
            seed: 1,
            suites: Vec::new(),
            rules: Vec::new(),
            reference,
            targets,
        }
    }

    #[test]
    fn a_record_is_stored_and_read_back_and_found_by_either_engine() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = engine("h2", "postgres", "8.2.23");
        t.tests.push(TestCompat {
            suite: "s".into(),
            test: "a".into(),
            also: vec!["a.pre".into()],
            level: Level::Syntax,
            statements: 3,
            reason: Some("rows differ".into()),
            not_checked: None,
        });
        let r = record(engine("pg18", "postgres", "18.6"), vec![t]);
        let p = store(dir.path(), &r).unwrap();
        assert!(p.starts_with(dir.path().join(DIR)));
        std::fs::write(dir.path().join(DIR).join("zz-bad.json"), "{").unwrap();
        let (read, warnings) = read_all(dir.path());
        assert_eq!(read, vec![r]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let pg = EngineInfo {
            name: "postgres".into(),
            version: "18.6".into(),
            auth: None,
        };
        let h2 = EngineInfo {
            name: "postgres".into(),
            version: "8.2.23".into(),
            auth: None,
        };
        let (_, a, b) = covering(&read, &h2, &pg).unwrap();
        assert_eq!((a.id.label.as_str(), b.id.label.as_str()), ("h2", "pg18"));
        assert!(a.test("s", "a.pre").is_some() && a.test("s", "b").is_none());
        let star = TestCompat {
            also: vec!["P*".into()],
            ..a.tests[0].clone()
        };
        assert!(star.covers("s", "P16") && !star.covers("s", "P") && !star.covers("s", "Px"));
        let other = EngineInfo {
            name: "postgres".into(),
            version: "16.1".into(),
            auth: None,
        };
        assert!(covering(&read, &pg, &other).is_none());
        assert!(read_all(&dir.path().join("none")).0.is_empty());
        // A test the link failed in: the record covers nothing and says why.
        let mut broken = read[0].clone();
        broken.targets[0].tests[0].not_checked = Some("the connection broke".into());
        assert!(covering(std::slice::from_ref(&broken), &h2, &pg).is_none());
        assert_eq!(
            broken.gaps(),
            ["h2: 1 of 1 test(s) not checked, the link failed (the connection broke)"]
        );
        assert!(read[0].gaps().is_empty());
    }

    #[test]
    fn counts_are_by_level() {
        let mut e = engine("x", "postgres", "1");
        for level in [Level::Semantics, Level::Semantics, Level::Protocol] {
            e.statements.push(StatementCompat {
                suite: "s".into(),
                test: "t".into(),
                sql: "SELECT 1".into(),
                level,
                sent: 1,
                matched: 1,
            });
        }
        assert_eq!(e.counts(), [2, 0, 1, 0]);
    }
}
