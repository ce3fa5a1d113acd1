//! Markdown for posting (GitHub-flavoured tables). Values that the colour
//! rule makes red or green are bold, as Markdown has no colour.

use super::document::document;
use super::format::Exporter;
use crate::report::doc::{Block, Table};
use crate::report::model::{Report, Shade};

pub struct Markdown;

/// Escapes what would change a table or inline formatting.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' | '|' | '*' | '`' | '~' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            // Only a `<` that could open a tag or an autolink.
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(*n)) =>
            {
                out.push_str("\\<");
            }
            '\n' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

fn table(t: &Table, out: &mut String) {
    let cells = |v: Vec<String>| format!("| {} |\n", v.join(" | "));
    out.push_str(&cells(t.header.iter().map(|h| escape(h)).collect()));
    out.push_str(&cells(
        (0..t.header.len())
            .map(|i| if i < t.left { "---" } else { "---:" }.to_string())
            .collect(),
    ));
    for r in &t.rows {
        out.push_str(&cells(
            r.iter()
                .map(|c| {
                    let s = escape(&c.text());
                    match c.shade {
                        Some(Shade::Red) | Some(Shade::Green) if !s.is_empty() => {
                            format!("**{s}**")
                        }
                        _ => s,
                    }
                })
                .collect(),
        ));
    }
    out.push('\n');
}

pub fn block(b: &Block, out: &mut String) {
    match b {
        Block::Heading(level, s) => {
            out.push_str(&format!(
                "{} {}\n\n",
                "#".repeat(*level as usize),
                escape(s)
            ));
        }
        Block::Para(s) => out.push_str(&format!("{}\n\n", escape(s))),
        Block::Bullets(items) => {
            for i in items {
                out.push_str(&format!("- {}\n", escape(i)));
            }
            out.push('\n');
        }
        Block::Table(t) => table(t, out),
        Block::Beside(bs) => {
            for b in bs {
                block(b, out);
            }
        }
        Block::Folded(summary, bs) => {
            out.push_str(&format!(
                "<details><summary>{}</summary>\n\n",
                crate::report::svg::esc(summary)
            ));
            for b in bs {
                block(b, out);
            }
            out.push_str("</details>\n\n");
        }
        Block::Diff(d) => table(&d.table(), out),
        Block::Chart(_) => {}
    }
}

impl Exporter for Markdown {
    fn render(&self, report: &Report) -> String {
        let mut out = String::new();
        for b in document(report, false) {
            block(&b, &mut out);
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_table_and_inline_syntax() {
        assert_eq!(super::escape("a|b*c<d>"), "a\\|b\\*c\\<d>");
        assert_eq!(super::escape("p < 0.05 ~"), "p < 0.05 \\~");
        assert_eq!(super::escape("read-only_range=10"), "read-only_range=10");
    }
}
