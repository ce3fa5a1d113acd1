//! Ending the process at once, for a worker that can neither finish nor be
//! stopped (a script's event looping in compiled code): what a second
//! Ctrl-C does, with the reason said first. The throwaway servers are
//! killed and their files removed; the running test stays `running` on
//! disk, which readers show as killed once this process is gone.

use super::runner;

/// Says `message` (one line), kills the throwaway servers, removes their
/// files and this process's temporary directories, and exits with status 1.
pub fn end_run_now(message: &str) -> ! {
    runner::begin_quitting();
    runner::request_stop();
    eprintln!("\nerror: {message}");
    remove_leftovers();
    std::process::exit(1)
}

/// Kills the throwaway servers, removes their files and this process's
/// temporary directories, and says each directory removed: the last thing
/// a process ending at once does (here, and on a second Ctrl-C).
pub fn remove_leftovers() {
    for dir in crate::engine::server::abandon_all() {
        eprintln!(
            "rqps: removed {}, a throwaway server's files",
            dir.display()
        );
    }
    for dir in crate::engine::server::remove_own_dirs() {
        eprintln!("rqps: removed {}, a temporary directory", dir.display());
    }
}
