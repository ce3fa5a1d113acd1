//! pgbench scripts (issue 32). This file only declares the script language
//! modules for now; the pgbench-suite branch owns it and adds the suite.

pub mod expr;
pub mod script;
