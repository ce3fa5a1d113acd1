//! pgbench's expression language, the text after `\set name`, `\if` and
//! `\elif`: parsed once into a tree, evaluated per transaction without
//! allocating (the tree is walked with small `Copy` values; variables are
//! borrowed from the caller's [`Env`]).
//!
//! The contract is PostgreSQL's pgbench (16/17): the same operators with
//! the same precedence (SQL's), the same functions, and the same results for
//! fixed inputs, including what C does with integers (division truncates
//! towards zero, `%` takes the dividend's sign, shifts by 64 or more wrap
//! the count as x86 does), pgbench's overflow errors ("bigint add out of
//! range"), its NULL handling (any NULL argument gives NULL, except in `IS`;
//! `NULL OR true` is NULL, as in pgbench), the exact `hash_murmur2`,
//! `hash_fnv1a` and `permute` (the latter on PostgreSQL's xoroshiro128**
//! generator, [`PgPrng`], so one seed gives pgbench's permutation), and the
//! parameter checks of the random functions, which draw with pgbench's
//! algorithms so that pgbench's client streams ([`ClientStreams`]) give
//! pgbench's values.
//!
//! Values that come from outside (`-D NAME=VALUE`, `\gset`) are strings;
//! an expression reads them as pgbench does: `null` is NULL, prefixes of
//! `true`/`yes` and `on` are true, prefixes of `false`/`no`, `off` and `of`
//! are false, then an integer, then a double, else an error.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

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
    /// The text pgbench substitutes for `:name` in SQL: integers in
    /// decimal, doubles as C's `%.15g` (with `Infinity`, `-Infinity` and
    /// `NaN` as PostgreSQL prints them), `true`/`false`, and `NULL` for NULL
    /// (pgbench substitutes the word, also as a parameter's text).
    pub fn to_sql_text(&self) -> Cow<'_, str> {
        match self {
            Value::Str(s) => Cow::Borrowed(s),
            Value::Bool(true) => Cow::Borrowed("true"),
            Value::Bool(false) => Cow::Borrowed("false"),
            Value::Null => Cow::Borrowed("NULL"),
            other => {
                let mut s = String::new();
                other.write_sql_text(&mut s);
                Cow::Owned(s)
            }
        }
    }

    /// Appends [`Value::to_sql_text`] to `out` (no allocation beyond
    /// `out`'s own growth: the hot path of SQL substitution).
    pub fn write_sql_text(&self, out: &mut String) {
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Double(d) => write_double(out, *d),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Null => out.push_str("NULL"),
            Value::Str(s) => out.push_str(s),
        }
    }

    /// Whether this is NULL (a `Str` reading `null` counts).
    pub fn is_null(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Str(s) => s.eq_ignore_ascii_case("null"),
            _ => false,
        }
    }
}

impl From<Val> for Value {
    fn from(v: Val) -> Value {
        match v {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(b),
            Val::Int(i) => Value::Int(i),
            Val::Double(d) => Value::Double(d),
        }
    }
}

/// What `debug(x)` prints of a value, as pgbench 15 does: `int 5`,
/// `double 1.5` (`%.15g`), `boolean true`, `null`.
pub fn debug_text(v: Val) -> String {
    match v {
        Val::Int(i) => format!("int {i}"),
        Val::Double(d) => {
            let mut s = String::from("double ");
            write_double(&mut s, d);
            s
        }
        Val::Bool(b) => format!("boolean {b}"),
        Val::Null => "null".into(),
    }
}

/// Writes `d` as C's `printf("%.15g")` does (pgbench's `DBL_DIG`), with
/// PostgreSQL's spellings of the infinities and NaN.
fn write_double(out: &mut String, d: f64) {
    if d.is_nan() {
        out.push_str("NaN");
        return;
    }
    if d.is_infinite() {
        out.push_str(if d > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if d == 0.0 {
        out.push_str(if d.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // %g: the exponent X of the value rounded to 15 significant digits
    // decides between %e (X < -4 or X >= 15) and %f with 14 - X decimals;
    // trailing zeros and a trailing point go.
    let mut sci = StackStr::new();
    let _ = write!(sci, "{d:.14e}");
    let s = sci.as_str();
    let e = s.rfind('e').unwrap_or(s.len());
    let exp: i32 = s[e + 1..].parse().unwrap_or(0);
    if !(-4..15).contains(&exp) {
        out.push_str(trim_fraction(&s[..e]));
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        let _ = write!(out, "{a}");
    } else {
        let mut fixed = StackStr::new();
        let _ = write!(fixed, "{:.*}", (14 - exp) as usize, d);
        out.push_str(trim_fraction(fixed.as_str()));
    }
}

/// `1.2300` -> `1.23`, `5.000` -> `5`, `120` stays.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A small string on the stack, for formatting numbers without allocating.
struct StackStr {
    buf: [u8; 64],
    len: usize,
}

impl StackStr {
    fn new() -> Self {
        StackStr {
            buf: [0; 64],
            len: 0,
        }
    }
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackStr {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// What evaluation needs from its caller: the variables and the client's own
/// random stream.
pub trait Env {
    /// The variable `name`, if set.
    fn var(&self, name: &str) -> Option<&Value>;
    /// The variable in slot `slot` (see [`Expr::resolve`]), if set; `None`
    /// falls back to [`Env::var`] by name. Default: no slots.
    #[inline]
    fn slot(&self, _slot: u32) -> Option<&Value> {
        None
    }
    /// The next 64 random bits of this client's stream (seeded per client;
    /// [`PgPrng`] is pgbench's own generator).
    fn random_u64(&mut self) -> u64;
    /// `debug(x)` evaluated to `v` (pgbench prints it to standard error).
    /// Default: nothing.
    fn debug(&mut self, _v: Val) {}
}

/// PostgreSQL's pseudo-random generator (`pg_prng`: xoroshiro128**, its
/// state filled from a 64-bit seed by splitmix64). `permute` needs it to
/// give pgbench's permutations; a suite may also use it as a client's
/// [`Env::random_u64`] stream.
#[derive(Clone, Debug)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

impl PgPrng {
    /// The generator as `pg_prng_seed(seed)` leaves it.
    pub fn seeded(seed: u64) -> PgPrng {
        let mut sm = seed;
        let mut splitmix = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let (s0, s1) = (splitmix(), splitmix());
        if s0 == 0 && s1 == 0 {
            // All zeroes is a fixed point; pg_prng puts Knuth's LCG constants.
            PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            PgPrng { s0, s1 }
        }
    }

    /// The next 64 bits (`pg_prng_uint64`).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }
}

/// The generators pgbench 15 gives one client for `--random-seed=SEED`
/// when every client has a thread of its own (`-j` equal to `-c`, as in
/// rqps): pgbench seeds a base generator with `SEED`, seeds each client's
/// expression stream from the base's next draws in client order, takes
/// `:default_seed` from the draw after them, then seeds each thread's three
/// streams (script choice, `--rate` schedule, log sampling) from the next
/// draws in thread order. So the same seed and client count give pgbench's
/// values (checked against pgbench 15 in the tests).
#[derive(Clone, Debug)]
pub struct ClientStreams {
    /// `random()` and the other random functions (pgbench's `cs_func_rs`).
    pub func: PgPrng,
    /// Which script a transaction runs (the thread's `ts_choose_rs`).
    pub choose: PgPrng,
    /// The `--rate` schedule (the thread's `ts_throttle_rs`).
    pub throttle: PgPrng,
    /// Which transactions `--sampling-rate` logs (the thread's
    /// `ts_sample_rs`).
    pub sample: PgPrng,
    /// `:default_seed`, the same for every client.
    pub default_seed: i64,
}

impl ClientStreams {
    /// The streams of client `id` of `clients` for `seed`.
    pub fn of(seed: u64, clients: usize, id: usize) -> ClientStreams {
        let mut base = PgPrng::seeded(seed);
        let mut draws = (0..).map(move |_| base.next_u64());
        let mut nth = |n: usize| draws.nth(n).unwrap_or(0);
        // Draws 0..clients: the clients' expression streams.
        let func = PgPrng::seeded(nth(id));
        let default_seed = nth(clients - id - 1) as i64;
        // Then three per thread: choose, throttle, sample.
        let choose = PgPrng::seeded(nth(3 * id));
        let throttle = PgPrng::seeded(nth(0));
        let sample = PgPrng::seeded(nth(0));
        ClientStreams {
            func,
            choose,
            throttle,
            sample,
            default_seed,
        }
    }
}

/// A uniform integer in `[lo, hi]` as `pg_prng_uint64_range` draws it.
#[inline]
pub fn uniform_range(rng: &mut PgPrng, lo: u64, hi: u64) -> u64 {
    lo + uniform_u64(hi - lo, || rng.next_u64())
}

/// A double in `[0, 1)` as `pg_prng_double` draws it.
#[inline]
pub fn unit_draw(rng: &mut PgPrng) -> f64 {
    unit_double(rng.next_u64())
}

/// A uniform integer in `[0, range]` from `next` by bitmask rejection, as
/// `pg_prng_uint64_range` draws it (so a [`PgPrng`] stream gives pgbench's
/// numbers).
#[inline]
fn uniform_u64(range: u64, mut next: impl FnMut() -> u64) -> u64 {
    if range == 0 {
        return 0;
    }
    let shift = range.leading_zeros();
    loop {
        let v = next() >> shift;
        if v <= range {
            return v;
        }
    }
}

/// A double in `[0, 1)` with 52 random bits (`pg_prng_double`).
#[inline]
fn unit_double(bits: u64) -> f64 {
    (bits >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
}

/// `hash_fnv1a(val, seed)`: FNV-1a over the 8 bytes of `val`, low byte
/// first, starting from the offset basis XOR `seed`.
pub fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h = FNV_OFFSET_BASIS ^ seed;
    let mut v = val as u64;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    h as i64
}

/// `hash_murmur2(val, seed)`: MurmurHash64A of the 8 bytes of `val`.
pub fn hash_murmur2(val: i64, seed: u64) -> i64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ M.wrapping_mul(8);
    let mut k = val as u64;
    k = k.wrapping_mul(M);
    k ^= k >> R;
    k = k.wrapping_mul(M);
    h ^= k;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h as i64
}

/// `permute(val, size, seed)`: pgbench's pseudorandom permutation of
/// `[0, size)` (six rounds of odd multiplications, XORs and rotations on
/// overlapping power-of-two halves, plus a random offset, drawn from a
/// [`PgPrng`] seeded with `seed`). `size` must be positive (checked by the
/// caller); sizes below 2 give 0.
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rng = PgPrng::seeded(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    // The largest power of two <= size, as a bit count and a mask.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = uniform_u64(size - 1, || rng.next_u64());
        v = (v + r) % size;
    }
    v as i64
}

/// pgbench's limits on the random functions' parameters.
const MIN_GAUSSIAN_PARAM: f64 = 2.0;
const MIN_ZIPFIAN_PARAM: f64 = 1.001;
const MAX_ZIPFIAN_PARAM: f64 = 1000.0;
/// pgbench evaluates at most this many arguments of one function.
const MAX_FARGS: usize = 16;

/// A value during evaluation: `Copy`, never a string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Val {
    fn type_name(self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Int(_) => "int",
            Val::Double(_) => "double",
        }
    }

    /// pgbench's truth for `\if` and `CASE`: NULL and zero are false.
    pub fn truth(self) -> bool {
        match self {
            Val::Null => false,
            Val::Bool(b) => b,
            Val::Int(i) => i != 0,
            Val::Double(d) => d != 0.0,
        }
    }

    fn to_bool(self) -> Result<bool, EvalError> {
        match self {
            Val::Bool(b) => Ok(b),
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "boolean",
            }),
        }
    }

    fn to_int(self) -> Result<i64, EvalError> {
        match self {
            Val::Int(i) => Ok(i),
            Val::Double(d) => {
                let r = d.round_ties_even();
                // FLOAT8_FITS_IN_INT64: [-2^63, 2^63).
                if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r)
                {
                    Err(EvalError::DoubleToInt(r))
                } else {
                    Ok(r as i64)
                }
            }
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "int",
            }),
        }
    }

    fn to_double(self) -> Result<f64, EvalError> {
        match self {
            Val::Double(d) => Ok(d),
            Val::Int(i) => Ok(i as f64),
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "double",
            }),
        }
    }
}

/// Reads a variable's text as pgbench does (`makeVariableValue`).
pub fn parse_text_value(name: &str, text: &str) -> Result<Val, EvalError> {
    let malformed = || EvalError::MalformedVariable {
        name: name.to_string(),
        value: text.to_string(),
    };
    if text.is_empty() {
        return Err(malformed());
    }
    let prefix_of =
        |word: &str| text.len() <= word.len() && word[..text.len()].eq_ignore_ascii_case(text);
    if text.eq_ignore_ascii_case("null") {
        return Ok(Val::Null);
    }
    if prefix_of("true") || prefix_of("yes") || text.eq_ignore_ascii_case("on") {
        return Ok(Val::Bool(true));
    }
    if prefix_of("false")
        || prefix_of("no")
        || text.eq_ignore_ascii_case("off")
        || text.eq_ignore_ascii_case("of")
    {
        return Ok(Val::Bool(false));
    }
    let trimmed = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let digits = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return trimmed
            .strip_prefix('+')
            .unwrap_or(trimmed)
            .parse::<i64>()
            .map(Val::Int)
            .map_err(|_| EvalError::IntOutOfRange(text.to_string()));
    }
    match trimmed.parse::<f64>() {
        Ok(d) if d.is_infinite() && trimmed.bytes().any(|b| b.eq_ignore_ascii_case(&b'i')) => {
            Ok(Val::Double(d))
        }
        Ok(d) if out_of_double_range(trimmed, d) => Err(malformed()),
        Ok(d) => Ok(Val::Double(d)),
        Err(_) => Err(malformed()),
    }
}

/// Whether C's `strtod` would report `ERANGE` for `text`, parsed as `d`:
/// an overflow to infinity, or an underflow to a subnormal or to zero from
/// nonzero digits (pgbench rejects both: "double constant overflow").
fn out_of_double_range(text: &str, d: f64) -> bool {
    if d.is_infinite() {
        return true;
    }
    if d != 0.0 {
        return d.is_subnormal();
    }
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// A value's [`Val`] (strings read as pgbench reads them).
pub fn value_val(name: &str, v: &Value) -> Result<Val, EvalError> {
    Ok(match v {
        Value::Int(i) => Val::Int(*i),
        Value::Double(d) => Val::Double(*d),
        Value::Bool(b) => Val::Bool(*b),
        Value::Null => Val::Null,
        Value::Str(s) => parse_text_value(name, s)?,
    })
}

/// An expression that failed at run time (pgbench aborts the client on
/// these). The messages are pgbench's, so that they can be looked up.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error(
        "undefined variable \"{0}\" (set it with \\set or \\gset before this command, or --define {0}=VALUE)"
    )]
    UndefinedVariable(String),
    #[error(
        "malformed variable \"{name}\" value: \"{value}\" (expected a number, a boolean or null)"
    )]
    MalformedVariable { name: String, value: String },
    #[error("value \"{0}\" is out of range for type bigint")]
    IntOutOfRange(String),
    #[error("bigint {0} out of range")]
    Overflow(&'static str),
    #[error("division by zero")]
    DivisionByZero,
    #[error("double to int overflow for {0:.6}")]
    DoubleToInt(f64),
    #[error("cannot coerce {from} to {to}")]
    Coerce {
        from: &'static str,
        to: &'static str,
    },
    #[error("empty range given to random")]
    EmptyRange,
    #[error("random range is too large")]
    RangeTooLarge,
    #[error("gaussian parameter must be at least 2.000000 (not {0:.6})")]
    Gaussian(f64),
    #[error("zipfian parameter must be in range [1.001, 1000] (not {0:.6})")]
    Zipfian(f64),
    #[error("exponential parameter must be greater than zero (not {0:.6})")]
    Exponential(f64),
    #[error("permute size parameter must be greater than zero")]
    PermuteSize,
}

/// An expression that cannot be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub message: String,
    /// 0-based byte offset in the expression text, when known.
    pub at: Option<usize>,
}

/// The functions and operators (pgbench evaluates operators as functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Le,
    Lt,
    Is,
    Case,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes.
#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    /// One or more (least, greatest).
    AtLeastOne,
    /// `n` or `n + 1`; without the last, `:default_seed` is passed.
    Seeded(usize),
}

/// The functions a script may call by name (case-insensitive).
const FUNCTIONS: &[(&str, Func, Arity)] = &[
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("hash", Func::HashMurmur2, Arity::Seeded(1)),
    ("hash_murmur2", Func::HashMurmur2, Arity::Seeded(1)),
    ("hash_fnv1a", Func::HashFnv1a, Arity::Seeded(1)),
    ("permute", Func::Permute, Arity::Seeded(2)),
];

/// One node of a parsed expression.
#[derive(Clone, Debug)]
enum Node {
    Const(Val),
    Var(Box<str>),
    /// A variable resolved to its slot ([`Expr::resolve`]), with its name.
    Slot(u32, Box<str>),
    Call(Func, Box<[Node]>),
}

/// A parsed expression.
#[derive(Clone, Debug)]
pub struct Expr {
    root: Node,
}

// ---------------------------------------------------------------- lexing

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Int(i64),
    /// 9223372036854775808: only valid after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    Bool(bool),
    Null,
    Var(&'a str),
    Ident(&'a str),
    /// An operator or punctuation: + - * / % = <> <= >= << >> < > | & # ~ ( ) ,
    Op(&'static str),
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    Eof,
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn err(&self, at: usize, message: String) -> ExprError {
        ExprError {
            message,
            at: Some(at),
        }
    }

    fn skip_space(&mut self) {
        let b = self.text.as_bytes();
        while self.pos < b.len() {
            match b[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => self.pos += 1,
                // A line continuation.
                b'\\' if b.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                b'\\'
                    if b.get(self.pos + 1) == Some(&b'\r')
                        && b.get(self.pos + 2) == Some(&b'\n') =>
                {
                    self.pos += 3
                }
                _ => break,
            }
        }
    }

    /// The next token and its start offset.
    fn next(&mut self) -> Result<(Tok<'a>, usize), ExprError> {
        self.skip_space();
        let b = self.text.as_bytes();
        let start = self.pos;
        let Some(&c) = b.get(start) else {
            return Ok((Tok::Eof, start));
        };
        let text = self.text;
        let starts = |s: &str| text[start..].starts_with(s);
        let op: Option<&'static str> = match c {
            b'<' if starts("<>") => Some("<>"),
            b'<' if starts("<=") => Some("<="),
            b'<' if starts("<<") => Some("<<"),
            b'>' if starts(">=") => Some(">="),
            b'>' if starts(">>") => Some(">>"),
            b'!' if starts("!=") => Some("!="),
            b'+' => Some("+"),
            b'-' => Some("-"),
            b'*' => Some("*"),
            b'/' => Some("/"),
            b'%' => Some("%"),
            b'=' => Some("="),
            b'<' => Some("<"),
            b'>' => Some(">"),
            b'|' => Some("|"),
            b'&' => Some("&"),
            b'#' => Some("#"),
            b'~' => Some("~"),
            b'(' => Some("("),
            b')' => Some(")"),
            b',' => Some(","),
            _ => None,
        };
        if let Some(op) = op {
            self.pos = start + op.len();
            // != is <>.
            return Ok((Tok::Op(if op == "!=" { "<>" } else { op }), start));
        }
        match c {
            b':' => {
                let mut end = start + 1;
                while end < b.len() && is_alnum(b[end]) {
                    end += 1;
                }
                if end == start + 1 {
                    return Err(self.err(
                        start,
                        "unexpected character (:): a variable is ':' followed by its name"
                            .to_string(),
                    ));
                }
                self.pos = end;
                Ok((Tok::Var(&self.text[start + 1..end]), start))
            }
            b'0'..=b'9' | b'.' => self.number(start),
            c if is_alpha(c) => {
                let mut end = start + 1;
                while end < b.len() && is_alnum(b[end]) {
                    end += 1;
                }
                self.pos = end;
                let word = &self.text[start..end];
                let kw = |k: &str| word.eq_ignore_ascii_case(k);
                let tok = if kw("and") {
                    Tok::And
                } else if kw("or") {
                    Tok::Or
                } else if kw("not") {
                    Tok::Not
                } else if kw("is") {
                    Tok::Is
                } else if kw("isnull") {
                    Tok::IsNull
                } else if kw("notnull") {
                    Tok::NotNull
                } else if kw("case") {
                    Tok::Case
                } else if kw("when") {
                    Tok::When
                } else if kw("then") {
                    Tok::Then
                } else if kw("else") {
                    Tok::Else
                } else if kw("end") {
                    Tok::End
                } else if kw("null") {
                    Tok::Null
                } else if kw("true") {
                    Tok::Bool(true)
                } else if kw("false") {
                    Tok::Bool(false)
                } else {
                    Tok::Ident(word)
                };
                Ok((tok, start))
            }
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('?');
                Err(self.err(start, format!("unexpected character ({ch})")))
            }
        }
    }

    /// `digits`, `digits.digits?(e[+-]digits)?` or `.digits(e[+-]digits)?`.
    fn number(&mut self, start: usize) -> Result<(Tok<'a>, usize), ExprError> {
        let b = self.text.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let int_end = digits(start);
        let mut end = int_end;
        let mut is_double = false;
        if b.get(end) == Some(&b'.') {
            let frac_end = digits(end + 1);
            if int_end == start && frac_end == end + 1 {
                return Err(self.err(start, "unexpected character (.)".to_string()));
            }
            end = frac_end;
            is_double = true;
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut i = end + 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_end = digits(i);
            if exp_end > i {
                end = exp_end;
                is_double = true;
            }
        }
        self.pos = end;
        let text = &self.text[start..end];
        if is_double {
            match text.parse::<f64>() {
                Ok(d) if !out_of_double_range(text, d) => Ok((Tok::Double(d), start)),
                _ => Err(self.err(start, format!("double constant overflow ({text})"))),
            }
        } else if text == "9223372036854775808" {
            Ok((Tok::MaxIntPlusOne, start))
        } else {
            match text.parse::<i64>() {
                Ok(i) => Ok((Tok::Int(i), start)),
                Err(_) => Err(self.err(start, format!("bigint constant overflow ({text})"))),
            }
        }
    }
}

// ---------------------------------------------------------------- parsing

/// Binding strength, lowest first, as pgbench's grammar (SQL's order).
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_NOT: u8 = 3;
const P_IS: u8 = 4;
const P_CMP: u8 = 5;
const P_BIT: u8 = 6;
const P_ADD: u8 = 7;
const P_MUL: u8 = 8;
const P_UNARY: u8 = 9;

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok<'a>,
    at: usize,
    /// Tokens read and open nestings, against the limits below.
    tokens: usize,
    nesting: usize,
}

/// Limits that keep parsing, evaluating and dropping an expression within
/// a client thread's stack: evaluation recurses once per level of the tree,
/// so a tree is at most [`MAX_DEPTH`] deep (a test evaluates the deepest on
/// a 1 MiB stack in a debug build, half of a spawned thread's default).
const MAX_TOKENS: usize = 10_000;
const MAX_NESTING: usize = 64;
const MAX_DEPTH: usize = 256;

/// The depth of a tree, without recursing.
fn tree_depth(root: &Node) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((node, d)) = stack.pop() {
        deepest = deepest.max(d);
        if let Node::Call(_, args) = node {
            stack.extend(args.iter().map(|a| (a, d + 1)));
        }
    }
    deepest
}

fn call(f: Func, args: Vec<Node>) -> Node {
    Node::Call(f, args.into_boxed_slice())
}

impl<'a> Parser<'a> {
    fn advance(&mut self) -> Result<(), ExprError> {
        self.tokens += 1;
        if self.tokens > MAX_TOKENS {
            return Err(ExprError {
                message: format!(
                    "expression too long (more than {MAX_TOKENS} tokens): split it over several \\set commands"
                ),
                at: Some(self.at),
            });
        }
        let (t, at) = self.lex.next()?;
        self.tok = t;
        self.at = at;
        Ok(())
    }

    fn syntax(&self, expected: &str) -> ExprError {
        let found = match self.tok {
            Tok::Eof => "end of expression".to_string(),
            _ => {
                let rest = &self.lex.text[self.at..];
                let word: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(20)
                    .collect();
                format!("'{word}'")
            }
        };
        ExprError {
            message: format!(
                "syntax error at column {}: expected {expected}, found {found}",
                self.at + 1
            ),
            at: Some(self.at),
        }
    }

    fn expect_op(&mut self, op: &'static str, what: &str) -> Result<(), ExprError> {
        if self.tok == Tok::Op(op) {
            self.advance()
        } else {
            Err(self.syntax(what))
        }
    }

    /// An expression whose operators all bind at least as strongly as `min`.
    fn expr(&mut self, min: u8) -> Result<Node, ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(ExprError {
                message: format!(
                    "expression nested too deeply (more than {MAX_NESTING} levels) at column {}: split it over several \\set commands",
                    self.at + 1
                ),
                at: Some(self.at),
            });
        }
        let node = self.operators(min);
        self.nesting -= 1;
        node
    }

    /// [`Parser::expr`] without the nesting count.
    fn operators(&mut self, min: u8) -> Result<Node, ExprError> {
        let mut lhs = self.prefix()?;
        // The level of the operator that last extended `lhs`: comparisons
        // do not chain (`a < b < c` is a syntax error, as in pgbench), IS
        // does (`x IS NULL IS TRUE`).
        let mut last: Option<u8> = None;
        loop {
            let (prec, kind) = match self.tok {
                Tok::Or => (P_OR, Bin::Func(Func::Or)),
                Tok::And => (P_AND, Bin::Func(Func::And)),
                Tok::Is | Tok::IsNull | Tok::NotNull => (P_IS, Bin::Is),
                Tok::Op("<") => (P_CMP, Bin::Func(Func::Lt)),
                Tok::Op("<=") => (P_CMP, Bin::Func(Func::Le)),
                Tok::Op(">") => (P_CMP, Bin::Swapped(Func::Lt)),
                Tok::Op(">=") => (P_CMP, Bin::Swapped(Func::Le)),
                Tok::Op("=") => (P_CMP, Bin::Func(Func::Eq)),
                Tok::Op("<>") => (P_CMP, Bin::Func(Func::Ne)),
                Tok::Op("|") => (P_BIT, Bin::Func(Func::BitOr)),
                Tok::Op("&") => (P_BIT, Bin::Func(Func::BitAnd)),
                Tok::Op("#") => (P_BIT, Bin::Func(Func::BitXor)),
                Tok::Op("<<") => (P_BIT, Bin::Func(Func::Shl)),
                Tok::Op(">>") => (P_BIT, Bin::Func(Func::Shr)),
                Tok::Op("+") => (P_ADD, Bin::Func(Func::Add)),
                Tok::Op("-") => (P_ADD, Bin::Func(Func::Sub)),
                Tok::Op("*") => (P_MUL, Bin::Func(Func::Mul)),
                Tok::Op("/") => (P_MUL, Bin::Func(Func::Div)),
                Tok::Op("%") => (P_MUL, Bin::Func(Func::Mod)),
                _ => return Ok(lhs),
            };
            if prec < min {
                return Ok(lhs);
            }
            if prec == P_CMP && last == Some(prec) {
                return Err(self.syntax("an operator that can follow a comparison"));
            }
            last = Some(prec);
            match kind {
                Bin::Is => lhs = self.is_suffix(lhs)?,
                Bin::Func(f) => {
                    self.advance()?;
                    let rhs = self.expr(prec + 1)?;
                    lhs = call(f, vec![lhs, rhs]);
                }
                Bin::Swapped(f) => {
                    self.advance()?;
                    let rhs = self.expr(prec + 1)?;
                    lhs = call(f, vec![rhs, lhs]);
                }
            }
        }
    }

    /// `ISNULL`, `NOTNULL`, `IS [NOT] NULL|TRUE|FALSE` after `lhs`.
    fn is_suffix(&mut self, lhs: Node) -> Result<Node, ExprError> {
        let is = |lhs: Node, v: Val| call(Func::Is, vec![lhs, Node::Const(v)]);
        let not = |n: Node| call(Func::Not, vec![n]);
        let tok = self.tok;
        self.advance()?;
        match tok {
            Tok::IsNull => Ok(is(lhs, Val::Null)),
            Tok::NotNull => Ok(not(is(lhs, Val::Null))),
            _ => {
                let negate = if self.tok == Tok::Not {
                    self.advance()?;
                    true
                } else {
                    false
                };
                let v = match self.tok {
                    Tok::Null => Val::Null,
                    Tok::Bool(b) => Val::Bool(b),
                    _ => return Err(self.syntax("NULL, TRUE or FALSE after IS")),
                };
                self.advance()?;
                let n = is(lhs, v);
                Ok(if negate { not(n) } else { n })
            }
        }
    }

    /// A primary, or a prefix operator and its operand.
    fn prefix(&mut self) -> Result<Node, ExprError> {
        match self.tok {
            Tok::Op("-") => {
                self.advance()?;
                if self.tok == Tok::MaxIntPlusOne {
                    self.advance()?;
                    return Ok(Node::Const(Val::Int(i64::MIN)));
                }
                // pgbench: -x is 0 - x (so -(-2^63) overflows).
                let x = self.expr(P_UNARY)?;
                Ok(call(Func::Sub, vec![Node::Const(Val::Int(0)), x]))
            }
            Tok::Op("+") => {
                self.advance()?;
                self.expr(P_UNARY)
            }
            Tok::Op("~") => {
                // ~x is x # ~0, and binds like the bitwise operators.
                self.advance()?;
                let x = self.expr(P_BIT + 1)?;
                Ok(call(Func::BitXor, vec![Node::Const(Val::Int(!0)), x]))
            }
            Tok::Not => {
                self.advance()?;
                let x = self.expr(P_NOT + 1)?;
                Ok(call(Func::Not, vec![x]))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let node = match self.tok {
            Tok::Int(i) => Node::Const(Val::Int(i)),
            Tok::Double(d) => Node::Const(Val::Double(d)),
            Tok::Bool(b) => Node::Const(Val::Bool(b)),
            Tok::Null => Node::Const(Val::Null),
            Tok::Var(name) => Node::Var(name.into()),
            Tok::Op("(") => {
                self.advance()?;
                let inner = self.expr(P_OR)?;
                self.expect_op(")", "')'")?;
                return Ok(inner);
            }
            Tok::Case => return self.case(),
            Tok::Ident(name) => return self.function(name),
            Tok::MaxIntPlusOne => {
                return Err(ExprError {
                    message: format!(
                        "bigint constant overflow at column {} (9223372036854775808 is only valid as -9223372036854775808)",
                        self.at + 1
                    ),
                    at: Some(self.at),
                });
            }
            _ => return Err(self.syntax("a value, a variable, a function or '('")),
        };
        self.advance()?;
        Ok(node)
    }

    fn case(&mut self) -> Result<Node, ExprError> {
        self.advance()?;
        let mut args = Vec::new();
        if self.tok != Tok::When {
            return Err(self.syntax("WHEN (pgbench has only CASE WHEN cond THEN ...)"));
        }
        while self.tok == Tok::When {
            self.advance()?;
            args.push(self.expr(P_OR)?);
            if self.tok != Tok::Then {
                return Err(self.syntax("THEN"));
            }
            self.advance()?;
            args.push(self.expr(P_OR)?);
        }
        if self.tok == Tok::Else {
            self.advance()?;
            args.push(self.expr(P_OR)?);
        } else {
            args.push(Node::Const(Val::Null));
        }
        if self.tok != Tok::End {
            return Err(self.syntax("WHEN, ELSE or END"));
        }
        self.advance()?;
        Ok(call(Func::Case, args))
    }

    fn function(&mut self, name: &'a str) -> Result<Node, ExprError> {
        let at = self.at;
        let Some(&(fname, f, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            let known: Vec<&str> = FUNCTIONS.iter().map(|(n, _, _)| *n).collect();
            return Err(ExprError {
                message: format!(
                    "unexpected function name ({name}) at column {} (pgbench's functions are {})",
                    at + 1,
                    known.join(", ")
                ),
                at: Some(at),
            });
        };
        self.advance()?;
        self.expect_op("(", &format!("'(' after the function name {fname}"))?;
        let mut args = Vec::new();
        if self.tok != Tok::Op(")") {
            loop {
                args.push(self.expr(P_OR)?);
                if self.tok == Tok::Op(",") {
                    self.advance()?;
                } else {
                    break;
                }
            }
        }
        self.expect_op(")", "',' or ')'")?;
        let n = args.len();
        let bad = |expected: String| ExprError {
            message: format!(
                "unexpected number of arguments ({fname}) at column {}: {expected}, got {n}",
                at + 1
            ),
            at: Some(at),
        };
        match arity {
            Arity::Exactly(k) if n != k => return Err(bad(format!("expected {k}"))),
            Arity::AtLeastOne if n == 0 => {
                return Err(ExprError {
                    message: format!(
                        "at least one argument expected ({fname}) at column {}",
                        at + 1
                    ),
                    at: Some(at),
                });
            }
            Arity::Seeded(k) => {
                if n != k && n != k + 1 {
                    return Err(bad(format!("expected {k} or {}", k + 1)));
                }
                if n == k {
                    args.push(Node::Var("default_seed".into()));
                }
            }
            _ => {}
        }
        if args.len() > MAX_FARGS {
            return Err(ExprError {
                message: format!(
                    "too many function arguments ({fname}) at column {}, maximum is {MAX_FARGS}",
                    at + 1
                ),
                at: Some(at),
            });
        }
        Ok(call(f, args))
    }
}

#[derive(Clone, Copy)]
enum Bin {
    Func(Func),
    /// `a > b` is `b < a`, `a >= b` is `b <= a`.
    Swapped(Func),
    Is,
}

/// Parses one expression (the text after `\set name`, `\if` or `\elif`).
pub fn parse_expr(text: &str) -> Result<Expr, ExprError> {
    let mut p = Parser {
        lex: Lexer { text, pos: 0 },
        tok: Tok::Eof,
        at: 0,
        tokens: 0,
        nesting: 0,
    };
    p.advance()?;
    if p.tok == Tok::Eof {
        return Err(ExprError {
            message: "missing expression".to_string(),
            at: Some(0),
        });
    }
    let root = p.expr(P_OR)?;
    if p.tok != Tok::Eof {
        return Err(p.syntax("an operator or the end of the expression"));
    }
    if tree_depth(&root) > MAX_DEPTH {
        return Err(ExprError {
            message: format!(
                "expression too deep (more than {MAX_DEPTH} operations in a chain): split it over several \\set commands"
            ),
            at: None,
        });
    }
    Ok(Expr { root })
}

// ---------------------------------------------------------------- evaluation

impl Expr {
    /// Evaluates the expression with `env`'s variables and random stream.
    pub fn eval(&self, env: &mut dyn Env) -> Result<Value, EvalError> {
        eval(&self.root, env).map(Value::from)
    }

    /// Evaluates to a [`Val`] (no string ever: the allocation-free form).
    pub fn eval_val(&self, env: &mut dyn Env) -> Result<Val, EvalError> {
        eval(&self.root, env)
    }

    /// Evaluates as a condition (`\if`, `\elif`): NULL and zero are false.
    pub fn eval_truth(&self, env: &mut dyn Env) -> Result<bool, EvalError> {
        eval(&self.root, env).map(Val::truth)
    }

    /// Gives every variable its slot (`slot_of(name)`), so that evaluation
    /// reads it with [`Env::slot`] instead of looking its name up.
    pub fn resolve(&mut self, slot_of: &mut dyn FnMut(&str) -> u32) {
        let mut stack = vec![&mut self.root];
        while let Some(node) = stack.pop() {
            match node {
                Node::Var(name) => {
                    let name = std::mem::take(name);
                    *node = Node::Slot(slot_of(&name), name);
                }
                Node::Call(_, args) => stack.extend(args.iter_mut()),
                Node::Const(_) | Node::Slot(..) => {}
            }
        }
    }

    /// Every variable name the expression reads, in no particular order.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![&self.root];
        while let Some(node) = stack.pop() {
            match node {
                Node::Var(n) | Node::Slot(_, n) => out.push(&**n),
                Node::Call(_, args) => stack.extend(args.iter()),
                Node::Const(_) => {}
            }
        }
        out
    }
}

fn eval(node: &Node, env: &mut dyn Env) -> Result<Val, EvalError> {
    match node {
        Node::Const(v) => Ok(*v),
        Node::Var(name) => match env.var(name) {
            Some(v) => value_val(name, v),
            None => Err(EvalError::UndefinedVariable(name.to_string())),
        },
        Node::Slot(slot, name) => match env.slot(*slot).or_else(|| env.var(name)) {
            Some(v) => value_val(name, v),
            None => Err(EvalError::UndefinedVariable(name.to_string())),
        },
        Node::Call(f, args) => call_func(*f, args, env),
    }
}

fn call_func(f: Func, args: &[Node], env: &mut dyn Env) -> Result<Val, EvalError> {
    // The lazy ones first: AND, OR, CASE evaluate only what they need.
    match f {
        Func::And | Func::Or => {
            let a = eval(&args[0], env)?;
            if a == Val::Null {
                return Ok(Val::Null);
            }
            let a = a.to_bool()?;
            if a == (f == Func::Or) {
                return Ok(Val::Bool(a));
            }
            let b = eval(&args[1], env)?;
            if b == Val::Null {
                return Ok(Val::Null);
            }
            return Ok(Val::Bool(b.to_bool()?));
        }
        Func::Case => {
            let mut i = 0;
            while i + 1 < args.len() {
                if eval(&args[i], env)?.truth() {
                    return eval(&args[i + 1], env);
                }
                i += 2;
            }
            return eval(&args[args.len() - 1], env);
        }
        _ => {}
    }

    let mut v = [Val::Null; MAX_FARGS];
    let n = args.len();
    let mut has_null = false;
    for (slot, a) in v.iter_mut().zip(args) {
        *slot = eval(a, env)?;
        has_null |= *slot == Val::Null;
    }
    if has_null && f != Func::Is && f != Func::Debug {
        return Ok(Val::Null);
    }
    apply(f, &v[..n], env)
}

/// A non-lazy function on its evaluated arguments. Kept out of line so that
/// its many arms' temporaries are not on the recursion's stack frames.
#[inline(never)]
fn apply(f: Func, v: &[Val], env: &mut dyn Env) -> Result<Val, EvalError> {
    match f {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Le
        | Func::Lt => arith(f, v[0], v[1]),
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::Shl | Func::Shr => {
            let (a, b) = (v[0].to_int()?, v[1].to_int()?);
            Ok(Val::Int(match f {
                Func::BitAnd => a & b,
                Func::BitOr => a | b,
                Func::BitXor => a ^ b,
                // x86 takes the shift count modulo 64, as pgbench's C does there.
                Func::Shl => a.wrapping_shl(b as u32),
                _ => a.wrapping_shr(b as u32),
            }))
        }
        Func::Not => Ok(Val::Bool(!v[0].to_bool()?)),
        Func::Pi => Ok(Val::Double(std::f64::consts::PI)),
        Func::Abs => Ok(match v[0] {
            // abs(-2^63) wraps in pgbench's C.
            Val::Int(i) => Val::Int(i.wrapping_abs()),
            Val::Double(d) => Val::Double(d.abs()),
            other => {
                return Err(EvalError::Coerce {
                    from: other.type_name(),
                    to: "number",
                });
            }
        }),
        Func::Debug => {
            env.debug(v[0]);
            Ok(v[0])
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = v[0].to_double()?;
            Ok(Val::Double(match f {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            }))
        }
        Func::Int => Ok(Val::Int(v[0].to_int()?)),
        Func::Least | Func::Greatest => {
            let least = f == Func::Least;
            if v.iter().any(|x| matches!(x, Val::Double(_))) {
                let mut acc = v[0].to_double()?;
                for x in &v[1..] {
                    let d = x.to_double()?;
                    acc = if least {
                        if d < acc { d } else { acc }
                    } else if d > acc {
                        d
                    } else {
                        acc
                    };
                }
                Ok(Val::Double(acc))
            } else {
                let mut acc = v[0].to_int()?;
                for x in &v[1..] {
                    let i = x.to_int()?;
                    acc = if least { acc.min(i) } else { acc.max(i) };
                }
                Ok(Val::Int(acc))
            }
        }
        Func::Random | Func::RandomGaussian | Func::RandomExponential | Func::RandomZipfian => {
            random(f, v, env)
        }
        Func::Pow => Ok(Val::Double(v[0].to_double()?.powf(v[1].to_double()?))),
        Func::Is => Ok(Val::Bool(match (v[0], v[1]) {
            (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            _ => false,
        })),
        Func::HashMurmur2 | Func::HashFnv1a => {
            let (val, seed) = (v[0].to_int()?, v[1].to_int()?);
            Ok(Val::Int(if f == Func::HashMurmur2 {
                hash_murmur2(val, seed as u64)
            } else {
                hash_fnv1a(val, seed as u64)
            }))
        }
        Func::Permute => {
            let (val, size, seed) = (v[0].to_int()?, v[1].to_int()?, v[2].to_int()?);
            if size <= 0 {
                return Err(EvalError::PermuteSize);
            }
            Ok(Val::Int(permute(val, size, seed)))
        }
        Func::And | Func::Or | Func::Case => unreachable!("lazy functions return above"),
    }
}

/// The overloaded arithmetic and comparisons: double if either side is
/// (except `%`, always integer), else integer with pgbench's overflow checks.
fn arith(f: Func, l: Val, r: Val) -> Result<Val, EvalError> {
    let doubles = matches!(l, Val::Double(_)) || matches!(r, Val::Double(_));
    if doubles && f != Func::Mod {
        let (a, b) = (l.to_double()?, r.to_double()?);
        return Ok(match f {
            Func::Add => Val::Double(a + b),
            Func::Sub => Val::Double(a - b),
            Func::Mul => Val::Double(a * b),
            Func::Div => Val::Double(a / b),
            Func::Eq => Val::Bool(a == b),
            Func::Ne => Val::Bool(a != b),
            Func::Le => Val::Bool(a <= b),
            _ => Val::Bool(a < b),
        });
    }
    let (a, b) = (l.to_int()?, r.to_int()?);
    Ok(match f {
        Func::Add => Val::Int(a.checked_add(b).ok_or(EvalError::Overflow("add"))?),
        Func::Sub => Val::Int(a.checked_sub(b).ok_or(EvalError::Overflow("sub"))?),
        Func::Mul => Val::Int(a.checked_mul(b).ok_or(EvalError::Overflow("mul"))?),
        Func::Eq => Val::Bool(a == b),
        Func::Ne => Val::Bool(a != b),
        Func::Le => Val::Bool(a <= b),
        Func::Lt => Val::Bool(a < b),
        _ => {
            if b == 0 {
                return Err(EvalError::DivisionByZero);
            }
            if b == -1 {
                // x % -1 is 0; x / -1 overflows only for -2^63.
                if f == Func::Mod {
                    return Ok(Val::Int(0));
                }
                return a
                    .checked_neg()
                    .map(Val::Int)
                    .ok_or(EvalError::Overflow("div"));
            }
            // Rust's / and % truncate towards zero, as C's do.
            Val::Int(if f == Func::Div { a / b } else { a % b })
        }
    })
}

/// `random`, `random_gaussian`, `random_exponential`, `random_zipfian`:
/// pgbench's range and parameter checks, then its algorithms on the
/// client's stream.
fn random(f: Func, v: &[Val], env: &mut dyn Env) -> Result<Val, EvalError> {
    let (min, max) = (v[0].to_int()?, v[1].to_int()?);
    if min > max {
        return Err(EvalError::EmptyRange);
    }
    if max
        .checked_sub(min)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return Err(EvalError::RangeTooLarge);
    }
    let span = (max - min) as u64;
    if f == Func::Random {
        let off = uniform_u64(span, || env.random_u64());
        return Ok(Val::Int(min.wrapping_add(off as i64)));
    }
    let param = v[2].to_double()?;
    let width = (span + 1) as f64;
    Ok(Val::Int(match f {
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return Err(EvalError::Gaussian(param));
            }
            // Box-Muller draws until the value falls in [-param, param).
            let stdev = loop {
                let u1 = 1.0 - unit_double(env.random_u64());
                let u2 = 1.0 - unit_double(env.random_u64());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
                if (-param..param).contains(&z) {
                    break z;
                }
            };
            let r = (stdev + param) / (param * 2.0);
            min.wrapping_add((width * r) as i64)
        }
        Func::RandomExponential => {
            if param <= 0.0 {
                return Err(EvalError::Exponential(param));
            }
            let cut = (-param).exp();
            let uniform = 1.0 - unit_double(env.random_u64());
            let r = -(cut + (1.0 - cut) * uniform).ln() / param;
            min.wrapping_add((width * r) as i64)
        }
        _ => {
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return Err(EvalError::Zipfian(param));
            }
            min.wrapping_sub(1)
                .wrapping_add(zipfian(env, span as i64 + 1, param))
        }
    }))
}

/// Devroye's rejection method for the Zipfian distribution on `1..=n` with
/// exponent `s > 1` (as pgbench's `computeIterativeZipfian`).
fn zipfian(env: &mut dyn Env, n: i64, s: f64) -> i64 {
    if n <= 1 {
        return 1;
    }
    let b = 2f64.powf(s - 1.0);
    loop {
        let u = unit_double(env.random_u64());
        let v = unit_double(env.random_u64());
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return x as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15's pgbench (`\set x
    //! debug(EXPR)` run with `pgbench -n -t 1 -f`), and from its
    //! documentation where it gives one.

    use super::*;
    use std::collections::HashMap;

    pub(crate) struct TestEnv {
        pub vars: HashMap<String, Value>,
        pub rng: PgPrng,
    }

    impl TestEnv {
        pub fn new() -> Self {
            TestEnv {
                vars: HashMap::new(),
                rng: PgPrng::seeded(7),
            }
        }
        fn with(mut self, name: &str, v: Value) -> Self {
            self.vars.insert(name.to_string(), v);
            self
        }
    }

    impl Env for TestEnv {
        fn var(&self, name: &str) -> Option<&Value> {
            self.vars.get(name)
        }
        fn random_u64(&mut self) -> u64 {
            self.rng.next_u64()
        }
    }

    fn eval_in(env: &mut TestEnv, text: &str) -> Result<Value, EvalError> {
        parse_expr(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .eval(env)
    }

    fn ev(text: &str) -> Value {
        eval_in(&mut TestEnv::new(), text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn ev_err(text: &str) -> String {
        match eval_in(&mut TestEnv::new(), text) {
            Ok(v) => panic!("{text} gave {v:?}, expected an error"),
            Err(e) => e.to_string(),
        }
    }

    fn parse_err(text: &str) -> String {
        match parse_expr(text) {
            Ok(e) => panic!("{text} parsed as {e:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn text(v: Value) -> String {
        v.to_sql_text().into_owned()
    }

    #[test]
    fn hashes_match_pgbench_for_fixed_inputs() {
        // The documentation's examples.
        assert_eq!(ev("hash(10, 5432)"), Value::Int(-5817877081768721676));
        assert_eq!(
            ev("hash_murmur2(10, 5432)"),
            Value::Int(-5817877081768721676)
        );
        assert_eq!(ev("hash_fnv1a(10, 5432)"), Value::Int(-7793829335365542153));
        // Others, from pgbench 15.
        assert_eq!(ev("hash_murmur2(1, 0)"), Value::Int(-8089716718896805586));
        assert_eq!(ev("hash_fnv1a(1, 0)"), Value::Int(-8517097267634966620));
        assert_eq!(ev("hash(5, 7)"), Value::Int(7395858956932106968));
        assert_eq!(ev("hash_fnv1a(-1, 123)"), Value::Int(2605866718809522070));
        assert_eq!(ev("hash_murmur2(-1, 123)"), Value::Int(724409956589257340));
        assert_eq!(ev("hash_fnv1a(0, 0)"), Value::Int(-6284781860667377211));
        assert_eq!(ev("HASH_MURMUR2(0, 0)"), Value::Int(8217090173679840641));
    }

    #[test]
    fn hash_without_a_seed_uses_default_seed() {
        let mut env = TestEnv::new().with("default_seed", Value::Int(5432));
        assert_eq!(
            eval_in(&mut env, "hash(10)"),
            Ok(Value::Int(-5817877081768721676))
        );
        assert_eq!(
            eval_in(&mut env, "hash_fnv1a(10)"),
            Ok(Value::Int(-7793829335365542153))
        );
        assert_eq!(
            eval_in(&mut TestEnv::new(), "hash(10)"),
            Err(EvalError::UndefinedVariable("default_seed".into()))
        );
    }

    #[test]
    fn permute_matches_pgbench_for_fixed_seeds() {
        let perm: Vec<i64> = (0..10).map(|i| permute(i, 10, 42)).collect();
        assert_eq!(perm, [1, 7, 0, 4, 3, 8, 6, 5, 9, 2]);
        for (expr, want) in [
            ("permute(0, 10, 0)", 0),
            ("permute(1, 10, 5)", 4),
            ("permute(0, 100, 12345)", 46),
            ("permute(99, 100, 12345)", 1),
            ("permute(-1, 100, 12345)", 69),
            ("permute(5, 1, 3)", 0),
            ("permute(12345678, 1000000007, -5)", 358381854),
            ("permute(3, 2, 0)", 1),
            ("permute(7, 3, 1)", 2),
            ("permute(5, 1000, 1)", 376),
            (
                "permute(123456789, 9223372036854775807, 9223372036854775807)",
                6826577619679914807,
            ),
        ] {
            assert_eq!(ev(expr), Value::Int(want), "{expr}");
        }
        let mut env = TestEnv::new().with("default_seed", Value::Int(42));
        assert_eq!(eval_in(&mut env, "permute(3, 10)"), Ok(Value::Int(4)));
        assert_eq!(
            ev_err("permute(1, 0, 1)"),
            "permute size parameter must be greater than zero"
        );
    }

    #[test]
    fn permute_is_a_bijection_for_every_small_size() {
        for size in 1..=70i64 {
            for seed in [0i64, 1, -9, 1 << 40] {
                let mut seen = vec![false; size as usize];
                for i in 0..size {
                    let p = permute(i, size, seed);
                    assert!((0..size).contains(&p), "size {size}");
                    assert!(!seen[p as usize], "size {size} seed {seed}: {p} twice");
                    seen[p as usize] = true;
                }
            }
        }
    }

    #[test]
    fn integer_division_and_modulo_of_negative_numbers_truncate_as_c() {
        for (expr, want) in [
            ("-7 / 2", -3),
            ("-7 % 2", -1),
            ("7 % -2", 1),
            ("mod(-7, 2)", -1),
            ("-5 / 3", -1),
            ("5 / -3", -1),
            ("-5 % 3", -2),
            ("5 % -3", 2),
            ("-5 % -3", -2),
            ("mod(-5, 3)", -2),
            // % on doubles rounds them to integers first (half to even).
            ("7.0 % 2", 1),
            ("mod(7.5, 2)", 0),
            ("-9223372036854775808 % -1", 0),
        ] {
            assert_eq!(ev(expr), Value::Int(want), "{expr}");
        }
        assert_eq!(ev_err("1 / 0"), "division by zero");
        assert_eq!(ev_err("1 % 0"), "division by zero");
        assert_eq!(text(ev("1.0 / 0")), "Infinity");
    }

    #[test]
    fn integer_overflow_is_an_error_as_in_pgbench() {
        assert_eq!(ev_err("9223372036854775807 + 1"), "bigint add out of range");
        assert_eq!(
            ev_err("-9223372036854775807 - 2"),
            "bigint sub out of range"
        );
        assert_eq!(ev_err("4611686018427387904 * 2"), "bigint mul out of range");
        assert_eq!(
            ev_err("-9223372036854775808 / -1"),
            "bigint div out of range"
        );
        assert_eq!(ev_err("-(-9223372036854775808)"), "bigint sub out of range");
        assert_eq!(ev("-9223372036854775808"), Value::Int(i64::MIN));
        assert_eq!(ev("abs(-9223372036854775808)"), Value::Int(i64::MIN));
        assert!(parse_err("9223372036854775808").contains("bigint constant overflow"));
        assert!(parse_err("99999999999999999999").contains("bigint constant overflow"));
        assert_eq!(
            ev_err("int(1e30)"),
            "double to int overflow for 1000000000000000019884624838656.000000"
        );
        assert_eq!(text(ev("1e300 * 1e300")), "Infinity");
        assert!(parse_err("1e-320").contains("double constant overflow (1e-320)"));
        assert!(parse_err("1e999").contains("double constant overflow"));
        assert_eq!(ev("0.0e-999"), Value::Double(0.0));
    }

    #[test]
    fn doubles_are_substituted_as_pgbench_prints_them() {
        for (expr, want) in [
            ("5.0 / 2", "2.5"),
            ("1.0 / 3", "0.333333333333333"),
            ("pi()", "3.14159265358979"),
            ("sqrt(2)", "1.4142135623731"),
            ("exp(1)", "2.71828182845905"),
            ("1.5e3", "1500"),
            (".5", "0.5"),
            ("5.", "5"),
            ("1e-5", "1e-05"),
            ("0.0001", "0.0001"),
            ("0.00001234", "1.234e-05"),
            ("123456789012345678.0", "1.23456789012346e+17"),
            ("123456789012345.6", "123456789012346"),
            ("1234567890123456.7", "1.23456789012346e+15"),
            ("-2.5e-7", "-2.5e-07"),
            ("0.1 + 0.2", "0.3"),
            ("-0.0", "0"),
            ("100000000000000000000.0", "1e+20"),
            ("ln(0)", "-Infinity"),
            ("sqrt(-1)", "NaN"),
            ("0.0 / 0", "NaN"),
            ("exp(1000)", "Infinity"),
        ] {
            assert_eq!(text(ev(expr)), want, "{expr}");
        }
        assert_eq!(text(ev("1 = 1")), "true");
        assert_eq!(text(ev("NULL")), "NULL");
        assert_eq!(text(ev("-42")), "-42");
        let mut out = String::from("x=");
        Value::Double(0.25).write_sql_text(&mut out);
        assert_eq!(out, "x=0.25");
    }

    #[test]
    fn operators_bind_as_in_pgbench() {
        for (expr, want) in [
            ("~1 + 2", -4), // ~ binds like the bitwise operators: ~(1 + 2)
            ("~0", -1),
            ("5 # 3", 6),
            ("1 | 2 & 3", 3),
            ("7 % 3 * 2", 2),
            ("10 - 2 - 3", 5),
            ("2 * 3 + 4 * 5", 26),
            ("-2 * 3", -6),
            ("- - 2", 2),
            ("+3", 3),
            ("1 << 63", i64::MIN),
            ("1 << 64", 1), // x86 takes the count modulo 64
            ("-8 >> 1", -4),
            ("-8 >> 65", -4),
            ("(1 + 2) * 3", 9),
        ] {
            assert_eq!(ev(expr), Value::Int(want), "{expr}");
        }
        for (expr, want) in [
            ("1 < 2", true),
            ("2.5 <= 2", false),
            ("1 <> 1", false),
            ("1 != 2", true),
            ("3 >= 3", true),
            ("3 > 2.5", true),
            ("1 = 1.0", true),
            ("1 = 1 IS TRUE", true),
            ("NOT 1 = 2", true),
            ("NOT true AND false", false),
            ("true OR false AND false", true),
            ("1 < 2 IS NOT FALSE", true),
        ] {
            assert_eq!(ev(expr), Value::Bool(want), "{expr}");
        }
        // Booleans do not compare (pgbench coerces them to int and fails).
        assert_eq!(ev_err("(1 = 1) = (2 = 2)"), "cannot coerce boolean to int");
        assert!(parse_err("1 < 2 < 3").contains("syntax error"));
        assert!(parse_err("1 = 2 = 3").contains("syntax error"));
        assert!(parse_err("1 IS 1").contains("syntax error"));
    }

    #[test]
    fn null_and_boolean_logic_follow_pgbench() {
        assert_eq!(ev("NOT true"), Value::Bool(false));
        assert_eq!(ev("NOT NULL"), Value::Null);
        assert_eq!(ev("null IS NULL"), Value::Bool(true));
        assert_eq!(ev("1 IS NULL"), Value::Bool(false));
        assert_eq!(ev("NULL ISNULL"), Value::Bool(true));
        assert_eq!(ev("1 NOTNULL"), Value::Bool(true));
        // IS chains (pgbench's grammar reduces each IS before the next).
        assert_eq!(ev("NULL IS NULL IS TRUE"), Value::Bool(true));
        assert_eq!(ev("1 ISNULL NOTNULL"), Value::Bool(true));
        assert_eq!(ev("NOT NULL IS NULL"), Value::Bool(false));
        assert_eq!(ev("5 IS NOT NULL"), Value::Bool(true));
        assert_eq!(ev("true IS NOT FALSE"), Value::Bool(true));
        assert_eq!(ev("NULL + 1"), Value::Null);
        assert_eq!(ev("abs(NULL)"), Value::Null);
        assert_eq!(ev("true AND NULL"), Value::Null);
        // pgbench returns NULL for a NULL left side of OR, even OR true.
        assert_eq!(ev("NULL OR true"), Value::Null);
        // AND and OR are lazy: the right side is not evaluated.
        assert_eq!(ev("false AND (1 / 0 = 1)"), Value::Bool(false));
        assert_eq!(ev("true OR (1 / 0 = 1)"), Value::Bool(true));
        assert_eq!(ev_err("int(true)"), "cannot coerce boolean to int");
        assert_eq!(ev_err("true + 1"), "cannot coerce boolean to int");
        assert_eq!(ev_err("NOT 1"), "cannot coerce int to boolean");
        assert_eq!(ev_err("1 AND true"), "cannot coerce int to boolean");
        assert_eq!(ev_err("1.5 OR true"), "cannot coerce double to boolean");
    }

    #[test]
    fn case_takes_the_first_true_branch() {
        assert_eq!(ev("CASE WHEN 0 THEN 1 WHEN 2 THEN 3 END"), Value::Int(3));
        assert_eq!(ev("CASE WHEN false THEN 1 END"), Value::Null);
        assert_eq!(ev("case when true then 1 else 2 end"), Value::Int(1));
        assert_eq!(ev("CASE WHEN NULL THEN 1 ELSE 2.5 END"), Value::Double(2.5));
        // Only the chosen branch is evaluated.
        assert_eq!(ev("CASE WHEN 1 = 1 THEN 7 ELSE 1 / 0 END"), Value::Int(7));
        assert!(parse_err("CASE 1 WHEN 1 THEN 2 END").contains("WHEN"));
        assert!(parse_err("CASE WHEN 1 THEN 2").contains("END"));
    }

    #[test]
    fn functions_give_pgbench_results() {
        assert_eq!(ev("abs(-2.5)"), Value::Double(2.5));
        assert_eq!(ev("abs(-17)"), Value::Int(17));
        assert_eq!(ev("double(3)"), Value::Double(3.0));
        assert_eq!(ev("exp(0)"), Value::Double(1.0));
        assert_eq!(ev("ln(1)"), Value::Double(0.0));
        assert_eq!(ev("greatest(3, 1)"), Value::Int(3));
        assert_eq!(ev("least(1, 2.5, 0)"), Value::Double(0.0));
        assert_eq!(ev("greatest(1, 2, 7, -3)"), Value::Int(7));
        assert_eq!(ev("least(5)"), Value::Int(5));
        assert_eq!(ev("int(2.5)"), Value::Int(2)); // rint: half to even
        assert_eq!(ev("int(3.5)"), Value::Int(4));
        assert_eq!(ev("int(-2.5)"), Value::Int(-2));
        assert_eq!(ev("int(-1.5)"), Value::Int(-2));
        assert_eq!(ev("int(-0.5)"), Value::Int(0));
        assert_eq!(ev("mod(17, 5)"), Value::Int(2));
        assert_eq!(ev("pi()"), Value::Double(std::f64::consts::PI));
        assert_eq!(ev("pow(2, 0.5)"), Value::Double(2f64.sqrt()));
        assert_eq!(ev("power(2, 10)"), Value::Double(1024.0));
        assert_eq!(ev("pow(2, -1)"), Value::Double(0.5));
        assert_eq!(ev("sqrt(16)"), Value::Double(4.0));
        assert_eq!(ev("debug(41 + 1)"), Value::Int(42));
        assert_eq!(ev("random(3, 3)"), Value::Int(3));
        // Doubles given to random round to integers.
        assert_eq!(ev("random(1.5, 2.5)"), Value::Int(2));
    }

    #[test]
    fn random_functions_check_their_parameters_as_pgbench() {
        for (expr, want) in [
            ("random(5, 1)", "empty range given to random"),
            (
                "random(-9223372036854775808, 9223372036854775807)",
                "random range is too large",
            ),
            (
                "random_zipfian(1, 10, 1.0)",
                "zipfian parameter must be in range [1.001, 1000] (not 1.000000)",
            ),
            (
                "random_zipfian(1, 10, 1000.5)",
                "zipfian parameter must be in range [1.001, 1000] (not 1000.500000)",
            ),
            (
                "random_exponential(1, 10, 0)",
                "exponential parameter must be greater than zero (not 0.000000)",
            ),
            (
                "random_exponential(1, 10, -1)",
                "exponential parameter must be greater than zero (not -1.000000)",
            ),
            (
                "random_gaussian(1, 10, 1.9)",
                "gaussian parameter must be at least 2.000000 (not 1.900000)",
            ),
            ("random_zipfian(10, 1, 2)", "empty range given to random"),
        ] {
            assert_eq!(ev_err(expr), want, "{expr}");
        }
        assert_eq!(ev("random_zipfian(5, 5, 2)"), Value::Int(5));
        assert!(matches!(
            ev("random_zipfian(1, 10, 1.001)"),
            Value::Int(1..=10)
        ));
        assert_eq!(ev("random_exponential(1, 1, 5)"), Value::Int(1));
    }

    /// Draws `n` values of `expr` from one stream.
    fn draws(expr: &str, n: usize) -> Vec<i64> {
        let e = parse_expr(expr).unwrap();
        let mut env = TestEnv::new();
        (0..n)
            .map(|_| match e.eval(&mut env) {
                Ok(Value::Int(i)) => i,
                other => panic!("{expr}: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn random_draws_stay_in_range_with_their_shapes() {
        let n = 20_000;
        let u = draws("random(1, 10)", n);
        assert!(u.iter().all(|x| (1..=10).contains(x)));
        let ones = u.iter().filter(|&&x| x == 1).count() as f64 / n as f64;
        assert!((ones - 0.1).abs() < 0.01, "uniform: {ones}");
        let big = draws("random(-4611686018427387904, 4611686018427387902)", 100);
        assert!(big.iter().any(|&x| x < 0) && big.iter().any(|&x| x > 0));

        let g = draws("random_gaussian(1, 100, 2.5)", n);
        assert!(g.iter().all(|x| (1..=100).contains(x)));
        let mean = g.iter().sum::<i64>() as f64 / n as f64;
        assert!((mean - 50.5).abs() < 1.0, "gaussian mean {mean}");
        let middle = g.iter().filter(|&&x| (41..=60).contains(&x)).count();
        let edge = g.iter().filter(|&&x| (1..=20).contains(&x)).count();
        assert!(middle > 3 * edge, "gaussian: {middle} vs {edge}");

        // Exponential with parameter 5: P(x <= 10% of the range) = (1 - e^-0.5) / (1 - e^-5).
        let e = draws("random_exponential(1, 1000, 5)", n);
        assert!(e.iter().all(|x| (1..=1000).contains(x)));
        let low = e.iter().filter(|&&x| x <= 100).count() as f64 / n as f64;
        let want = (1.0 - (-0.5f64).exp()) / (1.0 - (-5f64).exp());
        assert!((low - want).abs() < 0.02, "exponential: {low} vs {want}");

        // Zipfian with s = 2: P(1) = 1 / zeta(2) over 1..=1000, about 0.608.
        let z = draws("random_zipfian(1, 1000, 2)", n);
        assert!(z.iter().all(|x| (1..=1000).contains(x)));
        let first = z.iter().filter(|&&x| x == 1).count() as f64 / n as f64;
        let zeta: f64 = (1..=1000).map(|k| 1.0 / (k as f64).powi(2)).sum();
        assert!((first - 1.0 / zeta).abs() < 0.02, "zipfian: {first}");
    }

    #[test]
    fn uniform_draws_follow_pg_prng_range() {
        // pg_prng_uint64_range on a stream seeded with 1: the same bits,
        // shifted right to the range's width, rejected when too large.
        let mut a = PgPrng::seeded(1);
        let mut b = PgPrng::seeded(1);
        for _ in 0..1000 {
            let r = uniform_u64(9, || a.next_u64());
            let want = loop {
                let v = b.next_u64() >> 60;
                if v <= 9 {
                    break v;
                }
            };
            assert_eq!(r, want);
        }
    }

    #[test]
    fn string_variables_are_read_as_pgbench_reads_them() {
        let s = |t: &str| Value::Str(t.to_string());
        let mut env = TestEnv::new()
            .with("i", s("5"))
            .with("neg", s(" -12"))
            .with("d", s("2.5"))
            .with("t", s("t"))
            .with("yes", s("YES"))
            .with("on", s("on"))
            .with("of", s("of"))
            .with("n", s("null"))
            .with("o", s("o"))
            .with("empty", s(""))
            .with("huge", s("99999999999999999999"))
            .with("word", s("abc"));
        let mut e = |t: &str| eval_in(&mut env, t);
        assert_eq!(e(":i + 1"), Ok(Value::Int(6)));
        assert_eq!(e(":neg"), Ok(Value::Int(-12)));
        assert_eq!(e(":d * 2"), Ok(Value::Double(5.0)));
        assert_eq!(e(":t"), Ok(Value::Bool(true)));
        assert_eq!(e(":yes AND :on"), Ok(Value::Bool(true)));
        assert_eq!(e(":of"), Ok(Value::Bool(false)));
        assert_eq!(e(":n IS NULL"), Ok(Value::Bool(true)));
        assert!(matches!(e(":o"), Err(EvalError::MalformedVariable { .. })));
        assert!(matches!(
            e(":empty"),
            Err(EvalError::MalformedVariable { .. })
        ));
        assert!(matches!(
            e(":word"),
            Err(EvalError::MalformedVariable { .. })
        ));
        assert_eq!(
            e(":huge").unwrap_err().to_string(),
            "value \"99999999999999999999\" is out of range for type bigint"
        );
        let undefined = e(":nosuch").unwrap_err().to_string();
        assert!(
            undefined.starts_with("undefined variable \"nosuch\""),
            "{undefined}"
        );
        assert!(undefined.contains("--define nosuch=VALUE"), "{undefined}");
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        let e = parse_err("foo(1)");
        assert!(e.starts_with("unexpected function name (foo)"), "{e}");
        assert!(e.contains("random_zipfian"), "lists the functions: {e}");
        assert!(parse_err("random(1)").contains("unexpected number of arguments (random)"));
        assert!(parse_err("hash(1, 2, 3)").contains("unexpected number of arguments (hash)"));
        assert!(parse_err("least()").contains("at least one argument expected (least)"));
        assert!(parse_err("2 ^ 3").contains("unexpected character (^)"));
        assert!(parse_err("(1").contains("expected ')'"));
        assert!(parse_err("1 2").contains("syntax error at column 3"));
        assert!(parse_err("").contains("missing expression"));
        assert!(parse_err("'x'").contains("unexpected character (')"));
        // Limits that keep evaluation within a thread's stack: the deepest
        // expression allowed runs on a 1 MiB stack (debug build).
        let nested = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_err(&nested).contains("nested too deeply"));
        let chain = vec!["1"; 300].join(" + ");
        assert!(parse_err(&chain).contains("too deep"));
        let long = vec!["1"; 6000].join(" + ");
        assert!(parse_err(&long).contains("too long"));
        let ok = vec!["1"; 256].join(" + ");
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || assert_eq!(ev(&ok), Value::Int(256)))
            .unwrap()
            .join()
            .unwrap();
        let e = parse_expr("1 +\\\n 2").unwrap();
        assert_eq!(e.eval(&mut TestEnv::new()), Ok(Value::Int(3)));
    }

    #[test]
    fn conditions_use_pgbench_truth() {
        let mut env = TestEnv::new();
        for (expr, want) in [
            ("0", false),
            ("2", true),
            ("0.0", false),
            ("0.1", true),
            ("NULL", false),
            ("1 = 1", true),
        ] {
            assert_eq!(
                parse_expr(expr).unwrap().eval_truth(&mut env),
                Ok(want),
                "{expr}"
            );
        }
    }

    #[test]
    fn random_functions_draw_pgbench_values_from_pgbench_streams() {
        // pgbench 15, -c 2 -j 2 --random-seed=5: client 0 printed these,
        // client 1 drew 871628 first, and both saw this default_seed.
        let mut env = TestEnv::new();
        env.rng = ClientStreams::of(5, 2, 0).func;
        let got: Vec<Value> = [
            "random(1, 1000000)",
            "random(1, 1000000)",
            "random_gaussian(1, 1000, 2.5)",
            "random_exponential(1, 1000, 3.0)",
            "random_zipfian(1, 1000, 1.5)",
            "random_zipfian(1, 1000, 1.07)",
        ]
        .iter()
        .map(|t| eval_in(&mut env, t).unwrap())
        .collect();
        let want = [475806, 272628, 667, 245, 1, 4].map(Value::Int);
        assert_eq!(got, want);
        let one = ClientStreams::of(5, 2, 1);
        assert_eq!(one.default_seed, -1283242464419442966);
        env.rng = one.func;
        assert_eq!(
            eval_in(&mut env, "random(1, 1000000)"),
            Ok(Value::Int(871628))
        );
    }

    #[test]
    fn seed_5432_gives_the_values_pgbench_15_printed() {
        // `pgbench -n -t 1 --random-seed=5432` (one client), the first
        // commands of the TAP test's expressions script, and :default_seed.
        let s = ClientStreams::of(5432, 1, 0);
        assert_eq!(s.default_seed, 7590783070443337668);
        let mut env = TestEnv::new().with("default_seed", Value::Int(s.default_seed));
        env.rng = s.func;
        let got: Vec<Value> = [
            "random(10, 19)",
            "random_exponential(100, 199, 10.0)",
            "random_gaussian(1000, 1999, 10.0)",
            "random_zipfian(1, 9, 1.3)",
            "hash(10)",
        ]
        .iter()
        .map(|t| eval_in(&mut env, t).unwrap())
        .collect();
        assert_eq!(got, [17, 104, 1498, 3, 4313776982099445391].map(Value::Int));
        // -c 2 -j 2: :default_seed comes after both clients' streams.
        assert_eq!(
            ClientStreams::of(5432, 2, 1).default_seed,
            7312993047133655103
        );
    }

    /// Expressions and what pgbench 15 printed for them (`debug()`'s "int",
    /// "double", "boolean", "null"; "PARSE:"/"EVAL:" for its errors).
    const PGBENCH_15: &str = "\
1 + 2 * 3 - 4 / 2 % 3 => int 5
-3 * -3 => int 9
- 3 - - 3 => int 0
~ 5 & 3 => int 2
~5 | 8 # 2 => int -8
1 << 3 + 1 => int 16
16 >> 2 * 1 => int 4
1 + 2 < 4 AND 3 > 2 OR false => boolean true
NOT false AND false => boolean false
NOT (false AND false) => boolean true
NOT 1 < 2 => boolean false
true AND true OR false AND false => boolean true
1 = 1 AND 2 = 2 => boolean true
2 * 3 = 6 IS TRUE => boolean true
NULL IS NULL IS TRUE => boolean true
1 + NULL IS NULL => boolean true
CASE WHEN 1 > 2 THEN 'x' END => PARSE: unexpected character (')
CASE WHEN 1 > 2 THEN 10 WHEN 2 > 1 THEN 20 ELSE 30 END * 2 => int 40
greatest(1, 2.5) + least(3, 4) => double 5.5
abs(-5) + abs(-2.25) => double 7.25
int(7.5) + int(8.5) + int(-7.5) => int 8
double(7) / 2 => double 3.5
7 / 2 * 2.0 => double 6
7 / 2.0 * 2 => double 7
2 ^ 2 => PARSE: unexpected character (^)
sqrt(2) * sqrt(2) = 2 => boolean false
pow(10, 20) => double 1e+20
power(2.5, 2) => double 6.25
exp(ln(10)) => double 10
mod(-9223372036854775807, 2) => int -1
9223372036854775807 - -1 => EVAL: bigint sub out of range
-9223372036854775807 - 1 => int -9223372036854775808
3000000000 * 3000000000 => int 9000000000000000000
3037000500 * 3037000500 => EVAL: bigint mul out of range
3037000499 * 3037000499 => int 9223372030926249001
1.0e308 * 10 => double Infinity
1e-320 => PARSE: double constant overflow (1e-320)
123e-2 => double 1.23
0.000123456789012345678 => double 0.000123456789012346
99999999999999.99 => double 100000000000000
999999999999999.9 => double 1e+15
hash_fnv1a(123456789, -1) => int 6091392141410076514
hash_murmur2(-9223372036854775808, 9223372036854775807) => int 8800816955714355153
permute(0, 1000000, 1) => int 425188
permute(999999, 1000000, 1) => int 229617
permute(17, 17, 17) => int 14
permute(9223372036854775807, 9223372036854775807, 0) => int 6827909720952040287
random(0, 0) + 1 => int 1
5 % 3 % 2 => int 0
100 / 10 / 5 => int 2
2 - 3 - 4 => int -5
1 <= 1.0 => boolean true
0.1 + 0.2 = 0.3 => boolean false
1 <> 1.5 => boolean true
true = true => EVAL: cannot coerce boolean to int
NULL = NULL => null
NOT NULL IS NULL => boolean false
least(1, NULL, 3) => null
greatest(2, 1) IS NOT NULL => boolean true
CASE WHEN NULL THEN 1 WHEN 0.0 THEN 2 WHEN -1 THEN 3 END => int 3
isnull => PARSE: syntax error
1 isnull notnull => boolean true
1 < 2 = true => PARSE: syntax error
(1 < 2) = true => EVAL: cannot coerce boolean to int
-(1 + 2) * 3 => int -9
+-+-3 => int 3
0x10 => PARSE: syntax error
1e5 % 7 => int 5
7 % 1e1 => int 7
";

    #[test]
    fn expressions_evaluate_as_pgbench_15_printed_them() {
        let mut differences = Vec::new();
        for line in PGBENCH_15.lines() {
            let (e, want) = line.split_once(" => ").unwrap();
            let got = match parse_expr(e) {
                Err(err) => format!("PARSE: {err}"),
                Ok(x) => match x.eval(&mut TestEnv::new()) {
                    Err(err) => format!("EVAL: {err}"),
                    Ok(Value::Int(i)) => format!("int {i}"),
                    Ok(Value::Null) => "null".to_string(),
                    Ok(Value::Bool(b)) => format!("boolean {b}"),
                    Ok(v) => format!("double {}", v.to_sql_text()),
                },
            };
            // Errors: the same kind and pgbench's message within ours
            // (ours add where and what to do).
            let same = match want.split_once(": ") {
                Some((kind @ ("PARSE" | "EVAL"), msg)) => {
                    got.starts_with(kind) && (got.contains(msg) || msg.starts_with("syntax error"))
                }
                _ => got == want,
            };
            if !same {
                differences.push(format!("{e}: pgbench {want}, rqps {got}"));
            }
        }
        assert!(differences.is_empty(), "{differences:#?}");
    }
}
