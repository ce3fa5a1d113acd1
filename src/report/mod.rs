//! Turning stored results into tables people read: the end-of-run table, and
//! the comparison of targets with a base (`rqps report`, `rqps compare`).
//!
//! `load` reads a results directory into the [`model::Report`], using the
//! rules of `compare` and the tests of `stats`; `export` renders it, with the
//! charts of `svg` for HTML. `history` (`rqps history`) reads many runs into
//! series and finds their change points with `changepoint`.
//!
//! Nothing here names a suite: what a suite adds (group titles and order,
//! tables and charts of its own) comes in as a [`section::Section`] from the
//! caller, so this module does not depend on `crate::suite`.

pub mod changepoint;
pub mod compare;
pub mod compat;
pub mod doc;
pub mod export;
pub mod fold;
pub mod guard;
pub mod history;
pub mod load;
pub mod model;
pub mod profile;
pub mod scalability;
pub mod section;
pub mod stats;
pub mod svg;
pub mod table;
