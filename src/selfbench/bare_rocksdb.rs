//! For `rqps bench dbbench-client`: readrandom in a bare loop that calls
//! RocksDB's C API directly, with nothing around it (no worker, no face, no
//! measurement but a count and one clock read every 256 reads). It is the
//! yardstick the dbbench suite's readers are measured against.

use std::time::{Duration, Instant};

use crate::engine::rocksdb::RocksDriver;
use crate::engine::{DbError, DbResult};

/// For `rqps bench dbbench-client`: random point reads in a bare loop
/// calling the C API directly (`rocksdb_get_pinned`, or `rocksdb_get`),
/// on `threads` threads for `secs`, with keys made by `key_of(i, out)`
/// for `i` below `keys`. Nothing is measured but the count. Returns the
/// reads done and the seconds they took.
pub fn bare_readrandom(
    driver: &RocksDriver,
    threads: usize,
    secs: f64,
    keys: u64,
    seed: u64,
    key_of: fn(u64, &mut Vec<u8>),
) -> DbResult<(u64, f64)> {
    let raw = driver.raw();
    let raw = &raw;
    let api = raw.api();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let total = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> DbResult<u64> {
                    // SAFETY: read options created and destroyed on this thread.
                    let read = unsafe { (api.rocksdb_readoptions_create)() };
                    let db = raw.handle();
                    let mut x = seed.wrapping_add(t as u64 * 0x9e37_79b9) | 1;
                    let mut key = Vec::new();
                    let mut out = Vec::new();
                    let mut done = 0u64;
                    let mut result = Ok(());
                    'run: loop {
                        for _ in 0..256 {
                            // xorshift64*: cheap, like the rqps worker's generator.
                            x ^= x >> 12;
                            x ^= x << 25;
                            x ^= x >> 27;
                            key_of(x.wrapping_mul(0x2545_f491_4f6c_dd1d) % keys, &mut key);
                            let mut err = std::ptr::null_mut();
                            // SAFETY: live db; results freed at once.
                            unsafe {
                                if let (Some(get), Some(value), Some(destroy)) = (
                                    api.rocksdb_get_pinned,
                                    api.rocksdb_pinnableslice_value,
                                    api.rocksdb_pinnableslice_destroy,
                                ) {
                                    let p = get(db, read, key.as_ptr().cast(), key.len(), &mut err);
                                    if !p.is_null() {
                                        let mut len = 0;
                                        let v = value(p, &mut len);
                                        out.clear();
                                        out.extend_from_slice(std::slice::from_raw_parts(
                                            v.cast::<u8>(),
                                            len,
                                        ));
                                        destroy(p);
                                    }
                                } else {
                                    let mut len = 0;
                                    let v = (api.rocksdb_get)(
                                        db,
                                        read,
                                        key.as_ptr().cast(),
                                        key.len(),
                                        &mut len,
                                        &mut err,
                                    );
                                    if !v.is_null() {
                                        out.clear();
                                        out.extend_from_slice(std::slice::from_raw_parts(
                                            v.cast::<u8>(),
                                            len,
                                        ));
                                        (api.rocksdb_free)(v.cast());
                                    }
                                }
                                if let Some(e) = api.take_err(err) {
                                    result = Err(raw.error(e));
                                    break 'run;
                                }
                            }
                            done += 1;
                        }
                        if Instant::now() >= deadline {
                            break;
                        }
                    }
                    // SAFETY: created above.
                    unsafe { (api.rocksdb_readoptions_destroy)(read) };
                    result.map(|_| done)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(DbError::fatal("a bare reader panicked")))
            })
            .sum::<DbResult<u64>>()
    })?;
    Ok((total, start.elapsed().as_secs_f64()))
}
