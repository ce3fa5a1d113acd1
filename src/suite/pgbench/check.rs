//! The check after a built-in tpcb-like run: every transaction adds the
//! same delta to one account, one teller and one branch and writes it to
//! the history, so sum(abalance) = sum(bbalance) = sum(tbalance) =
//! sum(delta) from a fresh initialisation on, whatever the interleaving.
//! A lost or doubled update breaks it.

use serde::{Deserialize, Serialize};

use crate::engine::{Conn, DbResult};

/// The four sums, read in one snapshot where the engine gives one.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Sums {
    pub accounts: i64,
    pub branches: i64,
    pub tellers: i64,
    pub history: i64,
    /// Rows in pgbench_history: the transactions that committed.
    pub history_rows: i64,
}

/// A violation of the balances invariant.
#[derive(Debug, thiserror::Error)]
#[error(
    "balances check failed: sum(abalance) = {accounts}, sum(bbalance) = {branches}, sum(tbalance) = {tellers}, sum(delta) of pgbench_history = {history}; they must be equal after tpcb-like transactions (an update was lost or applied twice)"
)]
pub struct Violation {
    pub accounts: i64,
    pub branches: i64,
    pub tellers: i64,
    pub history: i64,
}

impl Sums {
    /// The violation, if the sums differ.
    pub fn violation(&self) -> Option<Violation> {
        let all = [self.branches, self.tellers, self.history];
        (!all.iter().all(|&v| v == self.accounts)).then_some(Violation {
            accounts: self.accounts,
            branches: self.branches,
            tellers: self.tellers,
            history: self.history,
        })
    }
}

/// Reads the sums (a missing sum, no rows, reads as 0).
pub fn run(conn: &mut dyn Conn) -> DbResult<Sums> {
    let mut sum = |sql: &str| -> DbResult<i64> {
        Ok(conn
            .query_scalar(sql)?
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map_or(0, |v| v as i64))
    };
    Ok(Sums {
        accounts: sum("SELECT sum(abalance) FROM pgbench_accounts")?,
        branches: sum("SELECT sum(bbalance) FROM pgbench_branches")?,
        tellers: sum("SELECT sum(tbalance) FROM pgbench_tellers")?,
        history: sum("SELECT sum(delta) FROM pgbench_history")?,
        history_rows: sum("SELECT count(*) FROM pgbench_history")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sums_pass_and_any_difference_is_named() {
        let mut s = Sums {
            accounts: 12,
            branches: 12,
            tellers: 12,
            history: 12,
            history_rows: 3,
        };
        assert!(s.violation().is_none());
        s.tellers = 11;
        let v = s.violation().unwrap().to_string();
        assert!(
            v.contains("sum(tbalance) = 11") && v.contains("sum(abalance) = 12"),
            "{v}"
        );
    }
}
