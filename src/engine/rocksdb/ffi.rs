//! A thin binding of RocksDB's C API (`rocksdb/c.h`), resolved at run time
//! from whichever release's shared library the user chose.
//!
//! No symbol is linked at build time: [`load`] opens the library with
//! libloading and copies each function pointer into [`Api`]. Functions every
//! release since 6.x has are required (a library without one is refused with
//! its name); those that come and go between releases are `Option`s, and the
//! engine falls back when one is absent.
//!
//! One process holds at most one RocksDB: two releases in one process abort
//! (their process-wide unique symbols clash), so [`load`] keeps the first
//! library for the life of the process and refuses a different one with a
//! message that says so. The library is never unloaded.

use std::ffi::{CStr, c_char, c_int, c_uchar, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// An opaque C handle (`rocksdb_t*`, `rocksdb_options_t*`, ...).
pub type Handle = *mut c_void;
/// Where a C API call puts its error message (malloc'd, freed by the caller).
pub type ErrPtr = *mut *mut c_char;

macro_rules! api {
    (
        required { $($name:ident : fn($($arg:ty),*) $(-> $ret:ty)?;)* }
        optional { $($oname:ident : fn($($oarg:ty),*) $(-> $oret:ty)?;)* }
    ) => {
        /// The C API functions rqps calls, resolved from one library.
        #[allow(non_snake_case)]
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            $(pub $oname: Option<unsafe extern "C" fn($($oarg),*) $(-> $oret)?>,)*
        }

        impl Api {
            /// # Safety
            /// `lib` must be a RocksDB library whose functions have the
            /// signatures of `c.h` declared here.
            unsafe fn resolve(lib: &libloading::Library) -> Result<Api, &'static str> {
                Ok(Api {
                    $($name: unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                        .map_err(|_| stringify!($name))?
                    },)*
                    $($oname: unsafe {
                        lib.get::<unsafe extern "C" fn($($oarg),*) $(-> $oret)?>(
                            concat!(stringify!($oname), "\0").as_bytes(),
                        )
                        .ok()
                        .map(|s| *s)
                    },)*
                })
            }
        }
    };
}

api! {
    required {
        rocksdb_options_create: fn() -> Handle;
        rocksdb_options_destroy: fn(Handle);
        rocksdb_get_options_from_string: fn(Handle, *const c_char, Handle, ErrPtr);
        rocksdb_options_set_create_if_missing: fn(Handle, c_uchar);
        rocksdb_options_enable_statistics: fn(Handle);
        rocksdb_options_statistics_get_string: fn(Handle) -> *mut c_char;
        rocksdb_open_column_families: fn(
            Handle, *const c_char, c_int, *const *const c_char, *const Handle,
            *mut Handle, ErrPtr
        ) -> Handle;
        rocksdb_column_family_handle_destroy: fn(Handle);
        rocksdb_close: fn(Handle);
        rocksdb_put: fn(Handle, Handle, *const c_char, usize, *const c_char, usize, ErrPtr);
        rocksdb_delete: fn(Handle, Handle, *const c_char, usize, ErrPtr);
        rocksdb_write: fn(Handle, Handle, Handle, ErrPtr);
        rocksdb_get: fn(Handle, Handle, *const c_char, usize, *mut usize, ErrPtr) -> *mut c_char;
        rocksdb_multi_get: fn(
            Handle, Handle, usize, *const *const c_char, *const usize,
            *mut *mut c_char, *mut usize, *mut *mut c_char
        );
        rocksdb_create_iterator: fn(Handle, Handle) -> Handle;
        rocksdb_iter_destroy: fn(Handle);
        rocksdb_iter_valid: fn(Handle) -> c_uchar;
        rocksdb_iter_seek: fn(Handle, *const c_char, usize);
        rocksdb_iter_seek_for_prev: fn(Handle, *const c_char, usize);
        rocksdb_iter_next: fn(Handle);
        rocksdb_iter_prev: fn(Handle);
        rocksdb_iter_key: fn(Handle, *mut usize) -> *const c_char;
        rocksdb_iter_value: fn(Handle, *mut usize) -> *const c_char;
        rocksdb_iter_get_error: fn(Handle, ErrPtr);
        rocksdb_writebatch_create: fn() -> Handle;
        rocksdb_writebatch_destroy: fn(Handle);
        rocksdb_writebatch_clear: fn(Handle);
        rocksdb_writebatch_put: fn(Handle, *const c_char, usize, *const c_char, usize);
        rocksdb_writebatch_delete: fn(Handle, *const c_char, usize);
        rocksdb_writeoptions_create: fn() -> Handle;
        rocksdb_writeoptions_destroy: fn(Handle);
        rocksdb_writeoptions_disable_WAL: fn(Handle, c_int);
        rocksdb_readoptions_create: fn() -> Handle;
        rocksdb_readoptions_destroy: fn(Handle);
        rocksdb_flushoptions_create: fn() -> Handle;
        rocksdb_flushoptions_destroy: fn(Handle);
        rocksdb_flushoptions_set_wait: fn(Handle, c_uchar);
        rocksdb_flush: fn(Handle, Handle, ErrPtr);
        rocksdb_compact_range: fn(Handle, *const c_char, usize, *const c_char, usize);
        rocksdb_property_value: fn(Handle, *const c_char) -> *mut c_char;
        rocksdb_property_int: fn(Handle, *const c_char, *mut u64) -> c_int;
        rocksdb_set_options: fn(Handle, c_int, *const *const c_char, *const *const c_char, ErrPtr);
        rocksdb_free: fn(*mut c_void);
        rocksdb_livefiles: fn(Handle) -> Handle;
        rocksdb_livefiles_count: fn(Handle) -> c_int;
        rocksdb_livefiles_level: fn(Handle, c_int) -> c_int;
        rocksdb_livefiles_size: fn(Handle, c_int) -> usize;
        rocksdb_livefiles_destroy: fn(Handle);
    }
    optional {
        // The ordered bulk load's memtable (db_bench's fillseq): an unsorted
        // vector, written by one thread at a time (both in every release
        // checked, optional so that a library without them still runs).
        rocksdb_options_set_memtable_vector_rep: fn(Handle);
        rocksdb_options_set_allow_concurrent_memtable_write: fn(Handle, c_uchar);
        // Reads without a copy into a malloc'd buffer (all releases checked
        // have it; `rocksdb_get` is the fallback).
        rocksdb_get_pinned: fn(Handle, Handle, *const c_char, usize, ErrPtr) -> Handle;
        rocksdb_pinnableslice_value: fn(Handle, *mut usize) -> *const c_char;
        rocksdb_pinnableslice_destroy: fn(Handle);
        // 7.x and later: one batched lookup through the default column family.
        rocksdb_batched_multi_get_cf: fn(
            Handle, Handle, Handle, usize, *const *const c_char, *const usize,
            *mut Handle, *mut *mut c_char, bool
        );
    }
}

impl Api {
    /// Takes a C error string (if any) and frees it.
    ///
    /// # Safety
    /// `err` must be null or a string the library allocated.
    pub unsafe fn take_err(&self, err: *mut c_char) -> Option<String> {
        if err.is_null() {
            return None;
        }
        let s = unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        unsafe { (self.rocksdb_free)(err.cast()) };
        Some(s)
    }

    /// Takes a malloc'd C string the library returned (if any) and frees it.
    ///
    /// # Safety
    /// `s` must be null or a string the library allocated.
    pub unsafe fn take_string(&self, s: *mut c_char) -> Option<String> {
        unsafe { self.take_err(s) }
    }
}

/// The library this process loaded, and its functions.
pub struct Loaded {
    pub path: PathBuf,
    pub api: Api,
}

/// Why a RocksDB library cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot load RocksDB from {}: {why}", path.display())]
    Open { path: PathBuf, why: String },
    #[error(
        "{} is not a RocksDB C API library: it lacks {symbol}",
        path.display()
    )]
    Missing { path: PathBuf, symbol: &'static str },
    /// A second, different library in one process (they would abort it).
    #[error(
        "this process already loaded RocksDB from {}; each release runs in a process of its own (a matrix starts one per target), so {} cannot be loaded here",
        loaded.display(),
        wanted.display()
    )]
    Other { loaded: PathBuf, wanted: PathBuf },
}

static LOADED: OnceLock<Loaded> = OnceLock::new();
static LOADING: Mutex<()> = Mutex::new(());

/// The RocksDB library at `path`, loaded once for the whole process.
pub fn load(path: &Path) -> Result<&'static Loaded, LoadError> {
    let _one_at_a_time = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = LOADED.get() {
        if same_file(&l.path, path) {
            return Ok(l);
        }
        return Err(LoadError::Other {
            loaded: l.path.clone(),
            wanted: path.to_path_buf(),
        });
    }
    // SAFETY: loading runs the library's initialisers; a RocksDB library's
    // are sound, and LOADED guarantees no second RocksDB joins it.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::Open {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    // SAFETY: the signatures are c.h's for every release since 6.x.
    let api = unsafe { Api::resolve(&lib) }.map_err(|symbol| LoadError::Missing {
        path: path.to_path_buf(),
        symbol,
    })?;
    // Never unloaded: RocksDB's background threads and statics outlive any
    // handle we could drop.
    std::mem::forget(lib);
    Ok(LOADED.get_or_init(|| Loaded {
        path: path.to_path_buf(),
        api,
    }))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
