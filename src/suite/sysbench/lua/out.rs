//! Standard output as scripts write it: through C's stdio, where Lua's
//! `print` and `io.write` write, so that what rqps prints in sysbench's
//! shapes (report lines, histograms, the closing report) and what hooks
//! print come out in the order they were written. C's stdout is made line
//! buffered, as a terminal has it, so that lines written while a test runs
//! appear when written even into a pipe, and in order with what rqps
//! writes through Rust's stdout.

use std::sync::Once;

unsafe extern "C" {
    /// glibc's standard output stream.
    #[link_name = "stdout"]
    static C_STDOUT: *mut libc::FILE;
}

/// C's standard output stream.
fn stream() -> *mut libc::FILE {
    // SAFETY: glibc's `stdout` is initialised before main and never changes.
    unsafe { C_STDOUT }
}

/// Makes C's stdout line buffered (once, before anything is written to it).
pub fn line_buffered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: setvbuf on the process's stdout before any script ran
        // (the first Lua state is made after this), with a buffer C
        // allocates itself (null).
        unsafe {
            libc::setvbuf(stream(), std::ptr::null_mut(), libc::_IOLBF, 0);
        }
    });
}

/// Writes `text` to C's standard output.
pub fn print(text: &str) {
    if text.is_empty() {
        return;
    }
    line_buffered();
    // SAFETY: fwrite of `text`'s bytes, which outlive the call, to stdout.
    unsafe {
        libc::fwrite(text.as_ptr().cast(), 1, text.len(), stream());
    }
}
