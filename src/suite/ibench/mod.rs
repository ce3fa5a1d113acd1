//! The Insert Benchmark (reference §4): one table per client that behaves
//! as a queue (inserts at the right edge of the primary key, deletes of the
//! oldest rows at the same rate), three secondary indexes to maintain, and
//! query steps under a rate-limited background write load.
//!
//! `rows` makes the values, `limiter` paces the writers, `rt` keeps the
//! response times, `step` runs one
//! step with its connections, and `steps` says which steps a run has.

pub mod limiter;
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
