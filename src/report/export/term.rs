//! The terminal format: aligned text tables; ANSI colours only when asked
//! for (the CLI asks when stdout is a terminal and NO_COLOR is unset).

use super::document::document;

use super::format::Exporter;
use crate::report::doc::{Block, Diff, TCell, Table};
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

/// The widest line of a terminal report.
pub const WIDTH: usize = 120;

/// The column paragraphs are wrapped at (shorter lines read better).
const PARA_WIDTH: usize = 100;

/// Renders one aligned table, coloured when `colour`.
pub fn table(t: &Table, colour: bool, out: &mut String) {
    table_in(t, colour, false, out)
}

/// [`table`], within [`WIDTH`] when `cut`: where its columns are wider, its
/// widest text columns are cut (each cut cell ends in
/// [`crate::util::text::CUT`]).
fn table_in(t: &Table, colour: bool, cut: bool, out: &mut String) {
    let fitted;
    let t = if cut {
        fitted = fit(t, WIDTH - 2);
        &fitted
    } else {
        t
    };
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

/// `t` with its text columns cut so that its lines are at most `max`
/// characters: the widest text column first, never below its header's
/// width or [`CUT_FLOOR`] characters (names of tests and operations stay
/// whole). Number columns are never cut.
fn fit(t: &Table, max: usize) -> Table {
    use crate::util::text::{cut, width};
    let n = t.header.len();
    let mut w: Vec<usize> = t.header.iter().map(|h| width(h)).collect();
    for r in &t.rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(width(&c.text()));
        }
    }
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
    let floor = |i: usize| width(&t.header[i]).max(CUT_FLOOR);
    let mut capped = w.clone();
    while total(&capped) > max {
        let widest = (0..n.min(t.left))
            .filter(|i| capped[*i] > floor(*i))
            .max_by_key(|i| capped[*i]);
        let Some(i) = widest else { break };
        capped[i] -= 1;
    }
    if capped == w {
        return t.clone();
    }
    let mut out = t.clone();
    for r in &mut out.rows {
        for (i, c) in r.iter_mut().enumerate().take(n) {
            if capped[i] < w[i] {
                let text = c.text();
                if width(&text) > capped[i] {
                    *c = TCell::shaded(cut(&text, capped[i]), c.shade);
                }
            }
        }
    }
    out
}

/// The narrowest a text column is cut to.
const CUT_FLOOR: usize = 24;

/// Prints `d` one value a line: `name  base -> target`, names padded to
/// the longest name, each value cut to its share of [`WIDTH`] unless
/// `whole`; whole values wrap under their line instead.
fn diff(d: &Diff, whole: bool, out: &mut String) {
    use crate::util::text::{cut, width, wrapped};
    let [base, target] = &d.sides;
    out.push_str(&crate::util::text::wrapped(
        &format!("{} ({base} -> {target}):", d.title),
        WIDTH,
        "  ",
        "    ",
    ));
    let name_w = d
        .rows
        .iter()
        .map(|(n, _, _)| width(n))
        .max()
        .unwrap_or(0)
        .min(WIDTH / 3);
    let shown = |v: &Option<String>| match v {
        Some(v) if v.is_empty() => "''".to_string(),
        Some(v) => v.clone(),
        None => "(not set)".to_string(),
    };
    // Room for each value: the line less the indent, the name and " -> ".
    let room = WIDTH.saturating_sub(4 + name_w + 2 + 4) / 2;
    for (name, b, t) in &d.rows {
        let (b, t) = (shown(b), shown(t));
        let name = cut(name, name_w);
        if whole {
            let line = format!("    {name:<name_w$}  {b} -> {t}");
            if width(&line) <= WIDTH {
                out.push_str(&line);
                out.push('\n');
                continue;
            }
            // Too long for a line: the name, then each side's value under it.
            out.push_str(&format!("    {name}\n"));
            for (side, v) in [(base, &b), (target, &t)] {
                let first = format!("      {side}: ");
                let rest = " ".repeat(width(&first));
                out.push_str(&wrapped(v, WIDTH, &first, &rest));
            }
        } else {
            // A short value leaves its room to the other.
            let (bw, tw) = (width(&b), width(&t));
            let (b_room, t_room) = if bw < room {
                (bw, 2 * room - bw)
            } else if tw < room {
                (2 * room - tw, tw)
            } else {
                (room, room)
            };
            out.push_str(&format!(
                "    {name:<name_w$}  {} -> {}\n",
                cut(&b, b_room),
                cut(&t, t_room)
            ));
        }
    }
}

/// Prints one block at the report's widths: tables whole, the values of a
/// [`Diff`] cut to the line.
pub fn block(b: &Block, colour: bool, out: &mut String) {
    block_in(b, colour, Fit::Values, out)
}

/// What is cut to [`WIDTH`]: tables and the values of a [`Diff`] (the
/// answer), those values alone (`--full`), or nothing (`--section`: a
/// value too long for its line wraps under it).
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    All,
    Values,
    Nothing,
}

fn block_in(b: &Block, colour: bool, fit: Fit, out: &mut String) {
    use crate::util::text::wrapped;
    match b {
        Block::Heading(1, s) => {
            out.push_str(&wrapped(s, WIDTH, "", ""));
            out.push_str(&"=".repeat(s.chars().count().min(WIDTH)));
            out.push('\n');
        }
        Block::Heading(2, s) => {
            out.push('\n');
            out.push_str(&wrapped(s, WIDTH, "", ""));
            out.push_str(&"-".repeat(s.chars().count().min(WIDTH)));
            out.push('\n');
        }
        Block::Heading(_, s) => {
            out.push('\n');
            out.push_str(&wrapped(&format!("{s}:"), WIDTH, "", "  "));
        }
        Block::Para(s) => out.push_str(&wrapped(s, PARA_WIDTH, "", "")),
        Block::Bullets(items) => {
            for i in items {
                out.push_str(&wrapped(i, WIDTH, "  - ", "    "));
            }
        }
        Block::Table(t) => table_in(t, colour, fit == Fit::All, out),
        Block::Beside(bs) => {
            for b in bs {
                block_in(b, colour, fit, out);
            }
        }
        Block::Folded(summary, bs) => {
            out.push_str(&wrapped(&format!("{summary}:"), WIDTH, "", "  "));
            for b in bs {
                block_in(b, colour, fit, out);
            }
        }
        Block::Diff(d) => diff(d, fit == Fit::Nothing, out),
        Block::Chart(_) => {}
    }
}

impl Exporter for Term {
    fn render(&self, report: &Report) -> String {
        let blocks = document(report, false);
        let (blocks, fit, closing) = match &self.view {
            View::Full => (blocks, Fit::Values, true),
            View::Answer => (super::document::answer(report, blocks), Fit::All, true),
            View::Sections(names) => (
                super::document::only_sections(blocks, names),
                Fit::Nothing,
                false,
            ),
        };
        let mut out = String::new();
        let mut after_list = false;
        let closing = if closing {
            super::document::closing(report)
        } else {
            Vec::new()
        };
        // The answer again at the end, where the terminal stops.
        for b in blocks.iter().chain(&closing) {
            // A paragraph after a table, a list or a paragraph starts after a blank line.
            if after_list && matches!(b, Block::Para(_)) {
                out.push('\n');
            }
            after_list = matches!(
                b,
                Block::Table(_) | Block::Diff(_) | Block::Bullets(_) | Block::Para(_)
            );
            block_in(b, self.colour, fit, &mut out);
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
