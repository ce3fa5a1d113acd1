//! Non-blocking tries before a wire client's blocking read (EXPERIMENT).

use std::os::fd::RawFd;

/// Non-blocking tries before a blocking read of a plain socket.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TryRecv {
    /// The socket; `None`: no tries (TLS, tests).
    fd: Option<RawFd>,
    tries: u32,
    spin_ns: u64,
    poll: bool,
}

impl TryRecv {
    pub(crate) fn off() -> Self {
        TryRecv::default()
    }

    /// Tries for plain socket `fd`.
    pub(crate) fn on(fd: RawFd) -> Self {
        let env = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        if env("RQPS_NO_RCVTIMEO") == 1 {
            let tv = libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            };
            // SAFETY: experiment.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    (&tv as *const libc::timeval).cast(),
                    std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                );
            }
        }
        TryRecv {
            fd: Some(fd),
            tries: env("RQPS_TRIES") as u32,
            spin_ns: env("RQPS_SPIN_NS"),
            poll: env("RQPS_POLL") == 1,
        }
    }

    /// Bytes the socket has now, into `buf`; `None` when it had none.
    #[inline]
    pub(crate) fn try_read(&self, buf: &mut [u8]) -> Option<std::io::Result<usize>> {
        let fd = self.fd?;
        if self.poll {
            loop {
                // SAFETY: experiment.
                let r = unsafe {
                    libc::recv(
                        fd,
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                if r >= 0 {
                    return Some(Ok(r as usize));
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    return Some(Err(e));
                }
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: experiment.
                unsafe { libc::poll(&mut p, 1, -1) };
            }
        }
        if self.tries == 0 && self.spin_ns == 0 {
            return None;
        }
        let start = if self.spin_ns > 0 {
            Some(std::time::Instant::now())
        } else {
            None
        };
        let mut n = 0;
        loop {
            // SAFETY: buf is valid for writes of its length; a bad fd is an error.
            let r = unsafe {
                libc::recv(
                    fd,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if r >= 0 {
                return Some(Ok(r as usize));
            }
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => {}
                _ => return Some(Err(e)),
            }
            n += 1;
            if let Some(t) = start {
                if t.elapsed().as_nanos() as u64 >= self.spin_ns {
                    return None;
                }
            } else if n >= self.tries {
                return None;
            }
        }
    }
}
