//! Workloads, one folder each, and the one registry that lists them.
//!
//! A suite is a [`Workload`]: a name, one typed options struct that `rqps run`
//! parses from its command line (clap) and a matrix file from its TOML table
//! (serde) into the same fields, the parameters those options give on top of a
//! profile, a plan of steps with a time estimate, and a `run` that sends each
//! test through the shared [`Harness`](crate::harness::Harness). The traits
//! live in [`api`], which every suite imports; this module is the registry,
//! which imports every suite, and re-exports [`api`] for the rest of rqps (so
//! no suite imports a module that imports it). [`registry`] is the only
//! place that names the suites; the CLI, the matrix, the results and the
//! report find them there. Adding a workload is one folder plus one line in
//! [`registry`].
//!
//! A suite never names an engine: it asks the driver for its capabilities and
//! dialect.

pub mod api;
pub mod bounds;
pub mod compat;
pub mod dbbench;
pub mod ibench;
pub mod linkbench;
pub mod part;
pub mod pgbench;
pub mod rand;
pub mod select1;
pub mod sysbench;
pub mod tpcc;

pub use api::*;

use crate::error::usage;
use crate::report::model::WorkloadKeys;
use crate::report::section::Section;

/// Every suite rqps can run. The first is the default of `--suite`.
pub fn registry() -> &'static [&'static dyn Suite] {
    static SUITES: &[&dyn Suite] = &[
        &Registered::<sysbench::Sysbench>::NEW,
        &Registered::<ibench::Ibench>::NEW,
        &Registered::<select1::Select1>::NEW,
        &Registered::<linkbench::Linkbench>::NEW,
        &Registered::<tpcc::Tpcc>::NEW,
        &Registered::<dbbench::Dbbench>::NEW,
        &Registered::<pgbench::Pgbench>::NEW,
    ];
    SUITES
}

/// The suite called `name`, or an error that lists the known ones.
pub fn find(name: &str) -> Result<&'static dyn Suite, crate::error::Error> {
    registry()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            usage(format!(
                "unknown suite '{name}'{}: expected one of {}",
                crate::util::suggest::hint(name, names()),
                names().join(", ")
            ))
        })
}

/// The report sections of the suites that have one, in registry order.
pub fn report_sections() -> Vec<&'static dyn Section> {
    registry().iter().filter_map(|s| s.report()).collect()
}

/// The parameters that make each suite's workload, for reports.
pub fn workloads() -> Vec<WorkloadKeys> {
    registry()
        .iter()
        .map(|s| WorkloadKeys {
            suite: s.name(),
            params: s.workload(),
            treatments: s.treatments(),
            recorded: s.recorded(),
        })
        .collect()
}

/// The suites' names, in registry order.
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|s| s.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_has_a_unique_name_and_the_first_is_sysbench() {
        let n = names();
        assert_eq!(n[0], "sysbench");
        let mut sorted = n.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), n.len());
        assert!(
            find("nope")
                .unwrap_err()
                .to_string()
                .contains("expected one of sysbench")
        );
    }

    /// A typo in a suite's [`Workload::WORKLOAD`] would leave that parameter
    /// unchecked: every key must be one the suite stores, in every profile.
    #[test]
    fn every_workload_key_is_a_stored_parameter_of_every_profile() {
        for s in registry() {
            assert!(
                !s.workload().is_empty(),
                "{} declares no workload",
                s.name()
            );
            for profile in s.profiles() {
                let common = RunBasics {
                    profile: profile.to_string(),
                    seed: 1,
                    part: None,
                };
                let m = s
                    .args(clap::Command::new("t"))
                    .try_get_matches_from(["t"])
                    .unwrap();
                let params = s.plan_cli(&common, &m).unwrap().params_json();
                for key in s.workload() {
                    assert!(
                        params.get(key).is_some(),
                        "{} {profile}: '{key}' is not a stored parameter: {params}",
                        s.name()
                    );
                }
            }
        }
    }

    #[test]
    fn every_suite_names_its_clients_option_and_each_role_is_an_option_of_its_own() {
        for s in registry() {
            let keys = s.option_keys();
            assert!(
                s.roles().iter().any(|(r, _)| *r == Role::Clients),
                "{} names no clients' option",
                s.name()
            );
            for (_, o) in s.roles() {
                assert!(
                    keys.contains(&o.replace('-', "_")),
                    "{}: no --{o}",
                    s.name()
                );
            }
        }
    }

    #[test]
    fn matrix_options_are_checked_one_by_one() {
        let s = find("sysbench").unwrap();
        assert!(
            s.check_option("threads", &toml::Value::from(vec![1, 2]))
                .is_ok()
        );
        let e = s
            .check_option("threads", &toml::Value::from("four"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid type"), "{e}");
        let e = s
            .check_option("clients", &toml::Value::from(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field"), "{e}");
    }
}
