//! Facts about the machine a result was measured on.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Host {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub cpus: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mem_total_kb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel: Option<String>,
    /// Filesystem, mount point and source of the database's data.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_fs: Option<String>,
    /// Block device whose IO the hardware figures count.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_device: Option<String>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

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
        hostname: read("/proc/sys/kernel/hostname")
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_default(),
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
