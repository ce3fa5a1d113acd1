//! The harness: threads, warm-up, rate, measurement and the hardware probe,
//! the same for every suite.

pub mod host;
pub mod measure;
pub mod probe;
pub mod runner;
pub mod sysstat;
