//! Pure parsers for the Linux `/proc` text files the sampler reads.
//!
//! Every function here takes the file's text and does no I/O, so each can be
//! tested on recorded fixtures. Counters are returned exactly as the kernel
//! prints them (ticks, sectors, pages); conversion happens in the callers.
//! A file that does not parse is a [`ProcError`], the reason its figures
//! are left unmeasured (here, so that the sibling files use it without
//! importing the folder's face).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A `/proc` or `/sys` file that could not be read or did not parse as the
/// kernel documents it; the figures that needed it are left unmeasured with
/// this as the reason (its text is what the results store under
/// `unavailable`).
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The file could not be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `path` (or an existing prefix of it) could not be canonicalized.
    #[error("cannot resolve {}: {source}", .path.display())]
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file the lookup needs could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Neither `/proc/self/mountinfo` nor the `/proc/mounts` fallback served.
    #[error("cannot read /proc/self/mountinfo ({mountinfo}) nor use /proc/mounts ({mounts})")]
    NoMountTable {
        mountinfo: std::io::Error,
        #[source]
        mounts: Box<ProcError>,
    },
    /// A numeric field (`what`) is not a number.
    #[error("bad {what} {text:?}: {source}")]
    BadNumber {
        what: &'static str,
        text: String,
        source: std::num::ParseIntError,
    },
    /// `/proc/stat`'s `cpu` line is shorter than the four oldest fields.
    #[error("cpu line has {0} fields, need at least 4")]
    ShortCpuLine(usize),
    /// `/proc/stat` has no aggregate `cpu` line.
    #[error("no aggregate \"cpu\" line")]
    NoCpuLine,
    /// A `/proc/diskstats` line has a field count no kernel writes.
    #[error("diskstats line {line}: {fields} fields, expected 7, 14, 18 or 20")]
    DiskstatsFields { line: usize, fields: usize },
    /// A `/proc/diskstats` line that does not parse.
    #[error("diskstats line {line}: {source}")]
    DiskstatsLine { line: usize, source: Box<ProcError> },
    /// A `/proc/self/mountinfo` line that does not parse.
    #[error("mountinfo line {line}: {source}")]
    MountinfoLine { line: usize, source: Box<ProcError> },
    /// A mountinfo line with fewer than 7 fields.
    #[error("too few fields")]
    TooFewFields,
    /// A mountinfo line without the ` - ` between optional fields and fs type.
    #[error("no \" - \" separator")]
    NoSeparator,
    /// A mountinfo `major:minor` without its colon.
    #[error("bad major:minor")]
    BadMajorMinor,
    /// A mountinfo line that ends at the separator.
    #[error("no fs type")]
    NoFsType,
    /// `/proc/<pid>/stat` without the `(` that opens comm.
    #[error("no '(' in stat")]
    NoCommOpen,
    /// `/proc/<pid>/stat` without the `)` that closes comm.
    #[error("no ')' in stat")]
    NoCommClose,
    /// `/proc/<pid>/stat` whose last `)` comes before its first `(`.
    #[error("')' before '(' in stat")]
    CommReversed,
    /// `/proc/<pid>/stat` with too few fields after comm.
    #[error("stat has {0} fields after comm, need at least 22")]
    ShortPidStat(usize),
    /// `/proc/<pid>/stat` with an empty state field.
    #[error("empty state")]
    EmptyState,
    /// No mount point holds the path.
    #[error("no mount found for {}", .path.display())]
    NoMount { path: PathBuf },
    /// The path's mount has no `/proc/diskstats` line (tmpfs, overlay, a
    /// btrfs anonymous device, a missing device-mapper line).
    #[error(
        "{} is on {fs_type} (source {mount_source}, mounted at {mount_point}, dev {major}:{minor}), which has no /proc/diskstats line",
        .path.display()
    )]
    NoDiskstatsLine {
        path: PathBuf,
        fs_type: String,
        /// The mount's source, `none` where it has none.
        mount_source: String,
        mount_point: String,
        major: u32,
        minor: u32,
    },
}

/// Aggregate CPU time of the whole machine from the `cpu` line of
/// `/proc/stat`, in clock ticks (`sysconf(_SC_CLK_TCK)`, usually 100/s).
///
/// `guest` and `guest_nice` are already included in `user` and `nice` by the
/// kernel, so they are never added to the sums below.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// user + nice + system + irq + softirq + steal.
    pub fn busy(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// busy + idle + iowait: every tick of every CPU.
    pub fn total(&self) -> u64 {
        self.busy()
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
    }
}

/// What the sampler uses from `/proc/stat`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcStat {
    /// The aggregate `cpu` line.
    pub cpu: CpuTimes,
    /// Number of `cpuN` lines (online CPUs).
    pub cpu_count: usize,
    /// Context switches since boot (`ctxt`).
    pub ctxt: Option<u64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    /// Boot time, seconds since the epoch (`btime`).
    pub btime: Option<u64>,
}

fn bad_number(what: &'static str, text: &str, source: std::num::ParseIntError) -> ProcError {
    ProcError::BadNumber {
        what,
        text: text.to_string(),
        source,
    }
}

fn parse_u64(tok: &str, what: &'static str) -> Result<u64, ProcError> {
    tok.parse::<u64>().map_err(|e| bad_number(what, tok, e))
}

/// Parses a signed kernel `%ld` field, clamping negatives to 0.
fn parse_i64_clamped(tok: &str, what: &'static str) -> Result<u64, ProcError> {
    tok.parse::<i64>()
        .map(|v| v.max(0) as u64)
        .map_err(|e| bad_number(what, tok, e))
}

/// Parses `/proc/stat`. Needs the aggregate `cpu` line with at least the
/// four oldest fields (user nice system idle); later fields (iowait, irq,
/// softirq, steal, guest, guest_nice) are 0 when an old kernel omits them.
pub fn parse_proc_stat(text: &str) -> Result<ProcStat, ProcError> {
    let mut cpu = None;
    let mut cpu_count = 0usize;
    let mut ctxt = None;
    let mut procs_running = None;
    let mut procs_blocked = None;
    let mut btime = None;
    for line in text.lines() {
        let mut toks = line.split_whitespace();
        let Some(key) = toks.next() else { continue };
        match key {
            "cpu" => {
                let vals = toks
                    .map(|t| parse_u64(t, "cpu field"))
                    .collect::<Result<Vec<_>, _>>()?;
                if vals.len() < 4 {
                    return Err(ProcError::ShortCpuLine(vals.len()));
                }
                let f = |i: usize| vals.get(i).copied().unwrap_or(0);
                cpu = Some(CpuTimes {
                    user: f(0),
                    nice: f(1),
                    system: f(2),
                    idle: f(3),
                    iowait: f(4),
                    irq: f(5),
                    softirq: f(6),
                    steal: f(7),
                    guest: f(8),
                    guest_nice: f(9),
                });
            }
            k if k.len() > 3
                && k.starts_with("cpu")
                && k[3..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                cpu_count += 1;
            }
            "ctxt" => ctxt = toks.next().map(|t| parse_u64(t, "ctxt")).transpose()?,
            "procs_running" => {
                procs_running = toks
                    .next()
                    .map(|t| parse_u64(t, "procs_running"))
                    .transpose()?
            }
            "procs_blocked" => {
                procs_blocked = toks
                    .next()
                    .map(|t| parse_u64(t, "procs_blocked"))
                    .transpose()?
            }
            "btime" => btime = toks.next().map(|t| parse_u64(t, "btime")).transpose()?,
            _ => {}
        }
    }
    let cpu = cpu.ok_or(ProcError::NoCpuLine)?;
    Ok(ProcStat {
        cpu,
        cpu_count,
        ctxt,
        procs_running,
        procs_blocked,
        btime,
    })
}

/// The per-CPU lines of `/proc/stat` (`cpu0`, `cpu1`, ...): each CPU's
/// number and its ticks. Lines that do not parse are left out.
pub fn parse_per_cpu(text: &str) -> Vec<(usize, CpuTimes)> {
    text.lines()
        .filter_map(|line| {
            let mut toks = line.split_whitespace();
            let n = toks.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let vals = toks
                .map(|t| t.parse::<u64>().ok())
                .collect::<Option<Vec<_>>>()?;
            if vals.len() < 4 {
                return None;
            }
            let f = |i: usize| vals.get(i).copied().unwrap_or(0);
            Some((
                n,
                CpuTimes {
                    user: f(0),
                    nice: f(1),
                    system: f(2),
                    idle: f(3),
                    iowait: f(4),
                    irq: f(5),
                    softirq: f(6),
                    steal: f(7),
                    guest: f(8),
                    guest_nice: f(9),
                },
            ))
        })
        .collect()
}

/// I/O counters of one block device from `/proc/diskstats`.
///
/// Sectors are always 512-byte units here, whatever the device's real
/// sector size. Fields that a layout lacks are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    /// Reads completed.
    pub reads: u64,
    pub reads_merged: Option<u64>,
    pub sectors_read: u64,
    pub ms_reading: Option<u64>,
    /// Writes completed.
    pub writes: u64,
    pub writes_merged: Option<u64>,
    pub sectors_written: u64,
    pub ms_writing: Option<u64>,
    pub in_flight: Option<u64>,
    /// Milliseconds the device had I/O in flight (basis of `%util`).
    pub ms_doing_io: Option<u64>,
    pub weighted_ms_doing_io: Option<u64>,
    /// Kernel 4.18+.
    pub discards: Option<u64>,
    pub discards_merged: Option<u64>,
    pub sectors_discarded: Option<u64>,
    pub ms_discarding: Option<u64>,
    /// Kernel 5.5+.
    pub flushes: Option<u64>,
    pub ms_flushing: Option<u64>,
}

impl DiskCounters {
    /// Kilobytes read (sectors / 2).
    pub fn kb_read(&self) -> f64 {
        self.sectors_read as f64 / 2.0
    }
    /// Kilobytes written (sectors / 2).
    pub fn kb_written(&self) -> f64 {
        self.sectors_written as f64 / 2.0
    }
}

/// One line of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskstatsEntry {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    /// Whitespace-separated fields on the line, major/minor/name included:
    /// 7 (partition lines before 2.6.25), 14 (classic), 18 (discard, 4.18+),
    /// 20 (flush, 5.5+). Longer future layouts are accepted.
    pub field_count: usize,
    pub counters: DiskCounters,
}

/// Parses `/proc/diskstats` (any of the 7/14/18/20-field layouts; lines may
/// mix layouts). A line with another field count is an error.
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskstatsEntry>, ProcError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        let lineno = n + 1;
        let fc = toks.len();
        if !(fc == 7 || fc >= 14) {
            return Err(ProcError::DiskstatsFields {
                line: lineno,
                fields: fc,
            });
        }
        let in_line = |e: ProcError| ProcError::DiskstatsLine {
            line: lineno,
            source: Box::new(e),
        };
        let major = toks[0]
            .parse::<u32>()
            .map_err(|e| in_line(bad_number("major", toks[0], e)))?;
        let minor = toks[1]
            .parse::<u32>()
            .map_err(|e| in_line(bad_number("minor", toks[1], e)))?;
        let name = toks[2].to_string();
        let nums = toks[3..]
            .iter()
            .map(|t| parse_u64(t, "diskstats field").map_err(in_line))
            .collect::<Result<Vec<u64>, ProcError>>()?;
        let counters = if fc == 7 {
            // Old partition format: reads, sectors read, writes, sectors written.
            DiskCounters {
                reads: nums[0],
                sectors_read: nums[1],
                writes: nums[2],
                sectors_written: nums[3],
                ..DiskCounters::default()
            }
        } else {
            let opt = |i: usize| nums.get(i).copied();
            DiskCounters {
                reads: nums[0],
                reads_merged: Some(nums[1]),
                sectors_read: nums[2],
                ms_reading: Some(nums[3]),
                writes: nums[4],
                writes_merged: Some(nums[5]),
                sectors_written: nums[6],
                ms_writing: Some(nums[7]),
                in_flight: Some(nums[8]),
                ms_doing_io: Some(nums[9]),
                weighted_ms_doing_io: Some(nums[10]),
                discards: opt(11),
                discards_merged: opt(12),
                sectors_discarded: opt(13),
                ms_discarding: opt(14),
                flushes: opt(15),
                ms_flushing: opt(16),
            }
        };
        out.push(DiskstatsEntry {
            major,
            minor,
            name,
            field_count: fc,
            counters,
        });
    }
    Ok(out)
}

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PidStat {
    pub pid: u32,
    /// Command name, as between the first '(' and the last ')'.
    pub comm: String,
    pub state: char,
    pub ppid: u32,
    /// User-mode CPU, clock ticks.
    pub utime: u64,
    /// Kernel-mode CPU, clock ticks.
    pub stime: u64,
    /// CPU of waited-for (reaped) children, clock ticks.
    pub cutime: u64,
    pub cstime: u64,
    pub num_threads: u64,
    /// Start time after boot, clock ticks.
    pub starttime: u64,
    pub vsize_bytes: u64,
    /// Resident set size, pages.
    pub rss_pages: u64,
}

/// Parses `/proc/<pid>/stat`. The comm field may hold spaces and
/// parentheses, so the fixed fields are read after the LAST ')'.
pub fn parse_pid_stat(text: &str) -> Result<PidStat, ProcError> {
    let open = text.find('(').ok_or(ProcError::NoCommOpen)?;
    let close = text.rfind(')').ok_or(ProcError::NoCommClose)?;
    if close < open {
        return Err(ProcError::CommReversed);
    }
    let pid_text = text[..open].trim();
    let pid = pid_text
        .parse::<u32>()
        .map_err(|e| bad_number("pid", pid_text, e))?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3]. rss is field 24.
    if rest.len() < 22 {
        return Err(ProcError::ShortPidStat(rest.len()));
    }
    let state = rest[0].chars().next().ok_or(ProcError::EmptyState)?;
    let ppid = rest[1]
        .parse::<u32>()
        .map_err(|e| bad_number("ppid", rest[1], e))?;
    Ok(PidStat {
        pid,
        comm,
        state,
        ppid,
        utime: parse_u64(rest[11], "utime")?,
        stime: parse_u64(rest[12], "stime")?,
        cutime: parse_i64_clamped(rest[13], "cutime")?,
        cstime: parse_i64_clamped(rest[14], "cstime")?,
        num_threads: parse_i64_clamped(rest[17], "num_threads")?,
        starttime: parse_u64(rest[19], "starttime")?,
        vsize_bytes: parse_u64(rest[20], "vsize")?,
        rss_pages: parse_i64_clamped(rest[21], "rss")?,
    })
}

/// Fields of `/proc/<pid>/status` (an alternative source for memory).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PidStatus {
    pub name: Option<String>,
    pub ppid: Option<u32>,
    pub threads: Option<u64>,
    /// Current resident set, kB. Absent for kernel threads.
    pub vm_rss_kb: Option<u64>,
    /// Peak resident set ("high water mark"), kB.
    pub vm_hwm_kb: Option<u64>,
}

/// Parses `/proc/<pid>/status` ("Key:\tvalue" lines).
pub fn parse_pid_status(text: &str) -> PidStatus {
    let mut st = PidStatus::default();
    for line in text.lines() {
        let Some((key, val)) = line.split_once(':') else {
            continue;
        };
        let val = val.trim();
        let kb = || {
            val.strip_suffix("kB")
                .unwrap_or(val)
                .trim()
                .parse::<u64>()
                .ok()
        };
        match key {
            "Name" => st.name = Some(val.to_string()),
            "PPid" => st.ppid = val.parse().ok(),
            "Threads" => st.threads = val.parse().ok(),
            "VmRSS" => st.vm_rss_kb = kb(),
            "VmHWM" => st.vm_hwm_kb = kb(),
            _ => {}
        }
    }
    st
}

/// The proportional set size of `/proc/<pid>/smaps_rollup`, kB: the
/// process's private pages, and each page it shares divided by the number
/// of processes that map it, so the PSS of every process sharing memory
/// adds up to that memory once. `None` without a `Pss:` line.
pub fn parse_smaps_rollup_pss_kb(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let v = l.strip_prefix("Pss:")?;
        v.trim().strip_suffix("kB").unwrap_or(v).trim().parse().ok()
    })
}

/// One line of `/proc/<pid>/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    pub mount_id: u32,
    pub parent_id: u32,
    /// Device numbers of the filesystem (`st_dev`); 0:N for virtual,
    /// overlay and btrfs filesystems.
    pub major: u32,
    pub minor: u32,
    /// Directory of the filesystem that is mounted here (not "/" for bind
    /// mounts of a subdirectory).
    pub root: String,
    pub mount_point: String,
    pub mount_options: String,
    /// Tagged fields such as "shared:1" or "master:2".
    pub optional_fields: Vec<String>,
    pub fs_type: String,
    /// Mount source, e.g. "/dev/sda1", "overlay", "tmpfs".
    pub source: String,
    pub super_options: String,
}

/// Undoes the octal escapes (`\040` space, `\011` tab, `\012` newline,
/// `\134` backslash) the kernel uses in mount tables.
pub fn unescape_mount_field(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo`, in file (mount) order.
pub fn parse_mountinfo(text: &str) -> Result<Vec<MountInfo>, ProcError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if toks.is_empty() {
            continue;
        }
        let lineno = n + 1;
        let err = |e: ProcError| ProcError::MountinfoLine {
            line: lineno,
            source: Box::new(e),
        };
        if toks.len() < 7 {
            return Err(err(ProcError::TooFewFields));
        }
        let sep = toks[6..]
            .iter()
            .position(|t| *t == "-")
            .map(|p| p + 6)
            .ok_or_else(|| err(ProcError::NoSeparator))?;
        let (maj, min) = toks[2]
            .split_once(':')
            .ok_or_else(|| err(ProcError::BadMajorMinor))?;
        let num = |s: &str| {
            s.parse::<u32>()
                .map_err(|e| err(bad_number("number", s, e)))
        };
        let after = &toks[sep + 1..];
        out.push(MountInfo {
            mount_id: num(toks[0])?,
            parent_id: num(toks[1])?,
            major: num(maj)?,
            minor: num(min)?,
            root: unescape_mount_field(toks[3]),
            mount_point: unescape_mount_field(toks[4]),
            mount_options: toks[5].to_string(),
            optional_fields: toks[6..sep].iter().map(|s| s.to_string()).collect(),
            fs_type: after
                .first()
                .map(|s| s.to_string())
                .ok_or_else(|| err(ProcError::NoFsType))?,
            source: after
                .get(1)
                .map(|s| unescape_mount_field(s))
                .unwrap_or_default(),
            super_options: after.get(2).map(|s| s.to_string()).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// One line of `/proc/mounts` (no device numbers there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountsEntry {
    pub source: String,
    pub mount_point: String,
    pub fs_type: String,
    pub options: String,
}

/// Parses `/proc/mounts` (fstab format). Malformed lines are skipped.
pub fn parse_mounts(text: &str) -> Vec<MountsEntry> {
    text.lines()
        .filter_map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            (t.len() >= 4).then(|| MountsEntry {
                source: unescape_mount_field(t[0]),
                mount_point: unescape_mount_field(t[1]),
                fs_type: t[2].to_string(),
                options: t[3].to_string(),
            })
        })
        .collect()
}

/// Index of the mount whose mount point is the longest (whole-component)
/// prefix of `path`, which should be absolute and canonical. When several
/// mounts share that mount point, the last one (the one on top) wins.
pub fn longest_prefix_mount<'a, I>(mount_points: I, path: &Path) -> Option<usize>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(usize, usize)> = None; // (index, components)
    for (i, mp) in mount_points.into_iter().enumerate() {
        let mp = Path::new(mp);
        if path.starts_with(mp) {
            let depth = mp.components().count();
            if best.is_none_or(|(_, d)| depth >= d) {
                best = Some((i, depth));
            }
        }
    }
    best.map(|(i, _)| i)
}

/// One socket of `/proc/net/tcp` or `/proc/net/tcp6`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpSocket {
    pub local_port: u16,
    /// Kernel TCP state; 0x0A is LISTEN.
    pub state: u8,
    pub uid: u32,
    pub inode: u64,
}

/// TCP state number of LISTEN in `/proc/net/tcp`.
pub const TCP_LISTEN: u8 = 0x0A;

/// Parses `/proc/net/tcp` or `/proc/net/tcp6`; the header and malformed
/// lines are skipped.
pub fn parse_net_tcp(text: &str) -> Vec<TcpSocket> {
    text.lines()
        .filter_map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            if t.len() < 10 || !t[0].ends_with(':') {
                return None;
            }
            let (_, port_hex) = t[1].rsplit_once(':')?;
            Some(TcpSocket {
                local_port: u16::from_str_radix(port_hex, 16).ok()?,
                state: u8::from_str_radix(t[3], 16).ok()?,
                uid: t[7].parse().ok()?,
                inode: t[9].parse().ok()?,
            })
        })
        .collect()
}

/// A "Key: N kB" value from `/proc/meminfo`, in kB.
pub fn parse_meminfo_kb(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        v.trim().strip_suffix("kB").unwrap_or(v).trim().parse().ok()
    })
}

/// The CPU model from `/proc/cpuinfo`: "model name" (x86), else "Model",
/// "Hardware", "cpu model" or "cpu" (ARM, MIPS, POWER).
pub fn parse_cpuinfo_model(text: &str) -> Option<String> {
    for wanted in ["model name", "Model", "Hardware", "cpu model", "cpu"] {
        let found = text.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == wanted && !v.trim().is_empty()).then(|| v.trim().to_string())
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Number of "processor" entries in `/proc/cpuinfo`.
pub fn parse_cpuinfo_processors(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim() == "processor")
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_rollup_gives_the_proportional_set() {
        let text = "55d0c9a6b000-7ffd3b5ff000 ---p 00000000 00:00 0                          [rollup]\n\
Rss:              884312 kB\nPss:              120456 kB\nPss_Dirty:         10240 kB\n\
Pss_Anon:          10000 kB\nPss_File:           2000 kB\nPss_Shmem:        108456 kB\n";
        assert_eq!(parse_smaps_rollup_pss_kb(text), Some(120456));
        assert_eq!(parse_smaps_rollup_pss_kb("Rss: 1 kB\n"), None);
    }

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/proc")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn each_refusal_reads_as_the_text_it_always_printed() {
        let bad = "invalid digit found in string";
        for (err, text) in [
            (
                parse_proc_stat("cpu 1 2 3\n").unwrap_err(),
                "cpu line has 3 fields, need at least 4".to_string(),
            ),
            (
                parse_proc_stat("").unwrap_err(),
                "no aggregate \"cpu\" line".into(),
            ),
            (
                parse_proc_stat("cpu 1 2 x 4\n").unwrap_err(),
                format!("bad cpu field \"x\": {bad}"),
            ),
            (
                parse_diskstats("8 0 sda 1 2 3\n").unwrap_err(),
                "diskstats line 1: 6 fields, expected 7, 14, 18 or 20".into(),
            ),
            (
                parse_diskstats("x 0 sda 1 2 3 4\n").unwrap_err(),
                format!("diskstats line 1: bad major \"x\": {bad}"),
            ),
            (
                parse_diskstats("8 y sda 1 2 3 4\n").unwrap_err(),
                format!("diskstats line 1: bad minor \"y\": {bad}"),
            ),
            (
                parse_diskstats("8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n").unwrap_err(),
                format!("diskstats line 1: bad diskstats field \"x\": {bad}"),
            ),
            (parse_pid_stat("").unwrap_err(), "no '(' in stat".into()),
            (parse_pid_stat("1 (x").unwrap_err(), "no ')' in stat".into()),
            (
                parse_pid_stat("1 )x(").unwrap_err(),
                "')' before '(' in stat".into(),
            ),
            (
                parse_pid_stat("12 (x) S 1 2 3").unwrap_err(),
                "stat has 4 fields after comm, need at least 22".into(),
            ),
            (
                parse_pid_stat("x (y) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1").unwrap_err(),
                format!("bad pid \"x\": {bad}"),
            ),
            (
                parse_mountinfo("1 2 8:1\n").unwrap_err(),
                "mountinfo line 1: too few fields".into(),
            ),
            (
                parse_mountinfo("1 2 81 / / rw - ext4 /dev/sda1 rw\n").unwrap_err(),
                "mountinfo line 1: bad major:minor".into(),
            ),
            (
                parse_mountinfo("1 2 8:1 / / rw shared:1 ext4 /dev/sda1 rw\n").unwrap_err(),
                "mountinfo line 1: no \" - \" separator".into(),
            ),
            (
                parse_mountinfo("1 2 8:z / / rw -\n").unwrap_err(),
                format!("mountinfo line 1: bad number \"z\": {bad}"),
            ),
        ] {
            assert_eq!(err.to_string(), text, "{err:?}");
        }
    }

    #[test]
    fn stat_live_recording() {
        let s = parse_proc_stat(&fixture("stat.live")).unwrap();
        assert_eq!(
            s.cpu,
            CpuTimes {
                user: 2792,
                nice: 0,
                system: 2262,
                idle: 35532,
                iowait: 400,
                irq: 0,
                softirq: 54,
                steal: 11,
                guest: 0,
                guest_nice: 0
            }
        );
        assert_eq!(s.cpu_count, 2);
        assert_eq!(s.ctxt, Some(325507));
        assert_eq!(s.procs_running, Some(3));
        assert_eq!(s.procs_blocked, Some(0));
        assert_eq!(s.btime, Some(1795344164));
        assert_eq!(s.cpu.busy(), 2792 + 2262 + 54 + 11);
        assert_eq!(s.cpu.total(), 2792 + 2262 + 54 + 11 + 35532 + 400);
    }

    #[test]
    fn stat_guest_not_double_counted_and_big_ctxt() {
        let s = parse_proc_stat(&fixture("stat.4cpu_steal_guest")).unwrap();
        assert_eq!(s.cpu_count, 4);
        assert_eq!(s.cpu.steal, 7000);
        assert_eq!(s.cpu.guest, 8000);
        assert_eq!(s.cpu.guest_nice, 900);
        assert_eq!(
            s.cpu.busy(),
            1_000_000 + 2000 + 300_000 + 5000 + 60_000 + 7000
        );
        assert_eq!(s.ctxt, Some(18446744073709551000));
        assert_eq!(s.procs_running, Some(7));
    }

    #[test]
    fn stat_old_kernel_short_cpu_line() {
        let s = parse_proc_stat(&fixture("stat.old_kernel")).unwrap();
        assert_eq!(s.cpu.softirq, 1);
        assert_eq!(s.cpu.steal, 0);
        assert_eq!(s.cpu.iowait, 23060);
        assert_eq!(s.ctxt, Some(1990473));
        assert_eq!(s.cpu_count, 1);
    }

    #[test]
    fn stat_errors() {
        assert!(parse_proc_stat("").is_err());
        assert!(parse_proc_stat("cpu0 1 2 3 4\nctxt 5\n").is_err());
        assert!(parse_proc_stat("cpu 1 2 3\n").is_err());
        assert!(parse_proc_stat("cpu 1 2 x 4\n").is_err());
        let s = parse_proc_stat("cpu 1 2 3 4\n").unwrap();
        assert_eq!((s.ctxt, s.procs_running, s.cpu_count), (None, None, 0));
    }

    #[test]
    fn diskstats_live_20_fields() {
        let d = parse_diskstats(&fixture("diskstats.live_20field")).unwrap();
        let vda = d.iter().find(|e| e.name == "vda").expect("vda line");
        assert_eq!((vda.major, vda.minor, vda.field_count), (254, 0, 20));
        assert!(vda.counters.reads > 0 && vda.counters.sectors_read > 0);
        assert!(vda.counters.flushes.is_some() && vda.counters.ms_flushing.is_some());
        assert!(d.iter().all(|e| e.field_count == 20));
    }

    #[test]
    fn diskstats_20_fields() {
        let d = parse_diskstats(&fixture("diskstats.20field")).unwrap();
        assert_eq!(d.len(), 9);
        let sda = &d[0];
        assert_eq!(sda.name, "sda");
        let c = sda.counters;
        assert_eq!(
            (c.reads, c.sectors_read, c.writes, c.sectors_written),
            (42422, 2852178, 18384, 1877968)
        );
        assert_eq!(c.reads_merged, Some(7586));
        assert_eq!(c.ms_doing_io, Some(5960));
        assert_eq!(c.weighted_ms_doing_io, Some(13583));
        assert_eq!(c.discards, Some(6328));
        assert_eq!(c.sectors_discarded, Some(381608));
        assert_eq!(c.flushes, Some(2517));
        assert_eq!(c.ms_flushing, Some(91));
        assert_eq!(c.kb_read(), 1426089.0);
        assert_eq!(c.kb_written(), 938984.0);
        assert_eq!(d[1].counters.in_flight, Some(1));
    }

    #[test]
    fn diskstats_18_fields() {
        let d = parse_diskstats(&fixture("diskstats.18field")).unwrap();
        let n = d.iter().find(|e| e.name == "nvme0n1p2").unwrap();
        assert_eq!((n.major, n.minor, n.field_count), (259, 2, 18));
        let c = n.counters;
        assert_eq!(
            (c.reads, c.sectors_read, c.writes, c.sectors_written),
            (842000, 41370000, 2140588, 92731414)
        );
        assert_eq!(c.in_flight, Some(3));
        assert_eq!(c.ms_doing_io, Some(1216236));
        assert_eq!(c.discards, Some(4371));
        assert_eq!(c.ms_discarding, Some(1032));
        assert_eq!(c.flushes, None);
        assert_eq!(c.ms_flushing, None);
    }

    #[test]
    fn diskstats_14_fields() {
        let d = parse_diskstats(&fixture("diskstats.14field")).unwrap();
        assert_eq!(
            d.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["sda", "sda1", "sdb", "dm-0"]
        );
        let c = d[0].counters;
        assert_eq!(d[0].field_count, 14);
        assert_eq!(
            (c.reads, c.sectors_read, c.writes, c.sectors_written),
            (12345, 987654, 2345, 345678)
        );
        assert_eq!(c.ms_doing_io, Some(5432));
        assert_eq!(c.discards, None);
        assert_eq!(c.flushes, None);
    }

    #[test]
    fn diskstats_old_7_field_partitions() {
        let d = parse_diskstats(&fixture("diskstats.7field_partitions")).unwrap();
        assert_eq!(d[0].field_count, 14);
        assert_eq!(d[1].field_count, 7);
        let c = d[1].counters;
        assert_eq!(
            (c.reads, c.sectors_read, c.writes, c.sectors_written),
            (35486, 38030, 38030, 38030)
        );
        assert_eq!(c.ms_doing_io, None);
        assert_eq!(c.reads_merged, None);
    }

    #[test]
    fn diskstats_errors() {
        assert!(parse_diskstats("8 0 sda 1 2 3\n").is_err());
        assert!(parse_diskstats("8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n").is_err());
        assert!(parse_diskstats("").unwrap().is_empty());
        // A future, longer layout is accepted.
        let d =
            parse_diskstats("8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n").unwrap();
        assert_eq!(d[0].field_count, 22);
        assert_eq!(d[0].counters.ms_flushing, Some(17));
    }

    #[test]
    fn pid_stat_live() {
        let p = parse_pid_stat(&fixture("pid_stat.live")).unwrap();
        assert_eq!(p.comm, "cat");
        assert_eq!(p.pid, 4365);
        assert_eq!(p.ppid, 4348);
        assert_eq!(p.state, 'R');
        assert_eq!(p.rss_pages, 393);
        assert_eq!(p.starttime, 20678);
        assert_eq!(p.vsize_bytes, 3133440);
    }

    #[test]
    fn pid_stat_comm_with_parens_mimicking_fields() {
        // comm is "x) S 1 (y": only the LAST ')' ends it.
        let p = parse_pid_stat(&fixture("pid_stat.comm_parens")).unwrap();
        assert_eq!(p.pid, 4242);
        assert_eq!(p.comm, "x) S 1 (y");
        assert_eq!(p.state, 'S');
        assert_eq!(p.ppid, 1);
        assert_eq!((p.utime, p.stime, p.cutime, p.cstime), (1234, 567, 89, 10));
        assert_eq!(p.num_threads, 5);
        assert_eq!(p.rss_pages, 2560);
    }

    #[test]
    fn pid_stat_comm_with_spaces_and_kthread() {
        let p = parse_pid_stat(&fixture("pid_stat.comm_spaces")).unwrap();
        assert_eq!(p.comm, "Web Content");
        assert_eq!(p.ppid, 4242);
        assert_eq!((p.utime, p.stime), (300, 40));
        assert_eq!(p.rss_pages, 1024);
        let k = parse_pid_stat(&fixture("pid_stat.kthread")).unwrap();
        assert_eq!((k.pid, k.ppid, k.comm.as_str()), (2, 0, "kthreadd"));
        assert_eq!((k.stime, k.rss_pages), (3, 0));
    }

    #[test]
    fn pid_stat_errors() {
        assert!(parse_pid_stat("").is_err());
        assert!(parse_pid_stat("12 (x) S 1 2 3").is_err());
        assert!(parse_pid_stat("x (y) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1").is_err());
        // Negative rss / cutime (signed in the kernel) are clamped to 0.
        let p = parse_pid_stat("5 (z) S 1 1 1 0 -1 0 0 0 0 0 1 1 -3 0 20 0 1 0 1 1 -7").unwrap();
        assert_eq!((p.cutime, p.rss_pages), (0, 0));
    }

    #[test]
    fn pid_status_memory() {
        let s = parse_pid_status(&fixture("pid_status.live"));
        assert_eq!(s.name.as_deref(), Some("cat"));
        assert!(s.ppid.is_some());
        assert!(s.vm_rss_kb.unwrap() > 0);
        assert!(s.vm_hwm_kb.unwrap() >= s.vm_rss_kb.unwrap());
        let k = parse_pid_status("Name:\tkthreadd\nPPid:\t0\nThreads:\t1\n");
        assert_eq!((k.vm_rss_kb, k.vm_hwm_kb, k.threads), (None, None, Some(1)));
    }

    #[test]
    fn mountinfo_live_has_root() {
        let m = parse_mountinfo(&fixture("mountinfo.live")).unwrap();
        let i = longest_prefix_mount(
            m.iter().map(|e| e.mount_point.as_str()),
            Path::new("/work/x"),
        )
        .unwrap();
        assert_eq!(m[i].mount_point, "/");
        assert!(
            m.iter()
                .any(|e| e.fs_type == "proc" && e.mount_point == "/proc")
        );
    }

    #[test]
    fn mountinfo_bind_fields() {
        let m = parse_mountinfo(&fixture("mountinfo.bind")).unwrap();
        assert_eq!(m.len(), 11);
        let b = m
            .iter()
            .find(|e| e.mount_point == "/var/lib/mysql")
            .unwrap();
        assert_eq!(
            (b.mount_id, b.parent_id, b.major, b.minor),
            (41, 21, 259, 2)
        );
        assert_eq!(b.root, "/mysql");
        assert_eq!(b.optional_fields, vec!["shared:20"]);
        assert_eq!(b.fs_type, "xfs");
        assert_eq!(b.source, "/dev/nvme0n1p2");
        assert!(b.super_options.starts_with("rw,attr2"));
        assert!(m.iter().any(|e| e.mount_point == "/mnt/my disk"));
        let o = parse_mountinfo(&fixture("mountinfo.overlay_root")).unwrap();
        assert_eq!(
            (o[0].fs_type.as_str(), o[0].major, o[0].minor),
            ("overlay", 0, 52)
        );
        assert!(o[1].optional_fields.is_empty());
    }

    #[test]
    fn mountinfo_errors() {
        assert!(parse_mountinfo("1 2 8:1 / / rw shared:1 ext4 /dev/sda1 rw\n").is_err());
        assert!(parse_mountinfo("1 2 81 / / rw - ext4 /dev/sda1 rw\n").is_err());
        assert!(parse_mountinfo("1 2 8:1\n").is_err());
    }

    #[test]
    fn mounts_file() {
        let m = parse_mounts(&fixture("mounts.simple"));
        assert_eq!(m.len(), 4);
        let i = longest_prefix_mount(
            m.iter().map(|e| e.mount_point.as_str()),
            Path::new("/var/lib/mysql/db"),
        )
        .unwrap();
        assert_eq!(m[i].source, "/dev/nvme0n1p2");
    }

    #[test]
    fn longest_prefix_is_component_wise() {
        let mps = ["/", "/data", "/data/db", "/data"];
        let f = |p: &str| longest_prefix_mount(mps.iter().copied(), Path::new(p));
        assert_eq!(f("/database"), Some(0));
        assert_eq!(f("/data"), Some(3)); // stacked: last wins
        assert_eq!(f("/data/x"), Some(3));
        assert_eq!(f("/data/db/x"), Some(2));
        assert_eq!(longest_prefix_mount(["/data"], Path::new("/etc")), None);
    }

    #[test]
    fn unescape() {
        assert_eq!(
            unescape_mount_field(r"/mnt/a\040b\011c\134d"),
            "/mnt/a b\tc\\d"
        );
        assert_eq!(unescape_mount_field(r"/x\04"), r"/x\04");
        assert_eq!(unescape_mount_field(r"/x\999"), r"/x\999");
    }

    #[test]
    fn net_tcp_live_and_listeners() {
        for f in ["net_tcp.live", "net_tcp6.live"] {
            let v = parse_net_tcp(&fixture(f));
            assert!(v.iter().all(|s| s.inode > 0 || s.state != TCP_LISTEN));
        }
        let v = parse_net_tcp(&fixture("net_tcp.listeners"));
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0],
            TcpSocket {
                local_port: 3306,
                state: TCP_LISTEN,
                uid: 999,
                inode: 31337
            }
        );
        assert_eq!((v[2].local_port, v[2].state), (5432, 1));
        let v6 = parse_net_tcp(&fixture("net_tcp6.listeners"));
        assert_eq!(
            v6,
            vec![TcpSocket {
                local_port: 5432,
                state: TCP_LISTEN,
                uid: 998,
                inode: 40003
            }]
        );
    }

    #[test]
    fn cpuinfo_and_meminfo() {
        let c = fixture("cpuinfo.live");
        assert!(parse_cpuinfo_model(&c).is_some_and(|m| !m.is_empty()));
        assert_eq!(parse_cpuinfo_processors(&c), 2);
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(
            parse_cpuinfo_model(arm).as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(parse_cpuinfo_model("flags : x\n"), None);
        let m = fixture("meminfo.live");
        assert!(parse_meminfo_kb(&m, "MemTotal").unwrap() > 1024);
        assert_eq!(
            parse_meminfo_kb("MemTotal:       24000000 kB\n", "MemTotal"),
            Some(24_000_000)
        );
        assert_eq!(parse_meminfo_kb("MemFree: 1 kB\n", "MemTotal"), None);
    }
}
