//! What limited a test: from the figures of its measured interval, how much of
//! its CPU budget each side used, how busy the host's CPUs and the data
//! device were, and which of them (if any) was used up.
//!
//! Budgets: the client's is the set of CPUs rqps runs on (`--client-cpus`,
//! else the machine's); the server's is the set its main process may run on
//! (`--server-cpus`, else the machine's), where its processes are measurable
//! (a server on this host). A side with fewer CPUs than the machine is
//! judged by the busy share of its own CPUs, whoever used them: that is the
//! CPU it could have had. A side with the whole machine is judged by its own
//! cores used over the machine's CPUs.
//!
//! Named in this order, the first that is at or above [`SATURATED_PCT`]:
//! `client` (then the figure is the client's, not the server's),
//! `server-cpu`, `host-cpu` (the machine's CPUs were full, though neither
//! side alone filled its budget), `disk` (the data device had I/O in flight
//! for that share of the interval).

use crate::harness::sysstat::{CpuTimes, Totals};
use crate::results::Limit;

/// The share of a budget at or above which it counts as used up, percent.
///
/// Why 90: a closed-loop benchmark whose CPUs are the bottleneck keeps them
/// 93-100% busy (each thread is either running or queued), while one that
/// waits on something else leaves them visibly idle; the kernel's tick
/// accounting (100 Hz, every CPU) measures a 1-second interval to about 1%,
/// so 90 leaves room for both without calling a half-idle budget full. The
/// same reading holds for the device's `io_ticks`, with the caveat that a
/// device serving requests in parallel (NVMe) can show 100% before it is at
/// its limit: there `disk` says the device was never idle, not that it
/// could do no more.
pub const SATURATED_PCT: f64 = 90.0;

/// Per-CPU ticks now, from `/proc/stat` (`None` where it cannot be read).
pub fn per_cpu_now() -> Option<Vec<(usize, CpuTimes)>> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let v = crate::harness::sysstat::parse_per_cpu(&text);
    (!v.is_empty()).then_some(v)
}

/// Busy share (0..=100) of the CPUs `set` between two per-CPU readings;
/// `None` when a CPU is missing from either or no tick passed.
pub fn busy_pct_of(
    before: &[(usize, CpuTimes)],
    after: &[(usize, CpuTimes)],
    set: &[usize],
) -> Option<f64> {
    if set.is_empty() {
        return None;
    }
    let find = |v: &[(usize, CpuTimes)], n: usize| v.iter().find(|c| c.0 == n).map(|c| c.1);
    let (mut busy, mut total) = (0u64, 0u64);
    for &n in set {
        let (a, b) = (find(before, n)?, find(after, n)?);
        busy += b.busy().checked_sub(a.busy())?;
        total += b.total().checked_sub(a.total())?;
    }
    (total > 0).then(|| 100.0 * busy as f64 / total as f64)
}

/// What one test's interval gives to judge its limit.
#[derive(Clone, Debug, Default)]
pub struct Interval<'a> {
    pub totals: Option<&'a Totals>,
    /// The CPUs rqps ran on, and the server's main process may run on
    /// (`None`: the server is not measurable here).
    pub client_set: Vec<usize>,
    pub server_set: Option<Vec<usize>>,
    /// The machine's CPUs.
    pub host_cpus: usize,
    /// Per-CPU ticks when sampling started and ended.
    pub per_cpu_before: Option<Vec<(usize, CpuTimes)>>,
    pub per_cpu_after: Option<Vec<(usize, CpuTimes)>>,
}

/// The figures of `iv` and the limit named from them.
pub fn measure(iv: &Interval<'_>) -> Limit {
    let t = iv.totals;
    let secs = t.map_or(0.0, |t| t.elapsed_secs);
    let cores = |cpu: Option<f64>| cpu.filter(|_| secs > 0.0).map(|c| c / secs);
    let own_set_busy = |set: &[usize]| {
        if set.len() >= iv.host_cpus {
            return None;
        }
        busy_pct_of(iv.per_cpu_before.as_ref()?, iv.per_cpu_after.as_ref()?, set)
    };
    let mut l = Limit {
        by: None,
        threshold_pct: SATURATED_PCT,
        client_cores: cores(t.and_then(|t| t.own_cpu_secs)),
        client_cpus: if iv.client_set.is_empty() {
            iv.host_cpus
        } else {
            iv.client_set.len()
        },
        client_cpus_busy_pct: own_set_busy(&iv.client_set),
        server_cores: iv
            .server_set
            .as_ref()
            .and_then(|_| cores(t.and_then(|t| t.server_cpu_secs))),
        server_cpus: iv.server_set.as_ref().map(
            |s| {
                if s.is_empty() { iv.host_cpus } else { s.len() }
            },
        ),
        server_cpus_busy_pct: iv.server_set.as_deref().and_then(own_set_busy),
        host_cpus: iv.host_cpus,
        host_busy_pct: t.and_then(|t| t.cpu_busy_pct),
        disk_util_pct: t.and_then(|t| t.disk_util_pct),
    };
    l.by = classify(&l).map(String::from);
    l
}

/// The limit the figures name (see the module's doc), or `None`.
pub fn classify(l: &Limit) -> Option<&'static str> {
    let full = |v: Option<f64>| v.is_some_and(|v| v >= l.threshold_pct);
    if full(l.client_used_pct()) {
        Some("client")
    } else if full(l.server_used_pct()) {
        Some("server-cpu")
    } else if full(l.host_busy_pct) {
        Some("host-cpu")
    } else if full(l.disk_util_pct) {
        Some("disk")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Limit {
        Limit {
            threshold_pct: SATURATED_PCT,
            client_cores: Some(0.8),
            client_cpus: 4,
            server_cores: Some(5.0),
            server_cpus: Some(12),
            host_cpus: 16,
            host_busy_pct: Some(40.0),
            disk_util_pct: Some(20.0),
            ..Limit::default()
        }
    }

    fn named(l: Limit) -> (Option<&'static str>, Option<String>) {
        let by = classify(&l);
        let shown = Limit {
            by: by.map(String::from),
            ..l
        }
        .label();
        (by, shown)
    }

    #[test]
    fn a_client_that_used_its_cpus_is_the_limit_even_when_the_server_had_room() {
        // The 16-core study: 10.7 us of client CPU x 371k QPS = 3.97 of 4 CPUs.
        let l = Limit {
            client_cores: Some(3.97),
            client_cpus_busy_pct: Some(99.4),
            ..figures()
        };
        assert_eq!(
            named(l),
            (Some("client"), Some("client 99% of 4 CPUs".into()))
        );
        // Without per-CPU figures, its own cores over its CPUs.
        let l = Limit {
            client_cores: Some(3.7),
            ..figures()
        };
        assert_eq!(named(l).0, Some("client"));
    }

    #[test]
    fn a_client_whose_cpus_another_process_filled_is_the_limit_and_says_its_share() {
        let l = Limit {
            client_cores: Some(0.52),
            client_cpus: 1,
            client_cpus_busy_pct: Some(100.0),
            host_cpus: 2,
            ..figures()
        };
        assert_eq!(
            named(l),
            (
                Some("client"),
                Some("client 100% of 1 CPU (rqps 52%)".into())
            )
        );
    }

    #[test]
    fn a_server_that_filled_its_cpus_is_the_limit() {
        let l = Limit {
            server_cores: Some(11.2),
            server_cpus_busy_pct: Some(96.0),
            ..figures()
        };
        assert_eq!(
            named(l),
            (Some("server-cpu"), Some("server-cpu 96% of 12 CPUs".into()))
        );
        // A server with the whole machine: its cores over the machine's CPUs.
        let l = Limit {
            server_cores: Some(15.0),
            server_cpus: Some(16),
            host_busy_pct: Some(97.0),
            ..figures()
        };
        assert_eq!(named(l).0, Some("server-cpu"));
    }

    #[test]
    fn a_full_host_that_neither_side_filled_alone_is_host_cpu() {
        let l = Limit {
            client_cores: Some(0.6),
            client_cpus: 2,
            server_cores: Some(1.3),
            server_cpus: Some(2),
            host_cpus: 2,
            host_busy_pct: Some(98.0),
            ..figures()
        };
        assert_eq!(
            named(l),
            (Some("host-cpu"), Some("host-cpu 98% of 2 CPUs".into()))
        );
    }

    #[test]
    fn a_device_never_idle_is_disk() {
        let l = Limit {
            disk_util_pct: Some(97.0),
            ..figures()
        };
        assert_eq!(named(l), (Some("disk"), Some("disk 97% busy".into())));
    }

    #[test]
    fn budgets_with_room_name_no_limit() {
        assert_eq!(named(figures()), (None, None));
        // Just under the threshold everywhere; and nothing measured at all.
        let l = Limit {
            client_cpus_busy_pct: Some(89.9),
            server_cpus_busy_pct: Some(89.9),
            host_busy_pct: Some(89.9),
            disk_util_pct: Some(89.9),
            ..figures()
        };
        assert_eq!(named(l).0, None);
        assert_eq!(
            named(Limit {
                threshold_pct: SATURATED_PCT,
                ..Limit::default()
            })
            .0,
            None
        );
    }

    fn ticks(busy: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user: busy,
            idle,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn the_busy_share_of_a_set_counts_only_its_cpus() {
        let before = vec![(0, ticks(100, 100)), (1, ticks(100, 100))];
        let after = vec![(0, ticks(200, 100)), (1, ticks(110, 190))];
        assert_eq!(busy_pct_of(&before, &after, &[0]), Some(100.0));
        assert_eq!(busy_pct_of(&before, &after, &[1]), Some(10.0));
        assert_eq!(busy_pct_of(&before, &after, &[0, 1]), Some(55.0));
        assert_eq!(busy_pct_of(&before, &after, &[2]), None);
        assert_eq!(busy_pct_of(&before, &before, &[0]), None);
    }

    #[test]
    fn a_side_with_the_whole_machine_is_judged_by_its_own_cores() {
        let totals = Totals {
            elapsed_secs: 2.0,
            own_cpu_secs: Some(3.8),
            server_cpu_secs: Some(0.2),
            cpu_busy_pct: Some(100.0),
            ..Totals::default()
        };
        let before = vec![(0, ticks(0, 0)), (1, ticks(0, 0))];
        let after = vec![(0, ticks(200, 0)), (1, ticks(200, 0))];
        let iv = Interval {
            totals: Some(&totals),
            client_set: vec![0, 1],
            server_set: Some(vec![0, 1]),
            host_cpus: 2,
            per_cpu_before: Some(before.clone()),
            per_cpu_after: Some(after.clone()),
        };
        let l = measure(&iv);
        assert_eq!(l.client_cpus_busy_pct, None);
        assert_eq!(l.client_cores, Some(1.9));
        assert_eq!(l.by.as_deref(), Some("client"));
        // The client pinned to CPU 1, which was full; the server unmeasured.
        let l = measure(&Interval {
            client_set: vec![1],
            server_set: None,
            ..iv.clone()
        });
        assert_eq!(l.client_cpus, 1);
        assert_eq!(l.client_cpus_busy_pct, Some(100.0));
        assert_eq!((l.server_cores, l.server_cpus), (None, None));
        assert_eq!(l.by.as_deref(), Some("client"));
    }
}
