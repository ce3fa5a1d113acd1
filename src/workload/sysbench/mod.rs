//! The sysbench microbenchmark suite: the test catalog and orders, the load,
//! and the per-thread events.

pub mod catalog;
pub mod event;
pub mod load;
