//! Files: results written atomically, outputs the user names (through a
//! device or a link, never another user's link in a shared directory),
//! config and input files read with a size limit, names made safe for a
//! file system, and the free space under a path.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that a reader (or a crash) sees either the
/// old file or the whole new one: temp file, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Where the bytes for a path the user named go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputPath {
    /// Not a regular file (a device such as /dev/null, a FIFO, /dev/stdout):
    /// written through, never replaced.
    Stream,
    /// A regular file or a path that does not exist yet, symbolic links
    /// followed: replaced atomically (temp file beside it, then rename).
    File(PathBuf),
}

/// How [`write_output`] treats `path`.
/// Refuses another user's link in a shared directory (see [`check_link_owner`]).
pub fn output_path(path: &Path) -> std::io::Result<OutputPath> {
    let (real, magic) = resolve_links(path, "write")?;
    match std::fs::metadata(path) {
        Ok(md) if md.is_dir() => Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(md) if !md.is_file() => Ok(OutputPath::Stream),
        // A regular file reached through /proc (/dev/stdout redirected to a
        // file): it is someone else's open file, so write through it.
        Ok(_) if magic => Ok(OutputPath::Stream),
        Ok(_) => Ok(OutputPath::File(real)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(OutputPath::File(real)),
        Err(e) => Err(e),
    }
}

/// `path` with the symbolic links of its last component followed (also a
/// dangling one: the path it would create), and whether a step went through
/// /proc, whose links are open files rather than paths. Each link must pass
/// [`check_link_owner`].
fn resolve_links(path: &Path, verb: &str) -> std::io::Result<(PathBuf, bool)> {
    let mut p = path.to_path_buf();
    let mut magic = false;
    for _ in 0..40 {
        magic |= p.starts_with("/proc") || p.starts_with("/dev/fd");
        match std::fs::symlink_metadata(&p) {
            Ok(md) if md.file_type().is_symlink() => {
                check_link_owner(&p, &md, verb)?;
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok((p, magic)),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Refuses the symbolic link `link` (metadata `md`) where the kernel's
/// `fs.protected_symlinks` would refuse to follow it: in a sticky
/// world-writable directory (/tmp), a link owned neither by the user running
/// rqps nor by the directory's owner. rqps renames a file over a link's
/// target rather than opening the link, so the kernel's own check never
/// runs: without this one, root writing `--json /tmp/out.json` would replace
/// whatever another user's link there points to.
fn check_link_owner(link: &Path, md: &std::fs::Metadata, verb: &str) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let dir = link
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dmd = std::fs::metadata(dir)?;
    let sticky_and_open = dmd.mode() & 0o1000 != 0 && dmd.mode() & 0o002 != 0;
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    if sticky_and_open && md.uid() != me && md.uid() != dmd.uid() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symbolic link of another user (uid {}) in the shared directory {}: \
                 rqps does not {verb} through it; remove it or name another file",
                link.display(),
                md.uid(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Checks, before any work, that [`write_output`] may write `path`: the
/// message says why not (another user's link, a directory).
pub fn check_output(path: &Path) -> std::io::Result<()> {
    match output_path(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(e),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        )),
    }
}

/// Writes a file the user named (`--json`, `rqps report -o`): through to it
/// when it is not a regular file (a device, a FIFO, /dev/stdout); to the
/// target of a symbolic link, which stays a link; and atomically (a temp
/// file beside it, then rename, keeping an existing file's permissions)
/// for a regular file or a path that does not exist yet.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_output_with(path, &mut |w| w.write_all(bytes))
}

/// [`write_output`] of what `write` writes as it makes it (a document of
/// tens of megabytes never held whole), through a buffer. A regular file
/// is still replaced only once `write` has succeeded.
pub fn write_output_with(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    match output_path(path)? {
        OutputPath::Stream => {
            let mut f = std::io::BufWriter::new(open_stream(path)?);
            write(&mut f)?;
            f.flush()
        }
        OutputPath::File(real) => replace_file(&real, write),
    }
}

/// Opens a path that is not a regular file (a FIFO, a device) for writing
/// without blocking: a FIFO that no process reads is refused at once (a
/// plain open waits for a reader, where no stop reaches rqps); one that is
/// read is then written as usual.
fn open_stream(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "is a FIFO that no process reads: start its reader first",
            ),
            _ => e,
        })?;
    // Blocking again for the writes (a reader that is slow is waited for).
    // SAFETY: fcntl on a descriptor `f` owns; F_SETFL takes an int.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, libc::O_APPEND) };
    Ok(f)
}

/// The mode of an output file rqps creates (`--json`, `report -o`,
/// `history -o`): private to its owner, as the stored results are
/// ([`write_atomic`] makes them 0600). The umask still applies, so it can
/// only make a file more private (0400 under umask 0277), never less. A file
/// that exists keeps its mode: `chmod 644` a report once to share it.
pub const OUTPUT_MODE: u32 = 0o600;

/// Replaces the regular file `path` (or creates it) atomically. The temp file
/// is created with [`OUTPUT_MODE`] (umask applied), or the old file's mode.
fn replace_file(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old_mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut n = 0u32;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(".{name}.rqps-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(OUTPUT_MODE)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    };
    let done = (|| {
        let mut buf = std::io::BufWriter::new(&mut f);
        write(&mut buf)?;
        buf.flush()?;
        drop(buf);
        if let Some(mode) = old_mode {
            f.set_permissions(mode)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// The largest config file rqps reads (`--config`, a matrix `config`).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file the user named, refusing one over
/// [`MAX_CONFIG_BYTES`] (such as /dev/zero) without reading more than that.
/// A device or FIFO that ends in time (/dev/null) reads as its bytes. The
/// error is the reason alone (`no such file`), for the caller to put after
/// the path.
pub fn read_config(path: &Path) -> Result<String, ConfigError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ConfigError::NotFound),
        Err(e) => return Err(ConfigError::Io(e)),
        Ok(md) if md.is_dir() => return Err(ConfigError::IsDir),
        Ok(_) => {}
    }
    let f = std::fs::File::open(path).map_err(ConfigError::Io)?;
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ConfigError::Io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| ConfigError::NotUtf8)
}

/// Reads an input file the user named (a pgbench script): only a regular
/// file of at most `max` bytes, opened without blocking (a FIFO is refused,
/// not waited on) and never through another user's symbolic link in a
/// shared sticky directory (the rule the outputs follow, see
/// [`check_link_owner`]); no more than `max` + 1 bytes are read. The error
/// is the reason alone, for the caller to put after the path.
pub fn read_input(path: &Path, max: u64) -> Result<String, InputError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(InputError::NotFound),
        Err(e) => return Err(InputError::Io(e)),
        Ok(_) => {}
    }
    let (real, _) = resolve_links(path, "read").map_err(InputError::Io)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&real)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => InputError::NotFound,
            _ => InputError::Io(e),
        })?;
    let md = f.metadata().map_err(InputError::Io)?;
    if md.is_dir() {
        return Err(InputError::IsDir);
    }
    if !md.is_file() {
        return Err(InputError::NotRegular);
    }
    if md.len() > max {
        return Err(InputError::TooLarge(max));
    }
    let mut bytes = Vec::with_capacity(md.len() as usize);
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(InputError::Io)?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooLarge(max));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        InputError::NotUtf8(line)
    })
}

/// Why an input file cannot be read: the reason alone.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("no such file")]
    NotFound,
    #[error("is a directory, expected a file")]
    IsDir,
    #[error("is not a regular file (a FIFO, a device or a socket): give the path of a file")]
    NotRegular,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("larger than {}, the limit", size_text(*.0))]
    TooLarge(u64),
    /// The line of the first byte that is not UTF-8.
    #[error("line {0} is not UTF-8 text: save the file as UTF-8")]
    NotUtf8(usize),
}

/// `1 MiB`, `512 KiB`, `100 bytes`.
fn size_text(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Why a config file cannot be used: the reason alone, for the caller to put
/// after the path.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("no such file")]
    NotFound,
    #[error("is a directory, expected a file")]
    IsDir,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("larger than {} MiB, the limit for config and matrix files", MAX_CONFIG_BYTES >> 20)]
    TooLarge,
    #[error("is not UTF-8 text")]
    NotUtf8,
}

/// Keeps letters, digits, `.`, `-`, `_` and `=`; anything else becomes `_`.
pub fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Bytes free for an unprivileged user on the file system of `path`, or of
/// its nearest existing ancestor (a directory not made yet); `None` when
/// none can be asked.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path
        .ancestors()
        .find(|p| p.exists() && !p.as_os_str().is_empty())?;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into a zeroed struct we own; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_output_through_a_symlink_lands_in_its_target_and_the_link_stays() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("real.json");
        std::fs::write(&target, "old").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link: the file is created where it points.
        let dangling = d.path().join("dangling.json");
        std::os::unix::fs::symlink(d.path().join("later.json"), &dangling).unwrap();
        write_output(&dangling, b"made").unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("later.json")).unwrap(),
            "made"
        );
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            4,
            "no temp file left"
        );
    }

    #[test]
    fn an_output_that_is_not_a_regular_file_is_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("out.fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(output_path(&fifo).unwrap(), OutputPath::Stream);
        assert_eq!(
            output_path(Path::new("/dev/null")).unwrap(),
            OutputPath::Stream
        );
        // No reader: refused at once (a blocking open would wait for good).
        let t = std::time::Instant::now();
        let e = write_output(&fifo, b"nobody").unwrap_err();
        assert!(e.to_string().contains("no process reads"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // A reader (its end open before the write): written through.
        let mut reader = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .unwrap()
        };
        write_output(&fifo, b"through").unwrap();
        let mut got = String::new();
        std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
        assert_eq!(got, "through");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        write_output(Path::new("/dev/null"), b"gone").unwrap();
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        assert!(output_path(d.path()).is_err(), "a directory is refused");
    }

    #[test]
    fn an_output_replacing_a_regular_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.html");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        let before = ino(&p);
        write_output(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_ne!(
            ino(&p),
            before,
            "replaced by a rename, not rewritten in place"
        );
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn config_files_over_the_limit_are_refused_without_reading_them_whole() {
        let e = read_config(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, ConfigError::TooLarge), "{e}");
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        assert_eq!(read_config(Path::new("/dev/null")).unwrap(), "");
        assert_eq!(
            read_config(Path::new("/nonexistent/rqps.cnf"))
                .unwrap_err()
                .to_string(),
            "no such file"
        );
    }
}
