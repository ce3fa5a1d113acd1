//! The sysbench microbenchmark suite.

pub mod catalog;
pub mod event;
pub mod load;
pub mod run;
pub mod schema;
