//! Whether a `--basedir` tree may run at all (issue 51): rqps runs its
//! programs with its own rights (`postgres --version`, `mysqld --version`,
//! the install script as root), so the tree must be one that only root or
//! rqps's own user can change. Checked before anything in it runs:
//!
//! - the tree and every directory above it are owned by root or by rqps's
//!   user; above the tree a world-writable directory is accepted only when
//!   sticky (`/tmp`), where others cannot rename what is in it;
//! - `bin/`, `sbin/`, `libexec/`, `scripts/` and each entry in them, and the
//!   library directory put on `LD_LIBRARY_PATH` (`lib/` or `libs/`) with two
//!   levels below it, are owned by root or rqps's user and writable by
//!   neither group nor others;
//! - a symbolic link among them is judged by what it points to, and the
//!   directories above that.
//!
//! Deeper parts of the tree are not walked: a `--basedir /usr` holds more
//! than 100,000 files. The refusal names the path, its owner or mode, and
//! the command that fixes it.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The directories holding the programs a recipe runs.
const PROGRAM_DIRS: [&str; 4] = ["bin", "sbin", "libexec", "scripts"];
/// The library directories, as [`super::lib_dir_of`] finds them.
const LIB_DIRS: [&str; 2] = ["libs", "lib"];

/// Why a tree is not trusted: one line, the path first.
#[derive(Debug, thiserror::Error)]
pub enum Untrusted {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is owned by {owner}, not by root or by rqps's user ({me}): that user could change \
         what rqps runs; use a tree only root or you can change (chown -R)",
        path.display()
    )]
    Owner {
        path: PathBuf,
        owner: String,
        me: String,
    },
    #[error(
        "{} is writable by {by} (mode {mode:o}): others could change what rqps runs; chmod go-w it",
        path.display()
    )]
    Writable {
        path: PathBuf,
        by: &'static str,
        mode: u32,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Untrusted + '_ {
    move |source| Untrusted::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Checks the tree at `basedir` (see the module docs).
pub(crate) fn check_tree(basedir: &Path) -> Result<(), Untrusted> {
    let me = super::util::euid();
    let mut c = Checker {
        me,
        seen: HashSet::new(),
    };
    let real = fs::canonicalize(basedir).map_err(io(basedir))?;
    c.above(&real)?;
    c.path(&real, false)?;
    for d in PROGRAM_DIRS {
        c.dir(&real.join(d), 1)?;
    }
    if let Some(lib) = LIB_DIRS.iter().map(|d| real.join(d)).find(|d| d.is_dir()) {
        c.dir(&lib, 2)?;
    }
    Ok(())
}

struct Checker {
    me: u32,
    /// Paths already judged (links into one directory, shared ancestors).
    seen: HashSet<PathBuf>,
}

impl Checker {
    /// The directories above `p` (itself not included).
    fn above(&mut self, p: &Path) -> Result<(), Untrusted> {
        for a in p.ancestors().skip(1) {
            self.path(a, true)?;
        }
        Ok(())
    }

    /// `dir` (when it exists), and its entries down to `depth` levels.
    fn dir(&mut self, dir: &Path, depth: u32) -> Result<(), Untrusted> {
        let Ok(md) = fs::symlink_metadata(dir) else {
            return Ok(());
        };
        if md.file_type().is_symlink() {
            return self.link(dir);
        }
        self.path(dir, false)?;
        if depth == 0 || !md.is_dir() {
            return Ok(());
        }
        let entries = fs::read_dir(dir).map_err(io(dir))?;
        for e in entries.flatten() {
            self.dir(&e.path(), depth - 1)?;
        }
        Ok(())
    }

    /// A symbolic link: what it points to, and the directories above that.
    fn link(&mut self, link: &Path) -> Result<(), Untrusted> {
        let Ok(to) = fs::canonicalize(link) else {
            return Ok(()); // dangling: nothing runs through it
        };
        self.above(&to)?;
        self.path(&to, false)
    }

    /// One path's owner and mode. `sticky_ok`: a directory above the tree,
    /// where a sticky world-writable one (`/tmp`) is safe.
    fn path(&mut self, p: &Path, sticky_ok: bool) -> Result<(), Untrusted> {
        if !self.seen.insert(p.to_path_buf()) {
            return Ok(());
        }
        let md = fs::symlink_metadata(p).map_err(io(p))?;
        if md.file_type().is_symlink() {
            return Ok(()); // canonical paths hold none; a link's own mode means nothing
        }
        let (uid, mode) = (md.uid(), md.mode() & 0o7777);
        if uid != 0 && uid != self.me {
            return Err(Untrusted::Owner {
                path: p.to_path_buf(),
                owner: who(uid),
                me: who(self.me),
            });
        }
        let writable = mode & 0o022;
        if writable != 0 && !(sticky_ok && md.is_dir() && mode & 0o1000 != 0) {
            let by = if writable & 0o002 != 0 {
                "every user"
            } else {
                "its group"
            };
            return Err(Untrusted::Writable {
                path: p.to_path_buf(),
                by,
                mode,
            });
        }
        Ok(())
    }
}

/// `nobody (uid 65534)`.
fn who(uid: u32) -> String {
    match super::util::user_name(uid) {
        Some(n) => format!("{n} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn chmod(p: &Path, mode: u32) {
        fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_tree_writable_by_others_is_refused_and_a_private_one_is_not() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("pg");
        fs::create_dir_all(base.join("bin")).unwrap();
        fs::create_dir_all(base.join("lib/private")).unwrap();
        fs::write(base.join("bin/postgres"), "").unwrap();
        fs::write(base.join("lib/private/libx.so"), "").unwrap();
        for p in ["", "bin", "lib", "lib/private"] {
            chmod(&base.join(p), 0o755);
        }
        chmod(&base.join("bin/postgres"), 0o755);
        chmod(&base.join("lib/private/libx.so"), 0o644);
        check_tree(&base).unwrap();
        chmod(&base.join("bin"), 0o777);
        let e = check_tree(&base).unwrap_err().to_string();
        assert!(
            e.contains("/pg/bin is writable by every user (mode 777)"),
            "{e}"
        );
        chmod(&base.join("bin"), 0o755);
        chmod(&base.join("lib/private/libx.so"), 0o664);
        let e = check_tree(&base).unwrap_err().to_string();
        assert!(
            e.contains("libx.so is writable by its group (mode 664)"),
            "{e}"
        );
        chmod(&base.join("lib/private/libx.so"), 0o644);
        // A link out of the tree is judged by what it points to.
        let outside = d.path().join("elsewhere");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("initdb"), "").unwrap();
        chmod(&outside.join("initdb"), 0o757);
        std::os::unix::fs::symlink(outside.join("initdb"), base.join("bin/initdb")).unwrap();
        let e = check_tree(&base).unwrap_err().to_string();
        assert!(
            e.contains("elsewhere/initdb is writable by every user"),
            "{e}"
        );
        chmod(&outside.join("initdb"), 0o755);
        check_tree(&base).unwrap();
    }
}
