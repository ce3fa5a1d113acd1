//! The check after a built-in tpcb-like run: every transaction adds the
//! same delta to one account, one teller and one branch and writes it to
//! the history, so over the run sum(abalance), sum(bbalance), sum(tbalance)
//! and sum(delta) each change by the same amount, whatever the interleaving
//! and whatever the tables held before (pgbench truncates the history when
//! it starts, so after a pgbench run the absolute sums no longer agree). A
//! lost or doubled update breaks it.

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

/// The sums before the run's first test and after its last.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Change {
    pub before: Sums,
    pub after: Sums,
}

/// A violation of the balances invariant: how much each sum changed.
#[derive(Debug, thiserror::Error)]
#[error(
    "balances check failed: over the run sum(abalance) changed by {accounts}, sum(bbalance) by {branches}, sum(tbalance) by {tellers} and sum(delta) of pgbench_history by {history}; tpcb-like transactions change them alike (an update was lost or applied twice)"
)]
pub struct Violation {
    pub accounts: i64,
    pub branches: i64,
    pub tellers: i64,
    pub history: i64,
}

impl Sums {
    /// Whether the four sums agree (true from a fresh initialisation on
    /// while only tpcb-like transactions run).
    pub fn agree(&self) -> bool {
        [self.branches, self.tellers, self.history]
            .iter()
            .all(|&v| v == self.accounts)
    }
}

impl Change {
    /// How much each sum changed: accounts, branches, tellers, history.
    pub fn deltas(&self) -> [i64; 4] {
        let (a, b) = (&self.after, &self.before);
        [
            a.accounts.wrapping_sub(b.accounts),
            a.branches.wrapping_sub(b.branches),
            a.tellers.wrapping_sub(b.tellers),
            a.history.wrapping_sub(b.history),
        ]
    }

    /// The violation, if the sums changed by different amounts.
    pub fn violation(&self) -> Option<Violation> {
        let [accounts, branches, tellers, history] = self.deltas();
        let all = [branches, tellers, history];
        (!all.iter().all(|&v| v == accounts)).then_some(Violation {
            accounts,
            branches,
            tellers,
            history,
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

    fn sums(a: i64, b: i64, t: i64, h: i64) -> Sums {
        Sums {
            accounts: a,
            branches: b,
            tellers: t,
            history: h,
            history_rows: 0,
        }
    }

    #[test]
    fn equal_changes_pass_whatever_the_tables_held_and_any_difference_is_named() {
        // After a pgbench run (history truncated): the sums disagree before
        // and after, but changed alike.
        let c = Change {
            before: sums(500, 500, 500, 0),
            after: sums(512, 512, 512, 12),
        };
        assert!(!c.before.agree() && !c.after.agree());
        assert!(c.violation().is_none());
        let c = Change {
            before: sums(0, 0, 0, 0),
            after: sums(12, 12, 11, 12),
        };
        let v = c.violation().unwrap().to_string();
        assert!(
            v.contains("sum(tbalance) by 11") && v.contains("sum(abalance) changed by 12"),
            "{v}"
        );
    }
}
