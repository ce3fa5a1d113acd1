//! The wire connections open now, so that a stop can end what they wait
//! for. A stop (Ctrl-C, SIGTERM) lets the events in flight finish for a
//! short grace; what is still waiting after it (a long statement, a send
//! that a server or proxy no longer reads, a reply that never comes) is
//! ended here: first politely, by asking each server to cancel the
//! connection's statement ([`cancel_all`]: PostgreSQL's cancel request,
//! MySQL's `KILL QUERY`, each over a fresh connection), then bluntly, by
//! shutting the sockets down ([`shut_down_all`]), which wakes a read or a
//! write blocked on them at once, in a thread of its own or in a task of the
//! event-driven core alike (the core's wait sees the hang-up).
//!
//! A connection registers its socket when its login is done and stays
//! registered until its socket is about to close ([`Registered`] is dropped
//! before the socket is), so a socket number on the list is always the
//! connection's own, never a reused one. An embedded engine's connection
//! (SQLite) has no socket: its statement is interrupted by the cancel alone.

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Asks the server to cancel the statement a connection runs.
pub(crate) type Cancel = Arc<dyn Fn() + Send + Sync>;

struct Entry {
    fd: Option<RawFd>,
    cancel: Option<Cancel>,
}

/// A list of open connections: the process's one ([`OPEN`]), or a test's.
pub(crate) struct List(Mutex<(u64, BTreeMap<u64, Entry>)>);

/// The process's open connections.
static OPEN: List = List::new();

impl List {
    const fn new() -> List {
        List(Mutex::new((0, BTreeMap::new())))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, BTreeMap<u64, Entry>)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn register(&'static self, fd: Option<RawFd>, cancel: Option<Cancel>) -> Registered {
        let mut o = self.lock();
        let id = o.0;
        o.0 += 1;
        o.1.insert(id, Entry { fd, cancel });
        Registered { list: self, id }
    }

    fn cancel_all(&self, within: Duration) -> usize {
        let cancels: Vec<Cancel> = self
            .lock()
            .1
            .values()
            .filter_map(|e| e.cancel.clone())
            .collect();
        let n = cancels.len();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut started = 0;
        for c in cancels {
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name("rqps-cancel".into())
                .spawn(move || {
                    c();
                    let _ = tx.send(());
                });
            started += usize::from(spawned.is_ok());
        }
        drop(tx);
        let until = Instant::now() + within;
        for _ in 0..started {
            let left = until.saturating_duration_since(Instant::now());
            if rx.recv_timeout(left).is_err() {
                break;
            }
        }
        n
    }

    fn shut_down_all(&self) -> usize {
        let o = self.lock();
        let mut n = 0;
        for fd in o.1.values().filter_map(|e| e.fd) {
            // SAFETY: the descriptor is open: a connection leaves the list
            // (under this lock) before its socket closes.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            n += 1;
        }
        n
    }
}

/// A connection on the list; dropping it takes it off. Declared before the
/// connection's socket, so that it is dropped first.
pub(crate) struct Registered {
    list: &'static List,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.list.lock().1.remove(&self.id);
    }
}

/// Puts a logged-in connection on the list: its socket `fd` (`None`: an
/// embedded engine's, which has none), and how to cancel its statement
/// (`None`: the server has no way, only the socket).
pub(crate) fn register(fd: Option<RawFd>, cancel: Option<Cancel>) -> Registered {
    OPEN.register(fd, cancel)
}

/// How many connections are open.
pub fn open_count() -> usize {
    OPEN.lock().1.len()
}

/// Asks the server of every open connection to cancel its statement, each
/// over a connection of its own and all at once, and waits for those asks
/// at most `within` (an ask that hangs, to a server that no longer answers,
/// is left behind). Returns how many connections it asked for.
pub fn cancel_all(within: Duration) -> usize {
    OPEN.cancel_all(within)
}

/// Shuts down the socket of every open connection, both ways: a read or a
/// write blocked on one returns at once (end of file, or `EPIPE`), and the
/// connection fails as lost. Returns how many it shut down.
pub fn shut_down_all() -> usize {
    OPEN.shut_down_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_blocked_write_and_a_blocked_read_return_once_their_sockets_are_shut_down() {
        // A peer that never reads: the write blocks once the buffers are full.
        let (w, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let (mut r, _peer2) = std::os::unix::net::UnixStream::pair().unwrap();
        let asked = Arc::new(AtomicUsize::new(0));
        let a = asked.clone();
        let cancel: Cancel = Arc::new(move || {
            a.fetch_add(1, Ordering::SeqCst);
        });
        let list: &'static List = Box::leak(Box::new(List::new()));
        let regs = [
            list.register(Some(w.as_raw_fd()), Some(cancel)),
            list.register(Some(r.as_raw_fd()), None),
        ];
        let writer = std::thread::spawn(move || {
            let big = vec![7u8; 1 << 20];
            // Through the core's send, as the wire clients write: no SIGPIPE.
            let mut sent = 0;
            loop {
                match crate::evloop::send(w.as_raw_fd(), &big) {
                    Ok(n) => sent += n,
                    Err(e) => return (sent, e.kind()),
                }
            }
        });
        let reader = std::thread::spawn(move || r.read(&mut [0u8; 16]).map_err(|e| e.kind()));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!writer.is_finished() && !reader.is_finished());
        assert_eq!(list.cancel_all(Duration::from_secs(1)), 1);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(list.shut_down_all(), 2);
        let (sent, why) = writer.join().unwrap();
        assert!(sent > 0);
        assert_eq!(why, std::io::ErrorKind::BrokenPipe);
        assert_eq!(reader.join().unwrap(), Ok(0));
        drop(regs);
        assert_eq!(list.lock().1.len(), 0);
    }
}
