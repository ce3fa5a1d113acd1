//! Facts about the host (sysconf, uname, /proc/cpuinfo, /proc/meminfo) and
//! finding the process that listens on a TCP port.

use super::procfs::{self, TCP_LISTEN};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// Clock ticks per second used by `/proc/stat` and `/proc/<pid>/stat`
/// (`sysconf(_SC_CLK_TCK)`, USER_HZ; 100 on every common Linux).
pub fn clock_ticks_per_sec() -> Option<u64> {
    sysconf_positive(SysconfName::ClkTck)
}

/// Memory page size in bytes (`sysconf(_SC_PAGESIZE)`).
pub fn page_size() -> Option<u64> {
    sysconf_positive(SysconfName::PageSize)
}

/// Online logical CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`), else
/// `std::thread::available_parallelism`.
pub fn online_cpus() -> Option<usize> {
    sysconf_positive(SysconfName::CpusOnline)
        .map(|n| n as usize)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
}

enum SysconfName {
    ClkTck,
    PageSize,
    CpusOnline,
}

#[cfg(unix)]
fn sysconf_positive(name: SysconfName) -> Option<u64> {
    let n = match name {
        SysconfName::ClkTck => libc::_SC_CLK_TCK,
        SysconfName::PageSize => libc::_SC_PAGESIZE,
        SysconfName::CpusOnline => libc::_SC_NPROCESSORS_ONLN,
    };
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let v = unsafe { libc::sysconf(n) };
    (v > 0).then_some(v as u64)
}

#[cfg(not(unix))]
fn sysconf_positive(_name: SysconfName) -> Option<u64> {
    None
}

/// CPU time of this process from `getrusage(RUSAGE_SELF)`, in microseconds
/// (user, system).
#[cfg(unix)]
pub(crate) fn own_rusage_us() -> Option<(u64, u64)> {
    // SAFETY: an all-zero rusage is a valid value; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage owned by this frame.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return None;
    }
    let us = |tv: libc::timeval| (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64;
    Some((us(ru.ru_utime), us(ru.ru_stime)))
}

#[cfg(not(unix))]
pub(crate) fn own_rusage_us() -> Option<(u64, u64)> {
    None
}

/// Static facts about the machine, for the report header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: Option<String>,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// `std::env::consts::OS`, e.g. "linux".
    pub os: String,
    /// `std::env::consts::ARCH`, e.g. "x86_64".
    pub arch: String,
    /// "model name" of /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Online logical CPUs of the machine.
    pub logical_cpus: Option<usize>,
    /// CPUs this process may use (affinity, cgroup quota).
    pub available_parallelism: Option<usize>,
    pub mem_total_bytes: Option<u64>,
    pub clock_ticks_per_sec: Option<u64>,
    pub page_size: Option<u64>,
}

/// Gathers [`HostFacts`]; every part that cannot be found is `None`.
pub fn host_facts() -> HostFacts {
    let proc = Path::new("/proc");
    let cpuinfo = std::fs::read_to_string(proc.join("cpuinfo")).ok();
    let meminfo = std::fs::read_to_string(proc.join("meminfo")).ok();
    let (uname_host, uname_release) = uname_strings();
    let read_trim = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    HostFacts {
        hostname: uname_host.or_else(|| read_trim("/proc/sys/kernel/hostname")),
        kernel: uname_release.or_else(|| read_trim("/proc/sys/kernel/osrelease")),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: cpuinfo.as_deref().and_then(procfs::parse_cpuinfo_model),
        logical_cpus: online_cpus().or_else(|| {
            cpuinfo
                .as_deref()
                .map(procfs::parse_cpuinfo_processors)
                .filter(|n| *n > 0)
        }),
        available_parallelism: std::thread::available_parallelism().ok().map(|n| n.get()),
        mem_total_bytes: meminfo
            .as_deref()
            .and_then(|m| procfs::parse_meminfo_kb(m, "MemTotal"))
            .map(|kb| kb * 1024),
        clock_ticks_per_sec: clock_ticks_per_sec(),
        page_size: page_size(),
    }
}

/// (nodename, release) from uname(2).
#[cfg(unix)]
fn uname_strings() -> (Option<String>, Option<String>) {
    // SAFETY: an all-zero utsname is valid; uname fills NUL-terminated fields.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a utsname owned by this frame.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (None, None);
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned()).filter(|s| !s.is_empty())
    };
    (field(&u.nodename), field(&u.release))
}

#[cfg(not(unix))]
fn uname_strings() -> (Option<String>, Option<String>) {
    (None, None)
}

/// The pid of the process listening on TCP `port` (IPv4 or IPv6) in this
/// network namespace: LISTEN sockets of /proc/net/tcp{,6} give the socket
/// inode, and /proc/*/fd links `socket:[inode]` give its holders. When
/// several processes hold the socket (forked workers), the one whose parent
/// is not itself a holder is returned (lowest pid on a tie). `None` if no
/// listener, or its holder is not visible (another user's process without
/// privileges, another namespace).
pub fn pid_listening_on(port: u16) -> Option<u32> {
    pid_listening_on_in(Path::new("/proc"), port)
}

pub(crate) fn pid_listening_on_in(proc_root: &Path, port: u16) -> Option<u32> {
    let inodes = listening_inodes(proc_root, port);
    if inodes.is_empty() {
        return None;
    }
    let mut holders: BTreeSet<u32> = BTreeSet::new();
    for pid in numeric_dirs(proc_root) {
        let Ok(fds) = std::fs::read_dir(proc_root.join(pid.to_string()).join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let t = target.to_string_lossy();
            if let Some(n) = t
                .strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|n| n.parse::<u64>().ok())
                && inodes.contains(&n)
            {
                holders.insert(pid);
                break;
            }
        }
    }
    holders
        .iter()
        .copied()
        .find(|pid| {
            let ppid = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat"))
                .ok()
                .and_then(|s| procfs::parse_pid_stat(&s).ok())
                .map(|s| s.ppid);
            ppid.is_none_or(|pp| !holders.contains(&pp))
        })
        .or_else(|| holders.first().copied())
}

/// Inodes of LISTEN sockets on `port` in `<proc_root>/net/tcp` and `tcp6`.
pub(crate) fn listening_inodes(proc_root: &Path, port: u16) -> BTreeSet<u64> {
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(proc_root.join("net").join(f)).ok())
        .flat_map(|text| procfs::parse_net_tcp(&text))
        .filter(|s| s.state == TCP_LISTEN && s.local_port == port && s.inode != 0)
        .map(|s| s.inode)
        .collect()
}

/// Pids of the numeric entries of `proc_root` (processes, not threads).
pub(crate) fn numeric_dirs(proc_root: &Path) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .collect();
    pids.sort_unstable();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/proc");

    #[test]
    fn sysconf_values_are_sane() {
        let t = clock_ticks_per_sec().expect("clk_tck");
        assert!((10..=10_000).contains(&t), "{t}");
        let p = page_size().expect("page size");
        assert!(p >= 4096 && p.is_power_of_two(), "{p}");
        assert!(online_cpus().unwrap() >= 1);
    }

    #[test]
    fn host_facts_on_this_machine() {
        let h = host_facts();
        assert!(h.kernel.as_deref().is_some_and(|k| !k.is_empty()));
        assert!(h.hostname.is_some());
        assert!(h.logical_cpus.unwrap() >= 1);
        assert!(h.mem_total_bytes.unwrap() > 64 * 1024 * 1024);
        assert!(h.cpu_model.is_some());
        assert_eq!(h.os, "linux");
    }

    #[test]
    fn listening_inodes_from_fixture_files() {
        // A fake proc root holding only net/tcp{,6}: build it in a temp dir.
        let dir = std::env::temp_dir().join(format!("sysstat-net-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("net")).unwrap();
        std::fs::copy(format!("{FIX}/net_tcp.listeners"), dir.join("net/tcp")).unwrap();
        std::fs::copy(format!("{FIX}/net_tcp6.listeners"), dir.join("net/tcp6")).unwrap();
        let v: Vec<u64> = listening_inodes(&dir, 5432).into_iter().collect();
        // 40002 is an ESTABLISHED connection on 5432, not a listener.
        assert_eq!(v, vec![40001, 40003]);
        assert_eq!(
            listening_inodes(&dir, 3306).into_iter().collect::<Vec<_>>(),
            vec![31337]
        );
        assert!(listening_inodes(&dir, 80).is_empty());
        assert_eq!(pid_listening_on_in(&dir, 5432), None); // no pid dirs there
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finds_own_pid_listening_v4() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(pid_listening_on(port), Some(std::process::id()));
        drop(l);
    }

    #[test]
    fn finds_own_pid_listening_v6_or_skips() {
        // IPv6 may be disabled on a host; only check when bind works.
        if let Ok(l) = std::net::TcpListener::bind("[::1]:0") {
            let port = l.local_addr().unwrap().port();
            assert_eq!(pid_listening_on(port), Some(std::process::id()));
        }
    }

    #[test]
    fn no_listener_gives_none() {
        // Bind then close to get a port that is (almost surely) free now.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        assert_eq!(pid_listening_on(port), None);
    }
}
