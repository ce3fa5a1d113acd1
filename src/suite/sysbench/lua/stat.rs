//! What a report says ([`Stat`]): the fields sysbench passes its report
//! hooks, made of rqps's measurements.

use mlua::{Lua, Table};

use crate::results::TestResult;

/// What a report says, with sysbench's field names; times in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stat {
    pub threads_running: u64,
    pub time_interval: f64,
    pub time_total: f64,
    pub latency_pct: f64,
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    /// Cumulative reports only.
    pub latency: Option<Cumulative>,
}

/// What only a cumulative report has.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cumulative {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub sum: f64,
}

impl Stat {
    /// The table a hook receives.
    pub fn to_lua(&self, lua: &Lua) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.set("threads_running", self.threads_running as f64)?;
        t.set("time_interval", self.time_interval)?;
        t.set("time_total", self.time_total)?;
        t.set("latency_pct", self.latency_pct)?;
        for (k, v) in [
            ("events", self.events),
            ("reads", self.reads),
            ("writes", self.writes),
            ("other", self.other),
            ("errors", self.errors),
            ("reconnects", self.reconnects),
        ] {
            t.set(k, v as f64)?;
        }
        match self.latency {
            Some(c) => {
                t.set("latency_min", c.min)?;
                t.set("latency_avg", c.avg)?;
                t.set("latency_max", c.max)?;
                t.set("latency_sum", c.sum)?;
            }
            None => {
                // Without --rate: no queue.
                t.set("queue_length", 0)?;
                t.set("concurrency", 0)?;
            }
        }
        Ok(t)
    }

    /// The cumulative report of a finished test: its measured figures.
    pub fn of_result(r: &TestResult, percentile: u32) -> Stat {
        let h = r
            .histogram
            .as_deref()
            .and_then(crate::results::decode_histogram);
        let s = |ns: f64| ns / 1e9;
        let (pct, lat) = match &h {
            Some(h) if !h.is_empty() => (
                s(h.value_at_quantile(f64::from(percentile) / 100.0) as f64),
                Cumulative {
                    min: s(h.min() as f64),
                    avg: s(h.mean()),
                    max: s(h.max() as f64),
                    sum: s(h.mean() * h.len() as f64),
                },
            ),
            _ => (0.0, Cumulative::default()),
        };
        Stat {
            threads_running: 0,
            time_interval: r.secs,
            time_total: r.secs,
            latency_pct: if percentile == 0 { 0.0 } else { pct },
            events: r.events,
            reads: r.reads,
            writes: r.writes,
            other: r.other,
            errors: r.errors,
            reconnects: r.reconnects,
            latency: Some(lat),
        }
    }
}
