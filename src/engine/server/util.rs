//! Small process, file-system and user helpers shared by the PostgreSQL and MariaDB code.

use std::ffi::{CString, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// True when `path` is a regular file (after following symlinks) with an execute bit set.
pub(crate) fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The directories of `$PATH`, in order, skipping empty entries.
pub(crate) fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// First `dir/name` that is executable, trying every name in every directory (dirs outer loop).
pub(crate) fn find_in_dirs(names: &[&str], dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| is_executable(p))
        .map(|p| fs::canonicalize(&p).unwrap_or(p))
}

/// A currently free TCP port on 127.0.0.1, never one of the well-known database ports.
pub(crate) fn free_port() -> io::Result<u16> {
    for _ in 0..20 {
        let port = TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port();
        if port != 3306 && port != 5432 {
            return Ok(port);
        }
    }
    Err(io::Error::other("could not find a free port on 127.0.0.1"))
}

/// The last `lines` lines of a (log) file, reading at most its last 64 KiB.
pub(crate) fn tail_file(path: &Path, lines: usize) -> String {
    let read = || -> io::Result<String> {
        let mut f = File::open(path)?;
        let len = f.metadata()?.len();
        let start = len.saturating_sub(64 * 1024);
        f.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    match read() {
        Ok(text) => {
            let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = &all[all.len().saturating_sub(lines)..];
            if tail.is_empty() {
                format!("({} is empty)", path.display())
            } else {
                tail.join("\n")
            }
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

/// The error lines of a tool's output (the last `lines` of them), or its tail when no line
/// looks like an error. `mariadb-install-db` ends a failure with a page of generic advice that
/// would otherwise push the actual error out of the tail.
pub(crate) fn error_lines(path: &Path, lines: usize) -> String {
    let text = read_from(path, file_len(path).saturating_sub(64 * 1024));
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| {
            ["[ERROR]", "ERROR:", "FATAL:", "error:", "PANIC:"]
                .iter()
                .any(|m| l.contains(m))
        })
        .collect();
    if errors.is_empty() {
        tail_file(path, lines)
    } else {
        errors[errors.len().saturating_sub(lines)..].join("\n")
    }
}

/// Text of a file from byte `offset` on (empty if unreadable).
pub(crate) fn read_from(path: &Path, offset: u64) -> String {
    let mut out = Vec::new();
    if let Ok(mut f) = File::open(path)
        && f.seek(SeekFrom::Start(offset)).is_ok()
    {
        let _ = f.take(1 << 20).read_to_end(&mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Current length of a file, 0 if it does not exist.
pub(crate) fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Opens `path` for appending (creating it) and returns two handles for stdout and stderr.
pub(crate) fn log_stdio(path: &Path) -> io::Result<(Stdio, Stdio)> {
    let f = OpenOptions::new().create(true).append(true).open(path)?;
    let g = f.try_clone()?;
    Ok((Stdio::from(f), Stdio::from(g)))
}

/// Waits for `child` up to `timeout`; `Ok(None)` if it is still running afterwards.
pub(crate) fn wait_timeout(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    let mut nap = Duration::from_millis(5);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        thread::sleep(nap.min(deadline - now));
        nap = (nap * 2).min(Duration::from_millis(100));
    }
}

/// Outcome of [`run_logged`].
pub(crate) enum RunOutcome {
    Exited(ExitStatus),
    TimedOut,
}

/// Runs `cmd` with stdout and stderr appended to `log`, killing it after `timeout`.
pub(crate) fn run_logged(
    cmd: &mut Command,
    log: &Path,
    timeout: Duration,
) -> io::Result<RunOutcome> {
    let (out, err) = log_stdio(log)?;
    let mut child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn()?;
    match wait_timeout(&mut child, timeout)? {
        Some(status) => Ok(RunOutcome::Exited(status)),
        None => {
            let _ = child.kill();
            let _ = wait_timeout(&mut child, Duration::from_secs(10));
            Ok(RunOutcome::TimedOut)
        }
    }
}

/// Runs `cmd` and returns its trimmed stdout (or stderr if stdout is empty), with a timeout.
pub(crate) fn capture(cmd: &mut Command, timeout: Duration) -> io::Result<String> {
    let dir = tempfile::tempdir()?;
    let out_path = dir.path().join("out");
    let out = File::create(&out_path)?;
    let err = out.try_clone()?;
    let mut child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn()?;
    match wait_timeout(&mut child, timeout)? {
        Some(_) => Ok(fs::read_to_string(&out_path)?.trim().to_string()),
        None => {
            let _ = child.kill();
            let _ = wait_timeout(&mut child, Duration::from_secs(5));
            Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"))
        }
    }
}

/// Sends `sig` to a child that has not been reaped yet (so its pid cannot have been reused).
pub(crate) fn signal(child: &Child, sig: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    // SAFETY: plain kill(2) on the pid of our own, not yet reaped, child.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A random password for a throwaway server: 32 hex digits (128 bits) from
/// the kernel's random source, no character that needs quoting anywhere.
pub(crate) fn random_password() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

pub(crate) use crate::util::process_start_time;

/// Effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// uid and primary gid of a user, via getpwnam_r.
pub(crate) fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: zeroed passwd is a valid "empty" struct; getpwnam_r fills it and points its
    // strings into `buf`, which outlives every use here.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}

/// The name of user `uid`, via getpwuid_r.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: as in `lookup_user`; pw_name points into `buf` and is read
    // before `buf` is dropped.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so pw_name is a NUL-terminated string in `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    name.to_str().ok().map(str::to_string)
}

/// gid of a group, via getgrnam_r.
pub(crate) fn lookup_group(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: as in `lookup_user`.
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::group = std::ptr::null_mut();
    let rc = unsafe {
        libc::getgrnam_r(
            cname.as_ptr(),
            &mut grp,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some(grp.gr_gid)
}

/// First directory among `path` and its ancestors that user `uid`/`gid` cannot enter.
pub(crate) fn untraversable_ancestor(path: &Path, uid: u32, gid: u32) -> Option<(PathBuf, u32)> {
    path.ancestors().find_map(|dir| {
        let md = fs::metadata(dir).ok()?;
        let mode = md.mode();
        let bit = if md.uid() == uid {
            0o100
        } else if md.gid() == gid {
            0o010
        } else {
            0o001
        };
        (mode & bit == 0).then(|| (dir.to_path_buf(), mode & 0o7777))
    })
}

/// chown `path` and everything below it (without following symlinks).
pub(crate) fn chown_recursive(path: &Path, uid: u32, gid: u32) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    let md = fs::symlink_metadata(path)?;
    if md.is_dir() {
        for entry in fs::read_dir(path)? {
            chown_recursive(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// `remove_dir_all` that ignores NotFound and retries briefly (processes of a killed server may
/// still be creating or deleting files for a moment).
pub(crate) fn remove_dir_all_retry(path: &Path) -> io::Result<()> {
    let mut last = None;
    for attempt in 0..10 {
        match fs::remove_dir_all(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        thread::sleep(Duration::from_millis(50 * (attempt + 1)));
    }
    Err(last.unwrap_or_else(|| io::Error::other("remove_dir_all failed")))
}

/// Runs `f` on a helper thread and gives up waiting after `timeout` (the thread is then left to
/// finish on its own). Used so that a client library that blocks can never hang us.
pub(crate) fn with_timeout<T, F>(timeout: Duration, f: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .name("rqps-server-probe".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .ok()?;
    rx.recv_timeout(timeout).ok()
}

/// Compares two directory paths, ignoring trailing slashes and symlinks where resolvable.
pub(crate) fn same_dir(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.components().collect());
    norm(a) == norm(b)
}

/// Why a command run by [`run_output`] failed: it could not be started.
/// `what` is the caller's description of the step (`unpacking the MariaDB
/// jar`), which starts the message; what a command that ran and failed said
/// is for its caller to read (`mvn`'s: [`crate::engine::install`]).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("{what}: cannot run {program:?}: {source}")]
    Spawn {
        what: String,
        program: OsString,
        #[source]
        source: io::Error,
    },
}

/// Runs `cmd` to its end and returns its output, whatever its status; an
/// error only when it cannot be started.
pub(crate) fn run_output(cmd: &mut Command, what: &str) -> Result<Output, CommandError> {
    cmd.stdin(Stdio::null())
        .output()
        .map_err(|source| CommandError::Spawn {
            what: what.to_string(),
            program: cmd.get_program().to_os_string(),
            source,
        })
}

/// A file-system step that failed, and which: the context (`cannot create
/// PATH`) starts the message. A server's start reports it as its own
/// [`ServerError::Io`](super::ServerError::Io).
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct FileError {
    pub context: String,
    #[source]
    pub source: io::Error,
}

impl FileError {
    /// For `map_err`: the error of the step that `context` describes.
    pub(crate) fn at(context: impl Into<String>) -> impl FnOnce(io::Error) -> FileError {
        let context = context.into();
        move |source| FileError { context, source }
    }
}

/// Creates `path` anew with mode 0600 and writes `contents` to it.
pub(crate) fn write_private(path: &Path, contents: &str) -> Result<(), FileError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(FileError::at(format!("cannot create {}", path.display())))?;
    f.write_all(contents.as_bytes())
        .map_err(FileError::at(format!("cannot write {}", path.display())))
}

pub(crate) fn set_mode(path: &Path, mode: u32) -> Result<(), FileError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(FileError::at(format!("cannot chmod {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_32_hex_digits_and_differ_each_time() {
        let (a, b) = (random_password().unwrap(), random_password().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn a_command_that_cannot_start_says_what_and_which_program() {
        let e = run_output(&mut Command::new("/nonexistent/rqps-tool"), "unpacking x").unwrap_err();
        assert!(
            matches!(&e, CommandError::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
        assert!(
            e.to_string()
                .starts_with("unpacking x: cannot run \"/nonexistent/rqps-tool\": "),
            "{e}"
        );
    }
}
