//! From what the user asked for to runs: a typed [`session::RunSpec`] run in
//! a [`session::Session`] (the engine opened by [`open`]), matrix files
//! (targets x repeats, interleaved, resumable) parsed by [`matrix`] and run
//! by [`executor`], and reports as plain functions ([`report`]). Each
//! suite's own profiles and parameters live in its folder.

pub mod executor;
pub mod hints;
pub mod matrix;
pub mod open;
pub mod options;
pub mod report;
pub mod session;
pub mod signals;
pub mod stored;
