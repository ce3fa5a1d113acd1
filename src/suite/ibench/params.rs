//! The Insert Benchmark's parameters: named profiles (spec §3, reference
//! §4.7), with every override applied and checked.

use crate::error::usage;
use serde::{Deserialize, Serialize};

use crate::engine::PsMode;

/// Parameters of an Insert Benchmark run (reference §4.7), as stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IbenchParams {
    pub profile: String,
    /// Clients: one table `piN` each, with its own connections.
    pub clients: usize,
    /// Rows each client inserts in l.i0.
    pub rows_per_client: u64,
    /// Rows each client inserts (and deletes) in l.i1 (4/5) and l.i2 (1/5).
    pub writes_per_client: u64,
    /// Each qr/qp step inserts `query_secs x rate` rows per client, so it lasts
    /// about this long when the engine keeps up.
    pub query_secs: f64,
    /// Insert rates of the qr/qp steps, rows per second per client.
    pub rates: Vec<u64>,
    /// Sleep budget of the settle step after l.i2.
    pub settle_secs: f64,
    pub ps_mode: PsMode,
    pub seed: u64,
}

/// The Insert Benchmark's parameters of profile `name` (spec §3).
pub fn ibench_profile(name: &str) -> Option<IbenchParams> {
    let base = |clients, rows, writes, query_secs, settle| IbenchParams {
        profile: name.to_string(),
        clients,
        rows_per_client: rows,
        writes_per_client: writes,
        query_secs,
        rates: vec![100, 500, 1000],
        settle_secs: settle,
        ps_mode: PsMode::Auto,
        seed: 0,
    };
    Some(match name {
        // A few minutes on embedded SQLite on 2 cores.
        "quick" => base(1, 1_000_000, 200_000, 20.0, 1.0),
        // Seconds in all, two clients so every table and connection role is used.
        "ci" => base(2, 3_000, 1_000, 1.0, 0.0),
        // Reference §4.7, small server: 1 client, 50M rows in l.i0, 40M + 10M
        // writes, 1800 s per query step; vac step of 60 s + 1 s per million rows.
        "small-server" => base(1, 50_000_000, 50_000_000, 1800.0, 110.0),
        // 24-core server: 16 clients of 20M rows, 16M + 4M writes each.
        "large-server" => base(16, 20_000_000, 20_000_000, 1800.0, 380.0),
        _ => return None,
    })
}

impl IbenchParams {
    /// Checks the parameters and returns the steps to run, or one line saying what is wrong.
    pub fn steps(&self) -> Result<Vec<super::StepDef>, crate::error::Error> {
        use super::{ROWS_L_I2, steps};
        if self.clients == 0 {
            return Err(usage("--clients must be at least 1"));
        }
        if self.rows_per_client == 0 {
            return Err(usage("--rows-per-client must be at least 1"));
        }
        if self.writes_per_client < ROWS_L_I2 as u64 {
            return Err(usage(format!(
                "--writes must be at least {ROWS_L_I2} (l.i2 inserts a fifth of them, {ROWS_L_I2} rows per statement)"
            )));
        }
        if !self.query_secs.is_finite() || self.query_secs <= 0.0 {
            return Err(usage(format!(
                "--query-secs must be a number of seconds > 0, got {}",
                self.query_secs
            )));
        }
        if !self.settle_secs.is_finite() || self.settle_secs < 0.0 {
            return Err(usage(format!(
                "--settle-secs must be a number of seconds >= 0, got {}",
                self.settle_secs
            )));
        }
        if self.rates.is_empty() || self.rates.contains(&0) {
            return Err(usage(
                "--rates must list insert rates of at least 1 row/s, e.g. --rates 100,500,1000",
            ));
        }
        for &r in &self.rates {
            if self.query_secs * (r as f64) < 1.0 {
                return Err(usage(format!(
                    "--query-secs {} at --rates {r} inserts no row: each query step inserts query-secs x rate rows per client",
                    self.query_secs
                )));
            }
        }
        Ok(steps(&self.rates))
    }

    /// Rows each client inserts in l.i1 and in l.i2.
    pub fn writes_split(&self) -> (u64, u64) {
        let i1 = self.writes_per_client * 4 / 5;
        (i1, self.writes_per_client - i1)
    }

    /// Seconds the query steps and the settle step take when the engine keeps
    /// up (the loads depend on the engine).
    pub fn estimate_secs(&self) -> f64 {
        2.0 * self.rates.len() as f64 * self.query_secs + self.settle_secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibench_profiles_have_every_size() {
        for name in <crate::suite::ibench::Ibench as crate::suite::api::Workload>::PROFILES {
            let p = ibench_profile(name).unwrap();
            assert_eq!(p.steps().unwrap().len(), 4 + 2 * p.rates.len(), "{name}");
        }
        let small = ibench_profile("small-server").unwrap();
        assert_eq!(small.writes_split(), (40_000_000, 10_000_000));
        assert!(ibench_profile("ci").unwrap().estimate_secs() < 10.0);
        let mut p = ibench_profile("ci").unwrap();
        p.rates = vec![100, 0];
        assert!(p.steps().unwrap_err().to_string().contains("--rates"));
        let mut p = ibench_profile("ci").unwrap();
        p.writes_per_client = 4;
        assert!(p.steps().unwrap_err().to_string().contains("--writes"));
        let mut p = ibench_profile("ci").unwrap();
        p.query_secs = 0.001;
        assert!(p.steps().unwrap_err().to_string().contains("--query-secs"));
    }
}
