//! The event-driven client core: one thread runs many tasks, each a stackful
//! coroutine running ordinary blocking code (a worker's loop, the wire
//! clients, sleeps), and waits for all of them with one `epoll_wait`.
//!
//! The contract: code inside a task calls [`recv`], [`send`], [`wait_fd`] and
//! [`sleep_until`] where it would block; they suspend the task instead of the
//! thread, and [`run`] resumes it when its socket is ready or its deadline
//! passes. Outside a task (the thread-per-worker path, setup code, tests)
//! they block the thread exactly as the plain calls do, so the wire clients
//! call them unconditionally ([`active`] tells which case holds).
//!
//! - Sockets stay in blocking mode: reads and writes inside a task use
//!   `MSG_DONTWAIT`, and a task that must wait takes its deadline from the
//!   socket's own `SO_RCVTIMEO`/`SO_SNDTIMEO` (what a blocking call would
//!   have waited), so statement and message timeouts hold unchanged; a wait
//!   that reaches it reports `WouldBlock`, as the blocking call does. The
//!   core knows each socket's timeouts from when rqps set them
//!   ([`set_timeout`]), so a wait asks the kernel nothing.
//! - One statement costs one `send` and one `recv`, plus a share of one
//!   `epoll_wait`: a read that comes back short has drained the socket
//!   (a stream socket returns what it has), so the task's next read waits
//!   at once instead of asking first and finding nothing; whatever arrives
//!   later is reported by the edge-triggered epoll, and every report is
//!   noted, even for a socket no task waits on at that moment ([`fds`]).
//!   Before this, 3.75 calls per statement at 16 connections on 1 thread
//!   (a `recv` that found nothing and a `getsockopt` before most waits).
//! - A socket is registered with the thread's epoll once, edge-triggered,
//!   for reading; writability is added only while a task waits to write
//!   (and taken off at its next wait to read). Why: with `EPOLLOUT` always
//!   on, every reply woke the thread twice, once when the server read the
//!   query (the send buffer drained: an `EPOLLOUT` edge) and once for the
//!   reply, 1.9 sleeps per transaction where pgbench, which polls for
//!   reading only, sleeps once. A wake-up that does not match what the
//!   task waits for is ignored, and a spurious one only costs a retried
//!   `recv`. A descriptor that a task opens must be announced with
//!   [`new_fd`] (its number may be a closed socket's that the core still
//!   knows).
//! - Latency: a task whose reply is in is resumed after the tasks already
//!   runnable before it on its thread (at most the CPU time of those
//!   replies' processing), never after a sleep: `epoll_wait` is called only
//!   when no task can run. pgbench's threads have the same bound.
//! - A stop ([`Stop`], given to [`run_until`]) ends the tasks' waits from
//!   any thread: blocked sends first ([`Waits::Sends`]: a peer that stopped
//!   reading would otherwise hold the run for the send timeout), or every
//!   wait ([`Waits::All`]); the ended call fails with [`stopped`].
//! - What still blocks the thread: connecting (the TCP connect and DNS),
//!   asking the server about a silent statement over a connection of its
//!   own, and embedded engines' calls (they are CPU in the client thread:
//!   such steps keep a thread per worker).

mod calls;
mod fds;
mod sched;

pub use calls::{
    NonBlocking, new_fd, recv, recv_blocking, recv_now, retry, send, send_blocking, send_now,
    sleep, sleep_until, wait_fd,
};
pub use fds::{Interest, set_timeout};
pub use sched::{Stop, Stopped, Waits, active, is_stopped, run, run_until, stopped, yield_now};

#[cfg(test)]
mod tests {
    use super::*;
    use sched::EPOLL_WAITS;
    use std::cell::{Cell, RefCell};
    use std::io::{self, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    type Task<'a, T> = Box<dyn FnOnce() -> T + 'a>;

    fn boxed<'a, T>(f: impl FnOnce() -> T + 'a) -> Task<'a, T> {
        Box::new(f)
    }

    #[test]
    fn many_tasks_on_one_thread_each_get_their_own_replies() {
        // 50 socket pairs; each task sends on its end and waits for the
        // echo that a plain thread sends back after a delay.
        let pairs: Vec<(UnixStream, UnixStream)> =
            (0..50).map(|_| UnixStream::pair().unwrap()).collect();
        let (mine, theirs): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        let echo = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            for mut s in theirs.into_iter().rev() {
                let mut b = [0u8; 8];
                s.read_exact(&mut b).unwrap();
                s.write_all(&b).unwrap();
            }
        });
        let thread = std::thread::current().id();
        let tasks: Vec<Task<'_, (u64, bool)>> = mine
            .iter()
            .enumerate()
            .map(|(i, s)| {
                boxed(move || {
                    let fd = s.as_raw_fd();
                    assert!(active());
                    assert_eq!(send(fd, &(i as u64).to_le_bytes()).unwrap(), 8);
                    let mut b = [0u8; 8];
                    assert_eq!(recv(fd, &mut b).unwrap(), 8);
                    (u64::from_le_bytes(b), std::thread::current().id() == thread)
                })
            })
            .collect();
        let t = Instant::now();
        let got = run(tasks).unwrap();
        echo.join().unwrap();
        for (i, r) in got.into_iter().enumerate() {
            assert_eq!(r.unwrap(), (i as u64, true));
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(!active());
    }

    #[test]
    fn sleeping_tasks_overlap_and_wake_in_deadline_order() {
        let order = RefCell::new(Vec::new());
        let t0 = Instant::now();
        let tasks: Vec<Task<'_, ()>> = [60u64, 20, 40]
            .into_iter()
            .map(|ms| {
                let order = &order;
                boxed(move || {
                    sleep(Duration::from_millis(ms));
                    assert!(t0.elapsed() >= Duration::from_millis(ms));
                    order.borrow_mut().push(ms);
                })
            })
            .collect();
        run(tasks).unwrap();
        // Three sleeps of up to 60 ms at once, not 120 ms one after another.
        assert!(
            t0.elapsed() < Duration::from_millis(110),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(*order.borrow(), [20, 40, 60]);
    }

    #[test]
    fn a_read_with_a_socket_timeout_fails_as_a_blocking_read_would() {
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let ticks = Cell::new(0u32);
        let t0 = Instant::now();
        let tasks: Vec<Task<'_, Option<io::ErrorKind>>> = vec![
            boxed(|| recv(a.as_raw_fd(), &mut [0u8; 4]).err().map(|e| e.kind())),
            // Runs while the other waits.
            boxed(|| {
                for _ in 0..5 {
                    sleep(Duration::from_millis(5));
                    ticks.set(ticks.get() + 1);
                }
                None
            }),
        ];
        let got = run(tasks).unwrap();
        assert_eq!(got[0].as_ref().unwrap(), &Some(io::ErrorKind::WouldBlock));
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_eq!(ticks.get(), 5);
    }

    #[test]
    fn a_stop_flag_ends_a_task_that_polls_it_and_a_panic_stays_in_its_task() {
        let stop = Cell::new(false);
        let spins = Cell::new(0u64);
        let tasks: Vec<Task<'_, u32>> = vec![
            boxed(|| {
                while !stop.get() {
                    spins.set(spins.get() + 1);
                    sleep(Duration::from_millis(1));
                }
                1
            }),
            boxed(|| {
                sleep(Duration::from_millis(20));
                stop.set(true);
                2
            }),
            boxed(|| panic!("scripted")),
        ];
        let got = run(tasks).unwrap();
        assert_eq!(*got[0].as_ref().unwrap(), 1);
        assert_eq!(*got[1].as_ref().unwrap(), 2);
        assert!(got[2].is_err());
        // It ran meanwhile (a panic's backtrace takes the thread for a while).
        assert!(spins.get() >= 2, "{}", spins.get());
    }

    #[test]
    fn outside_a_task_the_calls_block_the_thread_as_plain_ones_do() {
        assert!(!active());
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(Duration::from_millis(30))).unwrap();
        let e = recv(a.as_raw_fd(), &mut [0u8; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        b.write_all(b"hi").unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(recv(a.as_raw_fd(), &mut buf).unwrap(), 2);
        let t = Instant::now();
        sleep(Duration::from_millis(10));
        assert!(t.elapsed() >= Duration::from_millis(10));
    }

    #[test]
    fn a_task_waiting_for_its_reply_is_not_woken_when_its_query_is_read() {
        // The peer reads the query (the task's send buffer drains: an
        // EPOLLOUT edge), then answers 50 ms later: one epoll_wait, not two.
        let (a, b) = UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let mut b = b;
            let mut q = [0u8; 5];
            b.read_exact(&mut q).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            b.write_all(b"reply").unwrap();
        });
        let fd = a.as_raw_fd();
        EPOLL_WAITS.set(0);
        let got = run(vec![boxed(|| {
            assert_eq!(send(fd, b"query").unwrap(), 5);
            let mut buf = [0u8; 5];
            let n = recv(fd, &mut buf).unwrap();
            buf[..n].to_vec()
        })])
        .unwrap();
        peer.join().unwrap();
        assert_eq!(got[0].as_ref().unwrap(), b"reply");
        assert_eq!(EPOLL_WAITS.get(), 1, "woken for the reply only");
    }

    #[test]
    fn a_reused_descriptor_number_is_registered_again() {
        // A task closes its socket and opens another (a reconnect): the
        // new one may get the old number, which the epoll dropped.
        let tasks: Vec<Task<'_, usize>> = vec![boxed(|| {
            let mut total = 0;
            for _ in 0..3 {
                let (a, b) = UnixStream::pair().unwrap();
                new_fd(a.as_raw_fd());
                let w = std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(10));
                    (&b).write_all(b"x").unwrap();
                    b
                });
                total += recv(a.as_raw_fd(), &mut [0u8; 1]).unwrap();
                drop(w.join().unwrap());
            }
            total
        })];
        let t = Instant::now();
        assert_eq!(*run(tasks).unwrap()[0].as_ref().unwrap(), 3);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[test]
    fn a_statement_costs_one_send_one_recv_and_no_timeout_query() {
        // 16 connections on one thread, 50 statements each, answered by a
        // peer thread: each reply is read by one recv (none that finds
        // nothing first), and no wait asks the kernel for the timeout.
        const CONNS: usize = 16;
        const ROUNDS: usize = 50;
        let pairs: Vec<(UnixStream, UnixStream)> =
            (0..CONNS).map(|_| UnixStream::pair().unwrap()).collect();
        let (mine, theirs): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        for s in &mine {
            new_fd(s.as_raw_fd());
            set_timeout(s.as_raw_fd(), Interest::Read, Some(Duration::from_secs(5))).unwrap();
            set_timeout(s.as_raw_fd(), Interest::Write, Some(Duration::from_secs(5))).unwrap();
        }
        let peer = std::thread::spawn(move || {
            let mut theirs = theirs;
            for _ in 0..ROUNDS {
                for s in &mut theirs {
                    let mut b = [0u8; 8];
                    s.read_exact(&mut b).unwrap();
                    s.write_all(&b).unwrap();
                }
            }
        });
        sched::EPOLL_WAITS.set(0);
        calls::RECVS.set(0);
        fds::ASKED.set(0);
        let tasks: Vec<Task<'_, ()>> = mine
            .iter()
            .map(|s| {
                boxed(move || {
                    let fd = s.as_raw_fd();
                    for r in 0..ROUNDS as u64 {
                        assert_eq!(send(fd, &r.to_le_bytes()).unwrap(), 8);
                        let mut b = [0u8; 64];
                        assert_eq!(recv(fd, &mut b).unwrap(), 8);
                        assert_eq!(b[..8], r.to_le_bytes());
                    }
                })
            })
            .collect();
        for r in run(tasks).unwrap() {
            r.unwrap();
        }
        peer.join().unwrap();
        let statements = (CONNS * ROUNDS) as u64;
        // Each connection's first read may find nothing (its socket is not
        // known drained yet); every later one waits first.
        let recvs = calls::RECVS.get();
        assert!(
            recvs <= statements + CONNS as u64,
            "{recvs} recv calls for {statements} statements"
        );
        assert_eq!(fds::ASKED.get(), 0, "timeouts asked of the kernel");
        assert!(EPOLL_WAITS.get() <= statements, "{}", EPOLL_WAITS.get());
    }

    #[test]
    fn data_reported_while_no_task_waits_on_its_socket_is_read() {
        // The task reads a short reply (its socket is drained), then
        // sleeps; meanwhile more data arrives and the thread's epoll_wait
        // (for the sleep) reports it while nobody waits on that socket.
        // The next read must find it, not wait for an edge that came.
        let (a, b) = UnixStream::pair().unwrap();
        new_fd(a.as_raw_fd());
        set_timeout(a.as_raw_fd(), Interest::Read, Some(Duration::from_secs(2))).unwrap();
        let fd = a.as_raw_fd();
        let b = &b;
        let tasks: Vec<Task<'_, Vec<u8>>> = vec![
            boxed(move || {
                let mut got = Vec::new();
                let mut buf = [0u8; 16];
                // A wait first: the socket is registered with the epoll.
                let n = recv(fd, &mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
                sleep(Duration::from_millis(30));
                let n = recv(fd, &mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
                got
            }),
            boxed(move || {
                sleep(Duration::from_millis(10));
                (&*b).write_all(b"one").unwrap();
                sleep(Duration::from_millis(10));
                (&*b).write_all(b"two").unwrap();
                Vec::new()
            }),
        ];
        let t = Instant::now();
        let got = run(tasks).unwrap();
        assert_eq!(got[0].as_ref().unwrap(), b"onetwo");
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }

    #[test]
    fn a_stop_ends_blocked_sends_then_every_wait() {
        // A peer that reads nothing: the first task's sends fill the socket
        // and block; the second waits for a reply that never comes; the
        // third sleeps. Timeouts of 30 s: only the stop ends them in time.
        let (a, _peer_a) = UnixStream::pair().unwrap();
        let (c, _peer_c) = UnixStream::pair().unwrap();
        for s in [&a, &c] {
            new_fd(s.as_raw_fd());
            for way in [Interest::Read, Interest::Write] {
                set_timeout(s.as_raw_fd(), way, Some(Duration::from_secs(30))).unwrap();
            }
        }
        let stop = Stop::new();
        let t0 = Instant::now();
        let ended = RefCell::new(Vec::new());
        let (ended, stop2) = (&ended, stop.clone());
        let tasks: Vec<Task<'_, Option<bool>>> = vec![
            boxed(move || {
                let block = [0u8; 65536];
                loop {
                    if let Err(e) = send(a.as_raw_fd(), &block) {
                        ended.borrow_mut().push(("send", t0.elapsed()));
                        return Some(is_stopped(&e));
                    }
                }
            }),
            boxed(move || {
                let e = recv(c.as_raw_fd(), &mut [0u8; 8]).unwrap_err();
                ended.borrow_mut().push(("recv", t0.elapsed()));
                Some(is_stopped(&e))
            }),
            boxed(move || {
                sleep(Duration::from_secs(30));
                ended.borrow_mut().push(("sleep", t0.elapsed()));
                None
            }),
        ];
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop2.end(Waits::Sends);
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(stop2.ending(), Some(Waits::Sends));
            stop2.end(Waits::All);
        });
        let got = run_until(tasks, &stop).unwrap();
        stopper.join().unwrap();
        let got: Vec<Option<bool>> = got.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got, [Some(true), Some(true), None]);
        let ended = ended.borrow();
        assert_eq!(ended[0].0, "send", "{ended:?}");
        assert!(ended[0].1 < Duration::from_millis(290), "{ended:?}");
        assert!(ended[1..].iter().all(|e| e.1 >= Duration::from_millis(290)));
        assert!(
            ended.iter().all(|e| e.1 < Duration::from_secs(5)),
            "{ended:?}"
        );
        assert_eq!(stop.ending(), Some(Waits::All));
    }
}
