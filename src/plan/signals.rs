//! Ctrl-C, SIGTERM and SIGHUP during a run or a matrix: the first stops the
//! run cleanly, a second quits at once; a matrix passes them on to the
//! `rqps run` child it waits for.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

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
        crate::harness::quit::remove_leftovers();
        std::process::exit(runner::stop_exit_code());
    }
    if runner::stop_requested() {
        eprintln!("\n{name}: stopping now");
        runner::begin_quitting();
        let _ = crate::engine::server::abandon_all();
        std::process::exit(runner::stop_exit_code());
    }
    eprintln!(
        "\n{name}: finishing the current events and saving results; what still runs in {} s is cancelled (Ctrl-C again to quit at once)",
        STOP_GRACE.as_secs()
    );
    runner::request_stop_by(sig);
    let _ = std::thread::Builder::new()
        .name("rqps-stop".into())
        .spawn(move || end_in_time(name));
}

/// How long the events in flight when a stop comes may take to finish (a
/// statement, a send): then rqps cancels them. Seconds, not the statement
/// timeout: a stop must stop, whatever a server or the network does.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long the servers' own cancels may take before rqps shuts the
/// connections' sockets down.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// The longest a stop takes: whatever still holds rqps then (a server that
/// takes long to shut down), it quits as at a second signal. A test still
/// running is then stored as interrupted.
pub const STOP_AT_MOST: Duration = Duration::from_secs(12);

/// The first stop's watch: after [`STOP_GRACE`], the statements still in
/// flight are cancelled (PostgreSQL's cancel request, MySQL's `KILL QUERY`,
/// over fresh connections), then the sockets shut down, which wakes a read
/// or a write blocked on them (a server or proxy that stopped reading: the
/// send would wait for the statement timeout); the events fail, the step
/// ends as interrupted, and what finished is stored as usual. A connection
/// opened after that is shut down as well, until the run ends or
/// [`STOP_AT_MOST`] passes.
fn end_in_time(name: &'static str) {
    use crate::engine::inflight;
    let began = Instant::now();
    std::thread::sleep(STOP_GRACE);
    // A matrix waits for its `rqps run` child, which has a watch of its own.
    if CHILD.load(Ordering::SeqCst) > 0 {
        return;
    }
    let open = inflight::open_count();
    if open > 0 {
        eprintln!(
            "rqps: {name}: {open} connection(s) still open {} s later: cancelling what they run",
            STOP_GRACE.as_secs()
        );
        inflight::cancel_all(CANCEL_WAIT);
    }
    while began.elapsed() < STOP_AT_MOST {
        inflight::shut_down_all();
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "rqps: {name}: still not stopped {} s later: quitting now",
        STOP_AT_MOST.as_secs()
    );
    crate::harness::runner::begin_quitting();
    let _held = crate::results::interrupt_in_progress(crate::harness::runner::stop_cause());
    let _ = crate::engine::server::abandon_all();
    std::process::exit(crate::harness::runner::stop_exit_code());
}
