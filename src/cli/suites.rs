//! Which suite `rqps run` executes, with its parameters: the options of the
//! other suite are refused rather than silently ignored.

use super::{CliError, RunArgs};
use crate::engine::PsMode;
use crate::plan::{IbenchParams, SysbenchParams, ibench_profile};
use crate::suite::sysbench::catalog::TestDef;

/// A suite's parameters, checked, and its steps.
pub enum Plan {
    Sysbench {
        p: SysbenchParams,
        steps: Vec<TestDef>,
    },
    Ibench(IbenchParams),
}

impl Plan {
    pub fn from_args(a: &RunArgs) -> Result<Plan, CliError> {
        let ibench = a.suite == "ibench";
        let (this, other) = if ibench {
            (sysbench_only(a), "sysbench")
        } else {
            (ibench_only(a), "ibench")
        };
        if !this.is_empty() {
            return Err(CliError::Usage(format!(
                "{} appl{} only to --suite {other}",
                this.join(", "),
                if this.len() > 1 { "y" } else { "ies" }
            )));
        }
        if ibench {
            let p = ibench_params(a)?;
            p.steps().map_err(CliError::Usage)?;
            Ok(Plan::Ibench(p))
        } else {
            let p = super::run::params(a)?;
            let steps = p.steps().map_err(CliError::Usage)?;
            Ok(Plan::Sysbench { p, steps })
        }
    }

    pub fn profile(&self) -> &str {
        match self {
            Plan::Sysbench { p, .. } => &p.profile,
            Plan::Ibench(p) => &p.profile,
        }
    }

    pub fn params_json(&self) -> serde_json::Value {
        match self {
            Plan::Sysbench { p, .. } => serde_json::to_value(p),
            Plan::Ibench(p) => serde_json::to_value(p),
        }
        .unwrap_or_default()
    }

    pub fn step_count(&self) -> usize {
        match self {
            Plan::Sysbench { steps, .. } => steps.len(),
            Plan::Ibench(p) => p.steps().map(|s| s.len()).unwrap_or(0),
        }
    }

    /// Estimated seconds (ibench: the query and settle steps; loads depend on the engine).
    pub fn estimate_secs(&self) -> f64 {
        match self {
            Plan::Sysbench { p, steps } => p.estimate_secs(steps),
            Plan::Ibench(p) => p.estimate_secs(),
        }
    }
}

fn given(names: &[(&'static str, bool)]) -> Vec<&'static str> {
    names.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect()
}

fn sysbench_only(a: &RunArgs) -> Vec<&'static str> {
    given(&[
        ("--list", a.list.is_some()),
        ("--tests", a.tests.is_some()),
        ("--threads", a.threads.is_some()),
        ("--tables", a.tables.is_some()),
        ("--table-size", a.table_size.is_some()),
        ("--read-secs", a.read_secs.is_some()),
        ("--write-secs", a.write_secs.is_some()),
        ("--warmup-secs", a.warmup_secs.is_some()),
        ("--warm-secs", a.warm_secs.is_some()),
        ("--rand-type", a.rand_type.is_some()),
        ("--skip-prepare", a.skip_prepare),
    ])
}

fn ibench_only(a: &RunArgs) -> Vec<&'static str> {
    given(&[
        ("--clients", a.clients.is_some()),
        ("--rows-per-client", a.rows_per_client.is_some()),
        ("--writes", a.writes.is_some()),
        ("--query-secs", a.query_secs.is_some()),
        ("--rates", a.rates.is_some()),
    ])
}

/// The ibench profile with every option given on the command line applied.
pub fn ibench_params(a: &RunArgs) -> Result<IbenchParams, CliError> {
    let mut p = ibench_profile(&a.profile)
        .ok_or_else(|| CliError::Usage(format!("unknown profile '{}'", a.profile)))?;
    if let Some(v) = a.clients {
        p.clients = v;
    }
    if let Some(v) = a.rows_per_client {
        p.rows_per_client = v;
    }
    if let Some(v) = a.writes {
        p.writes_per_client = v;
    }
    if let Some(v) = a.query_secs {
        p.query_secs = v;
    }
    if let Some(v) = &a.rates {
        p.rates = v.clone();
    }
    if let Some(v) = a.settle_secs {
        p.settle_secs = v;
    }
    if let Some(m) = &a.ps_mode {
        p.ps_mode = if m == "disable" {
            PsMode::Disable
        } else {
            PsMode::Auto
        };
    }
    p.seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    Ok(p)
}
