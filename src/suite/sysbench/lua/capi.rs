//! sysbench's C API for scripts' FFI: what a script reaches through
//! `ffi.C` in sysbench, offered by rqps.
//!
//! - [`CDEF`]: the C types and functions sysbench 1.0.20's own Lua modules
//!   declare (`sysbench.sql`'s `sb_counter_type` and driver structures,
//!   `sysbench.rand`'s and `sysbench.histogram`'s functions, ...), declared
//!   in every state before the script runs: a script that declares
//!   `void sb_counter_inc(int, sb_counter_type);` (sysbench-tpcc) parses, and
//!   one that declares what sysbench already did fails as it does in
//!   sysbench. No more is declared than sysbench declares.
//! - The functions, exported by the rqps binary under their C names
//!   (`build.rs` puts `sb_*` in its dynamic symbol table, where LuaJIT's
//!   `ffi.C` looks): the counters (`sb_counter_inc` counts into the thread's
//!   figures), the random draws (from the calling state's stream),
//!   `sb_more_events`, and the latency histogram of `sysbench.histogram`.
//!   The driver's `db_*` functions are declared, as sysbench declares them,
//!   and not exported: their structures are sysbench's driver memory, and
//!   scripts reach the database through `sysbench.sql`.
//!
//! Each state has a [`ThreadCtx`]: its stream, counters and watchdog
//! marks. The functions find it through the thread-local current context
//! ([`enter`]), set whenever rqps calls into a state and again after every
//! statement (a client thread's event loop may have run another state's
//! task while the statement waited); the counters by thread id, as
//! sysbench's do ([`register`]).

use std::cell::RefCell;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use crate::engine::Meaning;
use crate::harness::measure::Counts;
use crate::suite::sysbench::rng::{SbRng, SbUnique};

/// The C declarations sysbench 1.0.20's Lua modules make (`sysbench`,
/// `sysbench.rand`, `sysbench.cmdline`, `sysbench.histogram`,
/// `sysbench.sql`), written for rqps with sysbench's names and layouts.
pub const CDEF: &str = r#"
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);

uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_special(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);

typedef enum {
  SB_ARG_TYPE_NULL, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE,
  SB_ARG_TYPE_DOUBLE, SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE,
  SB_ARG_TYPE_MAX
} sb_arg_type_t;
typedef bool sb_opt_validate_t(const char *, const char *);
typedef struct {
  const char *name;
  const char *desc;
  const char *value;
  sb_arg_type_t type;
  sb_opt_validate_t *validate;
} sb_arg_t;
int sb_lua_set_test_args(sb_arg_t *args, size_t len);
void sb_print_test_options(void);

typedef struct histogram sb_histogram_t;
sb_histogram_t *sb_histogram_new(size_t size, double range_min, double range_max);
void sb_histogram_delete(sb_histogram_t *h);
void sb_histogram_update(sb_histogram_t *h, double value);
void sb_histogram_print(sb_histogram_t *h);

typedef enum { DB_ERROR_NONE, DB_ERROR_IGNORABLE, DB_ERROR_FATAL } sql_error_t;
typedef struct {
  const char *sname;
  const char *lname;
  const char opaque[?];
} sql_driver;
typedef struct {
  uint32_t len;
  const char *ptr;
} sql_value;
typedef struct {
  void *ptr;
  sql_value *values;
} sql_row;
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR,
  SB_CNT_RECONNECT, SB_CNT_MAX
} sb_counter_type;
typedef struct {
  sql_error_t error;
  int sql_errno;
  const char *sql_state;
  const char *sql_errmsg;
  sql_driver *driver;
  const char opaque[?];
} sql_connection;
typedef struct {
  sql_connection *connection;
  const char opaque[?];
} sql_statement;
typedef struct {
  sb_counter_type counter;
  uint32_t nrows;
  uint32_t nfields;
  sql_statement *statement;
  void *ptr;
  sql_row row;
} sql_result;
typedef enum {
  SQL_TYPE_NONE, SQL_TYPE_TINYINT, SQL_TYPE_SMALLINT, SQL_TYPE_INT,
  SQL_TYPE_BIGINT, SQL_TYPE_FLOAT, SQL_TYPE_DOUBLE, SQL_TYPE_TIME,
  SQL_TYPE_DATE, SQL_TYPE_DATETIME, SQL_TYPE_TIMESTAMP, SQL_TYPE_CHAR,
  SQL_TYPE_VARCHAR
} sql_bind_type_t;
typedef struct {
  sql_bind_type_t type;
  void *buffer;
  unsigned long *data_len;
  unsigned long max_len;
  char *is_null;
} sql_bind;
sql_driver *db_create(const char *);
int db_destroy(sql_driver *drv);
sql_connection *db_connection_create(sql_driver *drv);
int db_connection_close(sql_connection *con);
int db_connection_reconnect(sql_connection *con);
void db_connection_free(sql_connection *con);
int db_bulk_insert_init(sql_connection *, const char *, size_t);
int db_bulk_insert_next(sql_connection *, const char *, size_t);
int db_bulk_insert_done(sql_connection *);
sql_result *db_query(sql_connection *con, const char *query, size_t len);
sql_row *db_fetch_row(sql_result *rs);
sql_statement *db_prepare(sql_connection *con, const char *query, size_t len);
int db_bind_param(sql_statement *stmt, sql_bind *params, size_t len);
int db_bind_result(sql_statement *stmt, sql_bind *results, size_t len);
sql_result *db_execute(sql_statement *stmt);
int db_close(sql_statement *stmt);
int db_free_results(sql_result *);
"#;

/// sysbench's counter types (`sb_counter_type`), as indexes of
/// [`ThreadCtx::counters`]; [`ROWS`] is rqps's own.
pub const OTHER: usize = 0;
pub const READ: usize = 1;
pub const WRITE: usize = 2;
pub const EVENT: usize = 3;
pub const ERROR: usize = 4;
pub const RECONNECT: usize = 5;
pub const ROWS: usize = 6;

/// What one Lua state of a script has for the C API and the watchdog.
pub struct ThreadCtx {
    /// `sysbench.tid`.
    pub tid: usize,
    /// The stream `sysbench.rand` draws from.
    pub rng: Mutex<SbRng>,
    /// `unique()`'s sequence, shared by every state of the run.
    pub unique: Arc<SbUnique>,
    /// The thread's counters since the state was made, by
    /// [`OTHER`]..[`ROWS`]: written by this state only (a load and a store,
    /// as sysbench's own counters), read by the worker after each event and
    /// by the reporting thread.
    pub counters: [AtomicU64; 7],
    /// Events that failed with an ignorable error (restarted).
    pub restarts: AtomicU64,
    /// What the statement error that restarts the current event means (the
    /// Lua half does not carry it): set by the failed statement, taken by
    /// the worker at the event's end.
    restarted: Mutex<Option<Meaning>>,
    /// Whether `restarted` holds a meaning: checked before the lock, at
    /// every event's start.
    has_restarted: AtomicBool,
    /// The watchdog's marks ([`Watch`]).
    pub watch: Watch,
    /// The code of an `os.exit` the script called (`i64::MIN`: none).
    pub exit: AtomicI64,
}

/// Where a state is, for the watchdog: whether it runs an event, and
/// whether that event waits for the database; and whether it must stop.
#[derive(Default)]
pub struct Watch {
    /// Set by the watchdog: the next statement fails, and so ends the event.
    pub abort: AtomicBool,
    /// An event is running (between the calls into Lua and back).
    pub in_event: AtomicBool,
    /// A statement is with the database.
    pub in_db: AtomicBool,
    /// The step is over (`sb_more_events` says false).
    pub over: AtomicBool,
}

impl ThreadCtx {
    /// Keeps what the error that restarts the event means.
    pub fn restarted(&self, m: Meaning) {
        if let Ok(mut r) = self.restarted.lock() {
            *r = Some(m);
            self.has_restarted.store(true, Ordering::Relaxed);
        }
    }

    /// What the error that restarted the event meant, if a statement
    /// failed (a restart the script raised itself failed none).
    pub fn take_restarted(&self) -> Option<Meaning> {
        if !self.has_restarted.load(Ordering::Relaxed) {
            return None;
        }
        self.has_restarted.store(false, Ordering::Relaxed);
        self.restarted.lock().ok().and_then(|mut r| r.take())
    }

    pub fn new(tid: usize, rng: SbRng, unique: Arc<SbUnique>) -> Arc<ThreadCtx> {
        Arc::new(ThreadCtx {
            tid,
            rng: Mutex::new(rng),
            unique,
            counters: Default::default(),
            restarts: AtomicU64::new(0),
            restarted: Mutex::new(None),
            has_restarted: AtomicBool::new(false),
            watch: Watch::default(),
            exit: AtomicI64::new(i64::MIN),
        })
    }

    /// Draws with the state's generator.
    #[inline]
    pub fn draw<T>(&self, f: impl FnOnce(&mut SbRng) -> T) -> T {
        match self.rng.lock() {
            Ok(mut r) => f(&mut r),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    /// Adds one to counter `i` (a single writer, as in sysbench).
    #[inline]
    pub fn bump(&self, i: usize, n: u64) {
        let c = &self.counters[i];
        c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// The counters now, as [`Counts`] (events: those the script counted
    /// with `sb_counter_inc`; rqps counts its events itself).
    pub fn counts(&self) -> Counts {
        let v = |i: usize| self.counters[i].load(Ordering::Relaxed);
        Counts {
            reads: v(READ),
            writes: v(WRITE),
            other: v(OTHER),
            events: v(EVENT),
            errors: v(ERROR),
            reconnects: v(RECONNECT),
            rows: v(ROWS),
        }
    }

    /// Records that the script called `os.exit(code)`.
    pub fn exit_called(&self, code: i64) {
        let _ = self
            .exit
            .compare_exchange(i64::MIN, code, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// The code of the `os.exit` the script called, if it did.
    pub fn exited(&self) -> Option<i64> {
        match self.exit.load(Ordering::Relaxed) {
            i64::MIN => None,
            c => Some(c),
        }
    }
}

thread_local! {
    /// The state this thread runs Lua code of now.
    static CURRENT: RefCell<Option<Arc<ThreadCtx>>> = const { RefCell::new(None) };
}

/// Makes `ctx` the current state of this thread: call it before calling
/// into the state, and after anything that may have let another state run
/// on this thread.
#[inline]
pub fn enter(ctx: &Arc<ThreadCtx>) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if !c.as_ref().is_some_and(|x| Arc::ptr_eq(x, ctx)) {
            *c = Some(ctx.clone());
        }
    });
}

/// The current state's context.
fn current() -> Option<Arc<ThreadCtx>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Draws from the current state's stream; from a stream of its own when
/// no state is current (which rqps's calls into Lua never leave so).
fn draw<T>(f: impl FnOnce(&mut SbRng) -> T) -> T {
    CURRENT.with(|c| match c.borrow().as_ref() {
        Some(ctx) => ctx.draw(f),
        None => {
            static SPARE: Mutex<Option<SbRng>> = Mutex::new(None);
            let mut g = match SPARE.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            let r = g.get_or_insert_with(|| {
                SbRng::main_thread(0, crate::suite::sysbench::rng::SbDist::sysbench_default())
            });
            f(r)
        }
    })
}

/// The contexts of the running step's threads, by thread id, for the
/// counters that scripts address by id.
static BY_TID: RwLock<Vec<Weak<ThreadCtx>>> = RwLock::new(Vec::new());

/// Makes `ctx` the one that thread id `ctx.tid`'s counters go to.
pub fn register(ctx: &Arc<ThreadCtx>) {
    let mut g = match BY_TID.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if g.len() <= ctx.tid {
        g.resize(ctx.tid + 1, Weak::new());
    }
    g[ctx.tid] = Arc::downgrade(ctx);
}

/// The context of thread `tid`: the registered one, else the current
/// state's when its id is `tid`.
fn by_tid(tid: c_int) -> Option<Arc<ThreadCtx>> {
    let i = usize::try_from(tid).ok()?;
    let found = match BY_TID.read() {
        Ok(g) => g.get(i).and_then(Weak::upgrade),
        Err(p) => p.into_inner().get(i).and_then(Weak::upgrade),
    };
    found.or_else(|| current().filter(|c| c.tid == i))
}

/// The index of counter type `t`, if it is one of sysbench's.
fn counter(t: c_int) -> Option<usize> {
    usize::try_from(t).ok().filter(|&i| i <= RECONNECT)
}

/// `sb_counter_inc(thread_id, type)`: one more of `type` for the thread
/// (a read, a write, an "other", an event, an error, a reconnect), counted
/// in the test's figures as rqps's own counts are. An unknown thread or
/// type counts nothing.
#[unsafe(no_mangle)]
pub extern "C" fn sb_counter_inc(thread_id: c_int, t: c_int) {
    if let (Some(ctx), Some(i)) = (by_tid(thread_id), counter(t)) {
        ctx.bump(i, 1);
    }
}

/// `sb_counter_val(thread_id, type)`: the thread's count of `type` so far.
#[unsafe(no_mangle)]
pub extern "C" fn sb_counter_val(thread_id: c_int, t: c_int) -> u64 {
    match (by_tid(thread_id), counter(t)) {
        (Some(ctx), Some(i)) => ctx.counters[i].load(Ordering::Relaxed),
        _ => 0,
    }
}

/// `sb_event_start`: rqps times each event itself; nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn sb_event_start(_thread_id: c_int) {}

/// `sb_event_stop`: rqps times each event itself; nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn sb_event_stop(_thread_id: c_int) {}

/// `sb_more_events(thread_id)`: whether the thread's step still runs.
#[unsafe(no_mangle)]
pub extern "C" fn sb_more_events(thread_id: c_int) -> bool {
    by_tid(thread_id).is_some_and(|c| {
        !c.watch.over.load(Ordering::Relaxed)
            && !c.watch.abort.load(Ordering::Relaxed)
            && !crate::harness::runner::stop_requested()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_default(a: u32, b: u32) -> u32 {
    draw(|r| r.default(a, b))
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_uniform(a: u32, b: u32) -> u32 {
    draw(|r| r.uniform(a, b))
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_gaussian(a: u32, b: u32) -> u32 {
    draw(|r| r.gaussian(a, b))
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_special(a: u32, b: u32) -> u32 {
    draw(|r| r.special(a, b))
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_pareto(a: u32, b: u32) -> u32 {
    draw(|r| r.pareto(a, b))
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_uniform_uint64() -> u64 {
    draw(|r| r.uniform_uint64())
}

#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_uniform_double() -> f64 {
    draw(|r| r.uniform_double())
}

/// `sb_rand_unique()`: the run's unique sequence.
#[unsafe(no_mangle)]
pub extern "C" fn sb_rand_unique() -> u32 {
    match current() {
        Some(c) => c.unique.next(),
        None => 0,
    }
}

/// `sb_rand_str(fmt, buf)`: writes one character into `buf` for each of
/// `fmt`'s (`#` a digit, `@` a letter, anything else itself), without a
/// terminating NUL, as sysbench does.
///
/// # Safety
/// `fmt` is a NUL-terminated string, or null; `buf` has room for as many
/// bytes as `fmt` has before its NUL, or is null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sb_rand_str(fmt: *const c_char, buf: *mut c_char) {
    if fmt.is_null() || buf.is_null() {
        return;
    }
    // SAFETY: fmt is a NUL-terminated string (the caller's promise).
    let fmt = unsafe { std::ffi::CStr::from_ptr(fmt) }.to_bytes();
    let mut out = Vec::with_capacity(fmt.len());
    draw(|r| r.string_into(fmt, &mut out));
    let n = out.len().min(fmt.len());
    // SAFETY: buf has room for fmt.len() bytes (the caller's promise) and
    // does not overlap `out`, which is ours.
    unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), buf.cast::<u8>(), n) };
}

/// A latency histogram of `sysbench.histogram`: `size` slots over a log
/// scale from `range_min` to `range_max`, as sysbench spreads them (values
/// outside land in the end slots).
pub struct SbHistogram {
    counts: Box<[AtomicU64]>,
    /// ln(range_min), and slots per unit of ln: slot i holds values near
    /// exp(i / mult + deduct).
    deduct: f64,
    mult: f64,
}

/// The most slots a histogram may have (sysbench's own has 1024).
const MAX_HISTOGRAM_SLOTS: usize = 1 << 20;

impl SbHistogram {
    pub fn new(size: usize, min: f64, max: f64) -> Option<SbHistogram> {
        let sane = (2..=MAX_HISTOGRAM_SLOTS).contains(&size)
            && min > 0.0
            && max > min
            && min.is_finite()
            && max.is_finite();
        if !sane {
            return None;
        }
        let deduct = min.ln();
        Some(SbHistogram {
            counts: (0..size).map(|_| AtomicU64::new(0)).collect(),
            deduct,
            mult: (size - 1) as f64 / (max.ln() - deduct),
        })
    }

    pub fn update(&self, value: f64) {
        let i = ((value.ln() - self.deduct) * self.mult + 0.5).floor();
        let last = self.counts.len() - 1;
        // NaN and values below the range go to the first slot.
        let i = if i.is_nan() || i < 0.0 {
            0
        } else {
            (i as usize).min(last)
        };
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }

    /// sysbench's drawing: one line per non-empty slot, its value, a bar of
    /// up to 40 stars scaled to the fullest slot, and its count; nothing
    /// when every slot is empty.
    pub fn text(&self) -> String {
        let counts: Vec<u64> = self
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let max = counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return String::new();
        }
        let mut out =
            String::from("       value  ------------- distribution ------------- count\n");
        for (i, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let width = (c as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
            let value = (i as f64 / self.mult + self.deduct).exp();
            out.push_str(&format!(
                "{value:12.3} |{:<40} {c}\n",
                "*".repeat(width.min(40))
            ));
        }
        out
    }
}

/// `sb_histogram_new(size, range_min, range_max)`: a histogram, or null
/// for a size or range sysbench could not use either.
#[unsafe(no_mangle)]
pub extern "C" fn sb_histogram_new(
    size: usize,
    range_min: f64,
    range_max: f64,
) -> *mut SbHistogram {
    match SbHistogram::new(size, range_min, range_max) {
        Some(h) => Box::into_raw(Box::new(h)),
        None => std::ptr::null_mut(),
    }
}

/// `sb_histogram_delete(h)`.
///
/// # Safety
/// `h` is null or a histogram from [`sb_histogram_new`] not yet deleted,
/// and no other call uses it at the same time (`sysbench.histogram.new`
/// hands it to `ffi.gc`, which deletes it once, when nothing refers to it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sb_histogram_delete(h: *mut SbHistogram) {
    if !h.is_null() {
        // SAFETY: made by Box::into_raw in sb_histogram_new, deleted once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// `sb_histogram_update(h, value)`: one more value; draws once from the
/// state's stream first, as sysbench does to pick one of its slots.
///
/// # Safety
/// `h` is null or a live histogram from [`sb_histogram_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sb_histogram_update(h: *mut SbHistogram, value: f64) {
    draw(|r| r.skip_histogram_slot());
    // SAFETY: a live histogram (the caller's promise); its counters are atomic.
    if let Some(h) = unsafe { h.as_ref() } {
        h.update(value);
    }
}

/// `sb_histogram_print(h)`: its drawing on standard output.
///
/// # Safety
/// `h` is null or a live histogram from [`sb_histogram_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sb_histogram_print(h: *mut SbHistogram) {
    // SAFETY: a live histogram (the caller's promise).
    if let Some(h) = unsafe { h.as_ref() } {
        super::out::print(&h.text());
    }
}

/// Every exported function, referred to once so that the linker keeps
/// them all in the binary (nothing in Rust calls most of them).
pub fn exported() -> [*const (); 18] {
    [
        sb_counter_inc as *const (),
        sb_counter_val as *const (),
        sb_event_start as *const (),
        sb_event_stop as *const (),
        sb_more_events as *const (),
        sb_rand_default as *const (),
        sb_rand_uniform as *const (),
        sb_rand_gaussian as *const (),
        sb_rand_special as *const (),
        sb_rand_pareto as *const (),
        sb_rand_uniform_uint64 as *const (),
        sb_rand_uniform_double as *const (),
        sb_rand_unique as *const (),
        sb_rand_str as *const (),
        sb_histogram_new as *const (),
        sb_histogram_delete as *const (),
        sb_histogram_update as *const (),
        sb_histogram_print as *const (),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_spreads_values_on_sysbench_s_log_scale() {
        // sysbench's own check (1000 slots over 1..10): 1, 2, 0, 10, 100
        // and 5.001 give four slots, the out-of-range values at the ends.
        let h = SbHistogram::new(1000, 1.0, 10.0).unwrap();
        for v in [1.0, 2.0, 0.0, 10.0, 100.0, 5.001] {
            h.update(v);
        }
        let text = h.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[1].starts_with("       1.000 |****"), "{text}");
        assert!(lines[1].ends_with(" 2"), "{text}");
        assert!(lines[2].starts_with("       2.001 |"), "{text}");
        assert!(lines[3].starts_with("       4.997 |"), "{text}");
        assert!(lines[4].starts_with("      10.000 |"), "{text}");
        assert!(SbHistogram::new(0, 1.0, 10.0).is_none());
        assert!(SbHistogram::new(10, 0.0, 10.0).is_none());
        assert_eq!(SbHistogram::new(10, 1.0, 2.0).unwrap().text(), "");
    }

    #[test]
    fn counters_go_to_the_thread_of_the_id_and_ignore_unknown_types() {
        let dist = crate::suite::sysbench::rng::SbDist::sysbench_default();
        let ctx = ThreadCtx::new(
            4321,
            SbRng::for_thread(1, 0, dist),
            Arc::new(SbUnique::seeded(1)),
        );
        register(&ctx);
        sb_counter_inc(4321, 4);
        sb_counter_inc(4321, 4);
        sb_counter_inc(4321, 99);
        sb_counter_inc(-1, 4);
        assert_eq!(sb_counter_val(4321, 4), 2);
        assert_eq!(ctx.counts().errors, 2);
        assert_eq!(sb_counter_val(4321, 42), 0);
    }
}
