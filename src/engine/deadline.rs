//! A deadline for a whole exchange on a socket, not just for each read: the
//! connect timeout bounds the connect *and* the handshake of both wire
//! clients, even against a server that sends its greeting one byte a
//! second (which a per-read timeout never stops).

use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A socket that can be shut down from another thread.
pub(crate) trait ShutDown: Send + 'static {
    fn shut_down(&self);
}

impl ShutDown for TcpStream {
    fn shut_down(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

impl ShutDown for UnixStream {
    fn shut_down(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

/// While it lives, a watchdog thread shuts the socket down when `limit`
/// passes, so that a blocked read or write returns at once; dropping it ends
/// the watch.
pub(crate) struct Deadline {
    _cancel: mpsc::Sender<()>,
    expired: Arc<AtomicBool>,
    limit: Duration,
}

impl Deadline {
    /// Watches `socket` (a clone of the client's) for `limit`. `None` when
    /// no thread could be started: then only the per-read timeouts hold.
    pub(crate) fn watch(socket: impl ShutDown, limit: Duration) -> Option<Deadline> {
        let (tx, rx) = mpsc::channel::<()>();
        let expired = Arc::new(AtomicBool::new(false));
        let flag = expired.clone();
        std::thread::Builder::new()
            .name("rqps-deadline".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                    flag.store(true, Ordering::SeqCst);
                    socket.shut_down();
                }
            })
            .ok()?;
        Some(Deadline {
            _cancel: tx,
            expired,
            limit,
        })
    }

    /// Whether the limit passed (and the socket was shut down).
    pub(crate) fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// What to say when it did.
    pub(crate) fn message(&self) -> String {
        format!(
            "the server did not finish the connection handshake within the connect timeout ({} s)",
            self.limit.as_secs_f64()
        )
    }
}
