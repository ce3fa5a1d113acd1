//! Which block device holds a path, and how many bytes a directory takes.

use super::procfs::{self, DiskstatsEntry, MountInfo, ProcError};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The block device behind a path, named as in `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Name of the device's `/proc/diskstats` line, e.g. "nvme0n1p2".
    pub diskstats_name: String,
    /// Whole disk when `diskstats_name` is a partition ("nvme0n1"), or the
    /// single disk under a device-mapper device; `None` otherwise.
    pub parent_disk: Option<String>,
    pub major: u32,
    pub minor: u32,
    pub fs_type: String,
    pub mount_point: String,
    /// Mount source, e.g. "/dev/nvme0n1p2".
    pub source: String,
}

/// Finds the block device holding `path` (which need not exist yet: its
/// nearest existing ancestor is used). Reads /proc/self/mountinfo (or
/// /proc/mounts plus `stat`), /proc/diskstats and /sys/class/block.
///
/// `Err` holds the reason when there is no diskstats line to sample, e.g. an
/// overlay or tmpfs mount, or a btrfs volume whose anonymous device number
/// matches no disk and whose source is not a disk either.
pub fn device_for_path(path: &Path) -> Result<DeviceInfo, ProcError> {
    let canon = canonicalize_existing_prefix(path).map_err(|source| ProcError::Resolve {
        path: path.to_path_buf(),
        source,
    })?;
    let disks_text =
        std::fs::read_to_string("/proc/diskstats").map_err(|source| ProcError::Read {
            path: "/proc/diskstats".into(),
            source,
        })?;
    let disks = procfs::parse_diskstats(&disks_text)?;
    let mounts = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(text) => procfs::parse_mountinfo(&text)?,
        Err(mountinfo) => mounts_fallback(&canon).map_err(|mounts| ProcError::NoMountTable {
            mountinfo,
            mounts: Box::new(mounts),
        })?,
    };
    resolve_device(&mounts, &disks, &canon, Some(Path::new("/sys/class/block")))
}

/// /proc/mounts has no device numbers: take them from `stat` of the path,
/// which belongs to the mount on top of it.
fn mounts_fallback(canon: &Path) -> Result<Vec<MountInfo>, ProcError> {
    let text = std::fs::read_to_string("/proc/mounts")?;
    let entries = procfs::parse_mounts(&text);
    let (major, minor) = dev_numbers(canon)?;
    Ok(entries
        .into_iter()
        .enumerate()
        .map(|(i, m)| MountInfo {
            mount_id: i as u32,
            parent_id: 0,
            major,
            minor,
            root: "/".into(),
            mount_point: m.mount_point,
            mount_options: m.options,
            optional_fields: Vec::new(),
            fs_type: m.fs_type,
            source: m.source,
            super_options: String::new(),
        })
        .collect())
}

#[cfg(unix)]
fn dev_numbers(p: &Path) -> std::io::Result<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(p)?.dev();
    // glibc's encoding of dev_t (see gnu_dev_major/gnu_dev_minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Ok((major as u32, minor as u32))
}

#[cfg(not(unix))]
fn dev_numbers(_p: &Path) -> std::io::Result<(u32, u32)> {
    Err(std::io::Error::other("no device numbers on this platform"))
}

/// Canonicalizes the longest existing ancestor of `path` and appends the
/// rest, so a data directory that is not created yet still resolves.
pub fn canonicalize_existing_prefix(path: &Path) -> std::io::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut existing = abs.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(c) => {
                let mut out = c;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(e);
                };
                rest.push(name);
                existing = parent;
            }
        }
    }
}

/// Pure core of [`device_for_path`]: the mount whose mount point is the
/// longest prefix of `canonical_path` (the last such mount when stacked),
/// then its diskstats line by major:minor, else by the source's name (after
/// resolving /dev symlinks such as /dev/mapper/x → dm-N). `sys_class_block`
/// (normally /sys/class/block) is used to find a partition's disk; without
/// it the disk is guessed from the name.
pub fn resolve_device(
    mounts: &[MountInfo],
    disks: &[DiskstatsEntry],
    canonical_path: &Path,
    sys_class_block: Option<&Path>,
) -> Result<DeviceInfo, ProcError> {
    let idx = procfs::longest_prefix_mount(
        mounts.iter().map(|m| m.mount_point.as_str()),
        canonical_path,
    )
    .ok_or_else(|| ProcError::NoMount {
        path: canonical_path.to_path_buf(),
    })?;
    let m = &mounts[idx];
    let by_number = disks
        .iter()
        .find(|d| d.major == m.major && d.minor == m.minor);
    let by_source = || {
        if !m.source.starts_with('/') {
            return None;
        }
        let mut names = Vec::new();
        if let Ok(real) = std::fs::canonicalize(&m.source)
            && let Some(n) = real.file_name()
        {
            names.push(n.to_string_lossy().into_owned());
        }
        if let Some(n) = Path::new(&m.source).file_name() {
            names.push(n.to_string_lossy().into_owned());
        }
        names
            .iter()
            .find_map(|n| disks.iter().find(|d| &d.name == n))
    };
    let Some(d) = by_number.or_else(by_source) else {
        return Err(ProcError::NoDiskstatsLine {
            path: canonical_path.to_path_buf(),
            fs_type: m.fs_type.clone(),
            mount_source: if m.source.is_empty() {
                "none".into()
            } else {
                m.source.clone()
            },
            mount_point: m.mount_point.clone(),
            major: m.major,
            minor: m.minor,
        });
    };
    Ok(DeviceInfo {
        diskstats_name: d.name.clone(),
        parent_disk: parent_disk(&d.name, disks, sys_class_block),
        major: d.major,
        minor: d.minor,
        fs_type: m.fs_type.clone(),
        mount_point: m.mount_point.clone(),
        source: m.source.clone(),
    })
}

/// The whole disk of partition `name` (or the only disk under a
/// device-mapper device), if that disk has a diskstats line. Uses
/// `<sys_class_block>/<name>/partition` and `…/slaves` when present, else
/// the kernel's naming rules (sda1 → sda, nvme0n1p2 → nvme0n1, mmcblk0p1 →
/// mmcblk0).
pub fn parent_disk(
    name: &str,
    disks: &[DiskstatsEntry],
    sys_class_block: Option<&Path>,
) -> Option<String> {
    let known = |n: &str| disks.iter().any(|d| d.name == n);
    if let Some(sys) = sys_class_block
        && sys.join(name).exists()
    {
        return parent_from_sysfs(sys, name, 0).filter(|p| p != name && known(p));
    }
    parent_by_name(name).filter(|p| known(p))
}

fn parent_from_sysfs(sys: &Path, name: &str, depth: usize) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let dev = sys.join(name);
    if dev.join("partition").exists() {
        let real = std::fs::canonicalize(&dev).ok()?;
        return real
            .parent()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
    }
    let slaves: Vec<String> = std::fs::read_dir(dev.join("slaves"))
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if let [only] = slaves.as_slice() {
        return Some(parent_from_sysfs(sys, only, depth + 1).unwrap_or_else(|| only.clone()));
    }
    None
}

fn parent_by_name(name: &str) -> Option<String> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let stem = &name[..name.len() - digits];
    // nvme0n1p2, mmcblk0p1, loop0p1: "<disk ending in a digit>p<N>".
    if let Some(disk) = stem.strip_suffix('p')
        && disk.ends_with(|c: char| c.is_ascii_digit())
    {
        return Some(disk.to_string());
    }
    // sda1, vda3, xvdb1: "<letters>N". Names like dm-0, md0, loop0 give a
    // stem with no diskstats line and are dropped by the caller.
    (!stem.is_empty() && !stem.ends_with(|c: char| c.is_ascii_digit())).then(|| stem.to_string())
}

/// Bytes allocated on disk under `path`: the sum of `st_blocks * 512` over
/// it and everything below it, not following symlinks, counting each
/// hard-linked inode once (like `du -s --block-size=1`). Files that vanish
/// during the walk are skipped; other errors are returned.
pub fn dir_size_on_disk(path: &Path) -> std::io::Result<u64> {
    let mut total = 0u64;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut stack = vec![path.to_path_buf()];
    let mut first = true;
    while let Some(p) = stack.pop() {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if !first && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let root = first;
        first = false;
        total = total.saturating_add(allocated_bytes(&meta, &mut seen));
        if meta.is_dir() {
            let rd = match std::fs::read_dir(&p) {
                Ok(rd) => rd,
                Err(e) if !root && e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in rd {
                match entry {
                    Ok(e) => stack.push(e.path()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(total)
}

#[cfg(unix)]
fn allocated_bytes(meta: &std::fs::Metadata, seen: &mut HashSet<(u64, u64)>) -> u64 {
    use std::os::unix::fs::MetadataExt;
    if !meta.is_dir() && meta.nlink() > 1 && !seen.insert((meta.dev(), meta.ino())) {
        return 0;
    }
    meta.blocks().saturating_mul(512)
}

#[cfg(not(unix))]
fn allocated_bytes(meta: &std::fs::Metadata, _seen: &mut HashSet<(u64, u64)>) -> u64 {
    if meta.is_file() { meta.len() } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/proc");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}/{name}")).unwrap()
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "sysstat-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn resolve(mountinfo: &str, diskstats: &str, path: &str) -> Result<DeviceInfo, ProcError> {
        let mounts = procfs::parse_mountinfo(&fixture(mountinfo)).unwrap();
        let disks = procfs::parse_diskstats(&fixture(diskstats)).unwrap();
        resolve_device(&mounts, &disks, Path::new(path), None)
    }

    /// [`resolve`] with the refusal as the text a user reads.
    fn resolve_err(mountinfo: &str, diskstats: &str, path: &str) -> Result<DeviceInfo, String> {
        resolve(mountinfo, diskstats, path).map_err(|e| e.to_string())
    }

    #[test]
    fn bind_mount_and_partition_parent() {
        let d = resolve(
            "mountinfo.bind",
            "diskstats.20field",
            "/var/lib/mysql/ibdata1",
        )
        .unwrap();
        assert_eq!(d.diskstats_name, "nvme0n1p2");
        assert_eq!(d.parent_disk.as_deref(), Some("nvme0n1"));
        assert_eq!((d.major, d.minor), (259, 2));
        assert_eq!(d.mount_point, "/var/lib/mysql");
        assert_eq!(d.fs_type, "xfs");
        assert_eq!(d.source, "/dev/nvme0n1p2");

        // Component-wise prefix: /var/lib/mysqlx is on the root fs (sda1).
        let d = resolve("mountinfo.bind", "diskstats.20field", "/var/lib/mysqlx").unwrap();
        assert_eq!(d.diskstats_name, "sda1");
        assert_eq!(d.parent_disk.as_deref(), Some("sda"));
        assert_eq!(d.mount_point, "/");

        let d = resolve("mountinfo.bind", "diskstats.20field", "/").unwrap();
        assert_eq!(d.diskstats_name, "sda1");
    }

    #[test]
    fn stacked_mount_last_wins_and_escaped_mount_point() {
        // /data/tmp has tmpfs, then xfs mounted over it: xfs is visible.
        let d = resolve("mountinfo.bind", "diskstats.20field", "/data/tmp/x").unwrap();
        assert_eq!(d.fs_type, "xfs");
        assert_eq!(d.diskstats_name, "nvme0n1p2");
        // "\040" in mountinfo is a space; dm-1 has a line, no partition parent.
        let d = resolve("mountinfo.bind", "diskstats.20field", "/mnt/my disk/db").unwrap();
        assert_eq!(d.mount_point, "/mnt/my disk");
        assert_eq!(d.diskstats_name, "dm-1");
        assert_eq!(d.parent_disk, None);
    }

    #[test]
    fn tmpfs_and_btrfs_anon_dev() {
        let e = resolve_err("mountinfo.bind", "diskstats.20field", "/tmp/db").unwrap_err();
        assert!(
            e.contains("tmpfs") && e.contains("no /proc/diskstats line"),
            "{e}"
        );
        // btrfs reports an anonymous 0:40; /dev/sdb is not in that diskstats.
        let e = resolve_err("mountinfo.bind", "diskstats.20field", "/srv/btrfs/x").unwrap_err();
        assert!(e.contains("btrfs"), "{e}");
        // ... but with a diskstats line named like the source it resolves.
        let mounts = procfs::parse_mountinfo(&fixture("mountinfo.bind")).unwrap();
        let mut disks = procfs::parse_diskstats(&fixture("diskstats.20field")).unwrap();
        disks.push(
            procfs::parse_diskstats("   8      16 sdb 1 0 8 0 0 0 0 0 0 0 0")
                .unwrap()
                .remove(0),
        );
        let d = resolve_device(&mounts, &disks, Path::new("/srv/btrfs/x"), None).unwrap();
        assert_eq!(d.diskstats_name, "sdb");
        assert_eq!((d.major, d.minor), (8, 16));
    }

    #[test]
    fn overlay_root_container() {
        let e = resolve_err(
            "mountinfo.overlay_root",
            "diskstats.20field",
            "/var/lib/mysql",
        )
        .unwrap_err();
        assert!(e.contains("overlay") && e.contains("0:52"), "{e}");
        let d = resolve(
            "mountinfo.overlay_root",
            "diskstats.20field",
            "/var/lib/postgresql/data/base",
        )
        .unwrap();
        assert_eq!(d.diskstats_name, "nvme0n1p2");
        assert_eq!(d.parent_disk.as_deref(), Some("nvme0n1"));
        let e = resolve_err("mountinfo.overlay_root", "diskstats.20field", "/tmp").unwrap_err();
        assert!(e.contains("tmpfs"), "{e}");
        // A device-mapper device whose dm line is missing.
        let e =
            resolve_err("mountinfo.overlay_root", "diskstats.20field", "/mnt/lvm/x").unwrap_err();
        assert!(
            e.contains("253:7") && e.contains("/dev/mapper/vg0-gone"),
            "{e}"
        );
    }

    #[test]
    fn parent_by_kernel_names() {
        let disks = procfs::parse_diskstats(&fixture("diskstats.20field")).unwrap();
        let p = |n: &str| parent_disk(n, &disks, None);
        assert_eq!(p("sda1").as_deref(), Some("sda"));
        assert_eq!(p("nvme0n1p1").as_deref(), Some("nvme0n1"));
        assert_eq!(p("mmcblk0p1").as_deref(), Some("mmcblk0"));
        assert_eq!(p("sda"), None);
        assert_eq!(p("nvme0n1"), None);
        assert_eq!(p("dm-1"), None);
        assert_eq!(p("md0"), None);
    }

    #[cfg(unix)]
    #[test]
    fn parent_via_sysfs_layout() {
        // Mimic /sys: class/block/<name> are symlinks into devices/…/<disk>/<part>.
        let t = TempDir::new("sys");
        let disk = t.0.join("devices/pci0/block/sda");
        std::fs::create_dir_all(disk.join("sda1")).unwrap();
        std::fs::write(disk.join("sda1/partition"), "1\n").unwrap();
        std::fs::create_dir_all(t.0.join("devices/virtual/block/dm-1/slaves")).unwrap();
        std::os::unix::fs::symlink(
            disk.join("sda1"),
            t.0.join("devices/virtual/block/dm-1/slaves/sda1"),
        )
        .unwrap();
        let class = t.0.join("class/block");
        std::fs::create_dir_all(&class).unwrap();
        std::os::unix::fs::symlink(&disk, class.join("sda")).unwrap();
        std::os::unix::fs::symlink(disk.join("sda1"), class.join("sda1")).unwrap();
        std::os::unix::fs::symlink(t.0.join("devices/virtual/block/dm-1"), class.join("dm-1"))
            .unwrap();
        let disks = procfs::parse_diskstats(&fixture("diskstats.20field")).unwrap();
        assert_eq!(
            parent_disk("sda1", &disks, Some(&class)).as_deref(),
            Some("sda")
        );
        assert_eq!(parent_disk("sda", &disks, Some(&class)), None);
        // LVM on sda1: dm-1's only slave is sda1, whose disk is sda.
        assert_eq!(
            parent_disk("dm-1", &disks, Some(&class)).as_deref(),
            Some("sda")
        );
    }

    #[test]
    fn device_for_root_gives_device_or_reason() {
        match device_for_path(Path::new("/")) {
            Ok(d) => {
                assert!(!d.diskstats_name.is_empty());
                assert_eq!(d.mount_point, "/");
            }
            Err(reason) => assert!(!reason.to_string().is_empty()),
        }
        // Not-yet-created paths resolve through their existing ancestor.
        match device_for_path(&std::env::temp_dir().join("no/such/dir/yet")) {
            Ok(d) => assert!(!d.diskstats_name.is_empty()),
            Err(reason) => assert!(reason.to_string().contains("diskstats"), "{reason}"),
        }
    }

    #[test]
    fn canonicalize_keeps_missing_tail() {
        let t = TempDir::new("canon");
        let p = canonicalize_existing_prefix(&t.0.join("a/b")).unwrap();
        assert_eq!(p, std::fs::canonicalize(&t.0).unwrap().join("a/b"));
    }

    #[test]
    fn dir_size_counts_blocks() {
        let t = TempDir::new("size");
        std::fs::create_dir_all(t.0.join("sub")).unwrap();
        std::fs::write(t.0.join("sub/one_mb"), vec![0xA5u8; 1 << 20]).unwrap();
        std::fs::File::open(t.0.join("sub/one_mb"))
            .unwrap()
            .sync_all()
            .unwrap();
        let size = dir_size_on_disk(&t.0).unwrap();
        assert!(size >= 1 << 20, "{size}");
        assert!(size < 4 << 20, "{size}");
        #[cfg(unix)]
        {
            // A symlink to the big file adds (almost) nothing; a hard link adds nothing.
            std::os::unix::fs::symlink(t.0.join("sub/one_mb"), t.0.join("link")).unwrap();
            std::fs::hard_link(t.0.join("sub/one_mb"), t.0.join("hard")).unwrap();
            let size2 = dir_size_on_disk(&t.0).unwrap();
            assert!(size2 < size + 8192, "{size} -> {size2}");
        }
        assert!(dir_size_on_disk(&t.0.join("missing")).is_err());
    }
}
