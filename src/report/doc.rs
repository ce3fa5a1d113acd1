//! The pieces a report document is made of, whatever its format: blocks of
//! text, tables and charts, and CSV records. Sections and the generic report
//! build them; each exporter renders them.

use serde::Serialize;

/// The colour of a relative value (reference §5.4, the 2025 blog rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shade {
    Red,
    Green,
    Grey,
}

/// One table cell; `shade` colours it where the format can.
#[derive(Clone, Debug, PartialEq)]
pub struct TCell {
    pub text: String,
    pub shade: Option<Shade>,
}

impl From<String> for TCell {
    fn from(text: String) -> Self {
        TCell { text, shade: None }
    }
}

impl From<&str> for TCell {
    fn from(text: &str) -> Self {
        TCell {
            text: text.to_string(),
            shade: None,
        }
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

/// One CSV record of a part: column name and raw (unquoted) value; the
/// exporter quotes, orders the columns and leaves the others empty.
pub type CsvRecord = Vec<(&'static str, String)>;
