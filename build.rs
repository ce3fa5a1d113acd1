// Records the git commit rqps was built from, for every stored result and `rqps --version`.
//
// The build reruns when HEAD moves. In a git worktree `.git` is a file that points to
// the worktree's own git directory (HEAD) inside the common one (refs, packed-refs), so
// the paths to watch come from git itself; watching a `.git/HEAD` that does not exist
// would rerun this script, and rebuild rqps, on every build.
fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    if !commit.is_empty() {
        let paths = git(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "HEAD",
            "--git-common-dir",
        ])
        .unwrap_or_default();
        let mut lines = paths.lines();
        if let (Some(head), Some(common)) = (lines.next(), lines.next()) {
            // A commit on a branch moves its ref (a loose file, or a line of packed-refs),
            // not HEAD. Only files that exist: cargo reruns for a missing one every time.
            let branch = git(&["symbolic-ref", "-q", "HEAD"]).map(|b| format!("{common}/{b}"));
            let packed = format!("{common}/packed-refs");
            for p in [Some(head.to_string()), branch, Some(packed)]
                .into_iter()
                .flatten()
                .filter(|p| std::path::Path::new(p).exists())
            {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    println!("cargo:rustc-env=RQPS_GIT_COMMIT={commit}");
    let version = env!("CARGO_PKG_VERSION");
    let line = if commit.is_empty() {
        version.to_string()
    } else {
        format!("{version} (git {commit})")
    };
    println!("cargo:rustc-env=RQPS_VERSION_LINE={line}");
    // sysbench's C API for Lua scripts' FFI (src/suite/sysbench/lua/capi.rs): LuaJIT's `ffi.C`
    // finds a function in the process's dynamic symbol table, where an executable puts only
    // what it is told to export. `sb_*` are sysbench's names, `rqps_sb_*` the statement path of
    // rqps's `sysbench.sql`; nothing else of rqps is exported. For the binaries and the test
    // binaries alike (the library's tests call them).
    println!("cargo:rustc-link-arg=-Wl,--export-dynamic-symbol=sb_*");
    println!("cargo:rustc-link-arg=-Wl,--export-dynamic-symbol=rqps_sb_*");
}
