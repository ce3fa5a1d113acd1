fn main() {
    // Die quietly when the reader of stdout goes away (`rqps tests | head`), as other CLI tools do.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    std::process::exit(rqps::cli::main());
}
