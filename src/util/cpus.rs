//! CPU budgets: a CPU list as Linux writes it (`0-17`, `0,2,4-7`), checked
//! against the CPUs this machine has, and pinning the calling thread to it
//! (what it spawns inherits the set) until the guard is dropped.
//!
//! `--server-cpus` pins a throwaway server by holding the guard while the
//! server is initialised and spawned; `--client-cpus` holds it while rqps's
//! workers run. Both restore the thread's previous set afterwards, so the
//! next target of a matrix starts from the same place.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The highest CPU number `cpu_set_t` holds, plus one.
const SET_SIZE: usize = libc::CPU_SETSIZE as usize;

/// A bad CPU list: what is wrong, in one line, with the machine's CPUs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("'{list}' is not a CPU list: give CPU numbers and ranges such as 0-17 or 0,2,4-7")]
    Syntax { list: String },
    #[error("CPU {cpu} is not on this machine (its CPUs are {online})")]
    Missing { cpu: usize, online: String },
}

/// A non-empty set of CPU numbers, ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    /// Parses `list` without asking which CPUs the machine has.
    pub fn parse_syntax(list: &str) -> Result<CpuSet, CpuListError> {
        let bad = || CpuListError::Syntax {
            list: list.to_string(),
        };
        let mut cpus = Vec::new();
        for part in list.split(',').map(str::trim) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let lo: usize = lo.parse().map_err(|_| bad())?;
            let hi: usize = hi.parse().map_err(|_| bad())?;
            if lo > hi || hi >= 1 << 20 {
                return Err(bad());
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            return Err(bad());
        }
        Ok(CpuSet(cpus))
    }

    /// Parses `list` and checks that every CPU in it is online on this machine.
    pub fn parse_on_this_machine(list: &str) -> Result<CpuSet, CpuListError> {
        let set = CpuSet::parse_syntax(list)?;
        let online = online();
        if let Some(&cpu) = set.0.iter().find(|c| !online.0.contains(c)) {
            return Err(CpuListError::Missing {
                cpu,
                online: online.to_string(),
            });
        }
        Ok(set)
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// Pins the calling thread (and every thread and process it starts from
    /// now on) to the set; dropping the guard restores the previous set.
    pub fn pin_this_thread(&self) -> std::io::Result<Pinned> {
        let previous = this_thread()?;
        set_this_thread(self)?;
        Ok(Pinned { previous })
    }
}

impl fmt::Display for CpuSet {
    /// The canonical list: ranges of consecutive CPUs, `0-3,8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if i == j {
                write!(f, "{}", self.0[i])?;
            } else {
                write!(f, "{}-{}", self.0[i], self.0[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

impl FromStr for CpuSet {
    type Err = CpuListError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuSet::parse_on_this_machine(s)
    }
}

/// Stored and handed on as its canonical list (`"0-3,8"`).
impl serde::Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from a matrix as a string, checked against this machine as
/// `--server-cpus` is.
impl<'de> serde::Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct List;
        impl serde::de::Visitor<'_> for List {
            type Value = CpuSet;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a CPU list such as \"0-17\"")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<CpuSet, E> {
                CpuSet::parse_on_this_machine(s).map_err(E::custom)
            }
        }
        d.deserialize_str(List)
    }
}

/// The CPUs the kernel has online (`/sys/devices/system/cpu/online`); where
/// that cannot be read, those this process may run on.
pub fn online() -> CpuSet {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| CpuSet::parse_syntax(s.trim()).ok())
        .or_else(|| this_thread().ok())
        .unwrap_or(CpuSet(vec![0]))
}

/// The set the calling thread may run on, as the kernel reports it.
pub fn of_this_thread() -> Option<CpuSet> {
    this_thread().ok()
}

/// The set a process may run on, from `/proc/PID/status` (`Cpus_allowed_list`).
pub fn of_process(pid: u32) -> Option<CpuSet> {
    allowed_in(&Path::new("/proc").join(pid.to_string()).join("status"))
}

fn allowed_in(status: &Path) -> Option<CpuSet> {
    let text = std::fs::read_to_string(status).ok()?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    CpuSet::parse_syntax(line.trim()).ok()
}

/// Restores the thread's previous CPU set when dropped.
#[must_use = "the thread is pinned only while the guard lives"]
pub struct Pinned {
    previous: CpuSet,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = set_this_thread(&self.previous);
    }
}

fn this_thread() -> std::io::Result<CpuSet> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let cpus: Vec<usize> = (0..SET_SIZE)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect();
        Ok(CpuSet(cpus))
    }
}

fn set_this_thread(s: &CpuSet) -> std::io::Result<()> {
    // SAFETY: as above; CPU_SET is only called with numbers below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in &s.0 {
            if c >= SET_SIZE {
                return Err(std::io::Error::other(format!(
                    "CPU {c} is beyond the {SET_SIZE} CPUs rqps can pin"
                )));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_to_sorted_cpus_and_print_as_ranges() {
        let s = CpuSet::parse_syntax("8, 0-3,2,10-11").unwrap();
        assert_eq!(s.cpus(), &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse_syntax("5").unwrap().to_string(), "5");
        for bad in ["", "a", "3-1", "1,,2", "-1", "0-99999999"] {
            assert!(
                matches!(CpuSet::parse_syntax(bad), Err(CpuListError::Syntax { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_cpu_the_machine_lacks_is_refused_with_the_ones_it_has() {
        let online = online();
        let missing = online.cpus().last().unwrap() + 1;
        let e = CpuSet::parse_on_this_machine(&format!("0,{missing}")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("CPU {missing} is not on this machine (its CPUs are {online})")
        );
        assert!(CpuSet::parse_on_this_machine("0").is_ok());
    }

    #[test]
    fn pinning_a_thread_shows_in_proc_and_the_guard_restores_it() {
        std::thread::spawn(|| {
            let before = this_thread().unwrap();
            let tid = unsafe { libc::gettid() } as u32;
            let status = format!("/proc/self/task/{tid}/status");
            {
                let _g = CpuSet(vec![0]).pin_this_thread().unwrap();
                assert_eq!(allowed_in(Path::new(&status)).unwrap().cpus(), &[0]);
            }
            assert_eq!(this_thread().unwrap(), before);
        })
        .join()
        .unwrap();
    }
}
