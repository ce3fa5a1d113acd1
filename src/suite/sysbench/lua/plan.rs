//! A checked script run, as stored with the results.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::options::OptValue;
use super::sql;
use crate::engine::PsMode;
use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};

/// Where sysbench keeps its bundled scripts (`require("oltp_common")`).
pub const SYSBENCH_DIR: &str = "/usr/share/sysbench";
/// The sysbench version whose Lua API rqps follows.
pub const VERSION: &str = "1.0.20";

/// A checked script run, as stored with the results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScriptPlan {
    pub path: String,
    /// The script's text, read once when planned.
    #[serde(skip)]
    pub text: String,
    /// Its command line after `--`, as given.
    pub args: Vec<String>,
    pub commands: Vec<String>,
    /// `sysbench.opt`: sysbench's own options rqps takes, then the script's.
    pub options: Vec<(String, OptValue)>,
    /// Whether the script declares its options (else they are also globals).
    pub declares: bool,
    pub threads: Vec<usize>,
    /// Seconds each `run` step is measured (0: no time limit, `--events`
    /// alone bounds it).
    pub secs: f64,
    /// `--events`: each `run` step ends at this many events, all threads
    /// together, or at `secs`, whichever comes first (`None`: `secs` alone).
    #[serde(default)]
    pub events: Option<u64>,
    pub warmup_secs: f64,
    /// `--rand-type`: a script's default is sysbench's `special`.
    pub rand_type: SbRandType,
    /// `--rand-spec-*`, `--rand-pareto-h`, `--rand-zipfian-exp` (absent
    /// from plans stored before them: sysbench's defaults).
    #[serde(default)]
    pub rand: SbRandParams,
    /// `--rand-seed`: worker thread i draws sysbench's i-th stream of it.
    #[serde(default)]
    pub rand_seed: u32,
    pub seed: u64,
    /// `--percentile`: 0 turns off sysbench's histogram, and its draw after
    /// each event.
    #[serde(default = "sysbench_percentile")]
    pub percentile: u32,
    pub ps_mode: PsMode,
    /// `--script-memory`: the most each Lua state may hold, MiB (0: no bound).
    #[serde(default = "default_memory_mib")]
    pub memory_mib: u64,
    /// `--sysbench-report`: sysbench's closing report after each test,
    /// beside rqps's line (how the run is shown, not what it is).
    #[serde(skip)]
    pub sysbench_report: bool,
}

/// The default of `--script-memory`, MiB per Lua state.
pub const DEFAULT_MEMORY_MIB: u64 = 256;

fn default_memory_mib() -> u64 {
    DEFAULT_MEMORY_MIB
}

/// The least time rqps gives a script's start-up (its top level,
/// `thread_init`) and its calls outside `event()`.
pub const MIN_BOUND: Duration = Duration::from_secs(5);
/// The start-up bound of a run with no time limit: sysbench's own
/// thread-initialization timeout.
const UNTIMED_BOUND: Duration = Duration::from_secs(30);
/// The most an event may run past the test's end before rqps stops it.
const MAX_EVENT_GRACE: Duration = Duration::from_secs(60);

/// The modules `code` requires by a literal name (`require("x")`,
/// `require 'x'`).
fn required(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("require") {
        rest = &rest[i + "require".len()..];
        let t = rest.trim_start().trim_start_matches('(').trim_start();
        let Some(q) = t.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        if let Some(end) = t[1..].find(q) {
            out.push(t[1..1 + end].to_string());
        }
    }
    out
}

/// sysbench's default `--percentile`.
fn sysbench_percentile() -> u32 {
    95
}

impl ScriptPlan {
    /// `sysbench.opt` for a step of `threads` threads.
    pub fn opt_for(&self, threads: usize) -> Vec<(String, OptValue)> {
        let mut o = self.options.clone();
        for (n, v) in &mut o {
            if n == "threads" {
                *v = OptValue::Num(threads as f64);
            }
        }
        o
    }

    /// The distribution of `sysbench.rand.default` with its parameters.
    pub fn dist(&self) -> SbDist {
        SbDist::new(self.rand_type, self.rand)
            .unwrap_or_else(|_| SbDist::sysbench_default().with_kind(self.rand_type))
    }

    /// How long a script's top level, a `thread_init` or any call outside
    /// `event()` may take: the test's warm-up and time, at least
    /// [`MIN_BOUND`]; sysbench's 30 s without a time limit.
    pub fn startup_bound(&self) -> Duration {
        let t = self.secs + self.warmup_secs.max(0.0);
        if self.secs > 0.0 && t.is_finite() {
            Duration::from_secs_f64(t.min(86_400.0)).max(MIN_BOUND)
        } else {
            UNTIMED_BOUND
        }
    }

    /// How long an event may run past the test's end before the watchdog
    /// stops it: the test's time, at least [`MIN_BOUND`] and at most a
    /// minute.
    pub fn event_grace(&self) -> Duration {
        Duration::from_secs_f64(self.secs.clamp(0.0, 86_400.0)).clamp(MIN_BOUND, MAX_EVENT_GRACE)
    }

    /// The memory bound of each Lua state, bytes (0: none).
    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
    }

    /// The number value of option `name` of `sysbench.opt`.
    pub fn num(&self, name: &str) -> Option<f64> {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.num())
    }

    /// `--report-interval`, seconds (0: none).
    pub fn report_interval(&self) -> f64 {
        self.num("report_interval").unwrap_or(0.0).max(0.0)
    }

    /// `--verbosity` (sysbench's 0 to 5; 3, its default, shows its reports).
    pub fn verbosity(&self) -> u32 {
        self.num("verbosity").unwrap_or(3.0).clamp(0.0, 5.0) as u32
    }

    /// `--histogram`: sysbench's latency histogram after each test.
    pub fn histogram(&self) -> bool {
        self.options
            .iter()
            .any(|(n, v)| n == "histogram" && *v == OptValue::Bool(true))
    }

    /// Whether the script reaches a database: it (or a module it
    /// requires from its folder, the current one or sysbench's) names
    /// `sysbench.sql` or a legacy `db_*` function outside a comment.
    pub fn needs_database(&self) -> bool {
        let dir = std::path::Path::new(&self.path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
            .to_path_buf();
        let mut seen = std::collections::BTreeSet::new();
        let mut texts = vec![self.text.clone()];
        while let Some(text) = texts.pop() {
            let code: String = text
                .lines()
                .map(|l| l.split("--").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            if ["sysbench.sql", "sql.driver", "db_connect", "db_query"]
                .iter()
                .any(|w| code.contains(w))
            {
                return true;
            }
            for name in required(&code) {
                let file = format!("{}.lua", name.replace('.', "/"));
                let found = [dir.clone(), ".".into(), SYSBENCH_DIR.into()]
                    .into_iter()
                    .map(|d| d.join(&file))
                    .find(|p| p.is_file());
                if let Some(p) = found
                    && seen.len() < 64
                    && seen.insert(p.clone())
                    && let Ok(t) = std::fs::read_to_string(&p)
                {
                    texts.push(t);
                }
            }
        }
        false
    }

    /// Most threads any step runs.
    pub fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }

    /// A plan of `text` as a script of its own (unit tests).
    #[cfg(test)]
    pub fn for_tests(text: &str) -> ScriptPlan {
        ScriptPlan {
            path: "test.lua".into(),
            text: text.into(),
            args: Vec::new(),
            commands: vec!["run".into()],
            options: Vec::new(),
            declares: false,
            threads: vec![1],
            secs: 1.0,
            events: None,
            warmup_secs: 0.0,
            rand_type: SbRandType::Special,
            rand: SbRandParams::default(),
            rand_seed: 7,
            seed: 7,
            percentile: 95,
            ps_mode: PsMode::Auto,
            memory_mib: DEFAULT_MEMORY_MIB,
            sysbench_report: false,
        }
    }

    pub fn ignore(&self) -> sql::Ignore {
        let list = self
            .options
            .iter()
            .find(|(n, _)| n == "mysql_ignore_errors")
            .map(|(_, v)| v.text())
            .unwrap_or_else(|| sql::DEFAULT_IGNORE.into());
        sql::Ignore::parse(&list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_needs_a_database_when_it_or_a_module_it_requires_names_sysbench_sql() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("mylib.lua");
        std::fs::write(
            &lib,
            "function connect() return sysbench.sql.driver():connect() end\n",
        )
        .unwrap();
        let mut p = ScriptPlan::for_tests("function event() end\n");
        p.path = dir.path().join("s.lua").display().to_string();
        assert!(!p.needs_database());
        p.text = "-- sysbench.sql in a comment\nfunction event() end\n".into();
        assert!(!p.needs_database());
        p.text = "require('mylib')\nfunction event() connect() end\n".into();
        assert!(p.needs_database());
        p.text = "require 'nowhere'\nfunction event() db_query('SELECT 1') end\n".into();
        assert!(p.needs_database());
    }

    #[test]
    fn the_bounds_follow_the_test_s_time() {
        let mut p = ScriptPlan::for_tests("");
        p.secs = 1.0;
        assert_eq!(p.startup_bound(), MIN_BOUND);
        assert_eq!(p.event_grace(), MIN_BOUND);
        p.secs = 30.0;
        p.warmup_secs = 5.0;
        assert_eq!(p.startup_bound(), Duration::from_secs(35));
        assert_eq!(p.event_grace(), Duration::from_secs(30));
        p.secs = 600.0;
        assert_eq!(p.event_grace(), Duration::from_secs(60));
        p.secs = 0.0;
        assert_eq!(p.startup_bound(), Duration::from_secs(30));
    }
}
