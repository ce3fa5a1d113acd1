//! RocksDB, loaded at run time from a release's shared library: the
//! `rocksdbjni` linux64 jar of Maven Central (`rqps engine install rocksdb
//! VERSION`), or Debian's `librocksdb` without a version. Both export the C
//! API, bound in [`ffi`] with the functions that differ between releases
//! optional.
//!
//! One process holds one release ([`ffi::load`] refuses a second); a matrix
//! of releases runs each target in a process of its own.
//!
//! Every option is given in one explicit options string: [`DEFAULTS`] pins
//! what changed between releases (checksum, compression, dynamic level
//! bytes, format version, ...), and `--rocksdb-options "k=v;k=v"` (matrix:
//! `rocksdb_options`) overrides them key by key. The string is the run's
//! `options` setting; an option the release does not know fails the open
//! with the release named.

pub mod ffi;

use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::engine::kind::{
    BadOptionValue, EngineKind, EngineOption, LibraryEngine, LibraryTarget, Prebuilt, UnpackError,
};
use crate::engine::kv::{
    Direction, KvAccess, KvConn, LevelShape, LsmCounters, LsmShape, WriteBatch,
};
use crate::engine::{Caps, DbError, DbResult, Driver, ErrorClass, Meaning};
use ffi::{Api, Handle};

pub static KIND: EngineKind = EngineKind {
    name: "rocksdb",
    title: "RocksDB",
    aliases: &["rocksdb"],
    schemes: &[],
    default_port: None,
    server: None,
    prebuilt: Some(&PREBUILT),
    apt_package: Some("librocksdb7.8"),
    open_url: None,
    options: &[EngineOption {
        key: "rocksdb_options",
        flag: "rocksdb-options",
        value_name: "K=V;K=V",
        help: "RocksDB options that override rqps's pinned defaults, in RocksDB's options-string form, e.g. \"write_buffer_size=67108864;compression=kNoCompression\"",
        check: check_options,
    }],
    fairness_settings: &["options"],
    library: Some(&LIBRARY),
    face: crate::engine::Face::Kv,
};

static PREBUILT: Prebuilt = Prebuilt {
    example: "8.10.0",
    artifact: |v| format!("org.rocksdb:rocksdbjni:{v}:jar:linux64"),
    unpack,
    needs: &[],
    basedir_in: |dir, _| dir.to_path_buf(),
    source: "rocksdbjni linux64 jars of Maven Central; checked: 6.29.5, 7.10.2, 8.10.0, 10.10.1",
    // Maven Central's rocksdbjni, 2026-11-27.
    releases: &[
        "3.5.1",
        "3.6.1",
        "3.6.2",
        "3.8.0",
        "3.9.0",
        "3.9.1",
        "3.10.0",
        "3.10.1",
        "3.13.1",
        "4.0",
        "4.1.0",
        "4.2.0",
        "4.3.1",
        "4.4.1",
        "4.5.1",
        "4.8.0",
        "4.9.0",
        "4.11.2",
        "4.13.4",
        "4.13.5",
        "5.0.1",
        "5.1.2",
        "5.1.4",
        "5.2.1",
        "5.4.5",
        "5.5.1",
        "5.5.5",
        "5.6.1",
        "5.7.2",
        "5.7.3",
        "5.7.5",
        "5.8.0",
        "5.8.6",
        "5.8.7",
        "5.9.2",
        "5.10.3",
        "5.11.3",
        "5.12.4",
        "5.13.1",
        "5.13.2",
        "5.13.3",
        "5.13.4",
        "5.14.2",
        "5.14.3",
        "5.15.10",
        "5.17.2",
        "5.18.3",
        "5.18.4",
        "6.0.1",
        "6.0.2",
        "6.1.1",
        "6.1.2",
        "6.2.2",
        "6.2.4",
        "6.4.6",
        "6.5.3",
        "6.6.4",
        "6.7.3",
        "6.8.1",
        "6.10.2",
        "6.11.4",
        "6.12.7",
        "6.13.3",
        "6.14.6",
        "6.15.2",
        "6.15.5",
        "6.16.4",
        "6.19.3",
        "6.20.3",
        "6.22.1",
        "6.22.1.1",
        "6.25.3",
        "6.26.1",
        "6.27.3",
        "6.28.2",
        "6.29.4.1",
        "6.29.5",
        "7.0.3",
        "7.0.4",
        "7.1.1",
        "7.1.2",
        "7.2.2",
        "7.3.1",
        "7.4.3",
        "7.4.4",
        "7.4.5",
        "7.5.3",
        "7.6.0",
        "7.7.3",
        "7.8.3",
        "7.9.2",
        "7.10.2",
        "8.0.0",
        "8.1.1",
        "8.1.1.1",
        "8.3.2",
        "8.3.3",
        "8.4.4",
        "8.5.3",
        "8.5.4",
        "8.6.7",
        "8.7.3",
        "8.8.1",
        "8.9.1",
        "8.10.0",
        "8.10.2",
        "8.11.3",
        "8.11.4",
        "9.0.0",
        "9.0.1",
        "9.1.0",
        "9.1.1",
        "9.2.1",
        "9.3.1",
        "9.4.0",
        "9.5.2",
        "9.6.1",
        "9.7.3",
        "9.7.4",
        "9.8.4",
        "9.9.3",
        "9.10.0",
        "9.11.2",
        "10.0.1",
        "10.1.3",
        "10.2.1",
        "10.4.2",
        "10.5.1",
        "10.6.2",
        "10.10.1",
        "10.10.1.1",
        "11.0.4",
        "11.1.1",
        "11.1.2",
        "11.8.1",
    ],
};

static LIBRARY: LibraryEngine = LibraryEngine {
    file_in: |dir| dir.join(LIB_FILE),
    system: system_library,
    open: open_target,
};

/// The one file rqps takes from a rocksdbjni jar (it also carries other
/// architectures' libraries).
const LIB_FILE: &str = "librocksdbjni-linux64.so";

/// Debian's library (package librocksdb7.8, or another release).
fn system_library() -> Result<PathBuf, crate::engine::kind::NoSystemLibrary> {
    let dir = Path::new("/usr/lib/x86_64-linux-gnu");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("librocksdb.so."))
        })
        .collect();
    found.sort();
    found.pop().ok_or(crate::engine::kind::NoSystemLibrary {
        engine: "RocksDB",
        remedy: "apt-get install librocksdb7.8, or name a release: --server rocksdb@8.10.0 after `rqps engine install rocksdb 8.10.0`",
    })
}

/// Extracts only the x86-64 library from the jar.
fn unpack(jar: &Path, into: &Path) -> Result<(), UnpackError> {
    let pick = crate::engine::unpack::Pick {
        strip: 0,
        only: &[LIB_FILE],
    };
    crate::engine::unpack::zip(jar, into, &pick)
}

/// The options rqps pins, in db_bench's spirit (its defaults for the
/// standard sequence), so that every release runs the same configuration
/// whatever its own defaults are.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("write_buffer_size", "33554432"),
    ("max_write_buffer_number", "2"),
    ("target_file_size_base", "33554432"),
    ("max_bytes_for_level_base", "134217728"),
    ("max_bytes_for_level_multiplier", "8"),
    ("num_levels", "8"),
    ("level_compaction_dynamic_level_bytes", "true"),
    ("level0_file_num_compaction_trigger", "4"),
    ("level0_slowdown_writes_trigger", "20"),
    ("level0_stop_writes_trigger", "30"),
    ("max_background_jobs", "8"),
    ("compression", "kLZ4Compression"),
    (
        "block_based_table_factory",
        "{block_size=8192;checksum=kXXH3;format_version=5;filter_policy=bloomfilter:10:false;optimize_filters_for_memory=true;cache_index_and_filter_blocks=false}",
    ),
];

/// What is wrong with a RocksDB options string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("'{0}' is not key=value")]
    NotKeyValue(String),
    #[error("'{0}' has no key")]
    NoKey(String),
    #[error("a '}}' without its '{{'")]
    UnopenedBrace,
    #[error("a '{{' without its '}}'")]
    UnclosedBrace,
}

/// Splits `k=v;k=v` at the top level (braces nest); empty parts are skipped.
pub fn split_options(s: &str) -> Result<Vec<(String, String)>, OptionsError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut part = String::new();
    let mut push = |part: &mut String| -> Result<(), OptionsError> {
        let p = part.trim();
        if !p.is_empty() {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| OptionsError::NotKeyValue(p.to_string()))?;
            if k.trim().is_empty() {
                return Err(OptionsError::NoKey(p.to_string()));
            }
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        part.clear();
        Ok(())
    };
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                push(&mut part)?;
                continue;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(OptionsError::UnopenedBrace);
        }
        part.push(c);
    }
    if depth != 0 {
        return Err(OptionsError::UnclosedBrace);
    }
    push(&mut part)?;
    Ok(out)
}

fn check_options(v: &str) -> Result<(), BadOptionValue> {
    split_options(v).map(|_| ()).map_err(|_| BadOptionValue {
        what: "RocksDB options",
        value: v.to_string(),
        expected: "key=value pairs separated by ';', e.g. \"write_buffer_size=67108864;compression=kNoCompression\"",
    })
}

/// The full options string: the pinned defaults with the user's options
/// replacing (or adding to) them, key by key, in order. A nested value
/// (`block_based_table_factory={...}`) is merged key by key too, so that
/// `block_based_table_factory={block_cache=1073741824}` keeps the pinned
/// checksum and format version.
pub fn options_string(user: Option<&str>) -> Result<String, OptionsError> {
    let defaults = DEFAULTS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";");
    merge(&defaults, user.unwrap_or(""))
}

fn merge(base: &str, over: &str) -> Result<String, OptionsError> {
    let mut opts = split_options(base)?;
    let nested = |v: &str| {
        v.strip_prefix('{')
            .and_then(|v| v.strip_suffix('}'))
            .map(str::to_string)
    };
    for (k, v) in split_options(over)? {
        match opts.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => {
                slot.1 = match (nested(&slot.1), nested(&v)) {
                    (Some(a), Some(b)) => format!("{{{}}}", merge(&a, &b)?),
                    _ => v,
                }
            }
            None => opts.push((k, v)),
        }
    }
    Ok(opts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";"))
}

fn fatal(m: impl Into<String>) -> DbError {
    DbError::fatal(m)
}

/// RocksDB's status codes as its C API writes them, at the start of an
/// error string (`Status::ToString`): one table of what the runner does on
/// each and what it means. A busy resource, a write stall and "try again"
/// are retried; anything else ends the test.
const STATUSES: &[(&str, ErrorClass, Meaning)] = &[
    ("Resource busy: ", ErrorClass::Retry, Meaning::LockWait),
    (
        "Operation failed. Try again.: ",
        ErrorClass::Retry,
        Meaning::Other,
    ),
    (
        "Result incomplete: Write stall",
        ErrorClass::Retry,
        Meaning::Other,
    ),
    (
        "Operation timed out: ",
        ErrorClass::Fatal,
        Meaning::LockWait,
    ),
    ("Not implemented: ", ErrorClass::Fatal, Meaning::Unsupported),
    ("NotFound: ", ErrorClass::Fatal, Meaning::Unknown),
];

/// An error string of the C API as a [`DbError`], by [`STATUSES`].
fn db_error(msg: String) -> DbError {
    let (class, meaning) = STATUSES
        .iter()
        .find(|(prefix, ..)| msg.starts_with(prefix))
        .map_or((ErrorClass::Fatal, Meaning::Other), |&(_, c, m)| (c, m));
    DbError::new(class, meaning, msg)
}

fn cstring(s: &str) -> DbResult<CString> {
    CString::new(s).map_err(|_| fatal(format!("'{s}' holds a NUL byte")))
}

/// The open database and what must live as long as it.
struct Db {
    api: &'static Api,
    db: Handle,
    options: Handle,
    default_cf: Handle,
}

// SAFETY: rocksdb_t and the options it was opened with are thread-safe in
// RocksDB (concurrent reads and writes from any thread are its contract).
unsafe impl Send for Db {}
unsafe impl Sync for Db {}

impl Drop for Db {
    fn drop(&mut self) {
        if self.db.is_null() {
            return;
        }
        // SAFETY: handles we created; every connection (holding an Arc) is gone.
        unsafe {
            if !self.default_cf.is_null() {
                (self.api.rocksdb_column_family_handle_destroy)(self.default_cf);
            }
            (self.api.rocksdb_close)(self.db);
            (self.api.rocksdb_options_destroy)(self.options);
        }
    }
}

impl Db {
    /// Stands in for a database while it is reopened (nothing to close).
    fn closed(api: &'static Api) -> Db {
        Db {
            api,
            db: std::ptr::null_mut(),
            options: std::ptr::null_mut(),
            default_cf: std::ptr::null_mut(),
        }
    }

    fn property_int(&self, name: &str) -> Option<u64> {
        let n = CString::new(name).ok()?;
        let mut v = 0u64;
        // SAFETY: live db, NUL-terminated name, out-pointer to a u64.
        let rc = unsafe { (self.api.rocksdb_property_int)(self.db, n.as_ptr(), &mut v) };
        (rc == 0).then_some(v)
    }

    fn property(&self, name: &str) -> Option<String> {
        let n = CString::new(name).ok()?;
        // SAFETY: live db; the returned string is malloc'd by the library.
        unsafe {
            let s = (self.api.rocksdb_property_value)(self.db, n.as_ptr());
            self.api.take_string(s)
        }
    }

    fn statistics(&self) -> String {
        // SAFETY: the options statistics were enabled on; malloc'd result.
        unsafe {
            let s = (self.api.rocksdb_options_statistics_get_string)(self.options);
            self.api.take_string(s).unwrap_or_default()
        }
    }

    fn set_options(&self, pairs: &[(&str, &str)]) -> DbResult<()> {
        let keys: Vec<CString> = pairs
            .iter()
            .map(|(k, _)| cstring(k))
            .collect::<DbResult<_>>()?;
        let vals: Vec<CString> = pairs
            .iter()
            .map(|(_, v)| cstring(v))
            .collect::<DbResult<_>>()?;
        let kp: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
        let vp: Vec<*const c_char> = vals.iter().map(|v| v.as_ptr()).collect();
        let mut err = std::ptr::null_mut();
        // SAFETY: arrays of `pairs.len()` NUL-terminated strings that outlive the call.
        unsafe {
            (self.api.rocksdb_set_options)(
                self.db,
                pairs.len() as i32,
                kp.as_ptr(),
                vp.as_ptr(),
                &mut err,
            );
            match self.api.take_err(err) {
                Some(e) => Err(db_error(e)),
                None => Ok(()),
            }
        }
    }
}

/// What [`open_db`] sets for an ordered bulk load, as db_bench's fillseq
/// in RocksDB's `tools/benchmark.sh` gives it (`--memtablerep=vector
/// --allow_concurrent_memtable_write=false`), in options-string form for
/// the step's record.
pub const LOAD_MEMTABLE: &str = "memtablerep=vector;allow_concurrent_memtable_write=false";

/// Opens `dir` with the options string `opts` (creating it when missing),
/// with the vector memtable of an ordered bulk load when `load`.
fn open_db(api: &'static Api, dir: &Path, opts: &str, release: &str, load: bool) -> DbResult<Db> {
    let c_opts = cstring(opts)?;
    let c_dir = cstring(&dir.to_string_lossy())?;
    let (Some(vector), Some(concurrent)) = (
        api.rocksdb_options_set_memtable_vector_rep,
        api.rocksdb_options_set_allow_concurrent_memtable_write,
    ) else {
        if load {
            return Err(fatal(format!(
                "{release} has no rocksdb_options_set_memtable_vector_rep in its C API: it cannot load with db_bench's vector memtable"
            )));
        }
        return open_db_with(api, &c_dir, &c_opts, opts, dir, release, &|_| {});
    };
    open_db_with(api, &c_dir, &c_opts, opts, dir, release, &|o| {
        if load {
            // SAFETY: an options object open_db_with created and still owns.
            unsafe {
                vector(o);
                concurrent(o, 0);
            }
        }
    })
}

fn open_db_with(
    api: &'static Api,
    c_dir: &CString,
    c_opts: &CString,
    opts: &str,
    dir: &Path,
    release: &str,
    adjust: &dyn Fn(Handle),
) -> DbResult<Db> {
    // SAFETY: C API calls with handles created here and NUL-terminated
    // strings; each error string is taken (and freed) at once.
    unsafe {
        let base = (api.rocksdb_options_create)();
        let o = (api.rocksdb_options_create)();
        let mut err = std::ptr::null_mut();
        (api.rocksdb_get_options_from_string)(base, c_opts.as_ptr(), o, &mut err);
        (api.rocksdb_options_destroy)(base);
        if let Some(e) = api.take_err(err) {
            (api.rocksdb_options_destroy)(o);
            return Err(fatal(format!(
                "{release} refuses the options: {e} (options: {opts})"
            )));
        }
        (api.rocksdb_options_set_create_if_missing)(o, 1);
        (api.rocksdb_options_enable_statistics)(o);
        adjust(o);
        let mut err = std::ptr::null_mut();
        // Opened with its one column family named, for the handle the
        // batched multi-get takes (every release has this call).
        let names = [c"default".as_ptr()];
        let cf_opts = [o];
        let mut cf: Handle = std::ptr::null_mut();
        let db = (api.rocksdb_open_column_families)(
            o,
            c_dir.as_ptr(),
            1,
            names.as_ptr(),
            cf_opts.as_ptr(),
            &mut cf,
            &mut err,
        );
        if let Some(e) = api.take_err(err) {
            (api.rocksdb_options_destroy)(o);
            return Err(fatal(format!(
                "{release} cannot open {}: {e}",
                dir.display()
            )));
        }
        Ok(Db {
            api,
            db,
            options: o,
            default_cf: cf,
        })
    }
}

/// A RocksDB database opened from one release's library.
pub struct RocksDriver {
    db: RwLock<Arc<Db>>,
    api: &'static Api,
    /// The release as messages name it.
    release: String,
    dir: PathBuf,
    lib: PathBuf,
    version: String,
    options: String,
}

/// Opens (creating when missing) the database of `t` with `options`'
/// `rocksdb_options` over the pinned defaults.
fn open_target(t: &LibraryTarget, options: &toml::Table) -> DbResult<Arc<dyn Driver>> {
    let user = options.get("rocksdb_options").and_then(|v| v.as_str());
    Ok(Arc::new(RocksDriver::open(
        &t.lib,
        &t.dir,
        t.version.as_deref(),
        user,
    )?))
}

impl RocksDriver {
    /// Loads `lib` (once per process) and opens `dir` with the pinned options
    /// and `user`'s. `version` is the release the user named, for messages.
    pub fn open(
        lib: &Path,
        dir: &Path,
        version: Option<&str>,
        user: Option<&str>,
    ) -> DbResult<RocksDriver> {
        let release = match version {
            Some(v) => format!("RocksDB {v}"),
            None => format!("RocksDB from {}", lib.display()),
        };
        let loaded = ffi::load(lib).map_err(|e| fatal(e.to_string()))?;
        let api = &loaded.api;
        let opts = options_string(user).map_err(|e| fatal(format!("--rocksdb-options: {e}")))?;
        let db = open_db(api, dir, &opts, &release, false)?;
        let version = log_version(dir)
            .or_else(|| version.map(str::to_string))
            .unwrap_or_else(|| "unknown".into());
        Ok(RocksDriver {
            db: RwLock::new(Arc::new(db)),
            api,
            release,
            dir: dir.to_path_buf(),
            lib: lib.to_path_buf(),
            version,
            options: opts,
        })
    }

    /// The open database (a reopen replaces it; a connection keeps the one
    /// it was made on).
    fn db(&self) -> Arc<Db> {
        self.db.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Flushes the memtable and opens the database again, with the ordered
    /// bulk load's memtable (`load`) or the default one. Refused while a
    /// connection is open: RocksDB holds one open per directory.
    fn reopen(&self, load: bool) -> DbResult<()> {
        let mut slot = self.db.write().unwrap_or_else(|e| e.into_inner());
        self.flush_db(&slot)?;
        if Arc::strong_count(&slot) > 1 {
            return Err(fatal(
                "RocksDB cannot change its memtable while connections are open",
            ));
        }
        // Closed before the new open: the directory's LOCK is held until then.
        let placeholder = Arc::new(Db::closed(self.api));
        drop(std::mem::replace(&mut *slot, placeholder));
        match open_db(self.api, &self.dir, &self.options, &self.release, load) {
            Ok(db) => {
                *slot = Arc::new(db);
                Ok(())
            }
            Err(e) => {
                // Back to the default memtable, so that the run can end
                // cleanly; the error is the failed open's.
                if let Ok(db) = open_db(self.api, &self.dir, &self.options, &self.release, false) {
                    *slot = Arc::new(db);
                }
                Err(e)
            }
        }
    }

    fn flush_db(&self, db: &Db) -> DbResult<()> {
        let api = self.api;
        // SAFETY: flush options created and destroyed here; live db.
        unsafe {
            let f = (api.rocksdb_flushoptions_create)();
            (api.rocksdb_flushoptions_set_wait)(f, 1);
            let mut err = std::ptr::null_mut();
            (api.rocksdb_flush)(db.db, f, &mut err);
            (api.rocksdb_flushoptions_destroy)(f);
            match api.take_err(err) {
                Some(e) => Err(db_error(e)),
                None => Ok(()),
            }
        }
    }

    /// Whether this release has the batched multi-get (7.x and later).
    pub fn batched_multi_get(&self) -> bool {
        let db = self.db();
        !db.default_cf.is_null() && db.api.rocksdb_batched_multi_get_cf.is_some()
    }
}

/// The open database as the C API sees it, for code that calls the library
/// directly (the bare loop of `rqps bench dbbench-client`): the functions
/// and the `rocksdb_t*`, valid as long as this value lives.
pub struct RawDb {
    db: Arc<Db>,
}

impl RawDb {
    /// The C API of the loaded release.
    pub fn api(&self) -> &'static Api {
        self.db.api
    }

    /// The open `rocksdb_t*`.
    pub fn handle(&self) -> Handle {
        self.db.db
    }

    /// An error string of the C API as the engine reports it.
    pub fn error(&self, msg: String) -> DbError {
        db_error(msg)
    }
}

impl RocksDriver {
    /// The open database for direct C API calls (see [`RawDb`]).
    pub fn raw(&self) -> RawDb {
        RawDb { db: self.db() }
    }
}

/// The release as the database's LOG names it (`RocksDB version: 8.10.0`).
fn log_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("LOG")).ok()?;
    text.lines()
        .take(50)
        .find_map(|l| l.split_once("RocksDB version: "))
        .map(|(_, v)| v.trim().to_string())
}

impl Driver for RocksDriver {
    fn engine(&self) -> &'static str {
        "rocksdb"
    }
    fn caps(&self) -> Caps {
        Caps::KEY_VALUE
    }
    fn version(&self) -> DbResult<String> {
        Ok(self.version.clone())
    }
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        Ok(vec![
            ("options".into(), self.options.clone()),
            ("library".into(), self.lib.display().to_string()),
            (
                "batched_multi_get".into(),
                self.batched_multi_get().to_string(),
            ),
        ])
    }
    fn db_size(&self) -> DbResult<Option<u64>> {
        Ok(Some(dir_bytes(&self.dir)))
    }
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }
    fn kv(&self) -> Option<&dyn KvAccess> {
        Some(self)
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// `rocksdb.flush.write.bytes COUNT : 123` (a ticker) or a histogram's
/// `SUM : 123`, from the statistics string.
fn stat(text: &str, name: &str) -> u64 {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| {
            let field = |key: &str| {
                l.split(key)
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.parse::<f64>().ok())
            };
            field("COUNT : ")
                .filter(|_| !l.contains(" SUM : "))
                .or_else(|| field("SUM : "))
        })
        .map_or(0, |v| v as u64)
}

/// How many times writes were delayed or stopped, from `rocksdb.cfstats`:
/// 8.x and later print `Write Stall (count): ... total-delays: N,
/// total-stops: M`; older releases `Stalls(count): N level0_slowdown, ...`,
/// where the `_with_compaction` kinds repeat others and are skipped.
fn stall_count(cfstats: &str) -> u64 {
    if let Some(line) = cfstats
        .lines()
        .find(|l| l.starts_with("Write Stall (count):"))
    {
        return line
            .split(',')
            .filter_map(|part| part.trim().split_once(": "))
            .filter(|(k, _)| {
                let k = k.rsplit(' ').next().unwrap_or(k);
                k == "total-delays" || k == "total-stops"
            })
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
    }
    let Some(line) = cfstats.lines().find(|l| l.starts_with("Stalls(count):")) else {
        return 0;
    };
    line["Stalls(count):".len()..]
        .split(',')
        .filter_map(|part| {
            let mut w = part.split_whitespace();
            let n = w.next()?.parse::<u64>().ok()?;
            let name: Vec<&str> = w.collect();
            let name = name.join(" ");
            (!name.contains("with_compaction") && !name.contains("total")).then_some(n)
        })
        .sum()
}

const PENDING: &[&str] = &[
    "rocksdb.compaction-pending",
    "rocksdb.num-running-compactions",
    "rocksdb.mem-table-flush-pending",
    "rocksdb.num-running-flushes",
];

impl KvAccess for RocksDriver {
    fn connect(&self) -> DbResult<Box<dyn KvConn>> {
        let api = self.db().api;
        // SAFETY: option objects owned by the connection, destroyed in Drop.
        let (read, write, batch) = unsafe {
            (
                (api.rocksdb_readoptions_create)(),
                (api.rocksdb_writeoptions_create)(),
                (api.rocksdb_writebatch_create)(),
            )
        };
        Ok(Box::new(RocksConn {
            db: self.db(),
            read,
            write,
            batch,
            ptrs: Vec::new(),
            lens: Vec::new(),
            vals: Vec::new(),
            vlens: Vec::new(),
            errs: Vec::new(),
        }))
    }

    fn flush(&self) -> DbResult<()> {
        self.flush_db(&self.db())
    }

    fn ordered_load(&self, on: bool) -> DbResult<Option<String>> {
        // The memtable is chosen when the database opens: flush, reopen.
        self.reopen(on)?;
        Ok(on.then(|| LOAD_MEMTABLE.to_string()))
    }

    fn compact(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> DbResult<()> {
        let (sp, sl) = start.map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()));
        let (ep, el) = end.map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()));
        // SAFETY: null means open-ended; slices outlive the call.
        unsafe { (self.db().api.rocksdb_compact_range)(self.db().db, sp, sl, ep, el) };
        Ok(())
    }

    fn property(&self, name: &str) -> DbResult<Option<String>> {
        let full = if name.starts_with("rocksdb.") {
            name.to_string()
        } else {
            format!("rocksdb.{name}")
        };
        Ok(self.db().property(&full))
    }

    fn lsm_shape(&self) -> DbResult<Option<LsmShape>> {
        let api = self.db().api;
        let mut levels: Vec<LevelShape> = Vec::new();
        // SAFETY: the live-files list is created and destroyed here.
        unsafe {
            let files = (api.rocksdb_livefiles)(self.db().db);
            if files.is_null() {
                return Err(fatal("RocksDB gave no list of live files"));
            }
            for i in 0..(api.rocksdb_livefiles_count)(files) {
                let level = (api.rocksdb_livefiles_level)(files, i).max(0) as usize;
                let bytes = (api.rocksdb_livefiles_size)(files, i) as u64;
                match levels.iter_mut().find(|l| l.level == level) {
                    Some(l) => {
                        l.files += 1;
                        l.bytes += bytes;
                    }
                    None => levels.push(LevelShape {
                        level,
                        files: 1,
                        bytes,
                    }),
                }
            }
            (api.rocksdb_livefiles_destroy)(files);
        }
        levels.sort_by_key(|l| l.level);
        Ok(Some(LsmShape {
            levels,
            memtable_bytes: self
                .db()
                .property_int("rocksdb.cur-size-all-mem-tables")
                .unwrap_or(0),
        }))
    }

    fn lsm_counters(&self) -> DbResult<Option<LsmCounters>> {
        let s = self.db().statistics();
        let cfstats = self.db().property("rocksdb.cfstats").unwrap_or_default();
        Ok(Some(LsmCounters {
            flush_write_bytes: stat(&s, "rocksdb.flush.write.bytes"),
            compact_write_bytes: stat(&s, "rocksdb.compact.write.bytes"),
            compact_read_bytes: stat(&s, "rocksdb.compact.read.bytes"),
            compact_micros: stat(&s, "rocksdb.compaction.times.micros"),
            compact_cpu_micros: stat(&s, "rocksdb.compaction.times.cpu_micros"),
            stall_micros: stat(&s, "rocksdb.stall.micros"),
            stall_count: stall_count(&cfstats),
        }))
    }

    fn wait_for_background(&self, limit: Duration) -> DbResult<bool> {
        let end = Instant::now() + limit;
        // Two idle readings in a row: a compaction may be scheduled just
        // after a flush ends.
        let mut idle = 0;
        loop {
            let busy = PENDING
                .iter()
                .any(|p| self.db().property_int(p).unwrap_or(0) > 0);
            idle = if busy { 0 } else { idle + 1 };
            if idle >= 2 {
                return Ok(true);
            }
            if Instant::now() >= end {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn empty_level0(&self, limit: Duration) -> DbResult<()> {
        let end = Instant::now() + limit;
        let left = || end.saturating_duration_since(Instant::now());
        self.flush()?;
        self.wait_for_background(left())?;
        let trigger = options_value(&self.options, "level0_file_num_compaction_trigger")
            .unwrap_or_else(|| "4".into());
        // The C API has no CompactFiles: a trigger of one file makes the
        // next compaction take every L0 file into the level below.
        self.db()
            .set_options(&[("level0_file_num_compaction_trigger", "1")])?;
        let done = self.wait_for_background(left());
        let restored = self
            .db()
            .set_options(&[("level0_file_num_compaction_trigger", &trigger)]);
        if !done? {
            return Err(fatal(format!(
                "compaction did not finish within {:.0} s",
                limit.as_secs_f64()
            )));
        }
        restored?;
        self.wait_for_background(left())?;
        Ok(())
    }
}

/// The value of `key` in an options string (top level).
fn options_value(opts: &str, key: &str) -> Option<String> {
    split_options(opts)
        .ok()?
        .into_iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// One worker's session: its read and write options, a reusable batch, and
/// the multi-get buffers.
struct RocksConn {
    db: Arc<Db>,
    read: Handle,
    write: Handle,
    batch: Handle,
    ptrs: Vec<*const c_char>,
    lens: Vec<usize>,
    vals: Vec<Handle>,
    vlens: Vec<usize>,
    errs: Vec<*mut c_char>,
}

// SAFETY: the handles are owned by this session and used by one thread at a time.
unsafe impl Send for RocksConn {}

impl Drop for RocksConn {
    fn drop(&mut self) {
        let api = self.db.api;
        // SAFETY: handles created in `connect`.
        unsafe {
            (api.rocksdb_readoptions_destroy)(self.read);
            (api.rocksdb_writeoptions_destroy)(self.write);
            (api.rocksdb_writebatch_destroy)(self.batch);
        }
    }
}

impl RocksConn {
    #[inline]
    fn check(&self, err: *mut c_char) -> DbResult<()> {
        // SAFETY: an error pointer the library filled (or null).
        match unsafe { self.db.api.take_err(err) } {
            Some(e) => Err(db_error(e)),
            None => Ok(()),
        }
    }

    fn plain_multi_get(
        &mut self,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> DbResult<()> {
        let api = self.db.api;
        let n = keys.len();
        self.vals.clear();
        self.vals.resize(n, std::ptr::null_mut());
        self.vlens.clear();
        self.vlens.resize(n, 0);
        self.errs.clear();
        self.errs.resize(n, std::ptr::null_mut());
        // SAFETY: arrays of n entries; each value and error is malloc'd by
        // the library and freed here.
        unsafe {
            (api.rocksdb_multi_get)(
                self.db.db,
                self.read,
                n,
                self.ptrs.as_ptr(),
                self.lens.as_ptr(),
                self.vals.as_mut_ptr().cast(),
                self.vlens.as_mut_ptr(),
                self.errs.as_mut_ptr(),
            );
            let mut first_err = None;
            for i in 0..n {
                if let Some(e) = api.take_err(self.errs[i]) {
                    first_err.get_or_insert(e);
                    continue;
                }
                let v = self.vals[i] as *const u8;
                if v.is_null() {
                    found(i, None);
                } else {
                    found(i, Some(std::slice::from_raw_parts(v, self.vlens[i])));
                    (api.rocksdb_free)(self.vals[i]);
                }
            }
            match first_err {
                Some(e) => Err(db_error(e)),
                None => Ok(()),
            }
        }
    }
}

impl KvConn for RocksConn {
    #[inline]
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> DbResult<bool> {
        out.clear();
        let api = self.db.api;
        let mut err = std::ptr::null_mut();
        // SAFETY: live db and read options; results are freed here.
        unsafe {
            if let (Some(get), Some(value), Some(destroy)) = (
                api.rocksdb_get_pinned,
                api.rocksdb_pinnableslice_value,
                api.rocksdb_pinnableslice_destroy,
            ) {
                let s = get(
                    self.db.db,
                    self.read,
                    key.as_ptr().cast(),
                    key.len(),
                    &mut err,
                );
                self.check(err)?;
                if s.is_null() {
                    return Ok(false);
                }
                let mut len = 0usize;
                let p = value(s, &mut len);
                out.extend_from_slice(std::slice::from_raw_parts(p.cast(), len));
                destroy(s);
                return Ok(true);
            }
            let mut len = 0usize;
            let v = (api.rocksdb_get)(
                self.db.db,
                self.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            );
            self.check(err)?;
            if v.is_null() {
                return Ok(false);
            }
            out.extend_from_slice(std::slice::from_raw_parts(v.cast(), len));
            (api.rocksdb_free)(v.cast());
            Ok(true)
        }
    }

    fn multi_get(
        &mut self,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> DbResult<()> {
        self.ptrs.clear();
        self.lens.clear();
        for k in keys {
            self.ptrs.push(k.as_ptr().cast());
            self.lens.push(k.len());
        }
        let api = self.db.api;
        let (cf, Some(batched), Some(value), Some(destroy)) = (
            self.db.default_cf,
            api.rocksdb_batched_multi_get_cf,
            api.rocksdb_pinnableslice_value,
            api.rocksdb_pinnableslice_destroy,
        ) else {
            return self.plain_multi_get(keys, found);
        };
        if cf.is_null() {
            return self.plain_multi_get(keys, found);
        }
        let n = keys.len();
        self.vals.clear();
        self.vals.resize(n, std::ptr::null_mut());
        self.errs.clear();
        self.errs.resize(n, std::ptr::null_mut());
        // SAFETY: arrays of n entries; pinned values and errors are freed here.
        unsafe {
            batched(
                self.db.db,
                self.read,
                cf,
                n,
                self.ptrs.as_ptr(),
                self.lens.as_ptr(),
                self.vals.as_mut_ptr(),
                self.errs.as_mut_ptr(),
                false,
            );
            let mut first_err = None;
            for i in 0..n {
                if let Some(e) = api.take_err(self.errs[i]) {
                    first_err.get_or_insert(e);
                }
                let s = self.vals[i];
                if s.is_null() {
                    found(i, None);
                } else {
                    let mut len = 0usize;
                    let p = value(s, &mut len);
                    found(i, Some(std::slice::from_raw_parts(p.cast(), len)));
                    destroy(s);
                }
            }
            match first_err {
                Some(e) => Err(db_error(e)),
                None => Ok(()),
            }
        }
    }

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> DbResult<()> {
        let mut err = std::ptr::null_mut();
        // SAFETY: live db and write options; slices outlive the call.
        unsafe {
            (self.db.api.rocksdb_put)(
                self.db.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            )
        };
        self.check(err)
    }

    fn delete(&mut self, key: &[u8]) -> DbResult<()> {
        let mut err = std::ptr::null_mut();
        // SAFETY: as for put.
        unsafe {
            (self.db.api.rocksdb_delete)(
                self.db.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            )
        };
        self.check(err)
    }

    fn write(&mut self, batch: &WriteBatch) -> DbResult<()> {
        let api = self.db.api;
        let mut err = std::ptr::null_mut();
        // SAFETY: the session's batch, cleared and refilled; slices outlive the calls.
        unsafe {
            (api.rocksdb_writebatch_clear)(self.batch);
            for (k, v) in batch.iter() {
                match v {
                    Some(v) => (api.rocksdb_writebatch_put)(
                        self.batch,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    ),
                    None => (api.rocksdb_writebatch_delete)(self.batch, k.as_ptr().cast(), k.len()),
                }
            }
            (api.rocksdb_write)(self.db.db, self.write, self.batch, &mut err);
        }
        self.check(err)
    }

    fn scan(
        &mut self,
        start: &[u8],
        dir: Direction,
        n: usize,
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> DbResult<usize> {
        let api = self.db.api;
        let mut seen = 0;
        // SAFETY: the iterator is created and destroyed here; key and value
        // slices are used before the next step.
        unsafe {
            let it = (api.rocksdb_create_iterator)(self.db.db, self.read);
            match dir {
                Direction::Forward => {
                    (api.rocksdb_iter_seek)(it, start.as_ptr().cast(), start.len())
                }
                Direction::Reverse => {
                    (api.rocksdb_iter_seek_for_prev)(it, start.as_ptr().cast(), start.len())
                }
            }
            while seen < n && (api.rocksdb_iter_valid)(it) != 0 {
                let (mut kl, mut vl) = (0usize, 0usize);
                let k = (api.rocksdb_iter_key)(it, &mut kl);
                let v = (api.rocksdb_iter_value)(it, &mut vl);
                each(
                    std::slice::from_raw_parts(k.cast(), kl),
                    std::slice::from_raw_parts(v.cast(), vl),
                );
                seen += 1;
                match dir {
                    Direction::Forward => (api.rocksdb_iter_next)(it),
                    Direction::Reverse => (api.rocksdb_iter_prev)(it),
                }
            }
            let mut err = std::ptr::null_mut();
            (api.rocksdb_iter_get_error)(it, &mut err);
            (api.rocksdb_iter_destroy)(it);
            self.check(err)?;
        }
        Ok(seen)
    }

    fn set_write_ahead_log(&mut self, on: bool) -> bool {
        // SAFETY: the session's own write options.
        unsafe { (self.db.api.rocksdb_writeoptions_disable_WAL)(self.write, i32::from(!on)) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_say_what_to_do_and_what_an_error_means() {
        for (msg, class, means) in [
            (
                "Resource busy: snapshot too old",
                ErrorClass::Retry,
                Meaning::LockWait,
            ),
            (
                "Result incomplete: Write stall",
                ErrorClass::Retry,
                Meaning::Other,
            ),
            (
                "Operation failed. Try again.: ",
                ErrorClass::Retry,
                Meaning::Other,
            ),
            (
                "Not implemented: no memtable",
                ErrorClass::Fatal,
                Meaning::Unsupported,
            ),
            ("IO error: No space left", ErrorClass::Fatal, Meaning::Other),
            // A status name inside the message is not the status.
            (
                "IO error: Resource busy: ",
                ErrorClass::Fatal,
                Meaning::Other,
            ),
        ] {
            let e = db_error(msg.into());
            assert_eq!((e.class, e.meaning()), (class, means), "{msg}");
        }
    }

    #[test]
    fn user_options_replace_the_pinned_ones_key_by_key() {
        let s = options_string(Some("compression=kNoCompression; bloom_x = 1")).unwrap();
        assert!(s.contains("compression=kNoCompression"), "{s}");
        assert!(!s.contains("kLZ4Compression"), "{s}");
        assert!(s.ends_with("bloom_x=1"), "{s}");
        assert!(s.contains("checksum=kXXH3"), "{s}");
        assert_eq!(
            options_value(&s, "level0_file_num_compaction_trigger").as_deref(),
            Some("4")
        );
        let cache =
            options_string(Some("block_based_table_factory={block_cache=1048576}")).unwrap();
        assert!(
            cache.contains("{block_size=8192;checksum=kXXH3;")
                && cache.contains(";block_cache=1048576}"),
            "{cache}"
        );
        let nested = split_options("a=1;t={x=1;y=2};b=2").unwrap();
        assert_eq!(nested[1], ("t".into(), "{x=1;y=2}".into()));
        assert!(split_options("a=1;b").is_err());
        assert!(split_options("t={x=1").is_err());
        assert!(check_options("=1").is_err());
    }

    #[test]
    fn statistics_and_stall_lines_are_read_as_rocksdb_prints_them() {
        let stats = "rocksdb.flush.write.bytes COUNT : 2048\n\
                     rocksdb.compact.write.bytes COUNT : 4096\n\
                     rocksdb.compaction.times.cpu_micros P50 : 1.0 P95 : 2.0 P99 : 3.0 P100 : 4.0 COUNT : 3 SUM : 777\n";
        assert_eq!(stat(stats, "rocksdb.flush.write.bytes"), 2048);
        assert_eq!(stat(stats, "rocksdb.compact.write.bytes"), 4096);
        assert_eq!(stat(stats, "rocksdb.compaction.times.cpu_micros"), 777);
        assert_eq!(stat(stats, "rocksdb.stall.micros"), 0);
        let cf = "Stalls(count): 2 level0_slowdown, 1 level0_slowdown_with_compaction, 3 level0_numfiles, 0 level0_numfiles_with_compaction, 4 stop for pending_compaction_bytes, 0 slowdown for pending_compaction_bytes, 0 memtable_compaction, 5 memtable_slowdown, interval 9 total count\n";
        assert_eq!(stall_count(cf), 14);
        let new = "Write Stall (count): cf-l0-file-count-limit-delays-with-ongoing-compaction: 1, l0-file-count-limit-delays: 2, total-delays: 3, total-stops: 4, memtable-limit-stops: 4\n";
        assert_eq!(stall_count(new), 7);
    }
}
