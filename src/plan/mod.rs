//! From what the user asked for to runs: matrix files (targets x repeats,
//! interleaved, resumable). Each suite's own profiles and parameters live in
//! its folder.

pub mod matrix;
