//! The formats and the trait each format's exporter implements.

use crate::report::model::Report;

/// Renders a whole comparison in one format.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;

    /// Writes the rendering to `w`. The data formats (JSON, CSV) stream it
    /// as they make it: over thousands of runs their documents are tens of
    /// megabytes, which a string would hold on top of the report. The
    /// others write [`Exporter::render`]'s text.
    fn write(&self, report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(self.render(report).as_bytes())
    }
}

/// [`Exporter::write`] into a string, for the exporters whose `render` is
/// their `write`.
pub fn written(e: &dyn Exporter, report: &Report) -> String {
    let mut out = Vec::new();
    if let Err(err) = e.write(report, &mut out) {
        return format!("cannot render the report: {err}\n");
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
