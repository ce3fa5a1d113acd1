//! sysbench's reports of a script's run, made of rqps's measurements:
//! the intermediate reports of `--report-interval` (sysbench's line, or
//! the script's `report_intermediate` hook), the cumulative one at the
//! end of `run` (the `report_cumulative` hook), and sysbench's closing
//! report (`--sysbench-report`) and latency histogram (`--histogram`).
//!
//! A report is a [`Stat`], the fields sysbench passes its hooks. The
//! intermediate ones come from each thread's counters and latencies since
//! the last report ([`ThreadStats`]), read by a reporting thread with a Lua state
//! of its own, as sysbench's; the cumulative one from the test's stored
//! result: the same figures rqps reports.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mlua::Lua;

use super::capi::{SbHistogram, ThreadCtx};
use super::fail::Fail;
pub use super::stat::{Cumulative, Stat};
use super::{out, state};
use crate::harness::measure::{Counts, new_histogram};
use crate::harness::runner::stop_requested;
use crate::results::TestResult;

/// sysbench's intermediate line for a script (its `db_report_intermediate`).
pub fn line(s: &Stat, percentile: u32) -> String {
    let per = |n: u64| n as f64 / s.time_interval.max(1e-9);
    format!(
        "[ {:.0}s ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) \
         lat (ms,{percentile}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}\n",
        s.time_total,
        s.threads_running,
        per(s.events),
        per(s.reads + s.writes + s.other),
        per(s.reads),
        per(s.writes),
        per(s.other),
        s.latency_pct * 1000.0,
        per(s.errors),
        per(s.reconnects)
    )
}

/// The events and the seconds spent in events of each thread, for the
/// closing report's fairness lines.
pub type Fairness = Vec<(u64, f64)>;

/// sysbench's closing report of a script's run (its SQL statistics, then
/// its general statistics, latency and fairness).
pub fn closing(s: &Stat, percentile: u32, threads: &Fairness) -> String {
    let secs = s.time_interval.max(1e-9);
    let queries = s.reads + s.writes + s.other;
    let lat = s.latency.unwrap_or_default();
    let mut o = String::new();
    let mut put = |l: String| {
        o.push_str(&l);
        o.push('\n');
    };
    put("SQL statistics:".into());
    put("    queries performed:".into());
    put(format!(
        "        read:                            {}",
        s.reads
    ));
    put(format!(
        "        write:                           {}",
        s.writes
    ));
    put(format!(
        "        other:                           {}",
        s.other
    ));
    put(format!(
        "        total:                           {queries}"
    ));
    for (what, n) in [
        ("transactions:                        ", s.events),
        ("queries:                             ", queries),
        ("ignored errors:                      ", s.errors),
        ("reconnects:                          ", s.reconnects),
    ] {
        put(format!(
            "    {what}{n:<6} ({:.2} per sec.)",
            n as f64 / secs
        ));
    }
    put(String::new());
    put("General statistics:".into());
    put(format!(
        "    total time:                          {:.4}s",
        s.time_total
    ));
    put(format!(
        "    total number of events:              {}",
        s.events
    ));
    put(String::new());
    put("Latency (ms):".into());
    put(format!("         min: {:39.2}", lat.min * 1000.0));
    put(format!("         avg: {:39.2}", lat.avg * 1000.0));
    put(format!("         max: {:39.2}", lat.max * 1000.0));
    if percentile > 0 {
        put(format!(
            "        {percentile:3}th percentile: {:27.2}",
            s.latency_pct * 1000.0
        ));
    } else {
        put("         percentile stats:               disabled".into());
    }
    put(format!("         sum: {:39.2}", lat.sum * 1000.0));
    put(String::new());
    let n = threads.len().max(1) as f64;
    let events_avg = threads.iter().map(|t| t.0 as f64).sum::<f64>() / n;
    let time_avg = lat.sum / n;
    let dev = |f: &dyn Fn(&(u64, f64)) -> f64, avg: f64| {
        (threads.iter().map(|t| (f(t) - avg).powi(2)).sum::<f64>() / n).sqrt()
    };
    put("Threads fairness:".into());
    put(format!(
        "    events (avg/stddev):           {events_avg:.4}/{:3.2}",
        dev(&|t| t.0 as f64, events_avg)
    ));
    put(format!(
        "    execution time (avg/stddev):   {time_avg:.4}/{:3.2}",
        dev(&|t| t.1, time_avg)
    ));
    put(String::new());
    o
}

/// sysbench's `--histogram`: the test's latencies (milliseconds) drawn on
/// sysbench's scale (1024 slots from 0.001 to 100,000 ms).
pub fn histogram(r: &TestResult) -> String {
    let Some(h) = r
        .histogram
        .as_deref()
        .and_then(crate::results::decode_histogram)
    else {
        return String::new();
    };
    let Some(sb) = SbHistogram::new(1024, 0.001, 100_000.0) else {
        return String::new();
    };
    for v in h.iter_recorded() {
        let ms = v.value_iterated_to() as f64 / 1e6;
        for _ in 0..v.count_at_value() {
            sb.update(ms);
        }
    }
    format!(
        "Latency histogram (values are in milliseconds)\n{} \n",
        sb.text()
    )
}

/// One thread of a step as the reports see it: its counters, and what
/// its events took since the last report (and in all).
pub struct ThreadStats {
    pub ctx: Arc<ThreadCtx>,
    /// Latencies (ns) since the last report.
    lat: Mutex<Histogram<u64>>,
    /// Nanoseconds spent in measured events.
    pub busy_ns: AtomicU64,
    /// Whether the thread still runs events.
    pub running: AtomicBool,
    /// The counters when the measured interval began, then at the last report.
    last: Mutex<Counts>,
    last_restarts: AtomicU64,
}

impl ThreadStats {
    pub fn new(ctx: Arc<ThreadCtx>) -> Arc<ThreadStats> {
        Arc::new(ThreadStats {
            ctx,
            lat: Mutex::new(new_histogram()),
            busy_ns: AtomicU64::new(0),
            running: AtomicBool::new(true),
            last: Mutex::new(Counts::default()),
            last_restarts: AtomicU64::new(0),
        })
    }

    /// An event that completed in `ns`.
    pub fn event(&self, ns: u64) {
        if let Ok(mut h) = self.lat.lock() {
            h.saturating_record(ns.max(1));
        }
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// The measured interval begins: what came before is not reported.
    pub fn reset(&self) {
        if let Ok(mut h) = self.lat.lock() {
            h.reset();
        }
        self.busy_ns.store(0, Ordering::Relaxed);
        if let Ok(mut l) = self.last.lock() {
            *l = self.ctx.counts();
        }
        self.last_restarts
            .store(self.ctx.restarts.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// What happened since the last call: counts (errors with the
    /// restarts) and latencies.
    fn take(&self, into: &mut Histogram<u64>) -> Counts {
        if let Ok(mut h) = self.lat.lock() {
            let _ = into.add(&*h);
            h.reset();
        }
        let now = self.ctx.counts();
        let restarts = self.ctx.restarts.load(Ordering::Relaxed);
        let mut d = match self.last.lock() {
            Ok(mut l) => {
                let d = now.minus(&l);
                *l = now;
                d
            }
            Err(_) => Counts::default(),
        };
        d.errors += restarts - self.last_restarts.swap(restarts, Ordering::Relaxed);
        d
    }
}

/// The step's start of measurement, set by the first thread that reaches it.
pub type Start = Arc<OnceLock<Instant>>;

/// What the reporting thread needs.
pub struct Reporting {
    pub probes: Vec<Arc<ThreadStats>>,
    pub every: Duration,
    pub percentile: u32,
    /// Print sysbench's default line (no hook) at all (`--verbosity` >= 3).
    pub print: bool,
    /// The state of the reporting thread when the script has a
    /// `report_intermediate` hook.
    pub hook: Option<Lua>,
    pub start: Start,
    /// The measured interval: no intermediate report at or after its end
    /// (the cumulative one says the end).
    pub secs: f64,
    pub done: Arc<AtomicBool>,
}

/// Runs the intermediate reports until `done`: each interval from the
/// start of measurement, what the threads did in it, as a line or through
/// the hook. The state (and whatever its finalizers print) closes at the end.
pub fn run(r: Reporting) -> Result<(), Fail> {
    let nap = Duration::from_millis(20);
    let stop = || r.done.load(Ordering::Relaxed) || stop_requested();
    let start = loop {
        if stop() {
            return Ok(());
        }
        if let Some(s) = r.start.get() {
            break *s;
        }
        std::thread::sleep(nap);
    };
    let mut last = start;
    let mut hist = new_histogram();
    for k in 1u32.. {
        let due = start + r.every * k;
        if r.secs > 0.0 && (r.every * k).as_secs_f64() >= r.secs - 1e-3 {
            return Ok(());
        }
        loop {
            if stop() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep((due - now).min(nap));
        }
        let now = Instant::now();
        hist.reset();
        let mut c = Counts::default();
        for p in &r.probes {
            c.add(&p.take(&mut hist));
        }
        let stat = Stat {
            threads_running: r
                .probes
                .iter()
                .filter(|p| p.running.load(Ordering::Relaxed))
                .count() as u64,
            time_interval: now.duration_since(last).as_secs_f64(),
            time_total: now.duration_since(start).as_secs_f64(),
            latency_pct: if hist.is_empty() || r.percentile == 0 {
                0.0
            } else {
                hist.value_at_quantile(f64::from(r.percentile) / 100.0) as f64 / 1e9
            },
            events: hist.len(),
            reads: c.reads,
            writes: c.writes,
            other: c.other,
            errors: c.errors,
            reconnects: c.reconnects,
            latency: None,
        };
        last = now;
        match &r.hook {
            Some(lua) => state::call_hook(lua, "report_intermediate", &stat, r.every)?,
            None if r.print => out::print(&line(&stat, r.percentile)),
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat() -> Stat {
        Stat {
            threads_running: 2,
            time_interval: 2.0,
            time_total: 4.0,
            latency_pct: 0.00125,
            events: 200,
            reads: 2800,
            writes: 0,
            other: 400,
            errors: 2,
            reconnects: 0,
            latency: None,
        }
    }

    #[test]
    fn the_intermediate_line_is_sysbench_s() {
        assert_eq!(
            line(&stat(), 95),
            "[ 4s ] thds: 2 tps: 100.00 qps: 1600.00 (r/w/o: 1400.00/0.00/200.00) \
             lat (ms,95%): 1.25 err/s: 1.00 reconn/s: 0.00\n"
        );
    }

    #[test]
    fn the_closing_report_has_sysbench_s_sections_and_figures() {
        let mut s = stat();
        s.latency = Some(Cumulative {
            min: 0.0005,
            avg: 0.001,
            max: 0.01,
            sum: 0.2,
        });
        let text = closing(&s, 95, &vec![(120, 0.12), (80, 0.08)]);
        for want in [
            "SQL statistics:",
            "        read:                            2800",
            "    transactions:                        200    (100.00 per sec.)",
            "    ignored errors:                      2      (1.00 per sec.)",
            "    total time:                          4.0000s",
            "         min:                                    0.50",
            "         95th percentile:                        1.25",
            "         sum:                                  200.00",
            "    events (avg/stddev):           100.0000/20.00",
            "    execution time (avg/stddev):   0.1000/0.02",
        ] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
        assert!(closing(&s, 0, &vec![]).contains("percentile stats:               disabled"));
    }
}
