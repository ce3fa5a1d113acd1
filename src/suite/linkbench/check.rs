//! The counts check (spec A5's invariant): after a run, `counttable` holds,
//! for every (id1, link_type), the number of visible links.

use serde::{Deserialize, Serialize};

use super::schema::{COUNT, LINK};
use crate::engine::{DbResult, SqlAccess};

/// What the check found.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CheckOut {
    /// (id1, link_type) pairs with visible links.
    pub pairs: u64,
    /// Pairs whose count is missing or differs from their visible links.
    pub mismatched: u64,
    /// Counts above zero with no visible link behind them.
    pub stray: u64,
    /// One pair that disagrees, as `id1/link_type: count c, visible v`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub example: Option<String>,
}

impl CheckOut {
    pub fn ok(&self) -> bool {
        self.mismatched == 0 && self.stray == 0
    }
    /// One line for a failed check.
    pub fn reason(&self) -> String {
        format!(
            "counttable disagrees with the visible links: {} of {} (id1, link_type) pairs \
             mismatched, {} stray counts{}",
            self.mismatched,
            self.pairs,
            self.stray,
            self.example
                .as_ref()
                .map(|e| format!(" (e.g. {e})"))
                .unwrap_or_default()
        )
    }
}

fn number(v: Option<String>) -> u64 {
    v.and_then(|s| s.trim().parse::<f64>().ok())
        .map_or(0, |f| f as u64)
}

/// Compares every count with the visible links it stands for.
pub fn check(db: &dyn SqlAccess) -> DbResult<CheckOut> {
    let mut conn = db.connect()?;
    let visible = format!(
        "SELECT id1, link_type, COUNT(*) AS n FROM {LINK} WHERE visibility = 1 \
         GROUP BY id1, link_type"
    );
    let bad = format!(
        "FROM ({visible}) v LEFT JOIN {COUNT} c ON c.id = v.id1 AND c.link_type = v.link_type \
         WHERE c.id IS NULL OR c.count <> v.n"
    );
    let pairs = number(conn.query_scalar(&format!("SELECT COUNT(*) FROM ({visible}) v"))?);
    let mismatched = number(conn.query_scalar(&format!("SELECT COUNT(*) {bad}"))?);
    let stray = number(conn.query_scalar(&format!(
        "SELECT COUNT(*) FROM {COUNT} c WHERE c.count > 0 AND NOT EXISTS \
         (SELECT 1 FROM {LINK} l WHERE l.id1 = c.id AND l.link_type = c.link_type \
         AND l.visibility = 1)"
    ))?);
    let example = if mismatched > 0 {
        let one = |col: &str, conn: &mut Box<dyn crate::engine::Conn>| {
            conn.query_scalar(&format!(
                "SELECT {col} {bad} ORDER BY v.id1, v.link_type LIMIT 1"
            ))
        };
        let id1 = one("v.id1", &mut conn)?.unwrap_or_default();
        let ty = one("v.link_type", &mut conn)?.unwrap_or_default();
        let n = one("v.n", &mut conn)?.unwrap_or_default();
        let c = one("c.count", &mut conn)?.unwrap_or_else(|| "none".into());
        Some(format!("{id1}/{ty}: count {c}, visible {n}"))
    } else {
        None
    };
    Ok(CheckOut {
        pairs,
        mismatched,
        stray,
        example,
    })
}
