//! Text that fits a terminal: the width to fit (the terminal's, else
//! `$COLUMNS`, else a fixed width), paragraphs wrapped at spaces with a
//! hanging indent, and values cut to a column with a marker. Widths count
//! characters (`µ`, `…` and `²` are one column each).

/// The mark at the end of a value cut to fit its column.
pub const CUT: char = '…';

/// The width of the terminal on standard output (where help goes), else
/// `$COLUMNS`, else `fallback`: help piped to a file or a pager is as wide
/// as asked, whatever terminal the other streams are on.
pub fn stdout_columns(fallback: usize) -> usize {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .or_else(env_columns)
        .unwrap_or(fallback)
}

/// The width of the terminal on standard error (where progress goes), else
/// `$COLUMNS`, else `fallback`.
pub fn stderr_columns(fallback: usize) -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map(|(w, _)| usize::from(w.0))
        .or_else(env_columns)
        .unwrap_or(fallback)
}

fn env_columns() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|w| *w >= 20)
}

/// Characters in `s`.
pub fn width(s: &str) -> usize {
    s.chars().count()
}

/// `s` cut to `max` characters, its last one [`CUT`] when something was
/// cut; `s` itself when it fits.
pub fn cut(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push(CUT);
    out
}

/// `text` wrapped at spaces into lines of at most `width` characters: the
/// first starts with `first`, the others with `rest` (a hanging indent).
/// A word longer than a line is split where it must be, after a comma or a
/// semicolon where it can (`a=on,b=off`), so no line is ever wider. Runs of
/// spaces inside the text are kept where they do not end a line (aligned
/// columns stay aligned), and an empty text is one line of `first`.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    // The text's own indent stays on its first line.
    let own = &text[..text.len() - text.trim_start_matches(' ').len()];
    let first = format!("{first}{own}");
    let first = first.as_str();
    let mut line = first.to_string();
    let mut fresh = true;
    let room = |indent: &str| width.saturating_sub(self::width(indent)).max(10);
    for (gap, word) in words(text) {
        let lead = if fresh { "" } else { gap };
        if self::width(&line) + self::width(lead) + self::width(word) <= width.max(1) {
            line.push_str(lead);
            line.push_str(word);
            fresh = false;
            continue;
        }
        // The word goes on a new line, split if it is wider than one.
        if !fresh {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
        }
        let mut w = word;
        loop {
            let max = room(if lines.is_empty() { first } else { rest });
            if self::width(w) <= max {
                line.push_str(w);
                fresh = false;
                break;
            }
            let (head, tail) = split_word(w, max);
            line.push_str(head);
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            w = tail;
        }
    }
    lines.push(line);
    for l in &mut lines {
        let trimmed = l.trim_end().len();
        l.truncate(trimmed);
    }
    lines
}

/// [`wrap`] joined, each line ending in a newline.
pub fn wrapped(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for l in wrap(text, width, first, rest) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The words of `text`, each with the spaces before it. A command in
/// backquotes (`` `rqps run --tests x` ``) is one word, so that a line never
/// breaks inside it where it fits a line.
fn words(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.len() - rest.trim_start_matches(' ').len();
        let gap = &rest[..start];
        let after = &rest[start..];
        if after.is_empty() {
            break;
        }
        let mut end = after.find(' ').unwrap_or(after.len());
        // An open backquote: the word runs to the space after its close.
        if after[..end].matches('`').count() % 2 == 1
            && let Some(close) = after[end..].find('`')
        {
            let close = end + close + 1;
            end = after[close..].find(' ').map_or(after.len(), |e| close + e);
        }
        out.push((if gap.is_empty() { " " } else { gap }, &after[..end]));
        rest = &after[end..];
    }
    out
}

/// `w` split in two, the first at most `max` characters: after its last
/// `,` or `;` that fits, else at `max`.
fn split_word(w: &str, max: usize) -> (&str, &str) {
    let at = w.char_indices().nth(max).map(|(i, _)| i).unwrap_or(w.len());
    let soft = w[..at]
        .rfind([',', ';'])
        .map(|i| i + 1)
        .filter(|i| *i > at / 2);
    w.split_at(soft.unwrap_or(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paragraph_wraps_at_spaces_with_its_hanging_indent_and_no_line_is_wider() {
        let text = "the quick brown fox jumps over the lazy dog again and again";
        let lines = wrap(text, 20, "  - ", "    ");
        assert_eq!(
            lines,
            [
                "  - the quick brown",
                "    fox jumps over",
                "    the lazy dog",
                "    again and again"
            ]
        );
        // A word wider than a line is split, after a comma where it can be.
        let long = "optimizer_switch index_merge=on,index_merge_union=on,index_merge_sort_union=on";
        let lines = wrap(long, 30, "", "  ");
        assert!(lines.iter().all(|l| width(l) <= 30), "{lines:#?}");
        assert_eq!(lines[1], "  index_merge=on,");
        assert_eq!(lines.concat().replace(' ', ""), long.replace(' ', ""));
        assert_eq!(wrap("", 10, "x", "y"), ["x"]);
        // A command in backquotes is not broken where it fits a line.
        assert_eq!(
            wrap("run it: `rqps run --tests a`, then", 22, "", ""),
            ["run it:", "`rqps run --tests a`,", "then"]
        );
        // The text's own indent stays on its first line.
        assert_eq!(wrap("   ab cd", 6, "", " "), ["   ab", " cd"]);
    }

    #[test]
    fn a_value_is_cut_to_its_column_with_the_mark_and_kept_when_it_fits() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(width(&cut("abcdef", 4)), 4);
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(cut("µs/op", 5), "µs/op");
    }
}
