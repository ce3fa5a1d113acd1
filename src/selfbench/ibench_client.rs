//! `rqps bench ibench-client`: the Insert Benchmark's l.i0 with rqps as the
//! client against a minimal client that only sends the same INSERTs, on
//! throwaway servers: insert rate and client CPU per row.

use std::time::Instant;

use clap::Args;

use super::measure::{BenchError, NoResult, cpu_secs, throwaway};
use crate::engine::{Driver, Param, PsMode};

#[derive(Args, Clone, Debug)]
pub struct IbClientArgs {
    /// Engines to start throwaway servers of.
    #[arg(long, value_delimiter = ',', default_value = "mariadb,postgres")]
    pub engines: Vec<String>,
    /// Rows each contender inserts per round (l.i0: 100 rows per INSERT, one table).
    #[arg(long, default_value_t = 300_000)]
    pub rows: u64,
    /// Rounds; each runs both contenders once on freshly created tables, alternating who goes first.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
}

/// Distinct batches the minimal client cycles through (made before its clock starts).
const BARE_BATCHES: usize = 200;

/// One batch of generated rows: the integer columns and `data`.
type Batch = Vec<(crate::suite::ibench::rows::RowInts, String)>;

fn ib_batches(rows_per_batch: usize) -> Vec<Batch> {
    let mut g = crate::suite::ibench::rows::RowGen::new(42);
    (0..BARE_BATCHES)
        .map(|_| {
            (0..rows_per_batch)
                .map(|_| {
                    let mut d = String::new();
                    let ints = g.ints();
                    g.data(&mut d);
                    (ints, d)
                })
                .collect()
        })
        .collect()
}

fn epoch() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The minimal client: one connection through the same driver, one prepared
/// 100-row INSERT (the statement rqps sends), rows generated beforehand
/// (`batches`, cycled), a loop of executions. No workers, measurement or
/// sampler. Returns (rows, wall seconds).
fn ib_bare(
    driver: &dyn Driver,
    sql: &str,
    rows: u64,
    batches: &[Batch],
) -> Result<(u64, f64), BenchError> {
    let per = crate::suite::ibench::ROWS_L_I0;
    let n = rows.div_ceil(per as u64) as usize;
    let mut conn = driver
        .require_sql()
        .and_then(|db| db.connect())
        .map_err(BenchError::engine("connecting"))?;
    let stmt = conn
        .prepare(sql, PsMode::Auto)
        .map_err(BenchError::engine("preparing the INSERT"))?;
    let mut params: Vec<Param<'_>> = Vec::with_capacity(per * 6);
    let start = Instant::now();
    for i in 0..n {
        let t = epoch();
        params.clear();
        for (r, d) in &batches[i % BARE_BATCHES] {
            params.extend([
                Param::Int(t),
                Param::Int(r.cashregisterid),
                Param::Int(r.customerid),
                Param::Int(r.productid),
                Param::Int(r.price),
                Param::Text(d),
            ]);
        }
        conn.execute(stmt, &params)
            .map_err(BenchError::engine("inserting"))?;
    }
    Ok((n as u64 * per as u64, start.elapsed().as_secs_f64()))
}

/// rqps's l.i0 step: the same workers, measurement and sampler as a run.
fn ib_rqps(driver: &dyn Driver, rows: u64) -> Result<(u64, f64), BenchError> {
    use crate::suite::ibench::step::{StepSpec, run_alone};
    let spec = StepSpec {
        clients: 1,
        rows_per_client: rows,
        rows_per_statement: crate::suite::ibench::ROWS_L_I0,
        deletes: false,
        queries: None,
        rate_per_client: None,
        create_indexes: false,
        seed: 7,
        ps_mode: PsMode::Auto,
    };
    let out = run_alone(driver, &spec, &mut |_| {});
    match out.status {
        crate::harness::runner::StepStatus::Ok => Ok((out.inserted_rows, out.secs)),
        s => Err(NoResult::Unfinished {
            status: format!("{s:?}"),
        }
        .into()),
    }
}

/// Rows per wall second and client CPU microseconds per row of one contender.
struct IbRate {
    rows_per_sec: f64,
    cpu_us_per_row: f64,
}

fn ib_measure(f: impl FnOnce() -> Result<(u64, f64), BenchError>) -> Result<IbRate, BenchError> {
    let c0 = cpu_secs();
    let (rows, secs) = f()?;
    let cpu = cpu_secs() - c0;
    Ok(IbRate {
        rows_per_sec: rows as f64 / secs.max(1e-9),
        cpu_us_per_row: cpu * 1e6 / rows.max(1) as f64,
    })
}

pub fn ibench_client(a: &IbClientArgs) -> Result<(), BenchError> {
    use crate::suite::ibench::step::{insert_sql, setup_tables};
    if a.rounds == 0 || a.rows == 0 {
        return Err(BenchError::Args("--rounds and --rows must be more than 0"));
    }
    for engine in &a.engines {
        let (kind, server, _, driver) = throwaway(engine)?;
        let sql = insert_sql(
            driver
                .require_sql()
                .map_err(BenchError::engine("the Insert Benchmark needs SQL"))?
                .dialect(),
            &crate::suite::ibench::schema::table(1),
            crate::suite::ibench::ROWS_L_I0,
        );
        let batches = ib_batches(crate::suite::ibench::ROWS_L_I0);
        let fresh =
            || setup_tables(driver.as_ref(), 1).map_err(BenchError::engine("creating the table"));
        let run_bare = || -> Result<IbRate, BenchError> {
            fresh()?;
            ib_measure(|| ib_bare(driver.as_ref(), &sql, a.rows, &batches))
        };
        let run_ours = || -> Result<IbRate, BenchError> {
            fresh()?;
            ib_measure(|| ib_rqps(driver.as_ref(), a.rows))
        };
        // One untimed pass of each.
        fresh()?;
        ib_bare(driver.as_ref(), &sql, 20_000, &batches)?;
        fresh()?;
        ib_rqps(driver.as_ref(), 20_000)?;
        println!(
            "\n{} ({}), l.i0: {} rows per round into an empty pi1, 100 rows per INSERT, 1 client",
            kind,
            server.binary_version(),
            a.rows
        );
        println!(
            "{:>5}  {:>12} {:>12} {:>7}   {:>13} {:>13}",
            "round", "bare rows/s", "rqps rows/s", "ratio", "bare cpu us/r", "rqps cpu us/r"
        );
        let (mut ratio, mut bare_cpu, mut ours_cpu) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..a.rounds {
            let (bare, ours) = if r % 2 == 0 {
                let b = run_bare()?;
                (b, run_ours()?)
            } else {
                let o = run_ours()?;
                (run_bare()?, o)
            };
            println!(
                "{:>5}  {:>12.0} {:>12.0} {:>7.3}   {:>13.2} {:>13.2}",
                r + 1,
                bare.rows_per_sec,
                ours.rows_per_sec,
                ours.rows_per_sec / bare.rows_per_sec,
                bare.cpu_us_per_row,
                ours.cpu_us_per_row
            );
            ratio.push(ours.rows_per_sec / bare.rows_per_sec);
            bare_cpu.push(bare.cpu_us_per_row);
            ours_cpu.push(ours.cpu_us_per_row);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "median: insert rate rqps/bare = {:.3}; client CPU per row {:.2} us (rqps) vs {:.2} us (bare)",
            median(&mut ratio),
            median(&mut ours_cpu),
            median(&mut bare_cpu)
        );
        server.stop()?;
    }
    Ok(())
}
