//! Ctrl-C, SIGTERM and SIGHUP during a run or a matrix: the first stops the
//! run cleanly, a second quits at once; a matrix passes them on to the
//! `rqps run` child it waits for.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by [`install_at_once`]: the first signal ends the command at once.
static AT_ONCE: AtomicBool = AtomicBool::new(false);

/// For a command with nothing to save part way (`rqps compat`, whose record
/// is whole or not at all): the first Ctrl-C, SIGTERM or SIGHUP kills its
/// throwaway servers, removes their files, says what it removed and exits
/// with 128 + the signal. Before, SIGTERM left a server's data directory
/// (126 MB) with no word. The command must not store its result once
/// [`crate::harness::runner::stop_requested`] is true: the signal's thread
/// is then removing the files and will exit.
pub fn install_at_once() {
    AT_ONCE.store(true, Ordering::SeqCst);
    install();
}

/// Ctrl-C, SIGTERM and SIGHUP all stop the run the same way: the current
/// events finish, the running test is stored as `interrupted`, the
/// throwaway server is stopped and its files removed, and rqps exits with
/// 128 + the signal. A second one quits at once, still killing the server
/// and removing its files first.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("rqps-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    on_signal(sig);
                }
            });
    });
}

/// The `rqps run` child a matrix waits for (0: none). A signal to the matrix
/// is passed on to it, so that it stores its test as `interrupted` too.
pub(crate) static CHILD: AtomicI32 = AtomicI32::new(0);

fn on_signal(sig: i32) {
    use crate::harness::runner;
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2) on a child this process started and still waits for.
        unsafe { libc::kill(child, sig) };
    }
    let name = match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    };
    if AT_ONCE.load(Ordering::SeqCst) {
        runner::request_stop_by(sig);
        runner::begin_quitting();
        eprintln!("\n{name}: stopping now; no record is stored");
        for dir in crate::engine::server::abandon_all() {
            eprintln!(
                "rqps: removed {}, a throwaway server's files",
                dir.display()
            );
        }
        for dir in crate::engine::server::remove_own_dirs() {
            eprintln!("rqps: removed {}, a temporary directory", dir.display());
        }
        std::process::exit(runner::stop_exit_code());
    }
    if runner::stop_requested() {
        eprintln!("\n{name}: stopping now");
        runner::begin_quitting();
        let _ = crate::engine::server::abandon_all();
        std::process::exit(runner::stop_exit_code());
    }
    eprintln!(
        "\n{name}: finishing the current events and saving results (Ctrl-C again to quit at once)"
    );
    runner::request_stop_by(sig);
}
