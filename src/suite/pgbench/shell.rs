//! `\shell` and `\setshell`: running a script's shell command, as pgbench
//! 15 runs it, once the user allowed it (`--allow-shell`).
//!
//! The contract:
//! - The command is the words joined by single spaces (the client has
//!   put the variables' values in) and handed to `/bin/sh -c`, as
//!   pgbench's `system()` and `popen()` do; it may be at most
//!   [`MAX_COMMAND_BYTES`] long, pgbench's limit.
//! - Its environment is rqps's without the variables that hold a password
//!   ([`crate::engine::secret::SECRET_ENV`]): a script's command cannot
//!   expand, print or pass on rqps's credentials. Its standard input is
//!   `/dev/null`; its standard output (`\shell`) and standard error are
//!   rqps's, as pgbench's are.
//! - `\shell` succeeds when the command exits with status 0. `\setshell`
//!   reads the first line of the command's output (at most 63 bytes, as
//!   pgbench's `fgets`), then closes the pipe and waits for the command,
//!   whose exit status it ignores, as pgbench does; the line is read as
//!   C's `strtol` reads it and cast to a 32-bit int ([`parse_result`]).
//! - Waiting never blocks the client thread: the pipe and the process (a
//!   pidfd) are waited on through [`crate::harness::wait`], so the other
//!   connections a client thread drives go on while a command runs. Where
//!   the kernel has no pidfd (before Linux 5.3), the exit is polled every
//!   millisecond or so instead. Starting the command (`fork`/`exec`) does
//!   take the thread, for about a millisecond: a script with a shell
//!   command per transaction measures mostly that cost, on pgbench as on
//!   rqps.
//! - The command runs in a process group of its own; at the test's end or
//!   on a stop (Ctrl-C), the group is killed and the transaction is
//!   abandoned, as one cut short in a `\sleep`.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::harness::measure::event_clock;
use crate::harness::runner::stop_requested;
use crate::harness::wait::{Readable, sleep_until};

/// The longest command line, in bytes, once the variables are in: pgbench's
/// `SHELL_COMMAND_SIZE` (256) less its terminating NUL and one byte.
pub const MAX_COMMAND_BYTES: usize = 254;

/// The most bytes of the first output line `\setshell` reads (pgbench's
/// 64-byte buffer for `fgets`).
const RESULT_BYTES: usize = 63;

/// How often a wait looks at the deadline and for a stop.
const SLICE: Duration = Duration::from_millis(20);

/// Why a shell command failed; the client adds the script's file:line.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("could not launch the shell command ({0}): is /bin/sh there?")]
    Launch(std::io::Error),
    #[error("the shell command failed: it {0}")]
    Failed(String),
    #[error(
        "could not read result of the shell command: it printed nothing on its standard output (it {0})"
    )]
    NoResult(String),
    #[error(
        "the shell command must return an integer (not \"{0}\"): make it print a whole number on its first line"
    )]
    NotAnInteger(String),
    #[error("waiting for the shell command failed: {0}")]
    Wait(std::io::Error),
}

/// Why a `\shell` or `\setshell` failed (`cmd`: which), as the client
/// reports it after the script's file:line.
#[derive(Debug, thiserror::Error)]
pub enum ShellFault {
    #[error(
        "\\{cmd}: undefined variable \"{word}\" (set it with \\set, \\gset or --define; write :{word} for the text {word})"
    )]
    Undefined { cmd: &'static str, word: String },
    #[error(
        "\\{cmd}: the shell command is too long: {bytes} bytes with its variables' values, at most {MAX_COMMAND_BYTES} (as pgbench)"
    )]
    TooLong { cmd: &'static str, bytes: usize },
    #[error("\\{cmd}: {source}")]
    Run {
        cmd: &'static str,
        #[source]
        source: ShellError,
    },
}

/// How a command ended.
pub enum Ended<T> {
    Done(T),
    /// The test's deadline or a stop came first; the command was killed.
    Cut,
}

/// Runs `command` for `\shell`: `Ok(Done(()))` when it exited with status 0.
pub fn shell(command: &str, deadline_ns: u64) -> Result<Ended<()>, ShellError> {
    let mut child = spawn(command, false)?;
    match wait_exit(&mut child, deadline_ns)? {
        Ended::Cut => Ok(Ended::Cut),
        Ended::Done(st) if st.success() => Ok(Ended::Done(())),
        Ended::Done(st) => Err(ShellError::Failed(describe(st))),
    }
}

/// Runs `command` for `\setshell`: the integer on its first output line.
pub fn setshell(command: &str, deadline_ns: u64) -> Result<Ended<i32>, ShellError> {
    let mut child = spawn(command, true)?;
    let Some(out) = child.stdout.take() else {
        return Err(ShellError::Launch(std::io::Error::other("no pipe")));
    };
    let line = match first_line(OwnedFd::from(out), deadline_ns) {
        Ok(Some(line)) => line,
        Ok(None) => {
            kill(&mut child);
            return Ok(Ended::Cut);
        }
        Err(e) => {
            kill(&mut child);
            return Err(ShellError::Wait(e));
        }
    };
    // As pclose: the pipe is closed (a command still writing gets
    // SIGPIPE), then the command waited for.
    let st = match wait_exit(&mut child, deadline_ns)? {
        Ended::Cut => return Ok(Ended::Cut),
        Ended::Done(st) => st,
    };
    if line.is_empty() {
        return Err(ShellError::NoResult(describe(st)));
    }
    parse_result(&line).map(Ended::Done)
}

/// `/bin/sh -c command`, without rqps's secrets, in a process group of
/// its own.
fn spawn(command: &str, capture: bool) -> Result<Child, ShellError> {
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .stderr(Stdio::inherit())
        .process_group(0);
    for v in crate::engine::secret::SECRET_ENV {
        cmd.env_remove(v);
    }
    cmd.spawn().map_err(ShellError::Launch)
}

/// Until when the next wait may last: the deadline, or a slice from now.
fn slice_until(deadline_ns: u64) -> Option<Instant> {
    let now = event_clock().now_ns();
    if now >= deadline_ns || stop_requested() {
        return None;
    }
    let left = Duration::from_nanos(deadline_ns - now).min(SLICE);
    Some(Instant::now() + left)
}

/// The first line of `fd` as `fgets` reads it into 64 bytes (up to and
/// with its newline, at most [`RESULT_BYTES`]; empty at once at the end);
/// `None` when the deadline or a stop came first. The pipe is closed on
/// return.
fn first_line(fd: OwnedFd, deadline_ns: u64) -> std::io::Result<Option<Vec<u8>>> {
    let raw = fd.as_raw_fd();
    set_nonblocking(raw)?;
    let file = std::fs::File::from(fd);
    let readable = Readable::new(file.as_fd());
    let mut line = Vec::with_capacity(RESULT_BYTES);
    let mut buf = [0u8; RESULT_BYTES];
    loop {
        let want = RESULT_BYTES - line.len();
        match (&file).read(&mut buf[..want]) {
            Ok(0) => return Ok(Some(line)),
            Ok(n) => {
                // fgets stops after a newline; what follows stays unread.
                match buf[..n].iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        line.extend_from_slice(&buf[..=i]);
                        return Ok(Some(line));
                    }
                    None => line.extend_from_slice(&buf[..n]),
                }
                if line.len() == RESULT_BYTES {
                    return Ok(Some(line));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let Some(until) = slice_until(deadline_ns) else {
                    return Ok(None);
                };
                readable.wait(until);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Waits for `child` to exit without holding up the thread's other tasks;
/// kills its group at the deadline or on a stop.
fn wait_exit(child: &mut Child, deadline_ns: u64) -> Result<Ended<ExitStatus>, ShellError> {
    let pidfd = pidfd_open(child.id());
    let exited = pidfd.as_ref().map(|fd| Readable::new(fd.as_fd()));
    let mut pause = Duration::from_micros(50);
    loop {
        if let Some(st) = child.try_wait().map_err(ShellError::Wait)? {
            return Ok(Ended::Done(st));
        }
        let Some(until) = slice_until(deadline_ns) else {
            kill(child);
            return Ok(Ended::Cut);
        };
        match &exited {
            Some(r) => {
                r.wait(until);
            }
            None => {
                sleep_until(until.min(Instant::now() + pause));
                pause = (pause * 2).min(Duration::from_millis(2));
            }
        }
    }
}

/// Kills the command's process group and reaps the command.
fn kill(child: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: no pointers; the group is the command's own (spawned with
        // process_group(0)), and the command is not yet reaped, so its id
        // is not reused.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.wait();
}

/// A descriptor readable once process `pid` has exited (Linux 5.3+).
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: no pointers; the call returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_int, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the descriptor was just made, and nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: no pointers.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// How a command ended, in words.
fn describe(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(127), _) => "exited with status 127: the shell did not find the command".into(),
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".into(),
    }
}

/// `\setshell`'s result as pgbench reads it: C's `strtol` in base 10
/// (leading white space, a sign, digits; saturating), trailing white space
/// allowed and nothing else, then cast to a C `int` (the low 32 bits).
/// White space alone reads as 0, as in pgbench.
pub fn parse_result(line: &[u8]) -> Result<i32, ShellError> {
    // A C string ends at its first NUL.
    let text = line.split(|&b| b == 0).next().unwrap_or_default();
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let shown = || {
        String::from_utf8_lossy(text)
            .trim_end_matches('\n')
            .to_string()
    };
    let mut i = text.iter().take_while(|b| space(b)).count();
    let neg = match text.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = text[i.min(text.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let (value, end) = if digits == 0 {
        // No number: strtol leaves its end pointer at the start.
        (0i64, 0)
    } else {
        let mut v: i64 = 0;
        for &b in &text[i..i + digits] {
            let d = i64::from(b - b'0');
            v = if neg {
                v.saturating_mul(10).saturating_sub(d)
            } else {
                v.saturating_mul(10).saturating_add(d)
            };
        }
        (v, i + digits)
    };
    let rest = &text[end..];
    if text.is_empty() || !rest.iter().all(space) {
        return Err(ShellError::NotAnInteger(shown()));
    }
    Ok(value as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_as_pgbench_reads_them_with_strtol() {
        for (text, want) in [
            (&b"42\n"[..], Some(42)),
            (b"  -7  \n", Some(-7)),
            (b"+3", Some(3)),
            (b"   \n", Some(0)),
            (b"5000000000\n", Some(705_032_704)),
            (b"99999999999999999999999", Some(-1)),
            (b"12\0junk", Some(12)),
            (b"one", None),
            (b"1 2\n", None),
            (b"0x10", None),
            (b"", None),
        ] {
            let got = parse_result(text).ok();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(text));
        }
        let e = parse_result(b"one").unwrap_err().to_string();
        assert!(e.contains("must return an integer (not \"one\")"), "{e}");
    }

    #[test]
    fn exit_statuses_and_output_are_taken_as_pgbench_takes_them() {
        // (That the command's environment lacks rqps's secrets is checked
        // through the binary, in tests/pgbench_tap.rs: setting them here
        // would reach the other tests of this process.)
        match setshell("echo 5", u64::MAX).unwrap() {
            Ended::Done(v) => assert_eq!(v, 5),
            Ended::Cut => panic!("cut"),
        }
        assert!(matches!(shell("exit 0", u64::MAX), Ok(Ended::Done(()))));
        let e = shell("exit 3", u64::MAX).err().unwrap().to_string();
        assert!(e.contains("exited with status 3"), "{e}");
        let e = setshell("no-such-command-rqps 2>/dev/null", u64::MAX)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("could not read result of the shell command"),
            "{e}"
        );
        assert!(e.contains("status 127"), "{e}");
        // Only the first line counts, and the exit status does not.
        match setshell("echo 8; echo 9; exit 1", u64::MAX).unwrap() {
            Ended::Done(v) => assert_eq!(v, 8),
            Ended::Cut => panic!("cut"),
        }
    }

    #[test]
    fn a_command_past_the_deadline_is_killed_and_the_transaction_cut() {
        let clock = event_clock();
        let t0 = Instant::now();
        let deadline = clock.now_ns() + 100_000_000;
        assert!(matches!(shell("sleep 30", deadline), Ok(Ended::Cut)));
        assert!(matches!(setshell("sleep 30", deadline), Ok(Ended::Cut)));
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "killed, not waited for"
        );
    }
}
