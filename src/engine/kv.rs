//! The key-value face of an engine (RocksDB and the like): ordered byte
//! keys, byte values, atomic batches, and scans that seek then step.
//!
//! The contract, for an engine that implements it:
//! - Keys are compared as unsigned bytes, shortest first on a common prefix
//!   (memcmp order, as RocksDB's default comparator).
//! - [`KvAccess`] is the engine as a whole (thread-safe): it opens one
//!   [`KvConn`] per worker, and owns what is database-wide: flush, compaction
//!   and the engine's named properties.
//! - A [`KvConn`] is used by one thread. Like the SQL path, its per-operation
//!   methods hand results to a callback or into a buffer the caller reuses,
//!   so a worker's steady state allocates nothing.
//! - A [`WriteBatch`] applies all of its operations or none, in order (a put
//!   then a delete of one key leaves it absent).
//! - Errors are [`DbError`](crate::engine::DbError)s with the same classes as
//!   SQL: retry (busy, write stall), reconnect, fatal.
//!
//! - An LSM engine (RocksDB) also reports the shape of its tree
//!   ([`LsmShape`]) and its background work ([`LsmCounters`]), and can wait
//!   for that work or push level 0 down, so that a workload can put the tree
//!   in a known shape without naming the engine. Other engines keep the
//!   defaults (no shape, nothing to wait for).
//!
//! RocksDB (`engine/rocksdb`) implements it; the tests below pin the contract
//! with an in-memory map.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::error::DbResult;

/// One level of an LSM tree: how many files and bytes it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelShape {
    pub level: usize,
    pub files: u64,
    pub bytes: u64,
}

/// The shape of an LSM tree: every level that holds data, level 0 first, and
/// what sits in memory not yet flushed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LsmShape {
    pub levels: Vec<LevelShape>,
    pub memtable_bytes: u64,
}

impl LsmShape {
    /// Files in `level` (0 when it holds none).
    pub fn files_at(&self, level: usize) -> u64 {
        self.levels
            .iter()
            .find(|l| l.level == level)
            .map_or(0, |l| l.files)
    }
    /// Bytes in every level's files.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }
    /// `L0 3f 24MB, L6 12f 96MB`: the levels that hold files.
    pub fn brief(&self) -> String {
        let mut parts: Vec<String> = self
            .levels
            .iter()
            .filter(|l| l.files > 0)
            .map(|l| {
                format!(
                    "L{} {}f {:.1}MB",
                    l.level,
                    l.files,
                    l.bytes as f64 / 1_048_576.0
                )
            })
            .collect();
        if parts.is_empty() {
            parts.push("no files".into());
        }
        parts.push(format!(
            "mem {:.1}MB",
            self.memtable_bytes as f64 / 1_048_576.0
        ));
        parts.join(", ")
    }
}

/// An LSM engine's background work since it opened (cumulative counters:
/// subtract two readings for one test's share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LsmCounters {
    /// Bytes written by flushes of the memtable.
    pub flush_write_bytes: u64,
    /// Bytes written by compactions.
    pub compact_write_bytes: u64,
    pub compact_read_bytes: u64,
    /// Wall time of compactions, in microseconds.
    pub compact_micros: u64,
    /// CPU time of compactions, in microseconds.
    pub compact_cpu_micros: u64,
    /// Time writers were stalled or slowed, in microseconds.
    pub stall_micros: u64,
    /// How many times writes were stalled or slowed.
    pub stall_count: u64,
}

impl LsmCounters {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &LsmCounters) -> LsmCounters {
        LsmCounters {
            flush_write_bytes: self
                .flush_write_bytes
                .saturating_sub(before.flush_write_bytes),
            compact_write_bytes: self
                .compact_write_bytes
                .saturating_sub(before.compact_write_bytes),
            compact_read_bytes: self
                .compact_read_bytes
                .saturating_sub(before.compact_read_bytes),
            compact_micros: self.compact_micros.saturating_sub(before.compact_micros),
            compact_cpu_micros: self
                .compact_cpu_micros
                .saturating_sub(before.compact_cpu_micros),
            stall_micros: self.stall_micros.saturating_sub(before.stall_micros),
            stall_count: self.stall_count.saturating_sub(before.stall_count),
        }
    }
    /// Write amplification: compaction bytes written per byte flushed
    /// (`None` when nothing was flushed).
    pub fn write_amp(&self) -> Option<f64> {
        (self.flush_write_bytes > 0)
            .then(|| self.compact_write_bytes as f64 / self.flush_write_bytes as f64)
    }
}

/// Which way a scan steps from where it lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Land on the first key at or after the start, then step to larger keys.
    Forward,
    /// Land on the last key at or before the start, then step to smaller keys.
    Reverse,
}

/// One operation of a [`WriteBatch`]: ranges into the batch's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchOp {
    Put {
        key: (usize, usize),
        value: (usize, usize),
    },
    Delete {
        key: (usize, usize),
    },
}

/// Puts and deletes applied together. Keys and values are copied into one
/// buffer; [`WriteBatch::clear`] keeps its capacity so a worker reuses one
/// batch without allocating.
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    ops: Vec<BatchOp>,
    data: Vec<u8>,
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::default()
    }
    fn push(&mut self, bytes: &[u8]) -> (usize, usize) {
        let start = self.data.len();
        self.data.extend_from_slice(bytes);
        (start, self.data.len())
    }
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        let key = self.push(key);
        let value = self.push(value);
        self.ops.push(BatchOp::Put { key, value });
    }
    pub fn delete(&mut self, key: &[u8]) {
        let key = self.push(key);
        self.ops.push(BatchOp::Delete { key });
    }
    pub fn clear(&mut self) {
        self.ops.clear();
        self.data.clear();
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// The operations in order, as `(key, Some(value))` for a put and
    /// `(key, None)` for a delete: what an engine's `write` walks.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> + '_ {
        let at = |(a, b): (usize, usize)| &self.data[a..b];
        self.ops.iter().map(move |op| match *op {
            BatchOp::Put { key, value } => (at(key), Some(at(value))),
            BatchOp::Delete { key } => (at(key), None),
        })
    }
}

/// The key-value face of an engine, shared by every worker.
pub trait KvAccess: Send + Sync {
    /// A session for one worker thread.
    fn connect(&self) -> DbResult<Box<dyn KvConn>>;
    /// Writes what is in memory to storage (RocksDB: flush the memtables).
    fn flush(&self) -> DbResult<()>;
    /// Compacts the keys in `[start, end)`; `None` is open-ended.
    fn compact(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> DbResult<()>;
    /// An engine property by name (RocksDB: `rocksdb.stats`,
    /// `rocksdb.estimate-num-keys`, ...), `None` when the engine has no such
    /// property.
    fn property(&self, name: &str) -> DbResult<Option<String>>;
    /// The tree's shape, for an LSM engine (`None` otherwise).
    fn lsm_shape(&self) -> DbResult<Option<LsmShape>> {
        Ok(None)
    }
    /// The background work so far, for an LSM engine (`None` otherwise).
    fn lsm_counters(&self) -> DbResult<Option<LsmCounters>> {
        Ok(None)
    }
    /// Waits until no flush or compaction is pending or running, at most
    /// `limit`; returns whether it became idle. Default: nothing to wait for.
    fn wait_for_background(&self, _limit: Duration) -> DbResult<bool> {
        Ok(true)
    }
    /// Switches the engine to (`on`) or back from a bulk load of keys in
    /// key order by one writer, as db_bench's fillseq runs it (RocksDB: the
    /// vector memtable without concurrent memtable writes; the database is
    /// flushed and reopened, so no connection may be open). Returns, for
    /// `on`, the settings the load runs with in the engine's options form,
    /// to store with the step; `None`: the engine has no such mode (default).
    fn ordered_load(&self, _on: bool) -> DbResult<Option<String>> {
        Ok(None)
    }
    /// Puts the tree in a known shape: flushes the memtable, waits for
    /// compaction, compacts level 0 into the next level and waits again, so
    /// that level 0 is empty. Default: [`KvAccess::flush`].
    fn empty_level0(&self, _limit: Duration) -> DbResult<()> {
        self.flush()
    }
}

/// One worker's session. See the module docs for the contract.
pub trait KvConn: Send {
    /// Reads `key`'s value into `out` (cleared first); `false` when absent.
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> DbResult<bool>;
    /// Reads several keys in one call; `found(i, value)` is called once per
    /// key, in order, with `None` for an absent key.
    fn multi_get(
        &mut self,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> DbResult<()>;
    fn put(&mut self, key: &[u8], value: &[u8]) -> DbResult<()>;
    /// Deleting an absent key is not an error.
    fn delete(&mut self, key: &[u8]) -> DbResult<()>;
    /// Applies every operation of `batch`, atomically.
    fn write(&mut self, batch: &WriteBatch) -> DbResult<()>;
    /// Seeks to `start` and visits up to `n` entries stepping in `dir`,
    /// calling `each(key, value)`; returns how many it visited.
    fn scan(
        &mut self,
        start: &[u8],
        dir: Direction,
        n: usize,
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> DbResult<usize>;
    /// Turns the write-ahead log on or off for this session's later writes
    /// (a bulk load that can be redone skips it). Returns whether the engine
    /// has such a switch; default: it has not, and writes are unchanged.
    fn set_write_ahead_log(&mut self, _on: bool) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    //! An in-memory engine that offers only the key-value face, to pin the
    //! contract and the way workloads ask for a face.
    use super::*;
    use crate::engine::{Caps, DbError, Driver};
    use std::collections::BTreeMap;
    use std::ops::Bound;
    use std::sync::{Arc, Mutex};

    type Map = Arc<Mutex<BTreeMap<Vec<u8>, Vec<u8>>>>;

    #[derive(Default)]
    struct MemKv {
        map: Map,
    }

    struct MemConn {
        map: Map,
    }

    fn lock(m: &Map) -> std::sync::MutexGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    impl Driver for MemKv {
        fn engine(&self) -> &'static str {
            "memkv"
        }
        fn caps(&self) -> Caps {
            Caps::KEY_VALUE
        }
        fn version(&self) -> DbResult<String> {
            Ok("1".into())
        }
        fn kv(&self) -> Option<&dyn KvAccess> {
            Some(self)
        }
    }

    impl KvAccess for MemKv {
        fn connect(&self) -> DbResult<Box<dyn KvConn>> {
            Ok(Box::new(MemConn {
                map: self.map.clone(),
            }))
        }
        fn flush(&self) -> DbResult<()> {
            Ok(())
        }
        fn compact(&self, _start: Option<&[u8]>, _end: Option<&[u8]>) -> DbResult<()> {
            Ok(())
        }
        fn property(&self, name: &str) -> DbResult<Option<String>> {
            Ok((name == "estimate-num-keys").then(|| lock(&self.map).len().to_string()))
        }
    }

    impl KvConn for MemConn {
        fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> DbResult<bool> {
            out.clear();
            match lock(&self.map).get(key) {
                Some(v) => {
                    out.extend_from_slice(v);
                    Ok(true)
                }
                None => Ok(false),
            }
        }
        fn multi_get(
            &mut self,
            keys: &[&[u8]],
            found: &mut dyn FnMut(usize, Option<&[u8]>),
        ) -> DbResult<()> {
            let m = lock(&self.map);
            for (i, k) in keys.iter().enumerate() {
                found(i, m.get(*k).map(Vec::as_slice));
            }
            Ok(())
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> DbResult<()> {
            lock(&self.map).insert(key.to_vec(), value.to_vec());
            Ok(())
        }
        fn delete(&mut self, key: &[u8]) -> DbResult<()> {
            lock(&self.map).remove(key);
            Ok(())
        }
        fn write(&mut self, batch: &WriteBatch) -> DbResult<()> {
            // One lock for the whole batch: no reader sees half of it.
            let mut m = lock(&self.map);
            for (k, v) in batch.iter() {
                match v {
                    Some(v) => m.insert(k.to_vec(), v.to_vec()),
                    None => m.remove(k),
                };
            }
            Ok(())
        }
        fn scan(
            &mut self,
            start: &[u8],
            dir: Direction,
            n: usize,
            each: &mut dyn FnMut(&[u8], &[u8]),
        ) -> DbResult<usize> {
            let m = lock(&self.map);
            let mut seen = 0;
            let mut visit = |(k, v): (&Vec<u8>, &Vec<u8>)| {
                each(k, v);
                seen += 1;
            };
            match dir {
                Direction::Forward => m
                    .range::<[u8], _>((Bound::Included(start), Bound::Unbounded))
                    .take(n)
                    .for_each(&mut visit),
                Direction::Reverse => m
                    .range::<[u8], _>((Bound::Unbounded, Bound::Included(start)))
                    .rev()
                    .take(n)
                    .for_each(&mut visit),
            }
            Ok(seen)
        }
    }

    fn keys_of(c: &mut dyn KvConn, start: &[u8], dir: Direction, n: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let seen = c
            .scan(start, dir, n, &mut |k, _| out.push(k.to_vec()))
            .unwrap();
        assert_eq!(seen, out.len());
        out
    }

    #[test]
    fn get_put_delete_and_multi_get() {
        let e = MemKv::default();
        let kv = e.require_kv().unwrap();
        let mut c = kv.connect().unwrap();
        let mut buf = b"stale".to_vec();
        assert!(!c.get(b"a", &mut buf).unwrap());
        assert!(buf.is_empty(), "get clears the buffer");
        c.put(b"a", b"1").unwrap();
        c.put(b"b", b"2").unwrap();
        assert!(c.get(b"a", &mut buf).unwrap());
        assert_eq!(buf, b"1");
        c.delete(b"a").unwrap();
        c.delete(b"nope").unwrap();
        let mut got = Vec::new();
        c.multi_get(&[b"a", b"b"], &mut |i, v| {
            got.push((i, v.map(<[u8]>::to_vec)))
        })
        .unwrap();
        assert_eq!(got, [(0, None), (1, Some(b"2".to_vec()))]);
        assert_eq!(
            kv.property("estimate-num-keys").unwrap().as_deref(),
            Some("1")
        );
        assert_eq!(kv.property("no-such").unwrap(), None);
        kv.flush().unwrap();
        kv.compact(None, None).unwrap();
    }

    #[test]
    fn batches_apply_in_order_and_are_reusable() {
        let e = MemKv::default();
        let mut c = e.require_kv().unwrap().connect().unwrap();
        let mut b = WriteBatch::new();
        b.put(b"k1", b"v1");
        b.put(b"k2", b"v2");
        b.delete(b"k1");
        assert_eq!(b.len(), 3);
        c.write(&b).unwrap();
        let mut buf = Vec::new();
        assert!(!c.get(b"k1", &mut buf).unwrap());
        assert!(c.get(b"k2", &mut buf).unwrap());
        let cap = b.data.capacity();
        b.clear();
        assert!(b.is_empty());
        b.put(b"k3", b"v3");
        assert_eq!(b.data.capacity(), cap, "clear keeps the buffer");
        c.write(&b).unwrap();
        assert!(c.get(b"k3", &mut buf).unwrap());
    }

    #[test]
    fn scans_seek_then_step_either_way() {
        let e = MemKv::default();
        let mut c = e.require_kv().unwrap().connect().unwrap();
        for k in [b"a1", b"a3", b"a5", b"b1"] {
            c.put(k, b"x").unwrap();
        }
        assert_eq!(
            keys_of(c.as_mut(), b"a2", Direction::Forward, 2),
            [b"a3".to_vec(), b"a5".to_vec()]
        );
        assert_eq!(
            keys_of(c.as_mut(), b"a3", Direction::Forward, 10).len(),
            3,
            "the start key itself is included, and a scan stops at the end"
        );
        assert_eq!(
            keys_of(c.as_mut(), b"a4", Direction::Reverse, 5),
            [b"a3".to_vec(), b"a1".to_vec()]
        );
        // Memcmp order: a shorter key sorts first on a common prefix.
        assert_eq!(
            keys_of(c.as_mut(), b"a", Direction::Forward, 1),
            [b"a1".to_vec()]
        );
        assert!(keys_of(c.as_mut(), b"c", Direction::Forward, 3).is_empty());
    }

    #[test]
    fn a_kv_engine_says_it_has_no_sql_face() {
        let e = MemKv::default();
        assert!(e.sql().is_none());
        let err: DbError = match e.require_sql() {
            Err(e) => e,
            Ok(_) => panic!("memkv has no SQL face"),
        };
        assert!(
            err.to_string()
                .contains("engine memkv offers no SQL access"),
            "{err}"
        );
        assert_eq!(e.db_size().unwrap(), None);
        assert_eq!(e.data_path(), None);
    }
}
