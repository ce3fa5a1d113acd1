//! Hardware cost of one step: wraps a test (or the load) with the /proc
//! sampler, the database size before and after, the engine's status counters
//! before and after, and a check that the machine was idle beforehand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::engine::Driver;
use crate::harness::sysstat::{
    Sampler, SamplerConfig, background_cpu_pct, device_for_path, dir_size_on_disk, per_op,
};
use crate::results::{DbSize, HwCost, HwSecond, PerOp};

/// Window over which other processes' CPU is measured before each step.
const BACKGROUND_WINDOW: Duration = Duration::from_millis(250);

/// Other processes' share of all CPUs above which a test is flagged as run
/// on a busy machine (`--busy-threshold`).
pub const BUSY_THRESHOLD_PCT: f64 = 10.0;

/// What stays the same for every step of a run.
#[derive(Clone, Debug, Default)]
pub struct ProbeContext {
    /// `/proc/diskstats` name of the device holding the data.
    pub device: Option<String>,
    /// Root pids of the server's process tree (empty: embedded or unknown).
    pub server_pids: Vec<u32>,
    /// Files and directories whose bytes on disk are the database's size.
    pub disk_paths: Vec<PathBuf>,
    /// The engine runs inside rqps (SQLite).
    pub embedded: bool,
    /// Warn when other processes use more than this percent of all CPUs before a step.
    pub busy_threshold_pct: f64,
    /// Figures that cannot be measured for the whole run, and why.
    pub unavailable: Vec<String>,
    /// Filesystem and mount point of the data, when found.
    pub fs: Option<String>,
    /// The server's TCP port on this host, to find it again after a restart.
    pub listening_port: Option<u16>,
    /// Record CPU profiles of each test's measured interval (`--cpu-profile`,
    /// set only once perf was found to work: [`crate::harness::profile::check`]).
    pub cpu_profile: bool,
}

/// Why no device is sampled when the data directory is not known here.
const NOT_HERE: &str = "storage: the data directory is not on this host";

/// The working directory of process `pid` (a database server's is its data
/// directory: PostgreSQL's postmaster and mysqld change into it).
fn working_dir(pid: u32) -> std::io::Result<PathBuf> {
    let dir = std::fs::read_link(format!("/proc/{pid}/cwd"))?;
    if dir.is_dir() && dir != Path::new("/") {
        Ok(dir)
    } else {
        Err(std::io::Error::other(format!(
            "{} is not a data directory",
            dir.display()
        )))
    }
}

/// Where an engine keeps its data and which processes do its work: what the
/// harness's hardware probe measures.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    /// The data directory or database file (its filesystem and device).
    pub data_path: Option<PathBuf>,
    /// What the size on disk adds up.
    pub disk_paths: Vec<PathBuf>,
    /// The server's processes, when known.
    pub pids: Vec<u32>,
    /// A server on this host whose pid the probe can look up by its TCP port.
    pub listening_port: Option<u16>,
    /// The engine runs inside rqps (SQLite).
    pub embedded: bool,
}

impl ProbeContext {
    /// The context of an opened engine: its data and server processes (a
    /// server on this host found by its listening port when its pid is not
    /// known), the device to charge IO to, and the busy-machine threshold.
    pub fn for_engine(fp: &Footprint, device: Option<String>, busy_threshold_pct: f64) -> Self {
        let pids: Vec<u32> = if fp.pids.is_empty() {
            fp.listening_port
                .and_then(crate::harness::sysstat::pid_listening_on)
                .into_iter()
                .collect()
        } else {
            fp.pids.clone()
        };
        // A server on this host that did not say where its data is (a
        // PostgreSQL user without pg_read_all_settings): its main process
        // works in its data directory.
        let mut data_path = fp.data_path.clone();
        let mut disk_paths = fp.disk_paths.clone();
        let mut why = None;
        if data_path.is_none() && !fp.embedded {
            match (pids.first(), fp.listening_port) {
                (Some(pid), _) => match working_dir(*pid) {
                    Ok(dir) => {
                        if disk_paths.is_empty() {
                            disk_paths.push(dir.clone());
                        }
                        data_path = Some(dir);
                    }
                    Err(e) => {
                        why = Some(format!(
                            "the server runs on this host (pid {pid}), but it did not say where its data is and its working directory (/proc/{pid}/cwd) is not readable: {e}; run rqps as the server's user or root, or pass --device NAME from /proc/diskstats"
                        ))
                    }
                },
                (None, Some(port)) => {
                    why = Some(format!(
                        "the server listens on port {port} of this host, but rqps cannot see its process (another user's, or another namespace); pass --server-pid PID, or --device NAME from /proc/diskstats"
                    ))
                }
                (None, None) => {}
            }
        }
        let mut ctx = ProbeContext::new(
            data_path.as_deref(),
            disk_paths,
            device,
            pids,
            fp.embedded,
            busy_threshold_pct,
        );
        if let Some(why) = why {
            for u in &mut ctx.unavailable {
                if u.starts_with(NOT_HERE) {
                    *u = format!("storage: {why}");
                }
            }
        }
        ProbeContext {
            listening_port: fp.listening_port,
            ..ctx
        }
    }

    /// The server's root pids now: those known at the start while they all
    /// run, else the process that listens on the server's port (a server
    /// restarted between steps has a new pid, and its CPU would be lost).
    pub fn server_pids_now(&self) -> Vec<u32> {
        let alive = |p: &u32| crate::util::process_start_time(*p).is_some();
        if !self.server_pids.is_empty() && self.server_pids.iter().all(alive) {
            return self.server_pids.clone();
        }
        match self
            .listening_port
            .and_then(crate::harness::sysstat::pid_listening_on)
        {
            Some(p) => vec![p],
            None => self.server_pids.clone(),
        }
    }

    /// `data_path`: the database file or data directory, to find the device and
    /// measure size on disk. `device`: `--device`, overriding the lookup.
    pub fn new(
        data_path: Option<&Path>,
        disk_paths: Vec<PathBuf>,
        device: Option<String>,
        server_pids: Vec<u32>,
        embedded: bool,
        busy_threshold_pct: f64,
    ) -> Self {
        let mut unavailable = Vec::new();
        let found = data_path.map(device_for_path);
        let fs = match &found {
            Some(Ok(info)) => Some(format!(
                "{} on {} ({})",
                info.fs_type, info.mount_point, info.source
            )),
            _ => None,
        };
        let device = match (device, found) {
            (Some(d), _) => Some(d),
            (None, Some(found)) => match found {
                Ok(info) => Some(info.diskstats_name),
                Err(why) => {
                    unavailable.push(format!(
                        "storage: {why} (pass --device NAME from /proc/diskstats)"
                    ));
                    None
                }
            },
            (None, None) => {
                unavailable.push(format!(
                    "{NOT_HERE} (pass --device NAME from /proc/diskstats to sample one)"
                ));
                None
            }
        };
        if embedded {
            unavailable.push("server cpu/o and mem: the embedded engine runs inside rqps, so its CPU is part of client cpu/o and its memory is rqps's".into());
        } else if server_pids.is_empty() {
            unavailable.push(
                "server cpu/o and memory: the server process was not found on this host (pass --server-pid)".into(),
            );
        }
        if disk_paths.is_empty() {
            unavailable.push("database bytes on disk: the data directory is not known here".into());
        }
        ProbeContext {
            device,
            server_pids,
            disk_paths,
            embedded,
            busy_threshold_pct,
            unavailable,
            fs,
            listening_port: None,
            cpu_profile: false,
        }
    }

    /// Every process of the server's tree now (empty for an engine inside rqps).
    pub fn server_tree_now(&self) -> Vec<u32> {
        if self.embedded {
            return Vec::new();
        }
        let roots = self.server_pids_now();
        if roots.is_empty() {
            return roots;
        }
        let procs = crate::harness::sysstat::scan_processes(Path::new("/proc"));
        crate::harness::sysstat::descendants(&procs, &roots)
            .into_iter()
            .collect()
    }

    fn disk_bytes(&self) -> Option<u64> {
        if self.disk_paths.is_empty() {
            return None;
        }
        let mut total = 0;
        for p in &self.disk_paths {
            match dir_size_on_disk(p) {
                Ok(n) => total += n,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return None,
            }
        }
        Some(total)
    }
}

/// A step being measured.
pub struct Probe {
    sampler: Option<Sampler>,
    stopped: Option<crate::harness::sysstat::SampleSeries>,
    before: DbSize,
    status: Vec<(String, String)>,
    background: Option<f64>,
    warning: Option<String>,
    /// Per-CPU ticks when sampling started and stopped (what limited the step).
    per_cpu: [Option<Vec<(usize, crate::harness::sysstat::CpuTimes)>>; 2],
}

fn start_sampler(ctx: &ProbeContext) -> Sampler {
    Sampler::start(SamplerConfig {
        device: ctx.device.clone(),
        server_pids: ctx.server_pids_now(),
        ..Default::default()
    })
}

fn db_size(ctx: &ProbeContext, driver: &dyn Driver) -> DbSize {
    DbSize {
        engine_bytes: driver.db_size().ok().flatten(),
        disk_bytes: ctx.disk_bytes(),
    }
}

/// Turns engine status rows into numbers, dropping text values.
fn numeric(rows: &[(String, String)]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter_map(|(k, v)| v.trim().parse::<f64>().ok().map(|n| (k.clone(), n)))
        .collect()
}

/// Counters that changed between `before` and `after`.
pub fn status_delta(
    before: &[(String, String)],
    after: &[(String, String)],
) -> BTreeMap<String, f64> {
    let b = numeric(before);
    numeric(after)
        .into_iter()
        .filter_map(|(k, a)| b.get(&k).map(|bv| (k, a - bv)))
        .filter(|(_, d)| *d != 0.0)
        .collect()
}

impl Probe {
    /// Measures what comes before a step: other processes' CPU, database size,
    /// status counters. Call [`Probe::start_sampling`] when the measured part begins.
    ///
    /// The size and status queries run inside the background window, on this
    /// thread while another one waits out the window: their CPU is this
    /// process's and the server tree's, both left out of the background
    /// figure, so it measures the same as when they ran after it. Sequential,
    /// they added their own time to every step's fixed cost (on a throwaway
    /// PostgreSQL two SCRAM logins and nine queries, 0.1-0.5 s a step in a
    /// debug build on a busy 2-core machine).
    pub fn before(ctx: &ProbeContext, driver: &dyn Driver) -> Probe {
        let mut exclude = ctx.server_pids_now();
        exclude.push(std::process::id());
        let (background, (before, status)) = std::thread::scope(|s| {
            let window = s.spawn(|| background_cpu_pct(BACKGROUND_WINDOW, &exclude));
            let probes = (db_size(ctx, driver), driver.status().unwrap_or_default());
            // A panic in the window's thread is a bug in it: show it as such.
            let background = window
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (background, probes)
        });
        let warning = background
            .filter(|pct| *pct > ctx.busy_threshold_pct)
            .map(|pct| {
                format!(
                    "{}: other processes used {pct:.0}% of all CPUs just before this step \
                 (threshold {:.0}%); its figures may be off. Stop them, or raise --busy-threshold",
                    crate::results::BUSY_WARNING,
                    ctx.busy_threshold_pct
                )
            });
        Probe {
            sampler: None,
            stopped: None,
            before,
            status,
            background,
            warning,
            per_cpu: [None, None],
        }
    }

    /// A warning about a busy machine, if there is one.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Starts the /proc sampler (at the end of the warm-up).
    pub fn start_sampling(&mut self, ctx: &ProbeContext) {
        if self.sampler.is_none() {
            self.per_cpu[0] = crate::harness::limit::per_cpu_now();
            self.sampler = Some(start_sampler(ctx));
        }
    }

    /// Stops the /proc sampler now; [`Probe::finish`] reports what it saw.
    pub fn stop_sampling(&mut self) {
        if let Some(s) = self.sampler.take() {
            self.stopped = Some(s.stop());
            self.per_cpu[1] = crate::harness::limit::per_cpu_now();
        }
    }

    /// Ends the step: per-op figures for `ops` operations, and the status delta.
    pub fn finish(
        mut self,
        ctx: &ProbeContext,
        driver: &dyn Driver,
        ops: f64,
    ) -> (HwCost, BTreeMap<String, f64>) {
        let series = match self.stopped.take() {
            Some(s) => s,
            None => self
                .sampler
                .take()
                .unwrap_or_else(|| start_sampler(ctx))
                .stop(),
        };
        if self.per_cpu[1].is_none() {
            self.per_cpu[1] = crate::harness::limit::per_cpu_now();
        }
        let totals = series.totals();
        let per = per_op(&totals, ops);
        let limit = self.limit(ctx, &totals, &series);
        let after_status = driver.status().unwrap_or_default();
        let mut unavailable = ctx.unavailable.clone();
        // The context already says why server figures are missing, and why
        // no device is sampled.
        let known_server_gap = ctx.server_pids.is_empty();
        let known_disk_gap = ctx.unavailable.iter().any(|u| u.starts_with("storage:"));
        unavailable.extend(
            series
                .unavailable
                .iter()
                .filter(|n| !(known_server_gap && n.starts_with("server")))
                .filter(|n| !(known_disk_gap && n.starts_with("disk:")))
                .cloned(),
        );
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        // The server's own memory, once per step (reading every backend's
        // page tables each second would be the client's CPU).
        let server_mem_mb = if ctx.embedded || ctx.server_pids.is_empty() {
            None
        } else {
            match crate::harness::sysstat::tree_pss_bytes(
                Path::new("/proc"),
                &ctx.server_pids_now(),
            ) {
                Ok(b) => Some(mb(b)),
                Err(why) => {
                    unavailable.push(why.to_string());
                    None
                }
            }
        };
        let per_second = series
            .per_interval()
            .iter()
            .map(|r| HwSecond {
                t: r.end_secs,
                cpu_busy_pct: r.cpu_busy_pct,
                cpu_iowait_pct: r.cpu_iowait_pct,
                cs_per_sec: r.ctxt_per_sec,
                reads_per_sec: r.reads_per_sec,
                rkb_per_sec: r.read_kb_per_sec,
                wkb_per_sec: r.write_kb_per_sec,
                server_cpu_pct: r.server_cpu_pct,
                client_cpu_pct: r.own_cpu_pct,
                server_rss_mb: r.server_rss_bytes.map(mb),
            })
            .collect();
        let hw = HwCost {
            ops,
            per: None,
            per_op: PerOp {
                server_cpu_us_per_op: per.server_cpu_us_per_op.filter(|_| !ctx.embedded),
                ..per
            },
            server_max_rss_mb: if ctx.embedded {
                None
            } else {
                totals.server_max_rss_bytes.map(mb)
            },
            server_mem_mb,
            db_before: Some(self.before.clone()),
            db_after: Some(db_size(ctx, driver)),
            background_cpu_pct: self.background,
            device: ctx.device.clone(),
            unavailable,
            per_second,
            limit: Some(limit),
        };
        (hw, status_delta(&self.status, &after_status))
    }

    /// What limited the step: the client's CPUs are those of this thread
    /// (pinned by `--client-cpus`; the workers inherit them), the server's
    /// those of its main process, where it runs on this host.
    fn limit(
        &mut self,
        ctx: &ProbeContext,
        totals: &crate::harness::sysstat::Totals,
        series: &crate::harness::sysstat::SampleSeries,
    ) -> crate::results::Limit {
        let host_cpus = series
            .num_cpus
            .unwrap_or_else(|| crate::util::cpus::online().cpus().len());
        let set = |c: Option<crate::util::cpus::CpuSet>| c.map(|c| c.cpus().to_vec());
        let server_set = if ctx.embedded || series.server_pids.is_empty() {
            None
        } else {
            Some(
                series
                    .server_pids
                    .first()
                    .and_then(|p| set(crate::util::cpus::of_process(*p)))
                    .unwrap_or_default(),
            )
        };
        crate::harness::limit::measure(&crate::harness::limit::Interval {
            totals: Some(totals),
            client_set: set(crate::util::cpus::of_this_thread()).unwrap_or_default(),
            server_set,
            host_cpus,
            per_cpu_before: self.per_cpu[0].take(),
            per_cpu_after: self.per_cpu[1].take(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on this host that does not say where its data is: found by
    /// its working directory; one whose process rqps cannot see, or one on
    /// another host: the reason names which.
    #[test]
    fn a_local_server_s_data_directory_is_its_working_directory_or_the_reason_says_why_not() {
        let data = tempfile::tempdir().unwrap();
        let mut server = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(data.path())
            .spawn()
            .unwrap();
        let fp = Footprint {
            pids: vec![server.id()],
            ..Default::default()
        };
        let ctx = ProbeContext::for_engine(&fp, None, 10.0);
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(ctx.disk_paths, [data.path().canonicalize().unwrap()]);
        assert!(
            !ctx.unavailable.iter().any(|u| u.starts_with("storage")),
            "{:?}",
            ctx.unavailable
        );
        // Listening, but no process rqps can see holds the port.
        let free = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let ctx = ProbeContext::for_engine(
            &Footprint {
                listening_port: Some(port),
                ..Default::default()
            },
            None,
            10.0,
        );
        let storage = ctx
            .unavailable
            .iter()
            .find(|u| u.starts_with("storage"))
            .unwrap();
        assert!(
            storage.contains(&format!("listens on port {port} of this host"))
                && storage.contains("--server-pid"),
            "{storage}"
        );
        // Another host: nothing of it is here.
        let ctx = ProbeContext::for_engine(&Footprint::default(), None, 10.0);
        assert!(ctx.unavailable.iter().any(|u| u.starts_with(NOT_HERE)));
        assert!(ctx.device.is_none());
    }

    #[test]
    fn a_restarted_server_is_found_again_by_its_port() {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let ctx = ProbeContext {
            server_pids: vec![gone.id()],
            listening_port: Some(port),
            ..Default::default()
        };
        // The old server is gone; this process listens on its port now.
        assert_eq!(ctx.server_pids_now(), vec![std::process::id()]);
        // A server that still runs keeps its pid.
        let ctx = ProbeContext {
            server_pids: vec![std::process::id()],
            listening_port: None,
            ..Default::default()
        };
        assert_eq!(ctx.server_pids_now(), vec![std::process::id()]);
    }

    #[test]
    fn status_delta_keeps_changed_numeric_counters() {
        let s = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        let before = s(&[
            ("Com_select", "10"),
            ("Uptime", "5"),
            ("version", "x"),
            ("same", "3"),
        ]);
        let after = s(&[
            ("Com_select", "25"),
            ("Uptime", "7"),
            ("version", "y"),
            ("same", "3"),
            ("new", "1"),
        ]);
        let d = status_delta(&before, &after);
        assert_eq!(d.len(), 2);
        assert_eq!(d["Com_select"], 15.0);
        assert_eq!(d["Uptime"], 2.0);
    }
}
