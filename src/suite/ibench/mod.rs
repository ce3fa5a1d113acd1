//! The Insert Benchmark (reference §4): one table per client that behaves
//! as a queue (inserts at the right edge of the primary key, deletes of the
//! oldest rows at the same rate), three secondary indexes to maintain, and
//! query steps under a rate-limited background write load.
//!
//! `rows` makes the values, `limiter` paces the writers, `rt` keeps the
//! response times, `step` runs one
//! step with its connections, and `steps` says which steps a run has.

use crate::error::usage;

pub mod compat;
pub mod limiter;
pub mod params;
pub mod report;
pub mod report_export;
pub mod results;
pub mod rows;
pub mod rt;
pub mod run;
pub mod schema;
pub mod step;

use serde::{Deserialize, Serialize};

/// The primary key column.
pub const KEY: &str = "transactionid";

/// Secondary indexes (reference §4.1): name suffix and columns. Each covers
/// one of the range queries.
pub const INDEXES: [(&str, &str); 3] = [
    ("marketsegment", "productid, customerid, price"),
    ("registersegment", "cashregisterid, customerid, price"),
    ("pdc", "price, dateandtime, customerid"),
];

/// Rows per INSERT of l.i0, l.i1, l.i2 and the query steps (reference §4.7).
pub const ROWS_L_I0: usize = 100;
pub const ROWS_L_I1: usize = 50;
pub const ROWS_L_I2: usize = 5;
pub const ROWS_QUERY_STEPS: usize = 50;
/// Rows l.x inserts in total before it creates the indexes.
pub const ROWS_L_X: u64 = 100;
/// Rows each range query returns, and ids per point query.
pub const QUERY_ROWS: usize = 10;

/// Table of client `i` (1-based): `pi1`, `pi2`, ...
pub fn table_name(i: usize) -> String {
    format!("pi{i}")
}

/// Which queries a query step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// `qr`: range queries over the covering secondary indexes.
    Range,
    /// `qp`: point queries of 10 primary keys.
    Point,
}

/// One step of the suite, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum StepDef {
    /// l.i0: (re)create the tables, insert in PK order, no secondary index.
    LoadI0,
    /// l.x: insert a few rows, then create the secondary indexes.
    LoadX,
    /// l.i1 (50 rows per statement) and l.i2 (5): inserts with as many deletes.
    LoadI1,
    LoadI2,
    /// qrN / qpN: queries while writers insert and delete at N rows/s per client.
    Query {
        kind: QueryKind,
        rate: u64,
    },
}

impl StepDef {
    pub fn name(&self) -> String {
        match self {
            StepDef::LoadI0 => "l.i0".into(),
            StepDef::LoadX => "l.x".into(),
            StepDef::LoadI1 => "l.i1".into(),
            StepDef::LoadI2 => "l.i2".into(),
            StepDef::Query {
                kind: QueryKind::Range,
                rate,
            } => format!("qr{rate}"),
            StepDef::Query {
                kind: QueryKind::Point,
                rate,
            } => format!("qp{rate}"),
        }
    }

    pub fn is_load(&self) -> bool {
        !matches!(self, StepDef::Query { .. })
    }
}

/// The steps of a run: the four loads, then qr and qp at each rate.
pub fn steps(rates: &[u64]) -> Vec<StepDef> {
    let mut v = vec![
        StepDef::LoadI0,
        StepDef::LoadX,
        StepDef::LoadI1,
        StepDef::LoadI2,
    ];
    for &rate in rates {
        v.push(StepDef::Query {
            kind: QueryKind::Range,
            rate,
        });
        v.push(StepDef::Query {
            kind: QueryKind::Point,
            rate,
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_named_as_the_reference_names_them() {
        let names: Vec<String> = steps(&[100, 500]).iter().map(StepDef::name).collect();
        assert_eq!(
            names,
            [
                "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500"
            ]
        );
        assert_eq!(
            schema::table(2)
                .indexes
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>(),
            ["pi2_marketsegment", "pi2_registersegment", "pi2_pdc"]
        );
    }
}

/// The Insert Benchmark suite.
pub struct Ibench;

/// What a user may set for an Insert Benchmark run (`rqps run --flag`, or the
/// snake_case key in a matrix file).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "Insert Benchmark options (--suite ibench)")]
pub struct Options {
    /// Clients, each with its own table (pi1..piC) and connections.
    #[arg(long, value_name = "C")]
    pub clients: Option<crate::suite::bounds::Threads>,
    /// Rows each client inserts in l.i0.
    #[arg(long, value_name = "N")]
    pub rows_per_client: Option<crate::suite::bounds::Rows>,
    /// Rows each client inserts, deleting as many, in l.i1 (4/5) and l.i2 (1/5).
    #[arg(long, value_name = "W")]
    pub writes: Option<crate::suite::bounds::Rows>,
    /// Each qr/qp step inserts query-secs x rate rows per client (about this many
    /// seconds when the engine keeps up).
    #[arg(long, value_name = "S")]
    pub query_secs: Option<crate::suite::bounds::Secs>,
    /// Background insert rates of the qr/qp steps, rows/s per client.
    #[arg(long, value_delimiter = ',', value_name = "R,R,..")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub rates: Option<Vec<crate::suite::bounds::Rate>>,
    /// Sleep budget of the settle step after l.i2.
    #[arg(long, value_name = "S")]
    pub settle_secs: Option<crate::suite::bounds::Secs>,
    /// auto: server-side prepared statements; disable: plain text statements.
    #[arg(long, value_name = "auto|disable", value_parser = ["auto", "disable"])]
    pub ps_mode: Option<String>,
}

impl crate::suite::api::Workload for Ibench {
    const NAME: &'static str = "ibench";
    const ABOUT: &'static str =
        "the Insert Benchmark: l.i0, l.x, l.i1, l.i2, then qr/qp at each rate";
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "clients"),
            (Role::MeasuredSecs, "query-secs"),
        ]
    };
    type Params = params::IbenchParams;
    // One table per client: the clients are the shape, not a sweep.
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "statement",
        per_op: "statement",
    };
    const TREATMENTS: &'static [&'static str] = &["ps_mode"];
    const WORKLOAD: &'static [&'static str] = &[
        "clients",
        "rows_per_client",
        "writes_per_client",
        "query_secs",
        "rates",
    ];

    fn params(
        common: &crate::suite::api::RunBasics,
        o: Options,
    ) -> Result<params::IbenchParams, crate::error::Error> {
        use crate::suite::api::{set, set_all};
        let mut p = params::ibench_profile(&common.profile)
            .ok_or_else(|| usage(format!("unknown profile '{}'", common.profile)))?;
        set(&mut p.clients, o.clients);
        set(&mut p.rows_per_client, o.rows_per_client);
        set(&mut p.writes_per_client, o.writes);
        set(&mut p.query_secs, o.query_secs);
        set_all(&mut p.rates, o.rates);
        set(&mut p.settle_secs, o.settle_secs);
        if let Some(m) = &o.ps_mode {
            p.ps_mode = crate::suite::api::ps_mode(m)?;
        }
        p.seed = common.seed;
        p.steps()?;
        Ok(p)
    }

    fn step_count(p: &params::IbenchParams) -> usize {
        p.steps().map(|s| s.len()).unwrap_or(0)
    }

    fn estimate_secs(p: &params::IbenchParams) -> f64 {
        p.estimate_secs()
    }

    /// The rows of l.i0 and of the inserts after it, about 150 bytes each
    /// with the three secondary indexes.
    fn load_bytes(p: &params::IbenchParams) -> u64 {
        (p.clients as u64)
            .saturating_mul(p.rows_per_client.saturating_add(p.writes_per_client))
            .saturating_mul(150)
    }

    fn describe(p: &params::IbenchParams) -> String {
        let mut out = format!(
            "profile {}: {} client(s), one table each (pi1..pi{})\n",
            p.profile, p.clients, p.clients
        );
        out.push_str(&format!(
            "{:<8} {:>15} {:>14} {:>8} {:>15}  reported as\n",
            "step", "rows per client", "rows per stmt", "deletes", "rate per client"
        ));
        for (i, def) in p.steps().unwrap_or_default().iter().enumerate() {
            let s = run::step_spec(p, def, i);
            let unit = match def {
                StepDef::LoadX => "indexed rows/s",
                d if d.is_load() => "inserts/s",
                _ => "queries/s (SLA: inserts >= 95% of the rate)",
            };
            out.push_str(&format!(
                "{:<8} {:>15} {:>14} {:>8} {:>15}  {unit}\n",
                def.name(),
                s.rows_per_client,
                s.rows_per_statement,
                if s.deletes { "yes" } else { "no" },
                s.rate_per_client
                    .map(|r| format!("{r:.0} rows/s"))
                    .unwrap_or_else(|| "as fast".into()),
            ));
        }
        out
    }

    fn need(p: &params::IbenchParams) -> crate::suite::api::Need {
        // Per client an inserting, a deleting and a query connection.
        let connections = 3 * p.clients;
        crate::suite::api::Need {
            connections,
            prepared: 16 * connections,
            who: format!("{} Insert Benchmark clients", p.clients),
            fewer: "run fewer clients".into(),
        }
    }

    fn run(
        p: &params::IbenchParams,
        h: &mut crate::harness::Harness<'_>,
    ) -> Result<crate::harness::RunEnd, crate::error::Error> {
        run::run(p, h)
    }

    fn line(_label: &str, r: &crate::results::TestResult) -> String {
        run::result_line(r)
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report_export::SECTION)
    }

    /// The four load steps with one client (see [`compat`]).
    fn compat(p: &params::IbenchParams) -> Option<crate::suite::api::CompatPlan> {
        let mut one = p.clone();
        one.clients = 1;
        let steps = [
            StepDef::LoadI0,
            StepDef::LoadX,
            StepDef::LoadI1,
            StepDef::LoadI2,
        ];
        Some(compat::plan(
            steps
                .iter()
                .enumerate()
                .map(|(i, d)| (d.name(), run::step_spec(&one, d, i)))
                .collect(),
        ))
    }
}
