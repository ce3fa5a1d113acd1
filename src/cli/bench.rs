//! `rqps bench`: measures rqps itself. Each benchmark belongs to the suite
//! whose code it measures; this module only names them for the command line.

use clap::Subcommand;

use crate::harness::bench::BenchError;
use crate::suite::dbbench::bench::{ClientArgs as DbClientArgs, dbbench_client};
use crate::suite::ibench::bench::{IbClientArgs, ibench_client};
use crate::suite::sysbench::bench::{BenchArgs, VsArgs, run, vs_sysbench};

#[derive(Subcommand, Clone, Debug)]
pub enum BenchCmd {
    /// rqps's point-query loop against a bare prepared-statement loop on embedded SQLite.
    Harness(BenchArgs),
    /// rqps against real sysbench on throwaway servers: QPS and client CPU per query.
    VsSysbench(VsArgs),
    /// The Insert Benchmark's l.i0 with rqps as the client against a minimal client that
    /// only sends the same INSERTs, on throwaway servers: insert rate and client CPU per row.
    IbenchClient(IbClientArgs),
    /// db_bench's readrandom on cached data through rqps against a bare loop calling the
    /// same RocksDB library directly, in one process: reads per second and per CPU second.
    DbbenchClient(DbClientArgs),
}

pub fn run_cmd(c: &BenchCmd) -> Result<(), BenchError> {
    match c {
        BenchCmd::Harness(a) => run(a),
        BenchCmd::VsSysbench(a) => vs_sysbench(a),
        BenchCmd::IbenchClient(a) => ibench_client(a),
        BenchCmd::DbbenchClient(a) => dbbench_client(a),
    }
}
