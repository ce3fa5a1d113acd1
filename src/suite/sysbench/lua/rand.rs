//! `sysbench.rand` for scripts: the one adapter between sysbench's names
//! and a per-thread generator. For now it draws from rqps's own generator
//! ([`crate::suite::rand`]): the values are not sysbench's streams, and
//! `gaussian` and `special` raise an error that names them. Switching to
//! sysbench's generator (xoroshiro128+ seeded as sysbench seeds it) changes
//! this file alone.
//!
//! `unique` is sysbench's: a permutation of the 32-bit integers, shared by
//! every thread of the process, seeded from the run's seed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use mlua::{Lua, Table};

use crate::suite::rand::{IdDist, RandType, Rng};

/// One thread's generator, with the distribution `default` draws from.
struct ScriptRng {
    rng: Rng,
    kind: RandType,
    /// `default` and the skewed draws, by range size.
    dists: HashMap<(u8, i64), IdDist>,
}

impl ScriptRng {
    fn draw(&mut self, kind: RandType, a: i64, b: i64) -> i64 {
        if b <= a {
            return a;
        }
        if kind == RandType::Uniform {
            return self.rng.uniform(a, b);
        }
        let n = b - a + 1;
        let key = (kind as u8, n);
        let d = self
            .dists
            .entry(key)
            .or_insert_with(|| IdDist::new(kind, n));
        a + d.draw(&mut self.rng) - 1
    }
}

/// sysbench's unique sequence: the quadratic-residue permutation of the
/// 32-bit integers (prime 4294967291), index and offset from the seed.
fn permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

static UNIQUE_INDEX: AtomicU32 = AtomicU32::new(0);
static UNIQUE_OFFSET: AtomicU32 = AtomicU32::new(0);

/// Seeds the process's unique sequence (once per command).
pub fn seed_unique(seed: u64) {
    let (index, offset) = (seed as u32, (seed >> 32) as u32 ^ 0x9e37_79b9);
    UNIQUE_INDEX.store(
        permute(permute(index).wrapping_add(0x682f_0161)),
        Ordering::SeqCst,
    );
    UNIQUE_OFFSET.store(
        permute(permute(offset).wrapping_add(0x4679_0905)),
        Ordering::SeqCst,
    );
}

fn unique() -> u32 {
    let index = UNIQUE_INDEX.fetch_add(1, Ordering::Relaxed);
    let offset = UNIQUE_OFFSET.load(Ordering::Relaxed);
    permute(permute(index).wrapping_add(offset) ^ 0x5bf0_3635)
}

/// sysbench's random string: `#` a digit, `@` a lowercase letter, anything
/// else itself.
fn rand_string(rng: &mut Rng, fmt: &[u8]) -> Vec<u8> {
    fmt.iter()
        .map(|&c| match c {
            b'#' => b'0' + rng.uniform(0, 9) as u8,
            b'@' => b'a' + rng.uniform(0, 25) as u8,
            c => c,
        })
        .collect()
}

/// Fills `sysbench.rand` for thread `tid` (seeded from `seed` and the
/// thread), `default` drawing from `kind`.
pub fn register(lua: &Lua, t: &Table, seed: u64, tid: usize, kind: RandType) -> mlua::Result<()> {
    let g = Arc::new(Mutex::new(ScriptRng {
        rng: Rng::seeded(seed ^ (tid as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        kind,
        dists: HashMap::new(),
    }));
    let with = move |f: &dyn Fn(&mut ScriptRng) -> i64| -> i64 {
        match g.lock() {
            Ok(mut r) => f(&mut r),
            Err(p) => f(&mut p.into_inner()),
        }
    };
    let with = Arc::new(with);
    let w = with.clone();
    t.set(
        "default",
        lua.create_function(move |_, (a, b): (f64, f64)| {
            Ok(w(&|r| {
                let k = r.kind;
                r.draw(k, a as i64, b as i64)
            }) as f64)
        })?,
    )?;
    for (name, kind) in [
        ("uniform", RandType::Uniform),
        ("pareto", RandType::Pareto),
        ("zipfian", RandType::Zipfian),
    ] {
        let w = with.clone();
        t.set(
            name,
            lua.create_function(move |_, (a, b): (f64, f64)| {
                Ok(w(&|r| r.draw(kind, a as i64, b as i64)) as f64)
            })?,
        )?;
    }
    let w = with.clone();
    t.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| Ok(w(&|r| (r.rng.next_u64() >> 11) as i64) as f64))?,
    )?;
    let w = with.clone();
    t.set(
        "uniform_double",
        lua.create_function(move |_, ()| {
            Ok(w(&|r| (r.rng.unit() * (1u64 << 52) as f64) as i64) as f64 / (1u64 << 52) as f64)
        })?,
    )?;
    t.set("unique", lua.create_function(|_, ()| Ok(unique() as f64))?)?;
    let w = with.clone();
    t.set(
        "string",
        lua.create_function(move |lua, fmt: mlua::LuaString| {
            let bytes = fmt.as_bytes().to_vec();
            let out = std::cell::RefCell::new(Vec::new());
            w(&|r| {
                *out.borrow_mut() = rand_string(&mut r.rng, &bytes);
                0
            });
            lua.create_string(out.into_inner())
        })?,
    )?;
    for name in ["gaussian", "special"] {
        t.set(
            name,
            lua.create_function(move |_, _: mlua::MultiValue| -> mlua::Result<f64> {
                Err(mlua::Error::runtime(format!(
                    "sysbench.rand.{name} is not supported by rqps yet (uniform, pareto and zipfian are)"
                )))
            })?,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unique_permutation_is_one_to_one_on_a_sample() {
        let mut seen = std::collections::HashSet::new();
        for x in 0..100_000u32 {
            assert!(seen.insert(permute(x)));
        }
        assert_eq!(permute(4_294_967_295), 4_294_967_295);
    }

    #[test]
    fn random_strings_keep_the_template_s_shape() {
        let mut rng = Rng::seeded(1);
        let s = rand_string(&mut rng, b"##-@@x");
        assert_eq!(s.len(), 6);
        assert!(s[0].is_ascii_digit() && s[2] == b'-' && s[3].is_ascii_lowercase() && s[5] == b'x');
    }
}
