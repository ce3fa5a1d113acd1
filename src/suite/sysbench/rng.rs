//! sysbench's random numbers, draw for draw: the per-thread xoroshiro128+
//! generator, its seeding from glibc's `random()`, the distributions of
//! `--rand-type` (uniform, gaussian, special, pareto as sysbench 1.0.20
//! computes them; zipfian as sysbench's master branch does) and the helpers
//! of `sysbench.rand.*` (string templates, varstring, uniform_uint64,
//! unique).
//!
//! The contract: [`SbRng::for_thread`] with `--rand-seed N` and thread `i`
//! yields the stream sysbench 1.0.20 gives the `i`-th worker thread to
//! start with `--rand-seed=N`, and each method returns what the function of
//! the same name in `sysbench.rand` returns on that stream (checked against
//! the installed sysbench by tests/sysbench_rand.rs). What cannot match:
//! sysbench hands the streams out in the order its threads happen to start
//! (each takes the next four `random()` values under glibc's lock), and a
//! `--report-interval`, `--rate` or checkpoint thread takes four values
//! before the workers; rqps gives stream `i` to thread `i`.
//!
//! Arithmetic follows sysbench's C types: ranges are `uint32_t` (`b - a + 1`
//! wraps), doubles are converted to `uint32_t` as x86-64 does (truncation
//! through a 64-bit integer, [`c_u32`]), and `pow`, `log`, `exp`, `log1p`
//! and `expm1` are the system libm's, as sysbench's are.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};

/// sysbench's `--rand-type`: the distribution `default(a, b)` draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SbRandType {
    /// Every value of `[a, b]` equally likely.
    Uniform,
    /// The mean of `--rand-spec-iter` uniform draws: a bell around the middle.
    Gaussian,
    /// sysbench 1.0.20's default: `--rand-spec-res` percent of draws fall
    /// uniformly in `--rand-spec-pct` percent of the range around its
    /// middle, the rest are gaussian over the whole range.
    Special,
    /// Pareto with `--rand-pareto-h`: low values hot.
    Pareto,
    /// Zipfian with exponent `--rand-zipfian-exp` (sysbench's master branch;
    /// 1.0.20 lacks it): `a` hottest.
    Zipfian,
}

impl SbRandType {
    /// The names `--rand-type` takes, in sysbench's order.
    pub const NAMES: &'static str = "uniform, gaussian, special, pareto or zipfian";

    pub fn name(self) -> &'static str {
        match self {
            SbRandType::Uniform => "uniform",
            SbRandType::Gaussian => "gaussian",
            SbRandType::Special => "special",
            SbRandType::Pareto => "pareto",
            SbRandType::Zipfian => "zipfian",
        }
    }
}

impl std::str::FromStr for SbRandType {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, crate::error::Error> {
        Ok(match s {
            "uniform" => SbRandType::Uniform,
            "gaussian" => SbRandType::Gaussian,
            "special" => SbRandType::Special,
            "pareto" => SbRandType::Pareto,
            "zipfian" => SbRandType::Zipfian,
            _ => {
                return Err(crate::error::usage(format!(
                    "unknown --rand-type '{s}' (expected {})",
                    Self::NAMES
                )));
            }
        })
    }
}

/// The parameters of sysbench's distributions, under sysbench's option
/// names (`--rand-spec-iter` is `rand_spec_iter` in a matrix file and in
/// stored results). Absent fields take sysbench's defaults, so results
/// stored before these existed load with the values their runs used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SbRandParams {
    /// Uniform draws summed per gaussian and special value (sysbench: 12).
    pub rand_spec_iter: u32,
    /// Percent of the range that is special, around its middle (sysbench: 1).
    pub rand_spec_pct: u32,
    /// Percent of draws that fall in the special part (sysbench: 75).
    pub rand_spec_res: u32,
    /// Pareto's h (sysbench: 0.2, about 80 % of draws in the lowest 20 %).
    pub rand_pareto_h: f64,
    /// Zipfian's exponent, theta (sysbench: 0.8).
    pub rand_zipfian_exp: f64,
}

impl Default for SbRandParams {
    fn default() -> Self {
        SbRandParams {
            rand_spec_iter: 12,
            rand_spec_pct: 1,
            rand_spec_res: 75,
            rand_pareto_h: 0.2,
            rand_zipfian_exp: 0.8,
        }
    }
}

impl SbRandParams {
    /// One line naming the option out of range, or `Ok`. sysbench itself
    /// accepts nonsense here (a zero `--rand-spec-iter` divides by zero and
    /// draws garbage); rqps refuses it before any load.
    pub fn check(&self) -> Result<(), SbRandError> {
        if self.rand_spec_iter == 0 {
            return Err(SbRandError::SpecIter);
        }
        for (option, value) in [
            ("--rand-spec-pct", self.rand_spec_pct),
            ("--rand-spec-res", self.rand_spec_res),
        ] {
            if value > 100 {
                return Err(SbRandError::Percent { option, value });
            }
        }
        let h = self.rand_pareto_h;
        if !(h > 0.0 && h < 1.0) {
            return Err(SbRandError::ParetoH(h));
        }
        let e = self.rand_zipfian_exp;
        if !(e.is_finite() && e >= 0.0) {
            return Err(SbRandError::ZipfianExp(e));
        }
        Ok(())
    }
}

/// A distribution parameter out of range, named by its option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SbRandError {
    #[error("--rand-spec-iter must be at least 1 (sysbench's default is 12)")]
    SpecIter,
    #[error("{option} is a percentage: 0 to 100, got {value}")]
    Percent { option: &'static str, value: u32 },
    #[error(
        "--rand-pareto-h must be between 0 and 1 exclusive (sysbench's default is 0.2), got {0}"
    )]
    ParetoH(f64),
    #[error("--rand-zipfian-exp must be a number >= 0 (sysbench's default is 0.8), got {0}")]
    ZipfianExp(f64),
}

/// `kind` with the parameters it uses, for a line: `special (pct 1, res 75,
/// iter 12)`, `pareto (h 0.2)`, `uniform`.
pub fn label(kind: SbRandType, p: &SbRandParams) -> String {
    match kind {
        SbRandType::Uniform => "uniform".into(),
        SbRandType::Gaussian => format!("gaussian (iter {})", p.rand_spec_iter),
        SbRandType::Special => format!(
            "special (pct {}, res {}, iter {})",
            p.rand_spec_pct, p.rand_spec_res, p.rand_spec_iter
        ),
        SbRandType::Pareto => format!("pareto (h {})", p.rand_pareto_h),
        SbRandType::Zipfian => format!("zipfian (exp {})", p.rand_zipfian_exp),
    }
}

/// A distribution with sysbench's constants computed once, as
/// `sb_rand_init` computes them: what [`SbRng`] draws `default` from, and
/// the parameters of its named distributions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SbDist {
    kind: SbRandType,
    params: SbRandParams,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl SbDist {
    /// `kind` with `params`; one line naming a bad parameter otherwise.
    pub fn new(kind: SbRandType, params: SbRandParams) -> Result<SbDist, SbRandError> {
        params.check()?;
        let e = params.rand_zipfian_exp;
        Ok(SbDist {
            kind,
            params,
            iter_mult: 1.0 / params.rand_spec_iter as f64,
            pct_mult: params.rand_spec_pct as f64 / 100.0,
            pct_2_mult: params.rand_spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - params.rand_spec_res as f64),
            pareto_power: params.rand_pareto_h.ln() / (1.0 - params.rand_pareto_h).ln(),
            zipf_s: 2.0 - zipf::h_integral_inverse(zipf::h_integral(2.5, e) - zipf::h(2.0, e), e),
            zipf_h_integral_x1: zipf::h_integral(1.5, e) - 1.0,
        })
    }

    /// sysbench 1.0.20's defaults: `special` with its parameters.
    pub fn sysbench_default() -> SbDist {
        Self::new(SbRandType::Special, SbRandParams::default())
            .unwrap_or_else(|_| unreachable!("sysbench's defaults are in range"))
    }

    pub fn kind(&self) -> SbRandType {
        self.kind
    }

    pub fn params(&self) -> &SbRandParams {
        &self.params
    }

    /// The same parameters with another `default`.
    pub fn with_kind(mut self, kind: SbRandType) -> SbDist {
        self.kind = kind;
        self
    }
}

/// A double converted to `uint32_t` as sysbench's x86-64 build does it:
/// truncated toward zero through a 64-bit integer, keeping the low 32 bits
/// (out of range, C leaves it undefined; this is what the machine does).
#[inline(always)]
pub fn c_u32(x: f64) -> u32 {
    x as i64 as u32
}

/// glibc's `random()` with a state of its own (`srandom_r`/`random_r` on a
/// 128-byte TYPE_3 table, the size of glibc's global one), so the values
/// are glibc's exactly and no other caller of `random()` disturbs them.
pub struct GlibcRandom {
    data: RandomData,
    // The table `data` points into: boxed so that moving `self` keeps it put.
    _table: Box<[i32; 32]>,
}

/// glibc's `struct random_data` (stdlib.h).
#[repr(C)]
struct RandomData {
    fptr: *mut i32,
    rptr: *mut i32,
    state: *mut i32,
    rand_type: libc::c_int,
    rand_deg: libc::c_int,
    rand_sep: libc::c_int,
    end_ptr: *mut i32,
}

unsafe extern "C" {
    fn initstate_r(
        seed: libc::c_uint,
        statebuf: *mut libc::c_char,
        statelen: libc::size_t,
        buf: *mut RandomData,
    ) -> libc::c_int;
    fn random_r(buf: *mut RandomData, result: *mut i32) -> libc::c_int;
}

// SAFETY: the pointers in `data` point into `_table`, which this value owns
// alone; nothing else can reach them.
unsafe impl Send for GlibcRandom {}

impl GlibcRandom {
    /// The state after `srandom(seed)` (glibc's `random()` before any
    /// `srandom` is `seed` 1; seed 0 is taken as 1, as glibc does).
    pub fn new(seed: u32) -> GlibcRandom {
        let mut table = Box::new([0i32; 32]);
        let mut data = RandomData {
            fptr: std::ptr::null_mut(),
            rptr: std::ptr::null_mut(),
            state: std::ptr::null_mut(),
            rand_type: 0,
            rand_deg: 0,
            rand_sep: 0,
            end_ptr: std::ptr::null_mut(),
        };
        // SAFETY: the table is 128 writable bytes that outlive `data`'s use
        // (both are owned by the returned value), and `data` starts zeroed
        // as initstate_r requires. With 128 bytes it cannot fail.
        let rc = unsafe {
            initstate_r(
                seed,
                table.as_mut_ptr().cast::<libc::c_char>(),
                std::mem::size_of::<[i32; 32]>(),
                &mut data,
            )
        };
        debug_assert_eq!(rc, 0);
        GlibcRandom {
            data,
            _table: table,
        }
    }

    /// The next value of `random()`: 31 bits.
    pub fn random(&mut self) -> u32 {
        let mut out = 0i32;
        // SAFETY: `data` was set up by initstate_r on the table we own.
        unsafe { random_r(&mut self.data, &mut out) };
        out as u32
    }

    /// Four values made into a xoroshiro128+ state, as `sb_rand_thread_init`
    /// makes them: two 32-bit halves per word, high half first.
    pub fn next_state(&mut self) -> [u64; 2] {
        let mut word = || ((self.random() as u64) << 32) | self.random() as u64;
        let s0 = word();
        let s1 = word();
        [s0, s1]
    }
}

/// One thread's generator: sysbench's xoroshiro128+ state and the
/// distribution `default` draws from. Each method is the `sysbench.rand`
/// function of the same name.
#[derive(Clone, Debug)]
pub struct SbRng {
    s: [u64; 2],
    dist: SbDist,
}

impl SbRng {
    /// The stream sysbench gives the `thread`-th worker thread to start
    /// (0-based) after `srandom(seed)`: `--rand-seed=seed`. sysbench with
    /// `--rand-seed=0` seeds from the clock; callers pick a seed instead.
    pub fn for_thread(seed: u32, thread: usize, dist: SbDist) -> SbRng {
        let mut g = GlibcRandom::new(seed);
        for _ in 0..thread {
            g.next_state();
        }
        SbRng::from_state(g.next_state(), dist)
    }

    /// The stream of sysbench's main thread (a script's top level, and
    /// custom commands such as `prepare` run without `--threads`), made
    /// the way sysbench makes it but from a state rqps can reproduce:
    /// `srandom(!seed)` and its first four values. sysbench seeds it in
    /// `sb_rand_init`, before `srandom(--rand-seed)`, from glibc's global
    /// state as the libraries loaded before left it (Debian's LuaJIT seeds
    /// that from the system's entropy), so no seed reproduces sysbench's.
    pub fn main_thread(seed: u32, dist: SbDist) -> SbRng {
        SbRng::from_state(GlibcRandom::new(!seed).next_state(), dist)
    }

    /// A generator from a xoroshiro128+ state (not all zero).
    pub fn from_state(s: [u64; 2], dist: SbDist) -> SbRng {
        SbRng { s, dist }
    }

    pub fn state(&self) -> [u64; 2] {
        self.s
    }

    pub fn dist(&self) -> &SbDist {
        &self.dist
    }

    /// `sysbench.rand.uniform_uint64()`: the next xoroshiro128+ value.
    #[inline(always)]
    pub fn uniform_uint64(&mut self) -> u64 {
        let [s0, mut s1] = self.s;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s = [s0.rotate_left(55) ^ s1 ^ (s1 << 14), s1.rotate_left(36)];
        result
    }

    /// The draw sysbench takes after each event, for the slot of its latency
    /// histogram that the event's time goes to (with `--percentile` other
    /// than 0; its default is 95). A caller that follows sysbench's stream
    /// calls this once after every event.
    #[inline(always)]
    pub fn skip_histogram_slot(&mut self) {
        self.uniform_uint64();
    }

    /// `sysbench.rand.uniform_double()`: a double in `[0, 1)` from the top 52
    /// bits of one draw (the bits of a double in `[1, 2)`, minus 1).
    #[inline(always)]
    pub fn uniform_double(&mut self) -> f64 {
        f64::from_bits((0x3FF << 52) | (self.uniform_uint64() >> 12)) - 1.0
    }

    /// `sysbench.rand.default(a, b)`: the `--rand-type` distribution.
    #[inline]
    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.dist.kind {
            SbRandType::Uniform => self.uniform(a, b),
            kind => self.skewed(kind, a, b),
        }
    }

    #[inline(never)]
    fn skewed(&mut self, kind: SbRandType, a: u32, b: u32) -> u32 {
        match kind {
            SbRandType::Uniform => self.uniform(a, b),
            SbRandType::Gaussian => self.gaussian(a, b),
            SbRandType::Special => self.special(a, b),
            SbRandType::Pareto => self.pareto(a, b),
            SbRandType::Zipfian => self.zipfian(a, b),
        }
    }

    /// `sysbench.rand.uniform(a, b)`: every value of `[a, b]` equally likely.
    #[inline(always)]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let n = b.wrapping_sub(a).wrapping_add(1);
        c_u32(a as f64 + self.uniform_double() * n as f64)
    }

    /// `sysbench.rand.gaussian(a, b)`: the mean of `--rand-spec-iter`
    /// uniform draws over `[a, b]`.
    pub fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        let t = b.wrapping_sub(a).wrapping_add(1) as f64;
        let mut sum = 0.0;
        for _ in 0..self.dist.params.rand_spec_iter {
            sum += self.uniform_double() * t;
        }
        a.wrapping_add(c_u32(sum * self.dist.iter_mult))
    }

    /// `sysbench.rand.special(a, b)` (sysbench 1.0.20): one draw decides;
    /// `--rand-spec-res` percent land uniformly in `--rand-spec-pct` percent
    /// of the range around its middle, the others are gaussian.
    pub fn special(&mut self, a: u32, b: u32) -> u32 {
        let d = &self.dist;
        let (iter, iter_mult, res_mult) = (d.params.rand_spec_iter, d.iter_mult, d.res_mult);
        let (pct_mult, pct_2_mult) = (d.pct_mult, d.pct_2_mult);
        let t = b.wrapping_sub(a) as f64;
        let range_size = t * res_mult;
        let rnd = self.uniform_double();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..iter {
                sum += self.uniform_double();
            }
            return c_u32(a as f64 + sum * t * iter_mult);
        }
        let width = t * pct_mult;
        let mut res = rnd * (width + 1.0);
        res += t / 2.0 - t * pct_2_mult;
        a.wrapping_add(c_u32(res))
    }

    /// `sysbench.rand.pareto(a, b)`: `--rand-pareto-h` makes the low values hot.
    pub fn pareto(&mut self, a: u32, b: u32) -> u32 {
        let n = b.wrapping_sub(a).wrapping_add(1) as f64;
        a.wrapping_add(c_u32(
            n * self.uniform_double().powf(self.dist.pareto_power),
        ))
    }

    /// `sysbench.rand.zipfian(a, b)` (sysbench's master branch): `a` is the
    /// hottest, value `a + k - 1` has weight `1 / k^e` with `e` the
    /// `--rand-zipfian-exp`. Rejection-inversion: one or more draws a value.
    pub fn zipfian(&mut self, a: u32, b: u32) -> u32 {
        let n = b.wrapping_sub(a).wrapping_add(1);
        a.wrapping_add(self.zipfian_int(n)).wrapping_sub(1)
    }

    /// A Zipfian value in `[1, n]` (Hörmann and Derflinger's rejection
    /// inversion, as sysbench takes it from Apache Commons RNG).
    fn zipfian_int(&mut self, n: u32) -> u32 {
        let e = self.dist.params.rand_zipfian_exp;
        let (s, h_x1) = (self.dist.zipf_s, self.dist.zipf_h_integral_x1);
        let h_n = zipf::h_integral(n as f64 + 0.5, e);
        loop {
            let u = h_n + self.uniform_double() * (h_x1 - h_n);
            let x = zipf::h_integral_inverse(u, e);
            let mut k = c_u32(x + 0.5);
            // Rounding can step outside [1, n].
            if k < 1 {
                k = 1;
            } else if k > n {
                k = n;
            }
            if k as f64 - x <= s || u >= zipf::h_integral(k as f64 + 0.5, e) - zipf::h(k as f64, e)
            {
                return k;
            }
        }
    }

    /// `sysbench.rand.string(fmt)`: `fmt` with each `#` replaced by a random
    /// digit and each `@` by a random lowercase letter, in order, one
    /// `uniform` draw each. Written into `out` (cleared first). As sysbench
    /// writes it, a NUL byte in `fmt` ends the copy and the rest are NULs.
    pub fn string_into(&mut self, fmt: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(fmt.len());
        let mut ended = false;
        for &c in fmt {
            ended |= c == 0;
            out.push(match c {
                _ if ended => 0,
                b'#' => self.uniform(b'0'.into(), b'9'.into()) as u8,
                b'@' => self.uniform(b'a'.into(), b'z'.into()) as u8,
                c => c,
            });
        }
    }

    /// [`SbRng::string_into`] on text: `sysbench.rand.string(fmt)`.
    pub fn string(&mut self, fmt: &str) -> String {
        let mut out = Vec::new();
        self.string_into(fmt.as_bytes(), &mut out);
        // Only ASCII bytes were replaced, by ASCII: still UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }

    /// [`SbRng::string`] into a reused `String` (cleared first).
    pub fn string_to(&mut self, fmt: &str, out: &mut String) {
        let mut bytes = std::mem::take(out).into_bytes();
        self.string_into(fmt.as_bytes(), &mut bytes);
        *out = String::from_utf8(bytes).unwrap_or_default();
    }

    /// `sysbench.rand.varstring(min_len, max_len)` (sysbench's master
    /// branch): `uniform(min_len, max_len)` characters, each
    /// `uniform('0', 'z')`. sysbench's C takes `min_len` as 1 where it
    /// exceeds `max_len` and returns "" for `max_len` 0 (its Lua wrapper
    /// asserts `min_len <= max_len` and `max_len > 0` first: the caller's part).
    pub fn varstring(&mut self, min_len: u32, max_len: u32) -> String {
        if max_len == 0 {
            return String::new();
        }
        let min_len = if min_len > max_len { 1 } else { min_len };
        let n = self.uniform(min_len, max_len);
        (0..n)
            .map(|_| self.uniform(b'0'.into(), b'z'.into()) as u8 as char)
            .collect()
    }
}

/// `sysbench.rand.unique()`: a sequence of distinct 32-bit values shared by
/// every thread (one atomic counter through a permutation of the 32-bit
/// integers). sysbench seeds it in `sb_rand_init` from glibc's `random()`
/// before `--rand-seed` applies: see [`SbUnique::seeded`].
#[derive(Debug)]
pub struct SbUnique {
    index: AtomicU32,
    offset: u32,
}

const PRIME: u32 = 4_294_967_291;

fn permute(x: u32) -> u32 {
    if x >= PRIME {
        // The 5 integers above the prime map to themselves.
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

impl SbUnique {
    /// The sequence seeded from two values, as sysbench's `rand_unique_seed`.
    pub fn new(index: u32, offset: u32) -> SbUnique {
        SbUnique {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    /// The sequence seeded as sysbench seeds it, from the two `random()`
    /// values after the main thread's four, on rqps's main-thread state
    /// (`srandom(!seed)`, see [`SbRng::main_thread`]): sysbench's own
    /// cannot be reproduced, it comes from a state no option sets.
    pub fn seeded(seed: u32) -> SbUnique {
        let mut g = GlibcRandom::new(!seed);
        g.next_state();
        Self::from_glibc(&mut g)
    }

    /// The sequence seeded from the next two values of `g`, in the order
    /// sysbench takes them: x86-64 GCC evaluates the arguments of
    /// `rand_unique_seed(random(), random())` right to left, so the first
    /// value is the offset (seen in sysbench 1.0.20 under gdb with glibc's
    /// state set by hand).
    pub fn from_glibc(g: &mut GlibcRandom) -> SbUnique {
        let offset = g.random();
        let index = g.random();
        SbUnique::new(index, offset)
    }

    /// The next value; safe from any thread (each call gets its own index).
    pub fn next(&self) -> u32 {
        let index = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(index).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

/// The helpers of the Zipfian's rejection inversion, with the same
/// expressions as sysbench's (so the same doubles come out).
mod zipf {
    /// `H(x)`: `(x^(1-e) - 1) / (1-e)`, or `ln x` where `e` is 1.
    pub fn h_integral(x: f64, e: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - e) * log_x) * log_x
    }

    /// `h(x) = 1 / x^e`.
    pub fn h(x: f64, e: f64) -> f64 {
        (-e * x.ln()).exp()
    }

    /// The inverse of `H`.
    pub fn h_integral_inverse(x: f64, e: f64) -> f64 {
        let mut t = x * (1.0 - e);
        if t < -1.0 {
            // Below -1 only through rounding.
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }

    /// `ln(1 + x) / x`, by Taylor near 0.
    pub fn helper1(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.ln_1p() / x
        } else {
            1.0 - x * (0.5 - x * (0.333_333_333_333_333_3 - 0.25 * x))
        }
    }

    /// `(e^x - 1) / x`, by Taylor near 0.
    pub fn helper2(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.exp_m1() / x
        } else {
            1.0 + x * 0.5 * (1.0 + x * 0.333_333_333_333_333_3 * (1.0 + 0.25 * x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zipf_rng(e: f64, seed: u32) -> SbRng {
        let params = SbRandParams {
            rand_zipfian_exp: e,
            ..SbRandParams::default()
        };
        SbRng::for_thread(seed, 0, SbDist::new(SbRandType::Zipfian, params).unwrap())
    }

    /// Counts of `draws` values of `zipfian(a, a + n - 1)`, index 0 = `a`.
    fn zipf_counts(e: f64, a: u32, n: u32, draws: usize) -> Vec<f64> {
        let mut r = zipf_rng(e, 5);
        let mut counts = vec![0.0; n as usize];
        for _ in 0..draws {
            let v = r.default(a, a + n - 1);
            assert!((a..a + n).contains(&v), "{v} outside [{a}, {}]", a + n - 1);
            counts[(v - a) as usize] += 1.0;
        }
        counts
    }

    #[test]
    fn zipfian_draws_each_value_with_weight_one_over_its_rank_to_the_exponent() {
        const DRAWS: usize = 200_000;
        for e in [0.0, 0.5, 0.8, 1.0, 1.5] {
            let n = 10;
            let counts = zipf_counts(e, 1000, n, DRAWS);
            let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-e)).collect();
            let total: f64 = weights.iter().sum();
            for (k, (c, w)) in counts.iter().zip(&weights).enumerate() {
                let want = DRAWS as f64 * w / total;
                // Over 4 standard deviations of a binomial count.
                let sd = (want * (1.0 - w / total)).sqrt();
                assert!(
                    (c - want).abs() < 4.5 * sd,
                    "exponent {e}: value {} drawn {c} times, expected {want:.0}",
                    k + 1
                );
            }
        }
    }

    #[test]
    fn zipfian_keeps_to_its_range_at_the_edges() {
        let mut r = zipf_rng(0.8, 9);
        // One value: always it.
        assert!((0..100).all(|_| r.zipfian(42, 42) == 42));
        // The top of the 32-bit range.
        for _ in 0..1000 {
            let v = r.zipfian(u32::MAX - 9, u32::MAX);
            assert!(v >= u32::MAX - 9);
        }
        // A large range: the head is hot, the tail is reached.
        let n = 10_000_000;
        let draws: Vec<u32> = (0..20_000).map(|_| r.zipfian(1, n)).collect();
        assert!(draws.iter().all(|&v| (1..=n).contains(&v)));
        let ones = draws.iter().filter(|&&v| v == 1).count();
        assert!(ones > 100, "1 drawn {ones} times");
        assert!(draws.iter().any(|&v| v > n / 2));
    }

    #[test]
    fn zipfian_helpers_invert_each_other_and_meet_their_series() {
        for e in [0.0, 0.3, 0.8, 1.0, 1.0 + 1e-10, 2.0] {
            for x in [1.5, 2.0, 10.0, 1e3, 1e6] {
                let y = zipf::h_integral_inverse(zipf::h_integral(x, e), e);
                assert!((y - x).abs() <= 1e-9 * x, "e {e}, x {x}: {y}");
                // h is H's derivative.
                let d = 1e-4 * x;
                let slope = (zipf::h_integral(x + d, e) - zipf::h_integral(x - d, e)) / (2.0 * d);
                assert!((slope - zipf::h(x, e)).abs() < 1e-6, "e {e}, x {x}");
            }
        }
        // The Taylor branches agree with the closed forms where they meet.
        for x in [1.5e-8, -1.5e-8] {
            assert!((zipf::helper1(x) - x.ln_1p() / x).abs() < 1e-12);
            assert!((zipf::helper2(x) - x.exp_m1() / x).abs() < 1e-12);
        }
        assert_eq!(zipf::helper1(0.0), 1.0);
        assert_eq!(zipf::helper2(0.0), 1.0);
    }

    #[test]
    fn a_seed_and_thread_give_one_stream_and_threads_differ() {
        let d = SbDist::sysbench_default();
        let draw = |seed, t| {
            let mut r = SbRng::for_thread(seed, t, d);
            (0..8).map(|_| r.uniform_uint64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(3, 1), draw(3, 1));
        assert_ne!(draw(3, 0), draw(3, 1));
        assert_ne!(draw(3, 0), draw(4, 0));
        // glibc takes seed 0 as 1.
        assert_eq!(draw(0, 0), draw(1, 0));
        assert_ne!(SbRng::main_thread(3, d).state(), draw_state(3));
        fn draw_state(seed: u32) -> [u64; 2] {
            SbRng::for_thread(seed, 0, SbDist::sysbench_default()).state()
        }
    }

    #[test]
    fn unique_values_are_distinct_and_shared_across_threads() {
        let u = std::sync::Arc::new(SbUnique::seeded(7));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let u = u.clone();
                std::thread::spawn(move || (0..5000).map(|_| u.next()).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<u32> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 20_000);
        assert_eq!(SbUnique::seeded(7).next(), SbUnique::seeded(7).next());
        assert_ne!(SbUnique::seeded(7).next(), SbUnique::seeded(8).next());
    }

    #[test]
    fn templates_and_varstrings_have_sysbench_s_shapes() {
        let mut r = SbRng::for_thread(1, 0, SbDist::sysbench_default());
        let s = r.string("##-@@ é#");
        assert_eq!(s.len(), "##-@@ é#".len());
        let b = s.as_bytes();
        assert!(b[0].is_ascii_digit() && b[1].is_ascii_digit() && b[2] == b'-');
        assert!(b[3].is_ascii_lowercase() && b[4].is_ascii_lowercase());
        assert!(s.contains(" é") && b[b.len() - 1].is_ascii_digit());
        let mut out = Vec::new();
        r.string_into(b"#\0#", &mut out);
        assert_eq!(&out[1..], &[0, 0]);
        for _ in 0..200 {
            let v = r.varstring(3, 7);
            assert!((3..=7).contains(&v.len()), "{v}");
            assert!(v.bytes().all(|c| (b'0'..=b'z').contains(&c)), "{v}");
        }
        assert_eq!(r.varstring(5, 0), "");
        assert!((1..=2).contains(&r.varstring(9, 2).len()));
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = |p: SbRandParams| SbDist::new(SbRandType::Special, p).unwrap_err().to_string();
        let d = SbRandParams::default();
        assert!(
            bad(SbRandParams {
                rand_spec_iter: 0,
                ..d
            })
            .contains("--rand-spec-iter")
        );
        assert!(
            bad(SbRandParams {
                rand_spec_pct: 101,
                ..d
            })
            .contains("--rand-spec-pct")
        );
        assert!(
            bad(SbRandParams {
                rand_spec_res: 200,
                ..d
            })
            .contains("--rand-spec-res")
        );
        assert!(
            bad(SbRandParams {
                rand_pareto_h: 1.0,
                ..d
            })
            .contains("--rand-pareto-h")
        );
        assert!(
            bad(SbRandParams {
                rand_zipfian_exp: -1.0,
                ..d
            })
            .contains("--rand-zipfian-exp")
        );
        assert!(
            SbDist::new(
                SbRandType::Special,
                SbRandParams {
                    rand_spec_res: 100,
                    ..d
                }
            )
            .is_ok()
        );
        assert!("special".parse::<SbRandType>().is_ok());
        assert!(
            "normal"
                .parse::<SbRandType>()
                .unwrap_err()
                .to_string()
                .contains("gaussian")
        );
    }
}
