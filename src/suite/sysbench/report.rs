//! What sysbench adds to reports ([`Section`]): its four report groups with
//! their titles and order (reference §1.5), its tests in suite order (the
//! order the base ran, current unless it says classic), and the reference
//! TSV label `name_range=R`. Its results are rows of the generic tables; it
//! builds no part of its own.

use std::collections::HashMap;

use super::catalog::{self, Group, Order};
use crate::report::section::{GroupDef, Section};
use crate::results::RunDoc;

/// The suite name sysbench runs and results store.
pub const SUITE: &str = "sysbench";

/// The report group of a Lua script's tests.
pub const SCRIPT_GROUP: &str = "script";

/// The sysbench section of reports.
pub struct Sysbench;

/// The one value the registry lists.
pub static SECTION: Sysbench = Sysbench;

impl Section for Sysbench {
    fn suite(&self) -> &'static str {
        SUITE
    }

    /// The four groups of the field, then the Lua scripts' (a script
    /// run's tests are its `run` at each thread count, named by the script).
    fn groups(&self) -> Vec<GroupDef> {
        Group::ALL
            .into_iter()
            .map(|g| GroupDef {
                key: g.key(),
                title: g.title(),
            })
            .chain([GroupDef {
                key: SCRIPT_GROUP,
                title: "sysbench Lua scripts",
            }])
            .collect()
    }

    /// Position of each test name in the suite order the base ran (current
    /// unless it says classic), then the other order, so rows read as the
    /// suite runs.
    fn test_positions(&self, base_runs: &[&RunDoc]) -> Option<HashMap<String, usize>> {
        let classic = base_runs
            .iter()
            .any(|r| r.params.get("list").and_then(|v| v.as_str()) == Some("classic"));
        let (first, second) = if classic {
            (Order::Classic, Order::Current)
        } else {
            (Order::Current, Order::Classic)
        };
        let mut pos = HashMap::new();
        for (k, o) in [first, second].into_iter().enumerate() {
            for (i, t) in catalog::order(o).into_iter().enumerate() {
                pos.entry(t.name).or_insert(k * 1000 + i);
            }
        }
        Some(pos)
    }

    /// The reference TSV label: `name_range=R`, R from the name or 100.
    fn tsv_label(&self, test: &str) -> String {
        if test.contains("_range=") {
            test.to_string()
        } else {
            format!("{test}_range=100")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_labels_carry_the_range_the_reference_names() {
        assert_eq!(SECTION.tsv_label("point-query"), "point-query_range=100");
        assert_eq!(
            SECTION.tsv_label("random-points_range=10"),
            "random-points_range=10"
        );
    }

    #[test]
    fn groups_are_the_four_of_the_field_in_order() {
        let keys: Vec<&str> = SECTION.groups().iter().map(|g| g.key).collect();
        assert_eq!(keys, ["point", "range", "range-agg", "write", "script"]);
    }
}
