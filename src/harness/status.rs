//! The harness's status rule: when a test that ran to its end is `ok`. It is
//! applied once, by [`crate::harness::Harness::test`], to every test whose
//! body measured a step ([`crate::results::TestResult::step`], filled by
//! [`crate::harness::fill_core`] or a suite's own step), in every suite:
//!
//! - **No work is not `ok`.** A step in which not one event (a transaction,
//!   an operation, as the suite counts) completed is `failed`, with the last
//!   error as the reason: 0 per second measured nothing.
//! - **A measured interval cut short is not `ok`.** When the workers' work
//!   reached less than [`COVERED_AT_LEAST`] of the measured duration (a
//!   connection stopped answering mid-reply and its message timeout outlasted
//!   the test, a proxy that garbles bytes), the rates are over a part of the
//!   interval: the test is `failed`, with the fraction measured.
//! - **A step that ran past its deadline says so.** When connections were
//!   still in a statement more than a margin after the deadline
//!   ([`crate::harness::runner::overrun_margin`]: a second, or 5 % of the
//!   duration), the test stays `ok` (its rates are over the interval the
//!   others measured, not diluted by the wait: the runner leaves the stuck
//!   ones out of the step's length) but carries a warning that names those
//!   connections and how long it lasted, and [`crate::results::Overran`].
//!
//! A failed test shows as such on its progress line, in `rqps show`, in the
//! report's notes (not counted) and in the `rqps compare` gate (broken),
//! because they all read the stored status and reason.

use crate::results::{OVERRAN_WARNING, Overran, Status, StepFacts, TestResult};

/// What a suite counts: the noun of one event (its throughput's unit), and
/// what its hardware cost per operation is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// `transaction`, `operation`, `statement`.
    pub event: &'static str,
    /// `statement`, `transaction`, `operation`: what `finish_probe` divides by.
    pub per_op: &'static str,
}

impl Units {
    /// Events are transactions of several statements, costs are per
    /// statement (sysbench's OLTP tests).
    pub const TRANSACTIONS_OF_STATEMENTS: Units = Units {
        event: "transaction",
        per_op: "statement",
    };
}

/// The share of the measured duration the workers' work must reach for the
/// interval to count as whole. A thread's work reaches the deadline in every
/// honest step (its last event ends at or after it, or it waited for it), so
/// only a silence of more than 5 % of the interval at its end falls short.
pub const COVERED_AT_LEAST: f64 = 0.95;

/// Applies the rule to `r` (status `ok`, with step facts): `failed` with a
/// reason when it measured no work or an interval cut short.
pub fn apply(r: &mut TestResult, units: &Units) {
    let Some(facts) = r.step.take() else {
        return;
    };
    if r.status != Status::Ok {
        return;
    }
    if let Some(reason) = no_work(r, &facts, units).or_else(|| cut_short(&facts, units)) {
        r.status = Status::Failed;
        r.reason = Some(reason);
        return;
    }
    overran(r, &facts);
}

/// Flags a step whose connections were still in a statement past its
/// deadline (see the module's rule).
fn overran(r: &mut TestResult, f: &StepFacts) {
    let (Some(planned), Some(past)) = (
        f.planned_secs,
        f.overran.iter().map(|o| o.1).reduce(f64::max),
    ) else {
        return;
    };
    let ids: Vec<usize> = f.overran.iter().map(|o| o.0).collect();
    let mut named: Vec<String> = ids.iter().take(8).map(|i| i.to_string()).collect();
    if ids.len() > named.len() {
        named.push(format!("... ({} of {})", ids.len(), r.per_connection.len()));
    }
    let who = if ids.len() == 1 {
        format!("connection {} was", named[0])
    } else {
        format!("connections {} were", named.join(", "))
    };
    r.warnings.push(format!(
        "{OVERRAN_WARNING} by {past:.1} s: {who} still in a statement (see per_connection), so the test lasted {:.1} s; its rates are over the {:.1} s the other connections measured",
        f.lasted_secs,
        r.secs.max(planned)
    ));
    r.overran = Some(Box::new(Overran {
        secs: past,
        connections: ids,
    }));
}

/// `s` with an `s` when `n` is not 1.
fn plural(n: u64, s: &str) -> String {
    if n == 1 {
        s.to_string()
    } else {
        format!("{s}s")
    }
}

fn no_work(r: &TestResult, f: &StepFacts, u: &Units) -> Option<String> {
    if r.events > 0 {
        return None;
    }
    let secs = f.planned_secs.unwrap_or(r.secs);
    let why = match (&f.last_error, &f.warm_error) {
        (Some(e), _) => format!(
            "; {} {} failed, the last with: {e}",
            r.errors,
            plural(r.errors, u.event)
        ),
        (None, Some(e)) => format!("; the warm-up's last error: {e}"),
        (None, None) => String::new(),
    };
    Some(format!(
        "no work: not one {} completed in the {secs:.1} s measured{why}",
        u.event
    ))
}

fn cut_short(f: &StepFacts, u: &Units) -> Option<String> {
    let planned = f.planned_secs.filter(|p| *p > 0.0)?;
    let share = f.covered_secs / planned;
    if share >= COVERED_AT_LEAST {
        return None;
    }
    let why = match &f.last_error {
        Some(e) => format!(", then the server stopped answering; the last error: {e}"),
        None => format!(
            ", then no {} completed before the end (a statement still waiting at the deadline)",
            u.event
        ),
    };
    Some(format!(
        "cut short: the measured interval reached {:.2} s of {planned:.2} s ({:.0}% measured){why}",
        f.covered_secs.max(0.0),
        100.0 * share.max(0.0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(events: u64, errors: u64) -> TestResult {
        let mut r = TestResult::running("s", "t".into(), "g", 1, true, "statements/s");
        r.status = Status::Ok;
        r.events = events;
        r.errors = errors;
        r.secs = 5.0;
        r
    }

    fn facts(covered: f64, last_error: Option<&str>) -> StepFacts {
        StepFacts {
            planned_secs: Some(5.0),
            covered_secs: covered,
            last_error: last_error.map(String::from),
            warm_error: None,
            ..Default::default()
        }
    }

    #[test]
    fn a_step_that_completed_nothing_fails_with_its_last_error() {
        let mut r = result(0, 1);
        r.step = Some(Box::new(facts(0.0, Some("lost the connection"))));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.status, Status::Failed);
        let why = r.reason.unwrap();
        assert!(why.starts_with("no work: not one transaction"), "{why}");
        assert!(
            why.contains("1 transaction failed, the last with: lost the connection"),
            "{why}"
        );
        assert!(r.step.is_none());
    }

    #[test]
    fn an_interval_that_ended_early_fails_with_the_fraction_measured() {
        let mut r = result(1200, 1);
        r.step = Some(Box::new(facts(0.77, Some("message timeout"))));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.status, Status::Failed);
        let why = r.reason.unwrap();
        assert!(why.contains("0.77 s of 5.00 s (15% measured)"), "{why}");
        assert!(why.contains("message timeout"), "{why}");
    }

    #[test]
    fn a_step_that_ran_past_its_deadline_stays_ok_with_its_stuck_connection_named() {
        let mut r = result(1200, 0);
        r.per_connection = vec![3, 400, 400, 397];
        r.step = Some(Box::new(StepFacts {
            lasted_secs: 17.0,
            overran: vec![(0, 12.0)],
            ..facts(5.0, None)
        }));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.status, Status::Ok);
        let w = r.warnings.join("\n");
        assert!(
            w.starts_with("ran past its deadline by 12.0 s: connection 0 was still in a statement"),
            "{w}"
        );
        assert!(w.contains("lasted 17.0 s"), "{w}");
        assert!(w.contains("over the 5.0 s"), "{w}");
        assert_eq!(
            r.overran.as_deref(),
            Some(&Overran {
                secs: 12.0,
                connections: vec![0]
            })
        );
        // Quiet when every connection ended by the deadline.
        let mut r = result(1200, 0);
        r.step = Some(Box::new(facts(5.0, None)));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert!(r.warnings.is_empty() && r.overran.is_none());
    }

    #[test]
    fn a_whole_interval_or_a_step_without_a_deadline_stays_ok() {
        let mut r = result(1200, 0);
        r.step = Some(Box::new(facts(4.9, None)));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!((r.status, r.reason), (Status::Ok, None));
        let mut r = result(1200, 0);
        r.step = Some(Box::new(StepFacts {
            planned_secs: None,
            covered_secs: 0.1,
            ..Default::default()
        }));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.status, Status::Ok);
        // A test that failed keeps its own reason; one without step facts
        // (a load, a check) is not judged here.
        let mut r = result(0, 0);
        r.status = Status::Failed;
        r.reason = Some("disk full".into());
        r.step = Some(Box::new(facts(0.0, None)));
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.reason.as_deref(), Some("disk full"));
        let mut r = result(0, 0);
        apply(&mut r, &Units::TRANSACTIONS_OF_STATEMENTS);
        assert_eq!(r.status, Status::Ok);
    }
}
