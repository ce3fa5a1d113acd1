//! One throwaway server of each kind per test binary, shared by its tests:
//! started on first use, each test taking it for its duration ([`take`])
//! and working in a database of its own, killed with its files when the
//! binary exits. A server dies with the thread that started it
//! (`PR_SET_PDEATHSIG`), so a thread that lives as long as the process
//! starts it, not the test's own.

use std::sync::{Mutex, MutexGuard, OnceLock};

use rqps::engine::server::{Recipe, Server, ServerSpec};

/// A shared server, and the lock a test holds while it uses it.
pub struct Shared {
    pub server: Server,
    lock: Mutex<()>,
}

/// A test's hold on a shared server.
pub struct Held {
    pub server: &'static Server,
    _guard: MutexGuard<'static, ()>,
}

static SERVERS: Mutex<Vec<(String, &'static Shared)>> = Mutex::new(Vec::new());

extern "C" fn stop_all() {
    let _ = rqps::engine::server::abandon_all();
}

/// The shared server of `kind` (started now if it is not yet), held until
/// the returned value is dropped: tests that use it run one at a time (a
/// server's general log, its settings).
pub fn take(kind: Recipe) -> Held {
    static AT_EXIT: OnceLock<()> = OnceLock::new();
    AT_EXIT.get_or_init(|| {
        // SAFETY: atexit(3) with a function that takes and returns nothing.
        unsafe { libc::atexit(stop_all) };
    });
    let shared = {
        let mut all = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
        match all.iter().find(|(k, _)| *k == kind.to_string()) {
            Some((_, s)) => *s,
            None => {
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let r = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"));
                    let up = r.is_ok();
                    let _ = tx.send(r);
                    // The server's parent thread lives as long as the process.
                    if up {
                        loop {
                            std::thread::park();
                        }
                    }
                });
                let server = rx
                    .recv()
                    .expect("the starting thread answers")
                    .unwrap_or_else(|e| panic!("starting {kind}: {e}"));
                let s: &'static Shared = Box::leak(Box::new(Shared {
                    server,
                    lock: Mutex::new(()),
                }));
                all.push((kind.to_string(), s));
                s
            }
        }
    };
    Held {
        server: &shared.server,
        _guard: shared.lock.lock().unwrap_or_else(|e| e.into_inner()),
    }
}

/// The binary's server of `kind`, held by this test, and a fresh database
/// `db` on it: the URL of that database without the password.
pub fn server_with_database(kind: Recipe, db: &str) -> (Held, String) {
    use rqps::engine::Driver;
    let held = take(kind);
    let srv = held.server;
    let root: Box<dyn Driver> = if kind.to_string().to_lowercase().contains("postgres") {
        Box::new(rqps::engine::postgres::PostgresDriver::new(&srv.url()).unwrap())
    } else {
        Box::new(rqps::engine::mysql::MysqlDriver::new(&srv.url()).unwrap())
    };
    let mut conn = root.require_sql().unwrap().connect().unwrap();
    for sql in [
        format!("DROP DATABASE IF EXISTS {db}"),
        format!("CREATE DATABASE {db}"),
    ] {
        conn.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let url = srv.url_without_password();
    let base = url.rsplit_once('/').unwrap().0;
    (held, format!("{base}/{db}"))
}
