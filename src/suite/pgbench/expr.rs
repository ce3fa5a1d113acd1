//! pgbench's expression language (`\set name expression`): parsed once into
//! a tree, evaluated per transaction without allocating.

use std::borrow::Cow;
use std::fmt::Write as _;

/// A value as pgbench's expressions know it. `Str` only comes from outside
/// (`-D NAME=VALUE`, `\gset`); an expression converts it to a number, a
/// boolean or NULL when it reads it, as pgbench does.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
    Bool(bool),
    Null,
    Str(String),
}

impl Value {
    /// The text pgbench substitutes for `:name` in SQL.
    pub fn to_sql_text(&self) -> Cow<'_, str> {
        match self {
            Value::Str(s) => Cow::Borrowed(s),
            other => {
                let mut s = String::new();
                other.write_sql_text(&mut s);
                Cow::Owned(s)
            }
        }
    }

    /// Appends the text pgbench substitutes for `:name` to `out` (no
    /// allocation beyond `out`'s growth).
    pub fn write_sql_text(&self, out: &mut String) {
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Double(d) => {
                let _ = write!(out, "{d}");
            }
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Null => {}
            Value::Str(s) => out.push_str(s),
        }
    }
}

/// A parsed expression.
#[derive(Clone, Debug)]
pub struct Expr {
    _text: String,
}

/// What evaluation needs from its caller: the variables and the client's own
/// random stream.
pub trait Env {
    /// The variable `name`, if set.
    fn var(&self, name: &str) -> Option<&Value>;
    /// The next 64 random bits of this client's stream (seeded per client).
    fn random_u64(&mut self) -> u64;
}

/// An expression that cannot be parsed: the message says where and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub message: String,
    /// 0-based byte offset in the expression text, when known.
    pub at: Option<usize>,
}

/// An expression that failed at run time (pgbench aborts the client on these).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("undefined variable \"{0}\"")]
    UndefinedVariable(String),
    #[error("{0}")]
    Invalid(String),
}

/// Parses one expression (the text after `\set name`).
pub fn parse_expr(text: &str) -> Result<Expr, ExprError> {
    Err(ExprError {
        message: format!("expressions are not implemented yet: {text}"),
        at: None,
    })
}

impl Expr {
    /// Evaluates the expression with `env`'s variables and random stream.
    pub fn eval(&self, _env: &mut dyn Env) -> Result<Value, EvalError> {
        Err(EvalError::Invalid("not implemented yet".into()))
    }
}
