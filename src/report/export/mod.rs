//! Exporters: one [`Exporter`] trait (`format.rs`), one file per format. The
//! readable formats (term, md, html) render one shared [`Block`] document
//! built by [`document`] (`document.rs`), so they always say the same thing;
//! csv, tsv and json serialize the data directly. Each renders the generic
//! tables, then the parts the suites' sections built
//! ([`crate::report::section::Part`]), in section order. This file only
//! picks a format's exporter and re-exports; the exporters import what they
//! share from `format.rs` and `document.rs`, never from here.

pub mod csv;
pub mod document;
pub mod format;
pub mod html;
pub mod json;
pub mod md;
pub mod series;
pub mod term;
pub mod tsv;

pub use document::{
    ci_text, document, hw_cells, is_version_series, legend, mismatch_lines, rel_text,
};
pub use format::{Exporter, Format};
pub use term::View;

/// The exporter of `format`; `colour` is for the terminal format only.
pub fn exporter(format: Format, colour: bool) -> Box<dyn Exporter> {
    match format {
        Format::Term => Box::new(term::Term {
            colour,
            view: term::View::Full,
        }),
        Format::Md => Box::new(md::Markdown),
        Format::Html => Box::new(html::Html),
        Format::Csv => Box::new(csv::Csv),
        Format::Tsv => Box::new(tsv::Tsv),
        Format::Json => Box::new(json::Json),
    }
}

pub use super::doc::{Block, Chart, Plot, TCell, Table, Val};

pub use super::doc::qps;

pub use super::doc::sig3;
