//! Facts about the machine a result was measured on.

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

pub use crate::results::Host;

pub fn host() -> Host {
    let field = |text: &str, key: &str| -> Option<String> {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    Host {
        hostname: crate::util::hostname(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        cpu_model: field(&cpuinfo, "model name"),
        mem_total_kb: field(&meminfo, "MemTotal")
            .and_then(|v| v.trim_end_matches("kB").trim().parse().ok()),
        kernel: read("/proc/sys/kernel/osrelease"),
        data_fs: None,
        data_device: None,
    }
}
