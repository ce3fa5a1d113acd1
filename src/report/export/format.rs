//! The formats and the trait each format's exporter implements.

use crate::report::model::Report;

/// Renders a whole comparison in one format.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Term,
    Md,
    Html,
    Csv,
    Tsv,
    Json,
}
