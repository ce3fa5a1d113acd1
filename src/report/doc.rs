//! The pieces a report document is made of, whatever its format: blocks of
//! text, tables and charts for the readable formats, and typed records and
//! tables for the data formats. Sections and the generic report build them;
//! each exporter renders them, so no section formats its own output.

use serde::Serialize;

/// What the test over the repeats says of a target against the base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// p < alpha and the ratio is above 1 + noise floor.
    Faster,
    /// p < alpha and the ratio is below 1 − noise floor.
    Slower,
    /// Not significant, or within the noise floor: benchstat's `~`.
    Same,
    /// One repeat on either side: the ratio alone, no test.
    Untested,
}

impl Verdict {
    /// The mark printed after a ratio.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Faster => "+",
            Verdict::Slower => "-",
            Verdict::Same => "~",
            Verdict::Untested => "?",
        }
    }
}

/// The colour of a relative value (reference §5.4, the 2025 blog rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shade {
    Red,
    Green,
    Grey,
}

/// One table cell: a typed value, and the colour of its verdict where the
/// format can show colour.
#[derive(Clone, Debug, PartialEq)]
pub struct TCell {
    pub value: Val,
    pub shade: Option<Shade>,
}

impl TCell {
    /// A cell coloured `shade`.
    pub fn shaded(value: impl Into<Val>, shade: Option<Shade>) -> Self {
        TCell {
            value: value.into(),
            shade,
        }
    }

    /// The text the readable formats show (`NA` where not measured).
    pub fn text(&self) -> String {
        self.value.text("NA")
    }
}

impl From<String> for TCell {
    fn from(text: String) -> Self {
        TCell::shaded(text, None)
    }
}

impl From<&str> for TCell {
    fn from(text: &str) -> Self {
        TCell::shaded(text, None)
    }
}

impl From<Val> for TCell {
    fn from(value: Val) -> Self {
        TCell::shaded(value, None)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<TCell>>,
    /// The first `left` columns are text (left-aligned); the others numbers.
    pub left: usize,
}

/// A chart only the HTML format draws.
#[derive(Clone, Debug, PartialEq)]
pub enum Chart {
    /// Relative QPS bars of group `n` of [`Report::groups`].
    Group(usize),
    /// Per-second QPS of row `row` of group `group`.
    PerSecond { group: usize, row: usize },
    /// QPS against threads of one test.
    Sweep { suite: String, test: String },
    /// A chart a section drew itself (SVG); `small` ones flow side by side.
    Drawn { svg: String, small: bool },
    /// A chart given as data (series, axes, the band of no change), drawn
    /// by the HTML exporter; `small` ones flow side by side.
    Plot { plot: Plot, small: bool },
}

/// The data of a chart.
#[derive(Clone, Debug, PartialEq)]
pub enum Plot {
    /// Values relative to the base, as bars with their intervals.
    Bars(super::svg::BarChart),
    /// Lines over x (seconds, thread counts).
    Lines(super::svg::LineChart),
}

impl Plot {
    /// The chart as SVG.
    pub fn svg(&self) -> String {
        match self {
            Plot::Bars(c) => super::svg::bar_chart(c),
            Plot::Lines(c) => super::svg::line_chart(c),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Level 1 (title) to 3.
    Heading(u8, String),
    Para(String),
    Bullets(Vec<String>),
    Table(Table),
    /// Blocks shown side by side where the format can.
    Beside(Vec<Block>),
    /// Blocks folded away under a one-line summary where the format can
    /// (HTML and Markdown `<details>`); the terminal prints them.
    Folded(String, Vec<Block>),
    Chart(Chart),
}

/// A typed value of a data record or table; the data exporters (csv, tsv)
/// format it, so that a part never writes a number as text itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// An empty field in every format.
    Empty,
    /// Not measured: empty in CSV, `NA` in TSV.
    Na,
    Text(String),
    Int(i64),
    /// The shortest text that reads back as the same number (`f64`'s `Display`).
    Num(f64),
    /// A number with this many decimals.
    Fixed(f64, usize),
    /// Throughput as the end-of-run table prints it ([`qps`]).
    Qps(f64),
    /// Three significant digits at most, for per-op figures ([`sig3`]).
    Sig3(f64),
    /// A ratio to the base with its verdict's mark: `0.93 -`.
    Relative(f64, Verdict),
    /// [`Val::Relative`] measured while the machine was busy: `1.42 +!`.
    BusyRel(f64, Verdict),
}

impl Val {
    /// `Num(v)`, or `Empty` when there is no value.
    pub fn num(v: Option<f64>) -> Val {
        v.map(Val::Num).unwrap_or(Val::Empty)
    }

    /// `Fixed(v, digits)`, or `missing` when there is no value.
    pub fn fixed(v: Option<f64>, digits: usize, missing: Val) -> Val {
        v.map(|v| Val::Fixed(v, digits)).unwrap_or(missing)
    }

    /// The value as text; `na` is what a value not measured reads as.
    pub fn text(&self, na: &str) -> String {
        match self {
            Val::Empty => String::new(),
            Val::Na => na.to_string(),
            Val::Text(s) => s.clone(),
            Val::Int(i) => i.to_string(),
            Val::Num(v) => v.to_string(),
            Val::Fixed(v, d) => format!("{v:.d$}"),
            Val::Qps(v) => qps(*v),
            Val::Sig3(v) => sig3(*v),
            Val::Relative(r, verdict) => format!("{r:.2} {}", verdict.mark()),
            Val::BusyRel(r, verdict) => format!("{r:.2} {}!", verdict.mark()),
        }
    }
}

impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::Text(s)
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Self {
        Val::Text(s.to_string())
    }
}

/// One record of a part for the record formats (CSV): column name and typed
/// value; the exporter orders the columns and leaves the others empty.
pub type Record = Vec<(&'static str, Val)>;

/// A table of a part for the table formats (TSV): an optional title line,
/// the header, then the rows.
#[derive(Clone, Debug, PartialEq)]
pub struct DataTable {
    pub title: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Val>>,
}

/// What a part gives the data formats: its records (CSV) and tables (TSV).
/// The readable formats get [`Block`]s; JSON serializes the part itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Data {
    pub records: Vec<Record>,
    pub tables: Vec<DataTable>,
}

/// QPS as the end-of-run table prints it.
pub fn qps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Three significant digits at most, for per-op figures.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (-a.log10().floor()) as usize + 2;
        let s = format!("{v:.decimals$}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_not_measured_reads_as_the_format_says_and_numbers_keep_their_form() {
        assert_eq!(Val::Na.text("NA"), "NA");
        assert_eq!(Val::Na.text(""), "");
        assert_eq!(Val::Empty.text("NA"), "");
        assert_eq!(Val::Num(0.1 + 0.2).text(""), "0.30000000000000004");
        assert_eq!(Val::Fixed(2.0 / 3.0, 3).text(""), "0.667");
        assert_eq!(Val::Qps(1234.5).text(""), "1234");
        assert_eq!(Val::Qps(12.34).text(""), "12.3");
        assert_eq!(Val::Sig3(0.012345).text(""), "0.0123");
        assert_eq!(Val::Relative(0.934, Verdict::Slower).text(""), "0.93 -");
        assert_eq!(Val::fixed(None, 2, Val::Na), Val::Na);
        assert_eq!(Val::num(None), Val::Empty);
        assert_eq!(TCell::from(Val::Na).text(), "NA");
    }
}
