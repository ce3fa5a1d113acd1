//! The terminal format: aligned text tables; ANSI colours only when asked
//! for (the CLI asks when stdout is a terminal and NO_COLOR is unset).

use super::document::document;

use super::format::Exporter;
use crate::report::doc::{Block, Table};
use crate::report::model::{Report, Shade};

pub struct Term {
    pub colour: bool,
    pub view: View,
}

/// How much of the report the terminal format prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Every section.
    #[default]
    Full,
    /// The answer first ([`crate::report::export::document::answer`]), and
    /// the names of the other sections.
    Answer,
    /// The title, the lines on top, and the sections named (`--section`).
    Sections(Vec<String>),
}

fn paint(s: &str, shade: Option<Shade>) -> String {
    let code = match shade {
        Some(Shade::Red) => "31",
        Some(Shade::Green) => "32",
        Some(Shade::Grey) => "90",
        None => return s.to_string(),
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// Renders one aligned table, coloured when `colour`.
pub fn table(t: &Table, colour: bool, out: &mut String) {
    let (header, rows, width) = aligned(t);
    out.push_str(&format!("  {}\n", header.join("  ").trim_end()));
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("  {}\n", rule.join("  ")));
    for (cells, src) in rows.iter().zip(&t.rows) {
        let line: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let shade = src.get(i).and_then(|c| c.shade);
                if colour { paint(c, shade) } else { c.clone() }
            })
            .collect();
        out.push_str(&format!("  {}\n", line.join("  ").trim_end()));
    }
}

/// Wraps a paragraph at 100 columns.
fn wrap(text: &str, out: &mut String) {
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + w.len() > 100 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
}

pub fn block(b: &Block, colour: bool, out: &mut String) {
    match b {
        Block::Heading(1, s) => {
            out.push_str(s);
            out.push('\n');
            out.push_str(&"=".repeat(s.chars().count()));
            out.push('\n');
        }
        Block::Heading(2, s) => {
            out.push('\n');
            out.push_str(s);
            out.push('\n');
            out.push_str(&"-".repeat(s.chars().count()));
            out.push('\n');
        }
        Block::Heading(_, s) => {
            out.push('\n');
            out.push_str(s);
            out.push_str(":\n");
        }
        Block::Para(s) => wrap(s, out),
        Block::Bullets(items) => {
            for i in items {
                out.push_str(&format!("  - {i}\n"));
            }
        }
        Block::Table(t) => table(t, colour, out),
        Block::Beside(bs) => {
            for b in bs {
                block(b, colour, out);
            }
        }
        Block::Folded(summary, bs) => {
            out.push_str(&format!("{summary}:\n"));
            for b in bs {
                block(b, colour, out);
            }
        }
        Block::Chart(_) => {}
    }
}

impl Exporter for Term {
    fn render(&self, report: &Report) -> String {
        let blocks = document(report, false);
        let blocks = match &self.view {
            View::Full => blocks,
            View::Answer => super::document::answer(report, blocks),
            View::Sections(names) => super::document::only_sections(blocks, names),
        };
        let mut out = String::new();
        for b in blocks {
            block(&b, self.colour, &mut out);
        }
        out
    }
}

/// Pads plain cells to aligned columns: the first `left` left-aligned.
pub fn aligned(t: &Table) -> (Vec<String>, Vec<Vec<String>>, Vec<usize>) {
    let n = t.header.len();
    let mut width = vec![0usize; n];
    for (i, h) in t.header.iter().enumerate() {
        width[i] = h.chars().count();
    }
    for r in &t.rows {
        for (i, c) in r.iter().enumerate().take(n) {
            width[i] = width[i].max(c.text().chars().count());
        }
    }
    let pad = |i: usize, s: &str| -> String {
        if i < t.left {
            format!("{s:<w$}", w = width[i])
        } else {
            format!("{s:>w$}", w = width[i])
        }
    };
    let header = t
        .header
        .iter()
        .enumerate()
        .map(|(i, h)| pad(i, h))
        .collect();
    let rows = t
        .rows
        .iter()
        .map(|r| {
            (0..n)
                .map(|i| pad(i, &r.get(i).map(|c| c.text()).unwrap_or_default()))
                .collect()
        })
        .collect();
    (header, rows, width)
}
