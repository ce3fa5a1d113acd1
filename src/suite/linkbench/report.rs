//! What LinkBench adds to reports: its groups in the generic tables, the
//! line printed when a step ends, and (with per-operation tables) its part.

use super::{Detail, KEY};
use crate::report::section::{GroupDef, Section};
use crate::results::TestResult;

/// The LinkBench report section.
pub struct LinkbenchSection;

pub static SECTION: LinkbenchSection = LinkbenchSection;

impl Section for LinkbenchSection {
    fn suite(&self) -> &'static str {
        KEY
    }
    fn groups(&self) -> Vec<GroupDef> {
        vec![
            GroupDef {
                key: "load",
                title: "LinkBench load (links/s)",
            },
            GroupDef {
                key: "request",
                title: "LinkBench requests (ops/s)",
            },
            GroupDef {
                key: "check",
                title: "LinkBench counts check",
            },
        ]
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

/// The one line printed when a step ends.
pub fn result_line(label: &str, r: &TestResult) -> String {
    if r.status != "ok" {
        return format!(
            "{label:>8}  {}: {}",
            r.status,
            r.reason.clone().unwrap_or_default()
        );
    }
    let d: Detail = r.detail(KEY).unwrap_or_default();
    let mut line = if let Some(c) = &d.check {
        format!(
            "{label:>8}  counttable agrees with the visible links for all {} (id1, link_type) pairs",
            c.pairs
        )
    } else if let Some(l) = &d.load {
        match l.index_secs {
            Some(s) => format!("{label:>8}  id1_type over {} links in {s:.1} s", l.links),
            None => format!(
                "{label:>8}  {} nodes at {:.0} nodes/s, {} links at {:.0} links/s, {} counts, {:.2} links/node, in {:.1} s",
                l.nodes,
                l.nodes_per_sec,
                l.links,
                l.links_per_sec,
                l.counts,
                l.mean_out_degree,
                r.secs
            ),
        }
    } else if let Some(q) = &d.request {
        format!(
            "{label:>8}  {:>10.1} ops/s  p95 {:.1} us  retries {}  failures {}  list rows {}",
            q.ops_per_sec, r.latency_us.p95, q.stats.retries, q.stats.failures, q.stats.list_rows
        )
    } else {
        format!("{label:>8}  {:.1} {}", r.qps, r.qps_unit)
    };
    if let Some(hw) = &r.hw {
        line.push_str(&format!(
            "  cpu/o {} us (client {}, server {})",
            opt(hw.cpu_us_per_op),
            opt(hw.client_cpu_us_per_op),
            opt(hw.server_cpu_us_per_op)
        ));
    }
    line
}
