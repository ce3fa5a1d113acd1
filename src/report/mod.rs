//! Turning stored results into tables people read.

pub mod table;
