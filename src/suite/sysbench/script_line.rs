//! A sysbench script run as one experiment, in one short line: the script
//! and the options that make its workload, as a user types them
//! (`oltp_read_only.lua --table-size=10000 --time=30`). Stored as the run's
//! `script` parameter: a name's runs with the same line are repeats (its
//! `prepare`, `run` and `cleanup` alike, since the commands are not in it),
//! `rqps runs` shows it, and a mismatch names the options that differ.

use super::lua::ScriptPlan;
use super::lua::options::{self, OptValue};

/// sysbench options that do not change the workload: how many threads
/// (stored as the run's `threads`), the warm-up, what is reported, the
/// statement mode (the run's `ps_mode`, a treatment) and the driver (the
/// target's).
const NOT_WORKLOAD: &[&str] = &[
    "threads",
    "warmup_time",
    "report_interval",
    "percentile",
    "histogram",
    "verbosity",
    "forced_shutdown",
    "db_ps_mode",
    "db_driver",
    "rand_seed",
];

/// The line of `plan`: its path, then each option that makes the workload
/// and is not sysbench's default (one of sysbench's own options), or was
/// given (one the script declares), in the plan's order; `--rand-seed`
/// only when it was given (`seed_given`): a drawn seed is recorded with
/// the plan, not compared.
pub fn of(plan: &ScriptPlan, seed_given: bool) -> String {
    let core = options::core();
    let given = options::parse_args(&plan.args)
        .map(|a| a.given)
        .unwrap_or_default();
    let mut words = vec![plan.path.clone()];
    for (name, value) in &plan.options {
        let keep = if name == "rand_seed" {
            seed_given
        } else if NOT_WORKLOAD.contains(&name.as_str()) {
            false
        } else {
            match core.iter().find(|d| &d.name == name) {
                Some(d) => d
                    .default
                    .as_deref()
                    .and_then(|t| options::convert(d.kind, t).ok())
                    .is_none_or(|def| &def != value),
                None => given.iter().any(|(n, _)| n == name),
            }
        };
        if keep {
            words.push(format!("--{}={}", name.replace('_', "-"), text(value)));
        }
    }
    words.join(" ")
}

/// A value as a user types it: `10000`, `on`, `a,b`.
fn text(v: &OptValue) -> String {
    let t = v.text();
    if t.is_empty() || t.contains(char::is_whitespace) {
        crate::cmdline::shell_word(&t)
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::PsMode;
    use crate::suite::sysbench::rng::{SbRandParams, SbRandType};

    fn plan(args: &[&str], options: Vec<(&str, OptValue)>) -> ScriptPlan {
        ScriptPlan {
            path: "oltp_point_select.lua".into(),
            text: String::new(),
            args: args.iter().map(|s| s.to_string()).collect(),
            commands: vec!["run".into()],
            options: options
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect(),
            declares: true,
            threads: vec![2],
            secs: 10.0,
            events: None,
            warmup_secs: 0.0,
            rand_type: SbRandType::Special,
            rand: SbRandParams::default(),
            rand_seed: 77,
            seed: 1,
            percentile: 95,
            ps_mode: PsMode::Auto,
            memory_mib: crate::suite::sysbench::lua::plan::DEFAULT_MEMORY_MIB,
            sysbench_report: false,
        }
    }

    #[test]
    fn the_line_names_the_script_and_its_workload_options_and_no_drawn_seed() {
        let num = OptValue::Num;
        let p = plan(
            &["--table-size=100", "--threads=2", "--time=10", "run"],
            vec![
                ("threads", num(2.0)),
                ("time", num(10.0)),
                ("events", num(200.0)),
                ("rand_seed", num(77.0)),
                ("rand_type", OptValue::Str("special".into())),
                ("report_interval", num(1.0)),
                ("table_size", num(100.0)),
                ("tables", num(1.0)),
            ],
        );
        // sysbench's defaults (10 s, special) and options not given are
        // left out; the thread count is the run's own parameter.
        assert_eq!(
            of(&p, false),
            "oltp_point_select.lua --events=200 --table-size=100"
        );
        assert_eq!(
            of(&p, true),
            "oltp_point_select.lua --events=200 --rand-seed=77 --table-size=100"
        );
        let mut q = p.clone();
        q.options[1].1 = num(3.0);
        assert!(of(&q, false).contains("--time=3"), "{}", of(&q, false));
    }
}
