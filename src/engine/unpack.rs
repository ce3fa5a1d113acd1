//! Unpacking a fetched engine build into the engine cache, in process, so
//! that nothing in the archive can reach outside the directory it is
//! unpacked into, and nothing keeps running when rqps dies.
//!
//! What an archive may hold, whoever made it:
//! - Paths are relative and hold no `..`: an absolute path or a `..` is
//!   refused, not cleaned.
//! - Nothing is written through a link. Every directory on the way to an
//!   entry is checked to be a directory this unpacking made (never a link),
//!   and a file is created with `O_NOFOLLOW | O_EXCL`. Modes are set on the
//!   open file (`fchmod`), so no mode change can follow a link either.
//! - A symbolic link must point inside the tree: a relative target whose
//!   `..` components come first and climb no higher than the tree's top
//!   (`../lib/libpq.so.5`). An absolute target, a `..` after a name, or one
//!   that climbs out is refused. A hard link must name a regular file
//!   unpacked before it.
//! - Only files, directories and links: a device, a FIFO or a sparse entry
//!   is refused.
//! - Entries and bytes are capped ([`Limits`]): at most 100,000 entries, and
//!   no more bytes than the smallest of the free space less a margin, 100
//!   times the archive's size (a zip bomb expands a thousand times or more;
//!   engine builds 2.5 to 4 times) and 16 GiB. A zip's declared sizes are
//!   checked before anything is written; every archive's real bytes are
//!   counted as they are written, so a header that lies does not help.
//! - Modes are rqps's, not the archive's: directories 0755, files 0644, or
//!   0755 when the archive marks them executable or they sit in a `bin/` or
//!   `scripts/` directory (jars made by Maven carry no modes). No setuid,
//!   setgid or sticky bit survives.
//!
//! [`Pick`] says which entries of an archive a server needs and where they
//! go: a leading directory to strip, and the paths to keep (MySQL's 1.2 GB
//! zip, of which `bin/mysqld`, `lib/private/` and `share/` run). A kind's
//! [`Prebuilt::unpack`](crate::engine::kind::Prebuilt::unpack) calls
//! [`zip`], [`tar_xz_in_zip`], [`tar_xz`] or [`tar_gz`] with its pick.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::engine::server::util::CommandError;

/// Entries an archive may hold.
pub const MAX_ENTRIES: u64 = 100_000;
/// How many times its own size an archive may unpack to.
pub const MAX_RATIO: u64 = 100;
/// The most an engine build may unpack to, whatever the free space.
pub const MAX_BYTES: u64 = 16 << 30;
/// Space left free on the cache's file system, for everything else.
pub const FREE_MARGIN: u64 = 256 << 20;
/// The longest name or link target taken from an archive.
const MAX_NAME: usize = 4096;

/// Why a fetched archive could not be unpacked into the engine cache. The
/// partial tree is removed by the caller; nothing is installed.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// A step run by `util::run_checked` failed (a kind that unpacks with
    /// an outside tool; rqps's own kinds unpack in process).
    #[error(transparent)]
    Command(#[from] CommandError),
    /// The archive cannot be read as what it should be.
    #[error("{}: not a readable {format} archive: {source}", archive.display())]
    Archive {
        archive: PathBuf,
        format: &'static str,
        #[source]
        source: io::Error,
    },
    /// The member that holds the build is not in the archive.
    #[error("{}: holds no {member}", archive.display())]
    NoMember { archive: PathBuf, member: String },
    /// An entry that would reach outside the tree, or that rqps does not
    /// unpack (a device, a FIFO).
    #[error("{}: refused entry {entry:?}: {why}; nothing was installed", archive.display())]
    Unsafe {
        archive: PathBuf,
        entry: String,
        why: String,
    },
    /// More bytes than [`Limits`] allows.
    #[error("{}: unpacks to more than {:.1} MB, {why}; refused, nothing was installed", archive.display(), *limit as f64 / 1e6)]
    TooLarge {
        archive: PathBuf,
        limit: u64,
        why: String,
    },
    /// More entries than [`MAX_ENTRIES`].
    #[error("{}: holds more than {max} entries, the most an engine build may have; refused, nothing was installed", archive.display())]
    TooManyEntries { archive: PathBuf, max: u64 },
    /// A file or directory of the tree could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Which entries of an archive a server needs, and where they go.
#[derive(Clone, Copy, Debug)]
pub struct Pick<'a> {
    /// Leading path components dropped from every entry (`tar
    /// --strip-components`): 1 for an archive whose entries all sit in
    /// `mysql-8.0.36-linux-x86_64/`. An entry with no more components than
    /// this (that directory itself) is skipped.
    pub strip: usize,
    /// The entries kept, by path after stripping, as a kind's
    /// [`Prebuilt::needs`](crate::engine::kind::Prebuilt::needs) lists them:
    /// a file (`bin/mysqld`), or a directory ending in `/` with all that is
    /// under it (`lib/private/`); one that starts with `!` is left out of
    /// those (`!lib/plugin/debug/`). A need the archive lacks is no error.
    /// Empty keeps all.
    pub only: &'a [&'a str],
}

impl Pick<'static> {
    /// Every entry, where the archive puts it.
    pub const ALL: Pick<'static> = Pick {
        strip: 0,
        only: &[],
    };
}

impl Pick<'_> {
    /// Where the (checked) archive path `rel` lands, if it is kept.
    fn place(&self, rel: &Path) -> Option<PathBuf> {
        let kept: PathBuf = rel.components().skip(self.strip).collect();
        if kept.as_os_str().is_empty() {
            return None;
        }
        // Component-wise: `bin/mysqld` keeps neither `bin/mysqld-debug` nor `bin/`.
        let under = |n: &str| kept.starts_with(n.trim_end_matches('/'));
        if self
            .only
            .iter()
            .filter_map(|n| n.strip_prefix('!'))
            .any(under)
        {
            return None;
        }
        let mut wanted = self.only.iter().filter(|n| !n.starts_with('!')).peekable();
        let keep = wanted.peek().is_none() || wanted.any(|n| under(n));
        keep.then_some(kept)
    }
}

/// How much an archive may write, and the reason for the figure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_entries: u64,
    pub max_bytes: u64,
    /// Why `max_bytes` is what it is, for the error.
    pub why: String,
}

impl Limits {
    /// The limits for an archive of `archive_bytes` unpacked into a
    /// directory with `free` bytes free (`None`: unknown): the smallest of
    /// the free space less [`FREE_MARGIN`], [`MAX_RATIO`] times the
    /// archive, and [`MAX_BYTES`].
    pub fn new(archive_bytes: u64, free: Option<u64>) -> Limits {
        let mb = |b: u64| b as f64 / 1e6;
        let mut caps = vec![
            (
                MAX_BYTES,
                format!(
                    "the most rqps unpacks for an engine ({} GiB)",
                    MAX_BYTES >> 30
                ),
            ),
            (
                archive_bytes.max(1).saturating_mul(MAX_RATIO),
                format!(
                    "{MAX_RATIO} times the archive's {:.1} MB (an engine build unpacks to 2 to 5 times its size; this may be a zip bomb)",
                    mb(archive_bytes)
                ),
            ),
        ];
        if let Some(free) = free {
            caps.push((
                free.saturating_sub(FREE_MARGIN),
                format!(
                    "the space free in the engine cache ({:.1} MB) less {} MiB kept free",
                    mb(free),
                    FREE_MARGIN >> 20
                ),
            ));
        }
        let (max_bytes, why) = caps.into_iter().min_by_key(|(b, _)| *b).expect("caps");
        Limits {
            max_entries: MAX_ENTRIES,
            max_bytes,
            why,
        }
    }

    /// The limits for unpacking `archive` into `into`, from its size and
    /// the free space there.
    fn of(archive: &Path, into: &Path) -> Result<Limits, UnpackError> {
        let len = fs::metadata(archive)
            .map_err(|source| UnpackError::Archive {
                archive: archive.to_path_buf(),
                format: "engine",
                source,
            })?
            .len();
        Ok(Limits::new(len, crate::util::free_bytes(into)))
    }
}

/// Unpacks the entries `pick` keeps of the zip (or jar) `archive` into the
/// empty directory `into`.
pub fn zip(archive: &Path, into: &Path, pick: &Pick) -> Result<(), UnpackError> {
    zip_with(archive, into, pick, Limits::of(archive, into)?)
}

/// [`zip`] under the given limits.
pub fn zip_with(
    archive: &Path,
    into: &Path,
    pick: &Pick,
    limits: Limits,
) -> Result<(), UnpackError> {
    let mut z = open_zip(archive)?;
    let mut tree = Tree::new(archive, into, pick, limits);
    if z.len() as u64 > tree.limits.max_entries {
        return Err(tree.too_many());
    }
    // The sizes the archive declares, before a byte is written.
    let mut declared = 0u64;
    for i in 0..z.len() {
        let e = z.by_index_data(i).map_err(|e| tree.bad(e))?;
        let name = e.name().map_err(|e| tree.bad(e))?.into_owned();
        if !e.is_dir() && tree.checked(name.as_bytes())?.is_some() {
            declared = declared.saturating_add(e.size());
        }
    }
    if declared > tree.limits.max_bytes {
        return Err(tree.too_large());
    }
    for i in 0..z.len() {
        let mut e = z.by_index(i).map_err(|e| tree.bad(e))?;
        tree.count()?;
        let name = e.name().map_err(|e| tree.bad(e))?.into_owned();
        let Some(rel) = tree.checked(name.as_bytes())? else {
            continue;
        };
        if e.encrypted() {
            return Err(tree.refuse(&name, "an encrypted entry"));
        }
        let mode = e.unix_mode().unwrap_or(0);
        let kind = mode & libc::S_IFMT;
        if e.is_dir() {
            tree.dir(&name, &rel)?;
        } else if e.is_symlink() {
            let target = read_small(&mut e).map_err(|e| tree.bad(e))?;
            tree.symlink(&name, &rel, &target)?;
        } else if kind == 0 || kind == libc::S_IFREG {
            tree.file(&name, &rel, mode, &mut e)?;
        } else {
            return Err(tree.refuse(&name, "neither a file, a directory nor a link"));
        }
    }
    Ok(())
}

/// Unpacks the entries `pick` keeps of the xz-compressed tar `member` of
/// the zip `archive` (zonky's PostgreSQL jars hold one `.txz`) into the
/// empty directory `into`.
pub fn tar_xz_in_zip(
    archive: &Path,
    member: &str,
    into: &Path,
    pick: &Pick,
) -> Result<(), UnpackError> {
    let limits = Limits::of(archive, into)?;
    let mut z = open_zip(archive)?;
    let tree = Tree::new(archive, into, pick, limits);
    let inner = match z.by_name(member) {
        Ok(m) => m,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(UnpackError::NoMember {
                archive: archive.to_path_buf(),
                member: member.to_string(),
            });
        }
        Err(e) => return Err(tree.bad(e)),
    };
    tar(tree, lzma_rust2::XzReader::new(inner, true))
}

/// Unpacks the entries `pick` keeps of the `.tar.xz` `archive` into the
/// empty directory `into`.
pub fn tar_xz(archive: &Path, into: &Path, pick: &Pick) -> Result<(), UnpackError> {
    let limits = Limits::of(archive, into)?;
    let tree = Tree::new(archive, into, pick, limits);
    let f = File::open(archive).map_err(|e| tree.bad(e))?;
    tar(tree, lzma_rust2::XzReader::new(BufReader::new(f), true))
}

/// Unpacks the entries `pick` keeps of the `.tar.gz` `archive` into the
/// empty directory `into`.
pub fn tar_gz(archive: &Path, into: &Path, pick: &Pick) -> Result<(), UnpackError> {
    let limits = Limits::of(archive, into)?;
    let tree = Tree::new(archive, into, pick, limits);
    let f = File::open(archive).map_err(|e| tree.bad(e))?;
    tar(tree, flate2::read::MultiGzDecoder::new(BufReader::new(f)))
}

fn open_zip(archive: &Path) -> Result<zip::ZipArchive<BufReader<File>>, UnpackError> {
    let bad = |source| UnpackError::Archive {
        archive: archive.to_path_buf(),
        format: "zip",
        source,
    };
    let f = File::open(archive).map_err(bad)?;
    zip::ZipArchive::new(BufReader::new(f)).map_err(|e| bad(io::Error::other(e)))
}

/// Reads a link target or a long name: at most [`MAX_NAME`] bytes.
fn read_small(r: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    r.take(MAX_NAME as u64 + 1).read_to_end(&mut v)?;
    if v.len() > MAX_NAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a name or link target longer than {MAX_NAME} bytes"),
        ));
    }
    // Long names end with a NUL.
    while v.last() == Some(&0) {
        v.pop();
    }
    Ok(v)
}

/// The entries of a tar stream. Raw, so that GNU long names and PAX
/// records are read here, bounded, rather than whole into memory (a
/// long-name entry may claim any size).
fn tar(mut tree: Tree, stream: impl Read) -> Result<(), UnpackError> {
    let mut archive = tar::Archive::new(stream);
    let entries = archive.entries().map_err(|e| tree.bad_tar(e))?.raw(true);
    let (mut long_name, mut long_link) = (None::<Vec<u8>>, None::<Vec<u8>>);
    for entry in entries {
        let mut e = entry.map_err(|e| tree.bad_tar(e))?;
        tree.count()?;
        let ty = e.header().entry_type();
        let name = long_name
            .take()
            .unwrap_or_else(|| e.path_bytes().into_owned());
        let link = long_link
            .take()
            .or_else(|| e.link_name_bytes().map(|l| l.into_owned()));
        let shown = String::from_utf8_lossy(&name).into_owned();
        use tar::EntryType as T;
        match ty {
            T::GNULongName => long_name = Some(read_small(&mut e).map_err(|e| tree.bad_tar(e))?),
            T::GNULongLink => long_link = Some(read_small(&mut e).map_err(|e| tree.bad_tar(e))?),
            T::XHeader => {
                let records = read_small(&mut e).map_err(|e| tree.bad_tar(e))?;
                for r in tar::PaxExtensions::new(&records) {
                    let r = r.map_err(|e| tree.bad_tar(e))?;
                    match r.key_bytes() {
                        b"path" => long_name = Some(r.value_bytes().to_vec()),
                        b"linkpath" => long_link = Some(r.value_bytes().to_vec()),
                        b"size" => {
                            return Err(tree.refuse(&shown, "a PAX size (files over 8 GiB)"));
                        }
                        _ => {}
                    }
                }
            }
            T::XGlobalHeader => {}
            T::Directory => {
                if let Some(rel) = tree.checked(&name)? {
                    tree.dir(&shown, &rel)?;
                }
            }
            T::Regular | T::Continuous => {
                if let Some(rel) = tree.checked(&name)? {
                    let mode = e.header().mode().unwrap_or(0o644);
                    tree.file(&shown, &rel, mode, &mut e)?;
                }
            }
            T::Symlink | T::Link => {
                let Some(rel) = tree.checked(&name)? else {
                    continue;
                };
                let Some(target) = link else {
                    return Err(tree.refuse(&shown, "a link without a target"));
                };
                if ty == T::Symlink {
                    tree.symlink(&shown, &rel, &target)?;
                } else {
                    tree.hard_link(&shown, &rel, &target)?;
                }
            }
            _ => return Err(tree.refuse(&shown, "neither a file, a directory nor a link")),
        }
    }
    Ok(())
}

/// The tree an archive is unpacked into, and what it has cost so far.
struct Tree<'a> {
    archive: &'a Path,
    root: &'a Path,
    pick: &'a Pick<'a>,
    limits: Limits,
    entries: u64,
    bytes: u64,
    /// Directories made (relative): known not to be links.
    dirs: HashSet<PathBuf>,
}

impl<'a> Tree<'a> {
    fn new(archive: &'a Path, root: &'a Path, pick: &'a Pick<'a>, limits: Limits) -> Tree<'a> {
        Tree {
            archive,
            root,
            pick,
            limits,
            entries: 0,
            bytes: 0,
            dirs: HashSet::new(),
        }
    }

    fn refuse(&self, entry: &str, why: impl Into<String>) -> UnpackError {
        UnpackError::Unsafe {
            archive: self.archive.to_path_buf(),
            entry: entry.to_string(),
            why: why.into(),
        }
    }

    fn bad(&self, e: impl std::error::Error + Send + Sync + 'static) -> UnpackError {
        UnpackError::Archive {
            archive: self.archive.to_path_buf(),
            format: "zip",
            source: io::Error::other(e),
        }
    }

    fn bad_tar(&self, source: io::Error) -> UnpackError {
        UnpackError::Archive {
            archive: self.archive.to_path_buf(),
            format: "tar",
            source,
        }
    }

    fn too_large(&self) -> UnpackError {
        UnpackError::TooLarge {
            archive: self.archive.to_path_buf(),
            limit: self.limits.max_bytes,
            why: self.limits.why.clone(),
        }
    }

    fn too_many(&self) -> UnpackError {
        UnpackError::TooManyEntries {
            archive: self.archive.to_path_buf(),
            max: self.limits.max_entries,
        }
    }

    fn write_err(&self, rel: &Path) -> impl FnOnce(io::Error) -> UnpackError + use<> {
        let path = self.root.join(rel);
        move |source| UnpackError::Write { path, source }
    }

    /// One more entry read from the archive.
    fn count(&mut self) -> Result<(), UnpackError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.too_many());
        }
        Ok(())
    }

    /// The archive path `name` checked (relative, no `..`) and placed by
    /// the pick: `None` when it is not kept.
    fn checked(&self, name: &[u8]) -> Result<Option<PathBuf>, UnpackError> {
        let shown = String::from_utf8_lossy(name);
        if name.len() > MAX_NAME || name.contains(&0) {
            return Err(self.refuse(&shown, "a name that is too long or holds a NUL byte"));
        }
        let path = Path::new(std::ffi::OsStr::from_bytes(name));
        let mut rel = PathBuf::new();
        for c in path.components() {
            match c {
                Component::Normal(n) => rel.push(n),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(self.refuse(&shown, "a path with '..'"));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(self.refuse(&shown, "an absolute path"));
                }
            }
        }
        Ok(self.pick.place(&rel))
    }

    /// Makes the directories above `rel`, refusing any that is not a
    /// directory made here (a link, a file).
    fn parents(&mut self, entry: &str, rel: &Path) -> Result<(), UnpackError> {
        let mut at = PathBuf::new();
        let Some(parent) = rel.parent() else {
            return Ok(());
        };
        for c in parent.components() {
            at.push(c);
            if self.dirs.contains(&at) {
                continue;
            }
            self.make_dir(entry, &at)?;
        }
        Ok(())
    }

    /// Makes directory `rel` (its parents exist), or checks that the one
    /// there is a real directory.
    fn make_dir(&mut self, entry: &str, rel: &Path) -> Result<(), UnpackError> {
        let path = self.root.join(rel);
        match fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {
                // The mode on the directory itself, never through a link.
                let d = OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                    .open(&path)
                    .map_err(self.write_err(rel))?;
                d.set_permissions(fs::Permissions::from_mode(0o755))
                    .map_err(self.write_err(rel))?;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let md = fs::symlink_metadata(&path).map_err(self.write_err(rel))?;
                if md.file_type().is_symlink() {
                    return Err(self.refuse(
                        entry,
                        format!("it would be written through the link {}", rel.display()),
                    ));
                }
                if !md.is_dir() {
                    return Err(self.refuse(
                        entry,
                        format!("{} is a file, not a directory", rel.display()),
                    ));
                }
            }
            Err(e) => return Err(self.write_err(rel)(e)),
        }
        self.dirs.insert(rel.to_path_buf());
        Ok(())
    }

    fn dir(&mut self, entry: &str, rel: &Path) -> Result<(), UnpackError> {
        self.parents(entry, rel)?;
        if !self.dirs.contains(rel) {
            self.make_dir(entry, rel)?;
        }
        Ok(())
    }

    /// Clears the way for a new file or link at `rel`: a file or link there
    /// is replaced (the archive's later entry wins), a directory is not.
    fn clear(&self, entry: &str, rel: &Path) -> Result<(), UnpackError> {
        let path = self.root.join(rel);
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.write_err(rel)(e)),
            Ok(md) if md.is_dir() => {
                Err(self.refuse(entry, format!("{} is a directory already", rel.display())))
            }
            // Removes the link itself, never its target.
            Ok(_) => fs::remove_file(&path).map_err(self.write_err(rel)),
        }
    }

    fn file(
        &mut self,
        entry: &str,
        rel: &Path,
        mode: u32,
        data: &mut dyn Read,
    ) -> Result<(), UnpackError> {
        self.parents(entry, rel)?;
        self.clear(entry, rel)?;
        let path = self.root.join(rel);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(self.write_err(rel))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match data.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(UnpackError::Archive {
                        archive: self.archive.to_path_buf(),
                        format: "engine",
                        source: io::Error::new(e.kind(), format!("{entry}: {e}")),
                    });
                }
            };
            self.bytes += n as u64;
            if self.bytes > self.limits.max_bytes {
                return Err(self.too_large());
            }
            f.write_all(&buf[..n]).map_err(self.write_err(rel))?;
        }
        let in_bin = rel
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == "bin" || d == "scripts");
        let exec = mode & 0o111 != 0 || in_bin;
        f.set_permissions(fs::Permissions::from_mode(if exec { 0o755 } else { 0o644 }))
            .map_err(self.write_err(rel))
    }

    fn symlink(&mut self, entry: &str, rel: &Path, target: &[u8]) -> Result<(), UnpackError> {
        if target.is_empty() || target.len() > MAX_NAME || target.contains(&0) {
            return Err(self.refuse(entry, "a link with an empty, long or NUL target"));
        }
        let to = Path::new(std::ffi::OsStr::from_bytes(target));
        // Climbs first, then descends: the climb must stay in the tree.
        let depth = rel.components().count() - 1;
        let mut up = 0;
        let mut named = false;
        for c in to.components() {
            match c {
                Component::ParentDir if !named => up += 1,
                Component::ParentDir => {
                    return Err(self.refuse(
                        entry,
                        format!("a link to {} ('..' after a name)", to.display()),
                    ));
                }
                Component::Normal(_) => named = true,
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => {
                    return Err(self.refuse(
                        entry,
                        format!("a link to {}, outside the install", to.display()),
                    ));
                }
            }
        }
        if up > depth {
            return Err(self.refuse(
                entry,
                format!("a link to {}, outside the install", to.display()),
            ));
        }
        self.parents(entry, rel)?;
        self.clear(entry, rel)?;
        std::os::unix::fs::symlink(to, self.root.join(rel)).map_err(self.write_err(rel))
    }

    fn hard_link(&mut self, entry: &str, rel: &Path, target: &[u8]) -> Result<(), UnpackError> {
        let Some(to) = self.checked(target)? else {
            return Err(self.refuse(
                entry,
                format!(
                    "a hard link to {}, which is not unpacked",
                    String::from_utf8_lossy(target)
                ),
            ));
        };
        // The target's directories are ones made here, and it is a file.
        let made = to.parent().is_none_or(|p| {
            p.as_os_str().is_empty()
                || p.ancestors()
                    .all(|a| a.as_os_str().is_empty() || self.dirs.contains(a))
        });
        let regular = fs::symlink_metadata(self.root.join(&to)).is_ok_and(|m| m.is_file());
        if !made || !regular {
            return Err(self.refuse(
                entry,
                format!(
                    "a hard link to {}, not a file unpacked before it",
                    to.display()
                ),
            ));
        }
        self.parents(entry, rel)?;
        self.clear(entry, rel)?;
        // linkat without AT_SYMLINK_FOLLOW: a link is never followed.
        fs::hard_link(self.root.join(&to), self.root.join(rel)).map_err(self.write_err(rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::os::unix::fs::MetadataExt;
    use zip::write::SimpleFileOptions;

    /// A zip of `(name, content)` files, symlinks (`Some(target)`) and
    /// directories (name ending in `/`), deflated.
    fn zip_of(entries: &[(&str, &[u8], Option<&str>)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let o = SimpleFileOptions::default();
        for (name, data, link) in entries {
            if let Some(t) = link {
                w.add_symlink(*name, *t, o).unwrap();
            } else if name.ends_with('/') {
                w.add_directory(*name, o).unwrap();
            } else {
                w.start_file(*name, o).unwrap();
                w.write_all(data).unwrap();
            }
        }
        w.finish().unwrap().into_inner()
    }

    /// A tar header whose name is written as it is (the tar crate refuses
    /// `..` and absolute paths when asked to write them).
    fn raw_header(ty: tar::EntryType, name: &[u8], size: u64, link: Option<&str>) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name);
        h.set_entry_type(ty);
        h.set_size(size);
        h.set_mode(0o644);
        if let Some(l) = link {
            h.set_link_name(l).unwrap();
        }
        h.set_cksum();
        h
    }

    fn tar_of(entries: &[(tar::EntryType, &str, &[u8], Option<&str>)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (ty, name, data, link) in entries {
            let h = raw_header(*ty, name.as_bytes(), data.len() as u64, *link);
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    /// Unpacks archive bytes (written to a file) into a fresh directory.
    fn unpack_bytes(
        bytes: &[u8],
        how: fn(&Path, &Path) -> Result<(), UnpackError>,
    ) -> (tempfile::TempDir, Result<(), UnpackError>) {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("archive");
        fs::write(&a, bytes).unwrap();
        let into = d.path().join("tree");
        fs::create_dir(&into).unwrap();
        let r = how(&a, &into);
        (d, r)
    }

    fn all_zip(a: &Path, into: &Path) -> Result<(), UnpackError> {
        zip(a, into, &Pick::ALL)
    }

    /// A tar (not compressed) through the same reader as the .txz.
    fn all_tar(a: &Path, into: &Path) -> Result<(), UnpackError> {
        let limits = Limits::of(a, into)?;
        let tree = Tree::new(a, into, &Pick::ALL, limits);
        tar(tree, File::open(a).unwrap())
    }

    fn refused(r: Result<(), UnpackError>) -> String {
        match r {
            Err(e @ UnpackError::Unsafe { .. }) => e.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_good_archive_unpacks_with_its_links_and_rqps_modes() {
        let z = zip_of(&[
            ("top/", b"", None),
            ("top/bin/server", b"ELF", None),
            ("top/lib/libx.so.1.2", b"lib", None),
            ("top/lib/libx.so", b"", Some("libx.so.1.2")),
            ("top/bin/libdir", b"", Some("../lib")),
            ("top/share/doc.txt", b"doc", None),
        ]);
        let (d, r) = unpack_bytes(&z, all_zip);
        r.unwrap();
        let t = d.path().join("tree/top");
        assert_eq!(fs::read(t.join("lib/libx.so")).unwrap(), b"lib");
        assert_eq!(fs::read(t.join("bin/libdir/libx.so.1.2")).unwrap(), b"lib");
        let mode = |p: &str| fs::symlink_metadata(t.join(p)).unwrap().mode() & 0o7777;
        assert_eq!(mode("bin/server"), 0o755, "bin/ is executable");
        assert_eq!(mode("share/doc.txt"), 0o644);
        assert_eq!(mode("lib"), 0o755);
    }

    #[test]
    fn a_pick_strips_the_top_directory_and_keeps_only_what_runs() {
        let z = zip_of(&[
            ("mysql-8.0/bin/mysqld", b"d", None),
            ("mysql-8.0/bin/mysqld-debug", b"big", None),
            ("mysql-8.0/lib/private/libssl.so", b"ssl", None),
            ("mysql-8.0/lib/plugin/x.so", b"p", None),
            ("mysql-8.0/share/english/errmsg.sys", b"e", None),
            ("mysql-8.0/share/charsets/Index.xml", b"c", None),
        ]);
        let (d, r) = unpack_bytes(&z, |a, into| {
            zip(
                a,
                into,
                &Pick {
                    strip: 1,
                    only: &["bin/mysqld", "lib/private/", "share/", "!share/english/"],
                },
            )
        });
        r.unwrap();
        let t = d.path().join("tree");
        let mut got: Vec<String> = walk(&t);
        got.sort();
        assert_eq!(
            got,
            [
                "bin",
                "bin/mysqld",
                "lib",
                "lib/private",
                "lib/private/libssl.so",
                "share",
                "share/charsets",
                "share/charsets/Index.xml"
            ]
        );
    }

    fn walk(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                out.push(p.strip_prefix(root).unwrap().display().to_string());
                if e.file_type().unwrap().is_dir() {
                    stack.push(p);
                }
            }
        }
        out
    }

    #[test]
    fn links_out_of_the_tree_and_paths_with_dotdot_or_a_root_are_refused() {
        for (entries, why) in [
            (
                vec![("bin/x", &b""[..], Some("/etc/shadow"))],
                "outside the install",
            ),
            (
                vec![("bin/x", &b""[..], Some("../../victim"))],
                "outside the install",
            ),
            (
                vec![("bin/x", &b""[..], Some("../bin/../../v"))],
                "'..' after a name",
            ),
            (vec![("../escaped", &b"x"[..], None)], "a path with '..'"),
            (
                vec![("bin/../../escaped", &b"x"[..], None)],
                "a path with '..'",
            ),
            (vec![("/tmp/escaped", &b"x"[..], None)], "an absolute path"),
            // A link inside the tree, then an entry written through it.
            (
                vec![("lib", &b""[..], Some(".")), ("lib/x", &b"x"[..], None)],
                "through the link lib",
            ),
        ] {
            let (d, r) = unpack_bytes(&zip_of(&entries), all_zip);
            let e = refused(r);
            assert!(e.contains(why), "{entries:?}: {e}");
            assert!(!d.path().join("escaped").exists());
        }
    }

    #[test]
    fn a_tar_refuses_the_same_and_devices_and_takes_long_names_and_hard_links() {
        use tar::EntryType as T;
        for (entries, why) in [
            (
                vec![(T::Symlink, "bin/pg", &b""[..], Some("/etc/shadow"))],
                "outside",
            ),
            (vec![(T::Regular, "../x", &b"x"[..], None)], "'..'"),
            (vec![(T::Regular, "/x", &b"x"[..], None)], "absolute"),
            (
                vec![(T::Link, "bin/h", &b""[..], Some("/etc/shadow"))],
                "absolute",
            ),
            (
                vec![(T::Link, "bin/h", &b""[..], Some("lib/none"))],
                "hard link",
            ),
            (vec![(T::Char, "dev/null", &b""[..], None)], "neither"),
            (vec![(T::Fifo, "fifo", &b""[..], None)], "neither"),
        ] {
            let (_d, r) = unpack_bytes(&tar_of(&entries), all_tar);
            let e = match r {
                Err(e) => e.to_string(),
                Ok(()) => panic!("{entries:?} unpacked"),
            };
            assert!(e.contains(why), "{entries:?}: {e}");
        }
        // A long name (GNU), a hard link to an earlier file, a good link.
        let long = format!("share/{}/f", "d".repeat(150));
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o600);
        b.append_data(&mut h, &long, &b"abc"[..]).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(T::Link);
        h.set_size(0);
        h.set_mode(0o644);
        b.append_link(&mut h, "share/hard", &long).unwrap();
        let (d, r) = unpack_bytes(&b.into_inner().unwrap(), all_tar);
        r.unwrap();
        let t = d.path().join("tree");
        assert_eq!(fs::read(t.join(&long)).unwrap(), b"abc");
        assert_eq!(fs::metadata(t.join("share/hard")).unwrap().nlink(), 2);
        assert_eq!(fs::metadata(t.join(&long)).unwrap().mode() & 0o777, 0o644);
    }

    #[test]
    fn a_long_name_that_claims_a_gigabyte_is_refused_without_reading_it() {
        let h = raw_header(tar::EntryType::GNULongName, b"././@LongLink", 1 << 30, None);
        // The header, then 1 MiB of the name it claims.
        let mut bytes = h.as_bytes().to_vec();
        bytes.extend(std::iter::repeat_n(b'a', 1 << 20));
        let (_d, r) = unpack_bytes(&bytes, all_tar);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("longer than 4096 bytes"), "{e}");
    }

    #[test]
    fn a_zip_bomb_is_refused_before_a_byte_is_written_and_a_lying_one_at_the_cap() {
        let zeros = vec![0u8; 8 << 20];
        let z = zip_of(&[("bin/server", &zeros, None)]);
        assert!(z.len() < 80 << 10, "deflated to {}", z.len());
        let (d, r) = unpack_bytes(&z, all_zip);
        match r {
            Err(e @ UnpackError::TooLarge { .. }) => {
                assert!(e.to_string().contains("zip bomb"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        assert!(
            !d.path().join("tree/bin/server").exists(),
            "nothing written"
        );
        // A tar's sizes are not known before: counted as written. The same
        // under a limit of 1 MB from free space.
        let t = tar_of(&[(tar::EntryType::Regular, "bin/server", &zeros, None)]);
        let (d, r) = unpack_bytes(&t, |a, into| {
            let tree_limits = Limits::new(
                fs::metadata(a).unwrap().len(),
                Some(FREE_MARGIN + 1_000_000),
            );
            assert!(tree_limits.why.contains("space free"), "{tree_limits:?}");
            let tree = Tree::new(a, into, &Pick::ALL, tree_limits);
            tar(tree, File::open(a).unwrap())
        });
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("more than 1.0 MB") && e.contains("space free"),
            "{e}"
        );
        let written = fs::metadata(d.path().join("tree/bin/server"))
            .unwrap()
            .len();
        assert!(written <= 1_000_000, "{written}");
    }

    #[test]
    fn limits_take_the_smallest_of_free_space_ratio_and_the_ceiling() {
        let l = Limits::new(10_000_000, None);
        assert_eq!(l.max_bytes, 1_000_000_000);
        assert!(l.why.contains("zip bomb"));
        let l = Limits::new(10_000_000, Some(FREE_MARGIN + 5));
        assert_eq!(l.max_bytes, 5);
        let l = Limits::new(1 << 30, Some(u64::MAX));
        assert_eq!(l.max_bytes, MAX_BYTES);
        assert_eq!(Limits::new(1, Some(0)).max_bytes, 0);
    }

    #[test]
    fn a_member_that_is_missing_is_named() {
        let z = zip_of(&[("other.txz", b"x", None)]);
        let (_d, r) = unpack_bytes(&z, |a, into| tar_xz_in_zip(a, "pg.txz", into, &Pick::ALL));
        assert!(matches!(r, Err(UnpackError::NoMember { .. })), "{r:?}");
    }
}
