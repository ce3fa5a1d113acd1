//! pgbench script files: SQL commands and meta-commands, parsed once into
//! typed commands with the `\if` jumps resolved.
//!
//! The format is PostgreSQL's pgbench (16/17):
//! - An SQL command runs up to its `;` (outside quotes, `"identifiers"`,
//!   `$tag$` bodies, comments and parentheses), across lines, or up to a
//!   meta-command on the same line (`SELECT ... \gset`) or the end of the
//!   file. `\;` puts a `;` into the command (several statements sent as one,
//!   for `\aset`). `--` comments and blank text between commands are skipped.
//! - `:name` in SQL is a variable reference (a name starts with a letter,
//!   `_` or a non-ASCII byte); `::type` casts are not. Unlike pgbench's
//!   simple protocol, a `:name` inside a string literal, a quoted identifier,
//!   a dollar-quoted body or a comment stays text: pgbench substitutes it
//!   there under `-M simple` and breaks the statement under `-M extended`
//!   and `prepared`, so scripts that work under all three never rely on it.
//! - A meta-command is a backslash, its name (case-insensitive) and
//!   whitespace-separated arguments up to the end of the line; a backslash
//!   at the end of a line continues it.
//!
//! Errors are [`ScriptError`]s whose text starts with `file:line:` and says
//! what to change.

use super::expr::{Expr, parse_expr};

/// A parsed script.
#[derive(Clone, Debug)]
pub struct Script {
    pub name: String,
    pub commands: Vec<Command>,
}

/// One command and the 1-based line it starts on.
#[derive(Clone, Debug)]
pub struct Command {
    pub line: u32,
    /// The command as written (SQL without its `;`, or the meta-command's
    /// line), for reports and errors.
    pub text: String,
    pub kind: CommandKind,
}

/// What a command does. Conditionals carry the indexes (into
/// `Script::commands`) of where control goes; the client
/// ([`super::client`]) follows them.
#[derive(Clone, Debug)]
pub enum CommandKind {
    /// An SQL command, with `:name` references kept apart.
    Sql { parts: Vec<SqlPart>, fetch: Fetch },
    /// `\set var expr`.
    Set { var: String, expr: Expr },
    /// `\sleep amount [unit]`.
    Sleep {
        amount: SleepAmount,
        unit: SleepUnit,
    },
    /// `\if cond`: when false, control goes to `next` (the matching
    /// `\elif`, `\else` or `\endif`).
    If { cond: Expr, next: usize },
    /// `\elif cond`: reached from a false branch, evaluate `cond` (false:
    /// go to `next`); reached by running off the end of a taken branch, go
    /// to `end` (the `\endif`).
    Elif { cond: Expr, next: usize, end: usize },
    /// `\else`: reached from a false branch, run on; reached by running off
    /// the end of a taken branch, go to `end` (the `\endif`).
    Else { end: usize },
    /// `\endif`: nothing to do.
    Endif,
    /// `\shell WORD...` (`var: None`) or `\setshell VAR WORD...`: the
    /// words (`:name` a variable, `::text` the text `:text`), joined by
    /// spaces when the command runs and handed to `sh -c`
    /// ([`super::shell`]). Runs only with `--allow-shell`.
    Shell {
        var: Option<String>,
        words: Vec<String>,
    },
    /// `\startpipeline`: the SQL commands up to `\endpipeline` are sent
    /// without waiting for their answers (the extended and prepared
    /// protocols only).
    StartPipeline,
    /// `\syncpipeline`: a sync point inside the pipeline (pgbench 17).
    SyncPipeline,
    /// `\endpipeline`: sends what is queued and reads every answer.
    EndPipeline,
}

/// A piece of SQL text: literal text or a `:name` reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlPart {
    Text(String),
    Var(String),
}

/// What to do with a query's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    None,
    /// `\gset [prefix]`: the last query must return exactly one row; each
    /// column goes into the variable `prefix` + column name.
    Gset(String),
    /// `\aset [prefix]`: every query's columns (of its last row) go into
    /// variables; a query without rows sets nothing.
    Aset(String),
}

/// How long `\sleep` sleeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepAmount {
    Int(i64),
    /// `:name`: the variable's value, read as an integer (as C's `atoi`).
    Var(String),
}

/// `\sleep`'s unit (seconds when none is given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepUnit {
    Us,
    Ms,
    S,
}

/// C's `atoi` as pgbench's `\sleep :var` uses it: leading spaces, a sign,
/// digits; `None` when no digit starts the text.
pub fn atoi(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let mut n: i64 = 0;
    for b in rest[..digits].bytes() {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    Some(if neg { -n } else { n })
}

/// A script that cannot be parsed; Display starts with `file:line: `.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScriptError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// Parses a script's text; `name` is used in errors (the file name).
pub fn parse_script(name: &str, text: &str) -> Result<Script, ScriptError> {
    refuse_nul(name, text)?;
    let mut p = ScriptParser {
        name,
        src: text.as_bytes(),
        text,
        pos: 0,
        line: 1,
        commands: Vec::new(),
    };
    p.run()?;
    let mut script = Script {
        name: name.to_string(),
        commands: p.commands,
    };
    resolve_conditionals(&mut script)?;
    if script.commands.is_empty() {
        return Err(ScriptError {
            file: name.to_string(),
            line: 1,
            message: "empty command list: the script has no SQL command and no meta-command"
                .to_string(),
        });
    }
    Ok(script)
}

/// A NUL byte cannot reach a server intact: SQLite ends the statement at it
/// (the rest counted as run though it never ran), and PostgreSQL's protocol
/// ends the string there. So a script holding one is refused as it is read,
/// with its line, on every engine.
fn refuse_nul(name: &str, text: &str) -> Result<(), ScriptError> {
    let Some(at) = text.find('\0') else {
        return Ok(());
    };
    let before = &text[..at];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    Err(ScriptError {
        file: name.to_string(),
        line: u32::try_from(line).unwrap_or(u32::MAX),
        message: format!(
            "a NUL byte (\\0) at column {column}: no engine can be given it (SQLite would \
             stop the statement there); remove it from the script"
        ),
    })
}

struct ScriptParser<'a> {
    name: &'a str,
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    line: u32,
    commands: Vec<Command>,
}

/// An SQL command being collected.
struct SqlBuf {
    parts: Vec<SqlPart>,
    /// Where the current literal text run starts in the source, if any.
    text_from: Option<usize>,
    start: usize,
    line: u32,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

impl<'a> ScriptParser<'a> {
    fn err(&self, line: u32, message: impl Into<String>) -> ScriptError {
        ScriptError {
            file: self.name.to_string(),
            line,
            message: message.into(),
        }
    }

    fn peek(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    /// Moves on by one byte, counting lines.
    fn bump(&mut self) {
        if self.src[self.pos] == b'\n' {
            self.line += 1;
        }
        self.pos += 1;
    }

    fn run(&mut self) -> Result<(), ScriptError> {
        loop {
            // Between commands: whitespace and `--` comments.
            loop {
                match self.peek(0) {
                    Some(b) if b.is_ascii_whitespace() || b == 0x0b => self.bump(),
                    Some(b'-') if self.peek(1) == Some(b'-') => self.skip_line_comment(),
                    _ => break,
                }
            }
            match self.peek(0) {
                None => return Ok(()),
                Some(b'\\') if !matches!(self.peek(1), Some(b';' | b':')) => self.meta()?,
                Some(b';') => self.bump(), // an empty command
                Some(_) => self.sql()?,
            }
        }
    }

    fn skip_line_comment(&mut self) {
        while let Some(b) = self.peek(0) {
            if b == b'\n' {
                break;
            }
            self.bump();
        }
    }

    /// Collects one SQL command up to its `;`, a meta-command or the end.
    fn sql(&mut self) -> Result<(), ScriptError> {
        let mut buf = SqlBuf {
            parts: Vec::new(),
            text_from: Some(self.pos),
            start: self.pos,
            line: self.line,
        };
        let mut depth: u32 = 0;
        while let Some(b) = self.peek(0) {
            match b {
                b'\'' => {
                    // E'...' takes backslash escapes.
                    let escapes = self.pos > 0
                        && matches!(self.src[self.pos - 1], b'e' | b'E')
                        && (self.pos < 2 || !is_ident_cont(self.src[self.pos - 2]));
                    self.quoted(b'\'', escapes, buf.line)?;
                }
                b'"' => self.quoted(b'"', false, buf.line)?,
                b'$' => self.dollar(buf.line)?,
                b'-' if self.peek(1) == Some(b'-') => self.skip_line_comment(),
                b'/' if self.peek(1) == Some(b'*') => self.block_comment(buf.line)?,
                b'(' => {
                    depth += 1;
                    self.bump();
                }
                b')' => {
                    depth = depth.saturating_sub(1);
                    self.bump();
                }
                b';' if depth == 0 => {
                    self.flush_text(&mut buf, self.pos);
                    self.bump();
                    break;
                }
                b'\\' => match self.peek(1) {
                    // `\;` and `\:` put the character itself into the command.
                    Some(c @ (b';' | b':')) => {
                        self.flush_text(&mut buf, self.pos);
                        push_text(&mut buf.parts, if c == b';' { ";" } else { ":" });
                        self.pos += 2;
                        buf.text_from = Some(self.pos);
                    }
                    _ => {
                        self.flush_text(&mut buf, self.pos);
                        break;
                    }
                },
                b':' => self.colon(&mut buf),
                _ => self.bump(),
            }
        }
        // At the end of the text (after a `;` or before a backslash the text
        // is already taken).
        self.flush_text(&mut buf, self.pos);
        let end = self.pos;
        self.finish_sql(buf, end);
        Ok(())
    }

    /// A `:` in SQL: a variable reference, or text (`::`, `:1`, `: `).
    fn colon(&mut self, buf: &mut SqlBuf) {
        match self.peek(1) {
            Some(b) if is_ident_start(b) => {
                self.flush_text(buf, self.pos);
                let from = self.pos + 1;
                let mut end = from;
                while end < self.src.len() && is_ident_cont(self.src[end]) {
                    end += 1;
                }
                buf.parts
                    .push(SqlPart::Var(self.text[from..end].to_string()));
                self.pos = end;
                buf.text_from = Some(end);
            }
            // `::cast`: all the colons are text (pgbench skips them together).
            _ => {
                while self.peek(0) == Some(b':') {
                    self.bump();
                }
            }
        }
    }

    fn flush_text(&self, buf: &mut SqlBuf, to: usize) {
        if let Some(from) = buf.text_from.take()
            && to > from
        {
            push_text(&mut buf.parts, &self.text[from..to]);
        }
    }

    fn finish_sql(&mut self, buf: SqlBuf, end: usize) {
        let mut parts = buf.parts;
        // Trailing whitespace goes; a command of only comments and spaces is none.
        if let Some(SqlPart::Text(t)) = parts.last_mut() {
            let keep = t.trim_end().len();
            t.truncate(keep);
            if t.is_empty() {
                parts.pop();
            }
        }
        let only_comments = parts.iter().all(|p| match p {
            SqlPart::Text(t) => is_blank_sql(t),
            SqlPart::Var(_) => false,
        });
        if only_comments {
            return;
        }
        let raw = &self.text[buf.start..end];
        let raw = raw.strip_suffix(';').unwrap_or(raw).trim_end();
        self.commands.push(Command {
            line: buf.line,
            text: raw.to_string(),
            kind: CommandKind::Sql {
                parts,
                fetch: Fetch::None,
            },
        });
    }

    /// A quoted string or identifier, from its opening quote.
    fn quoted(&mut self, q: u8, escapes: bool, line: u32) -> Result<(), ScriptError> {
        let open_line = self.line;
        self.bump();
        loop {
            match self.peek(0) {
                None => {
                    let what = if q == b'"' {
                        "quoted identifier"
                    } else {
                        "string literal"
                    };
                    return Err(self.err(
                        open_line.max(line),
                        format!(
                            "unterminated {what}: close the {} opened on this line",
                            q as char
                        ),
                    ));
                }
                Some(b'\\') if escapes => {
                    self.bump();
                    if self.peek(0).is_some() {
                        self.bump();
                    }
                }
                Some(b) if b == q => {
                    self.bump();
                    if self.peek(0) == Some(q) {
                        self.bump(); // doubled quote
                    } else {
                        return Ok(());
                    }
                }
                Some(_) => self.bump(),
            }
        }
    }

    /// `$tag$ ... $tag$`, or a `$` that is just text (`$1`, `a$b`).
    fn dollar(&mut self, line: u32) -> Result<(), ScriptError> {
        let prev_ident = self.pos > 0
            && (is_ident_cont(self.src[self.pos - 1]) || self.src[self.pos - 1] == b'$');
        let mut end = self.pos + 1;
        if !prev_ident {
            if end < self.src.len() && is_ident_start(self.src[end]) {
                while end < self.src.len() && (is_ident_cont(self.src[end])) {
                    end += 1;
                }
            }
            if self.src.get(end) == Some(&b'$') {
                let tag = &self.text[self.pos..=end];
                let open_line = self.line;
                let body = end + 1;
                return match self.text[body..].find(tag) {
                    Some(i) => {
                        while self.pos < body + i + tag.len() {
                            self.bump();
                        }
                        Ok(())
                    }
                    None => Err(self.err(
                        open_line.max(line),
                        format!(
                            "unterminated dollar-quoted string: close the {tag} opened on this line"
                        ),
                    )),
                };
            }
        }
        self.bump();
        Ok(())
    }

    /// A `/* ... */` comment (they nest, as in PostgreSQL).
    fn block_comment(&mut self, line: u32) -> Result<(), ScriptError> {
        let open_line = self.line;
        let mut depth = 0u32;
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(b'/'), Some(b'*')) => {
                    depth += 1;
                    self.bump();
                    self.bump();
                }
                (Some(b'*'), Some(b'/')) => {
                    self.bump();
                    self.bump();
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                (Some(_), _) => self.bump(),
                (None, _) => {
                    return Err(self.err(
                        open_line.max(line),
                        "unterminated /* comment: close it with */",
                    ));
                }
            }
        }
    }

    /// The logical line from here: up to a newline not escaped by a
    /// backslash, each escaped line end read as a space.
    fn logical_line(&mut self) -> String {
        let mut logical = String::new();
        let mut from = self.pos;
        while let Some(b) = self.peek(0) {
            if b == b'\\' && self.peek(1) == Some(b'\n') {
                logical.push_str(&self.text[from..self.pos]);
                logical.push(' ');
                self.bump();
                self.bump();
                from = self.pos;
            } else if b == b'\\' && self.peek(1) == Some(b'\r') && self.peek(2) == Some(b'\n') {
                logical.push_str(&self.text[from..self.pos]);
                logical.push(' ');
                self.bump();
                self.bump();
                self.bump();
                from = self.pos;
            } else if b == b'\n' {
                break;
            } else {
                self.bump();
            }
        }
        logical.push_str(&self.text[from..self.pos]);
        logical
    }

    /// One meta-command, from its backslash to the end of its (logical) line.
    fn meta(&mut self) -> Result<(), ScriptError> {
        let line = self.line;
        let start = self.pos;
        self.pos += 1; // the backslash
        let logical = self.logical_line();
        let raw = self.text[start..self.pos].trim_end().to_string();
        let logical = logical.trim_end();

        let (cmd, rest) = split_word(logical);
        let lower = cmd.to_ascii_lowercase();
        let kind = match lower.as_str() {
            "set" => {
                let (var, expr_text) = split_word(rest);
                if var.is_empty() {
                    return Err(
                        self.err(line, "\\set: missing argument: write \\set NAME EXPRESSION")
                    );
                }
                if !valid_variable_name(var) {
                    return Err(self.err(
                        line,
                        format!("\\set: invalid variable name \"{var}\" (a name is letters, digits and _, not starting with a digit)"),
                    ));
                }
                if expr_text.trim().is_empty() {
                    return Err(self.err(line, format!("\\set {var}: missing expression")));
                }
                let expr = self.expr(line, "set", expr_text)?;
                CommandKind::Set {
                    var: var.to_string(),
                    expr,
                }
            }
            "if" | "elif" => {
                if rest.trim().is_empty() {
                    return Err(self.err(line, format!("\\{lower}: missing condition")));
                }
                let cond = self.expr(line, &lower, rest)?;
                if lower == "if" {
                    CommandKind::If {
                        cond,
                        next: usize::MAX,
                    }
                } else {
                    CommandKind::Elif {
                        cond,
                        next: usize::MAX,
                        end: usize::MAX,
                    }
                }
            }
            "else" | "endif" => {
                if !rest.trim().is_empty() {
                    return Err(self.err(
                        line,
                        format!(
                            "\\{lower}: unexpected argument \"{}\" (\\{lower} takes none)",
                            rest.trim()
                        ),
                    ));
                }
                if lower == "else" {
                    CommandKind::Else { end: usize::MAX }
                } else {
                    CommandKind::Endif
                }
            }
            "sleep" => self.sleep_command(line, rest)?,
            "gset" | "aset" => {
                let words: Vec<&str> = rest.split_ascii_whitespace().collect();
                if words.len() > 1 {
                    return Err(self.err(
                        line,
                        format!(
                            "\\{lower}: too many arguments (at most one: the variable name prefix)"
                        ),
                    ));
                }
                let prefix = words.first().copied().unwrap_or("").to_string();
                let fetch = if lower == "gset" {
                    Fetch::Gset(prefix)
                } else {
                    Fetch::Aset(prefix)
                };
                match self.commands.last_mut() {
                    Some(Command {
                        kind:
                            CommandKind::Sql {
                                fetch: f @ Fetch::None,
                                ..
                            },
                        ..
                    }) => {
                        *f = fetch;
                        return Ok(());
                    }
                    _ => {
                        return Err(self.err(
                            line,
                            format!("\\{lower} must follow an SQL command: put it after the query, in place of its ';'"),
                        ));
                    }
                }
            }
            "shell" | "setshell" => self.shell(line, &lower, rest)?,
            "startpipeline" | "syncpipeline" | "endpipeline" => {
                if !rest.trim().is_empty() {
                    return Err(self.err(
                        line,
                        format!(
                            "\\{lower}: unexpected argument \"{}\" (\\{lower} takes none)",
                            rest.trim()
                        ),
                    ));
                }
                match lower.as_str() {
                    "startpipeline" => CommandKind::StartPipeline,
                    "syncpipeline" => CommandKind::SyncPipeline,
                    _ => CommandKind::EndPipeline,
                }
            }
            "" => return Err(self.err(
                line,
                "a lone backslash: write a meta-command name after it (\\set, \\sleep, \\if, ...)",
            )),
            _ => {
                return Err(self.err(
                    line,
                    format!("invalid command \\{cmd} (pgbench's meta-commands are \\set, \\sleep, \\gset, \\aset, \\if, \\elif, \\else, \\endif, \\shell, \\setshell, \\startpipeline, \\syncpipeline and \\endpipeline)"),
                ));
            }
        };
        self.commands.push(Command {
            line,
            text: raw,
            kind,
        });
        Ok(())
    }

    /// `\shell` and `\setshell`: their words, checked as pgbench checks
    /// them when it reads the script (at most [`MAX_META_WORDS`] words with
    /// the meta-command's name; a command; for `\setshell`, a variable).
    fn shell(&self, line: u32, cmd: &str, rest: &str) -> Result<CommandKind, ScriptError> {
        let mut words: Vec<String> = rest.split_ascii_whitespace().map(String::from).collect();
        if words.len() + 1 > MAX_META_WORDS {
            return Err(self.err(
                line,
                format!(
                    "\\{cmd}: too many arguments in command \"{cmd}\": {} words, at most {} after \\{cmd} (as pgbench)",
                    words.len(),
                    MAX_META_WORDS - 1
                ),
            ));
        }
        if cmd == "shell" {
            if words.is_empty() {
                return Err(self.err(
                    line,
                    "\\shell: missing command (write \\shell COMMAND [ARGUMENT ...])",
                ));
            }
            return Ok(CommandKind::Shell { var: None, words });
        }
        if words.len() < 2 {
            return Err(self.err(
                line,
                "\\setshell: missing argument (write \\setshell VARIABLE COMMAND [ARGUMENT ...])",
            ));
        }
        let var = words.remove(0);
        if !valid_variable_name(&var) {
            return Err(self.err(
                line,
                format!("\\setshell: invalid variable name \"{var}\" (a name is letters, digits and _, not starting with a digit)"),
            ));
        }
        Ok(CommandKind::Shell {
            var: Some(var),
            words,
        })
    }

    fn expr(&self, line: u32, cmd: &str, text: &str) -> Result<Expr, ScriptError> {
        parse_expr(text).map_err(|e| self.err(line, format!("\\{cmd}: {e}: {}", text.trim())))
    }

    fn sleep_command(&self, line: u32, rest: &str) -> Result<CommandKind, ScriptError> {
        let words: Vec<&str> = rest.split_ascii_whitespace().collect();
        let usage = "write \\sleep N [us|ms|s] or \\sleep :variable [us|ms|s]";
        let (amount_word, mut unit_word) = match words.as_slice() {
            [] => return Err(self.err(line, format!("\\sleep: missing argument: {usage}"))),
            [a] => (*a, None),
            [a, u] => (*a, Some(*u)),
            _ => return Err(self.err(line, format!("\\sleep: too many arguments: {usage}"))),
        };
        let amount = if let Some(var) = amount_word.strip_prefix(':') {
            if var.is_empty() {
                return Err(self.err(
                    line,
                    format!("\\sleep: missing variable name after ':': {usage}"),
                ));
            }
            SleepAmount::Var(var.to_string())
        } else {
            let body = amount_word.strip_prefix(['+', '-']).unwrap_or(amount_word);
            let digits = body.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return Err(self.err(
                    line,
                    format!(
                        "\\sleep: invalid sleep time, must be an integer ({amount_word}): {usage}"
                    ),
                ));
            }
            let suffix = &body[digits..];
            if !suffix.is_empty() {
                if unit_word.is_some() {
                    return Err(self.err(
                        line,
                        format!("\\sleep: invalid sleep time, must be an integer ({amount_word}): {usage}"),
                    ));
                }
                unit_word = Some(suffix);
            }
            let number = &amount_word[..amount_word.len() - suffix.len()];
            let n: i64 = number.parse().map_err(|_| {
                self.err(
                    line,
                    format!("\\sleep: sleep time {number} is out of range"),
                )
            })?;
            SleepAmount::Int(n)
        };
        let unit = match unit_word.map(str::to_ascii_lowercase).as_deref() {
            None | Some("s") => SleepUnit::S,
            Some("ms") => SleepUnit::Ms,
            Some("us") => SleepUnit::Us,
            Some(other) => {
                return Err(self.err(
                    line,
                    format!("\\sleep: unrecognized time unit \"{other}\", must be us, ms or s"),
                ));
            }
        };
        Ok(CommandKind::Sleep { amount, unit })
    }
}

/// Appends text to the parts, merging with a preceding text part.
fn push_text(parts: &mut Vec<SqlPart>, s: &str) {
    if let Some(SqlPart::Text(t)) = parts.last_mut() {
        t.push_str(s);
    } else {
        parts.push(SqlPart::Text(s.to_string()));
    }
}

/// Whether SQL text holds only whitespace and comments.
fn is_blank_sql(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"--") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else {
            return false;
        }
    }
    true
}

/// The most words a meta-command line holds, its name included (pgbench's
/// `MAX_ARGS`).
pub const MAX_META_WORDS: usize = 256;

/// The first whitespace-separated word and the rest after it.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// pgbench's variable names: letters, `_`, non-ASCII, and digits after the
/// first character.
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && is_ident_start(b[0]) && b.iter().all(|&c| is_ident_cont(c))
}

/// Resolves the `\if` jumps and checks the nesting, as pgbench does before
/// running a script.
fn resolve_conditionals(script: &mut Script) -> Result<(), ScriptError> {
    struct Open {
        /// The `\if`.
        at: usize,
        /// The last branch start (`\if` or `\elif`) whose `next` is unset.
        last: Option<usize>,
        /// The `\elif`s and `\else` whose `end` is the `\endif`.
        branches: Vec<usize>,
        seen_else: bool,
    }
    let err = |script: &Script, at: usize, message: &str| ScriptError {
        file: script.name.clone(),
        line: script.commands[at].line,
        message: message.to_string(),
    };
    let mut stack: Vec<Open> = Vec::new();
    for i in 0..script.commands.len() {
        let set_next = |commands: &mut Vec<Command>, from: Option<usize>, to: usize| {
            if let Some(from) = from {
                match &mut commands[from].kind {
                    CommandKind::If { next, .. } | CommandKind::Elif { next, .. } => *next = to,
                    _ => {}
                }
            }
        };
        match script.commands[i].kind {
            CommandKind::If { .. } => stack.push(Open {
                at: i,
                last: Some(i),
                branches: Vec::new(),
                seen_else: false,
            }),
            CommandKind::Elif { .. } | CommandKind::Else { .. } => {
                let is_else = matches!(script.commands[i].kind, CommandKind::Else { .. });
                let word = if is_else { "\\else" } else { "\\elif" };
                let Some(open) = stack.last_mut() else {
                    return Err(err(
                        script,
                        i,
                        &format!("{word} without matching \\if: add the \\if or remove the {word}"),
                    ));
                };
                if open.seen_else {
                    return Err(err(
                        script,
                        i,
                        &format!(
                            "{word} after \\else: an \\if has at most one \\else, after its \\elif branches"
                        ),
                    ));
                }
                set_next(&mut script.commands, open.last, i);
                open.last = if is_else { None } else { Some(i) };
                open.branches.push(i);
                open.seen_else |= is_else;
            }
            CommandKind::Endif => {
                let Some(open) = stack.pop() else {
                    return Err(err(
                        script,
                        i,
                        "\\endif without matching \\if: add the \\if or remove the \\endif",
                    ));
                };
                set_next(&mut script.commands, open.last, i);
                for b in open.branches {
                    match &mut script.commands[b].kind {
                        CommandKind::Elif { end, .. } | CommandKind::Else { end } => *end = i,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(err(
            script,
            open.at,
            "\\if without matching \\endif: close it with \\endif",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Script {
        parse_script("t.sql", text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        match parse_script("t.sql", text) {
            Ok(s) => panic!("parsed: {:?}", s.commands),
            Err(e) => e.to_string(),
        }
    }

    /// The SQL commands' parts, as (text, vars) in order.
    fn sql(script: &Script) -> Vec<(Vec<SqlPart>, Fetch)> {
        script
            .commands
            .iter()
            .filter_map(|c| match &c.kind {
                CommandKind::Sql { parts, fetch } => Some((parts.clone(), fetch.clone())),
                _ => None,
            })
            .collect()
    }

    fn t(s: &str) -> SqlPart {
        SqlPart::Text(s.to_string())
    }

    fn v(s: &str) -> SqlPart {
        SqlPart::Var(s.to_string())
    }

    #[test]
    fn sql_commands_end_at_semicolons_outside_quotes_comments_and_parentheses() {
        let s = parse(
            "-- a comment; not a command\n\
             SELECT 1;\n\
             SELECT 'a;b', \"c;d\", $$e;f$$, $x$ g;$$ $x$ -- h;\n  FROM t;\n\
             INSERT INTO t VALUES (1; 2)\n\
             ;\n\
             /* a ; /* nested ; */ comment */ SELECT E'\\';x' ; SELECT 2; SELECT\n3",
        );
        let texts: Vec<&str> = s.commands.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "SELECT 1",
                "SELECT 'a;b', \"c;d\", $$e;f$$, $x$ g;$$ $x$ -- h;\n  FROM t",
                "INSERT INTO t VALUES (1; 2)",
                "/* a ; /* nested ; */ comment */ SELECT E'\\';x'",
                "SELECT 2",
                "SELECT\n3",
            ]
        );
        let lines: Vec<u32> = s.commands.iter().map(|c| c.line).collect();
        assert_eq!(lines, [2, 3, 5, 7, 7, 7]);
        // The parts carry the text without the ';'.
        assert_eq!(sql(&s)[0].0, [t("SELECT 1")]);
    }

    #[test]
    fn variables_are_parts_but_casts_and_quoted_text_are_not() {
        let s = parse(
            "SELECT :a::int, x[1:2], ':b', \"c:d\", $$:e$$, :f_1+:g -- :h\n\
             , 10:30, :ü, a$b, $1 FROM t WHERE k = :k;",
        );
        assert_eq!(
            sql(&s)[0].0,
            [
                t("SELECT "),
                v("a"),
                t("::int, x[1:2], ':b', \"c:d\", $$:e$$, "),
                v("f_1"),
                t("+"),
                v("g"),
                t(" -- :h\n, 10:30, "),
                v("ü"),
                t(", a$b, $1 FROM t WHERE k = "),
                v("k"),
            ]
        );
        // \; and \: put the character itself into the command.
        let s = parse("SELECT 1 AS one \\; SELECT 2 \\:x;");
        assert_eq!(sql(&s)[0].0, [t("SELECT 1 AS one ; SELECT 2 :x")]);
    }

    #[test]
    fn gset_and_aset_attach_to_the_preceding_query() {
        let s = parse(
            "SELECT 1 AS a \\gset\n\
             SELECT 2 AS b \\gset p_\n\
             SELECT 7 AS g;\n\
             \\gset\n\
             SELECT 1 AS one \\; SELECT 2 AS two \\aset q_\n\
             SELECT 5::int AS c, 3 AS\n  multi\n  \\gset z_\n\
             SELECT 1;",
        );
        let fetches: Vec<Fetch> = sql(&s).into_iter().map(|(_, f)| f).collect();
        assert_eq!(
            fetches,
            [
                Fetch::Gset(String::new()),
                Fetch::Gset("p_".into()),
                Fetch::Gset(String::new()),
                Fetch::Aset("q_".into()),
                Fetch::Gset("z_".into()),
                Fetch::None,
            ]
        );
        assert_eq!(s.commands[0].text, "SELECT 1 AS a");
        assert_eq!(s.commands[4].text, "SELECT 5::int AS c, 3 AS\n  multi");
        assert_eq!(s.commands[4].line, 6);
        for (text, line) in [
            ("\\gset", 1),
            ("\\set x 1\n\\gset", 2),
            ("SELECT 1 \\gset\n\\gset", 2),
        ] {
            let e = err(text);
            assert!(
                e.starts_with(&format!("t.sql:{line}: \\gset must follow an SQL command")),
                "{text}: {e}"
            );
        }
        assert!(err("SELECT 1 \\aset a b").contains("too many arguments"));
    }

    #[test]
    fn conditional_nesting_errors_name_the_line() {
        for (text, want) in [
            (
                "SELECT 1;\n\\elif 1\n",
                "t.sql:2: \\elif without matching \\if",
            ),
            ("\\else\n", "t.sql:1: \\else without matching \\if"),
            ("\\endif\n", "t.sql:1: \\endif without matching \\if"),
            (
                "\\if 1\n\\else\n\\elif 2\n\\endif\n",
                "t.sql:3: \\elif after \\else",
            ),
            (
                "\\if 1\n\\else\n\\else\n\\endif\n",
                "t.sql:3: \\else after \\else",
            ),
            (
                "\\if 1\n\\if 2\n\\endif\nSELECT 1;\n",
                "t.sql:1: \\if without matching \\endif",
            ),
            ("\\if\n\\endif", "t.sql:1: \\if: missing condition"),
            (
                "\\if 1\n\\else 2\n\\endif",
                "t.sql:2: \\else: unexpected argument",
            ),
        ] {
            let e = err(text);
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn sleep_takes_a_number_or_variable_and_a_unit() {
        let s = parse(
            "\\sleep 10\n\\sleep 10ms\n\\sleep 250 us\n\\sleep :d ms\n\\SLEEP 2 S\n\\sleep -5",
        );
        let got: Vec<(SleepAmount, SleepUnit)> = s
            .commands
            .iter()
            .map(|c| match &c.kind {
                CommandKind::Sleep { amount, unit } => (amount.clone(), *unit),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            got,
            [
                (SleepAmount::Int(10), SleepUnit::S),
                (SleepAmount::Int(10), SleepUnit::Ms),
                (SleepAmount::Int(250), SleepUnit::Us),
                (SleepAmount::Var("d".into()), SleepUnit::Ms),
                (SleepAmount::Int(2), SleepUnit::S),
                (SleepAmount::Int(-5), SleepUnit::S),
            ]
        );
        for (text, want) in [
            ("\\sleep", "missing argument"),
            ("\\sleep 1 ms extra", "too many arguments"),
            (
                "\\sleep 1ms extra",
                "invalid sleep time, must be an integer (1ms)",
            ),
            ("\\sleep x", "invalid sleep time, must be an integer (x)"),
            (
                "\\sleep 5 min",
                "unrecognized time unit \"min\", must be us, ms or s",
            ),
            ("\\sleep :", "missing variable name"),
        ] {
            let e = err(text);
            assert!(e.starts_with("t.sql:1: \\sleep: "), "{e}");
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn set_parses_its_expression_and_names_file_and_line_on_errors() {
        let s =
            parse("\\set aid random(1, 100000 * :scale)\n\\set   d\t:aid \\\n  + 1\nSELECT :d;");
        assert_eq!(s.commands.len(), 3);
        assert!(matches!(&s.commands[0].kind, CommandKind::Set { var, .. } if var == "aid"));
        assert_eq!(s.commands[1].text, "\\set   d\t:aid \\\n  + 1");
        assert_eq!(s.commands[2].line, 4);
        let e = err("SELECT 1;\n\n\\set x 1 +* 2\n");
        assert!(
            e.starts_with("t.sql:3: \\set: syntax error at column 5"),
            "{e}"
        );
        let e = err("\\set x foo(1)");
        assert!(
            e.starts_with("t.sql:1: \\set: unexpected function name (foo)"),
            "{e}"
        );
        assert!(err("\\set").contains("missing argument"));
        assert!(err("\\set x").contains("missing expression"));
        assert!(err("\\set 1x 2").contains("invalid variable name \"1x\""));
    }

    #[test]
    fn shell_commands_keep_their_words_and_are_checked_as_pgbench_checks_them() {
        let s = parse_script(
            "t.sql",
            "\\setshell n echo \\\n  :one ::two\n\\SHELL true\n",
        )
        .unwrap();
        match (&s.commands[0].kind, &s.commands[1].kind) {
            (
                CommandKind::Shell {
                    var: Some(v),
                    words: w0,
                },
                CommandKind::Shell {
                    var: None,
                    words: w1,
                },
            ) => {
                assert_eq!((v.as_str(), w0.join(" ")), ("n", "echo :one ::two".into()));
                assert_eq!(w1, &["true"]);
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(s.commands[1].line, 3, "a continued line counts");
        assert!(err("\\shell").starts_with("t.sql:1: \\shell: missing command "));
        assert!(err("\\setshell v").starts_with("t.sql:1: \\setshell: missing argument "));
        assert!(err("\\setshell 1v echo 1").contains("invalid variable name \"1v\""));
        let words = vec!["a"; 255].join(" ");
        parse_script("t.sql", &format!("\\shell {words}")).unwrap();
        assert!(
            err(&format!("\\shell {words} b"))
                .contains("too many arguments in command \"shell\": 256 words, at most 255")
        );
    }

    #[test]
    fn pipeline_commands_parse_and_take_no_argument() {
        let s = parse("\\startpipeline\nSELECT 1;\n\\SyncPipeline\nSELECT 2;\n\\endpipeline\n");
        let kinds: Vec<&CommandKind> = s.commands.iter().map(|c| &c.kind).collect();
        assert!(matches!(kinds[0], CommandKind::StartPipeline));
        assert!(matches!(kinds[2], CommandKind::SyncPipeline));
        assert!(matches!(kinds[4], CommandKind::EndPipeline));
        let e = err("\\startpipeline now\nSELECT 1;\n\\endpipeline\n");
        assert!(
            e.starts_with("t.sql:1: \\startpipeline: unexpected argument \"now\""),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_meta_command_is_refused_with_its_line() {
        let e = err("SELECT 1;\n\\frobnicate\n");
        assert!(
            e.starts_with("t.sql:2: invalid command \\frobnicate"),
            "{e}"
        );
    }

    #[test]
    fn a_nul_byte_is_refused_with_its_line_and_column() {
        let e = err("SELECT 1;\n\0SELECT * FROM no_such_table;\n");
        assert!(
            e.starts_with("t.sql:2: a NUL byte (\\0) at column 1:"),
            "{e}"
        );
        let e = err("SELECT 1;\nSELECT 2;\nSELECT '\0';\n");
        assert!(
            e.starts_with("t.sql:3: a NUL byte (\\0) at column 9:"),
            "{e}"
        );
    }

    #[test]
    fn unterminated_quotes_and_empty_scripts_are_errors() {
        assert!(
            err("SELECT 1;\nSELECT 'abc;\n").starts_with("t.sql:2: unterminated string literal")
        );
        assert!(err("SELECT $$ x").starts_with("t.sql:1: unterminated dollar-quoted string"));
        assert!(err("SELECT /* x").starts_with("t.sql:1: unterminated /* comment"));
        assert!(err("-- nothing\n\n").starts_with("t.sql:1: empty command list"));
    }

    #[test]
    fn a_tpcb_like_script_parses_into_its_commands() {
        let s = parse(
            "\\set aid random(1, 100000 * :scale)\n\
             \\set bid random(1, 1 * :scale)\n\
             \\set tid random(1, 10 * :scale)\n\
             \\set delta random(-5000, 5000)\n\
             BEGIN;\n\
             UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
             SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
             UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
             UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
             INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
             END;\n",
        );
        assert_eq!(s.commands.len(), 11);
        assert_eq!(s.commands[10].text, "END");
        assert_eq!(s.commands[10].line, 11);
        let vars_used: Vec<Vec<&str>> = s
            .commands
            .iter()
            .filter_map(|c| match &c.kind {
                CommandKind::Sql { parts, .. } => Some(
                    parts
                        .iter()
                        .filter_map(|p| match p {
                            SqlPart::Var(n) => Some(n.as_str()),
                            SqlPart::Text(_) => None,
                        })
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        assert_eq!(
            vars_used,
            [
                vec![],
                vec!["delta", "aid"],
                vec!["aid"],
                vec!["delta", "tid"],
                vec!["delta", "bid"],
                vec!["tid", "bid", "aid", "delta"],
                vec![],
            ]
        );
    }
}
