//! Facts of this host and its processes, from `/proc`.

/// When process `pid` started (clock ticks after boot, field 22 of
/// `/proc/PID/stat`); `None` when there is no such process, or only its
/// zombie (dead, not yet reaped). With the pid it tells a process from a
/// later one that reused its pid.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in parentheses and may hold spaces.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    if rest.next()? == "Z" {
        return None;
    }
    rest.nth(18)?.parse().ok()
}

/// This machine's host name (empty when unknown).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}
