//! `rqps serve --results DIR`: the results folder as web pages, read-only,
//! served from the same report model and exporters as `rqps report`,
//! `history` and `compat` (no script, nothing fetched from elsewhere), each
//! page also as JSON. `http.rs` is the transport (bounded, httparse),
//! `paths.rs` the request targets (nothing leaves the folder), `index.rs`
//! the folder's index and caches, `page.rs` what every page shares,
//! `views.rs` the runs and one run, `reports.rs` comparisons, histories and
//! compatibility records, `run.rs` the command. See docs/serve.md.

pub mod http;
pub mod index;
pub mod page;
pub mod paths;
pub mod reports;
pub mod run;
pub mod views;

pub use run::{ServeRequest, handle, serve};
