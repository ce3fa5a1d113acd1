//! The consistency conditions TPC-C (3.3.2) states for a database after a
//! run: 1–10 and 12. Each is one query that returns the first row breaking
//! it (money compared to within half a cent, since SQLite keeps fractions
//! as floating point); the first violation names its warehouse, district
//! and, where it applies, its order or customer.

use serde::{Deserialize, Serialize};

use crate::engine::{Conn, DbResult, Param, PsMode, Rows};

/// One condition's outcome.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Condition {
    pub number: u32,
    pub rule: String,
    pub ok: bool,
    /// What broke it, e.g. `warehouse 1 district 3: d_next_o_id - 1 = 3005, max(o_id) = 3004`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub violation: Option<String>,
}

/// The whole check, stored with the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub ok: bool,
    pub secs: f64,
    pub conditions: Vec<Condition>,
}

impl Report {
    /// The first violated condition as one line.
    pub fn first_violation(&self) -> Option<String> {
        self.conditions.iter().find(|c| !c.ok).map(|c| {
            format!(
                "consistency condition {} ({}) fails for {}",
                c.number,
                c.rule,
                c.violation.as_deref().unwrap_or("?")
            )
        })
    }
}

/// Half a cent: money sums on SQLite are floating point.
const EPS: &str = "0.005";

struct Check {
    number: u32,
    rule: &'static str,
    sql: String,
    /// Writes the violation from the offending row.
    describe: fn(&Rows) -> String,
}

fn v(r: &Rows, c: usize) -> &str {
    r.get(0, c).unwrap_or("NULL")
}

/// The conditions in the order of their numbers.
fn checks() -> Vec<Check> {
    let mut all = conditions_1_to_5();
    all.extend(conditions_6_to_12());
    all
}

/// The warehouse's and districts' sums, the order numbers, the order lines
/// per district, the open orders.
fn conditions_1_to_5() -> Vec<Check> {
    vec![
        Check {
            number: 1,
            rule: "W_YTD = sum(D_YTD)",
            sql: format!(
                "SELECT w_id, w_ytd, s FROM (SELECT w_id, w_ytd, \
                 (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) AS s FROM warehouse) x \
                 WHERE s IS NULL OR ABS(w_ytd - s) > {EPS} ORDER BY w_id LIMIT 1"
            ),
            describe: |r| format!("warehouse {}: w_ytd = {}, sum(d_ytd) = {}", v(r, 0), v(r, 1), v(r, 2)),
        },
        Check {
            number: 2,
            rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
            sql: "SELECT d_w_id, d_id, n, mo, mno FROM (SELECT d_w_id, d_id, d_next_o_id - 1 AS n, \
                 (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo, \
                 (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mno \
                 FROM district) x \
                 WHERE mo IS NULL OR n <> mo OR (mno IS NOT NULL AND n <> mno) \
                 ORDER BY d_w_id, d_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {}: d_next_o_id - 1 = {}, max(o_id) = {}, max(no_o_id) = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3),
                    v(r, 4)
                )
            },
        },
        Check {
            number: 3,
            rule: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
            sql: "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order \
                 GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) \
                 ORDER BY no_w_id, no_d_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {}: max - min + 1 = {}, rows = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3)
                )
            },
        },
        Check {
            number: 4,
            rule: "sum(O_OL_CNT) = rows in ORDER-LINE",
            sql: "SELECT o_w_id, o_d_id, s, n FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s, \
                 (SELECT COUNT(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id) AS n \
                 FROM orders GROUP BY o_w_id, o_d_id) x WHERE s <> n \
                 ORDER BY o_w_id, o_d_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {}: sum(o_ol_cnt) = {}, order lines = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3)
                )
            },
        },
        Check {
            number: 5,
            rule: "O_CARRIER_ID is NULL exactly when a NEW-ORDER row exists",
            sql: "SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders WHERE \
                 (o_carrier_id IS NULL AND NOT EXISTS (SELECT 1 FROM new_order \
                   WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id)) \
                 OR (o_carrier_id IS NOT NULL AND EXISTS (SELECT 1 FROM new_order \
                   WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id)) \
                 ORDER BY o_w_id, o_d_id, o_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {} order {}: o_carrier_id = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3)
                )
            },
        },
    ]
}

/// Each order's lines and delivery, the payments, the customers' balances.
fn conditions_6_to_12() -> Vec<Check> {
    vec![
        Check {
            number: 6,
            rule: "O_OL_CNT = the order's ORDER-LINE rows",
            sql: "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, n FROM (SELECT o_w_id, o_d_id, o_id, o_ol_cnt, \
                 (SELECT COUNT(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id \
                  AND ol_o_id = o_id) AS n FROM orders) x WHERE o_ol_cnt <> n \
                 ORDER BY o_w_id, o_d_id, o_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {} order {}: o_ol_cnt = {}, order lines = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3),
                    v(r, 4)
                )
            },
        },
        Check {
            number: 7,
            rule: "OL_DELIVERY_D is NULL exactly when O_CARRIER_ID is NULL",
            sql: "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line, orders \
                 WHERE o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
                 AND ((ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) \
                  OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)) \
                 ORDER BY ol_w_id, ol_d_id, ol_o_id LIMIT 1"
                .into(),
            describe: |r| {
                format!(
                    "warehouse {} district {} order {} line {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3)
                )
            },
        },
        Check {
            number: 8,
            rule: "W_YTD = sum(H_AMOUNT) of the warehouse",
            sql: format!(
                "SELECT w_id, w_ytd, s FROM (SELECT w_id, w_ytd, \
                 (SELECT SUM(h_amount) FROM history WHERE h_w_id = w_id) AS s FROM warehouse) x \
                 WHERE s IS NULL OR ABS(w_ytd - s) > {EPS} ORDER BY w_id LIMIT 1"
            ),
            describe: |r| format!("warehouse {}: w_ytd = {}, sum(h_amount) = {}", v(r, 0), v(r, 1), v(r, 2)),
        },
        Check {
            number: 9,
            rule: "D_YTD = sum(H_AMOUNT) of the district",
            sql: format!(
                "SELECT d_w_id, d_id, d_ytd, s FROM (SELECT d_w_id, d_id, d_ytd, \
                 (SELECT SUM(h_amount) FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id) AS s \
                 FROM district) x WHERE s IS NULL OR ABS(d_ytd - s) > {EPS} \
                 ORDER BY d_w_id, d_id LIMIT 1"
            ),
            describe: |r| {
                format!(
                    "warehouse {} district {}: d_ytd = {}, sum(h_amount) = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3)
                )
            },
        },
        Check {
            number: 10,
            rule: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
            sql: format!(
                "SELECT c_w_id, c_d_id, c_id, c_balance, ol, h FROM ({CUSTOMER_SUMS}) x \
                 WHERE ABS(c_balance - (ol - h)) > {EPS} ORDER BY c_w_id, c_d_id, c_id LIMIT 1"
            ),
            describe: |r| {
                format!(
                    "warehouse {} district {} customer {}: c_balance = {}, delivered = {}, paid = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3),
                    v(r, 4),
                    v(r, 5)
                )
            },
        },
        Check {
            number: 12,
            rule: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
            sql: format!(
                "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, ol FROM ({CUSTOMER_SUMS}) x \
                 WHERE ABS(c_balance + c_ytd_payment - ol) > {EPS} \
                 ORDER BY c_w_id, c_d_id, c_id LIMIT 1"
            ),
            describe: |r| {
                format!(
                    "warehouse {} district {} customer {}: c_balance = {}, c_ytd_payment = {}, delivered = {}",
                    v(r, 0),
                    v(r, 1),
                    v(r, 2),
                    v(r, 3),
                    v(r, 4),
                    v(r, 5)
                )
            },
        },
    ]
}

/// Per customer: balance, payments, the amount of its delivered order
/// lines and of its history rows, in one grouping pass over the three
/// tables' rows put together (customers without either sum get 0). No join
/// per customer and no join on a derived table, which MySQL before 5.6
/// runs without an index: the whole check took 873 s on MySQL 5.5.34 after
/// the `ci` profile (one warehouse) with the two sums joined to `customer`,
/// 7.7 s this way, on a busy 2-core machine.
const CUSTOMER_SUMS: &str = "SELECT c_w_id, c_d_id, c_id, SUM(c_balance) AS c_balance, \
    SUM(c_ytd_payment) AS c_ytd_payment, SUM(ol) AS ol, SUM(h) AS h FROM ( \
    SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, 0 AS ol, 0 AS h, 1 AS is_c \
      FROM customer \
    UNION ALL SELECT o_w_id, o_d_id, o_c_id, 0, 0, ol_amount, 0, 0 FROM orders, order_line \
      WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
      AND ol_delivery_d IS NOT NULL \
    UNION ALL SELECT h_c_w_id, h_c_d_id, h_c_id, 0, 0, 0, h_amount, 0 FROM history) u \
    GROUP BY c_w_id, c_d_id, c_id HAVING SUM(is_c) = 1";

/// Runs every condition on `conn` (no run may be writing).
pub fn run(conn: &mut dyn Conn) -> DbResult<Report> {
    let started = std::time::Instant::now();
    let mut rows = Rows::default();
    let mut conditions = Vec::new();
    for c in checks() {
        let stmt = conn.prepare(&c.sql, PsMode::Auto)?;
        conn.fetch(stmt, &[] as &[Param<'_>], &mut rows)?;
        let violation = (!rows.is_empty()).then(|| (c.describe)(&rows));
        conditions.push(Condition {
            number: c.number,
            rule: c.rule.into(),
            ok: violation.is_none(),
            violation,
        });
    }
    Ok(Report {
        ok: conditions.iter().all(|c| c.ok),
        secs: started.elapsed().as_secs_f64(),
        conditions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_1_to_10_and_12() {
        let n: Vec<u32> = checks().iter().map(|c| c.number).collect();
        assert_eq!(n, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    }

    #[test]
    fn the_first_violation_names_its_condition_and_place() {
        let r = Report {
            ok: false,
            secs: 0.0,
            conditions: vec![
                Condition {
                    number: 1,
                    rule: "a".into(),
                    ok: true,
                    violation: None,
                },
                Condition {
                    number: 2,
                    rule: "b".into(),
                    ok: false,
                    violation: Some("warehouse 1 district 3: x".into()),
                },
            ],
        };
        assert_eq!(
            r.first_violation().unwrap(),
            "consistency condition 2 (b) fails for warehouse 1 district 3: x"
        );
    }
}
