//! Turning stored results into tables people read.

pub mod ibench;
pub mod table;
