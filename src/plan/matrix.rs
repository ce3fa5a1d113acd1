//! Matrix files: several targets (engine versions, configs) run in turn with
//! interleaved repeats (A B A B, so machine drift does not look like a
//! regression), resumable, and reported against a base at the end.
//!
//! ```toml
//! [defaults]
//! suite = "sysbench"
//! profile = "small-server"
//! threads = [1]
//! repeats = 3
//! tests = ["point-query", "update-index"]
//! # or: suite = "ibench", with clients, rows_per_client, writes, query_secs, rates
//! [[target]]
//! name = "pg12"
//! engine = "postgres@12.22"
//! config = "configs/pg.conf"
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::engine::install::EngineRef;

/// Run parameters a matrix may set for every target (`[defaults]`) or one (`[[target]]`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub suite: Option<Spanned<String>>,
    pub profile: Option<Spanned<String>>,
    pub list: Option<Spanned<String>>,
    pub threads: Option<Spanned<Vec<usize>>>,
    pub repeats: Option<Spanned<usize>>,
    pub tests: Option<Spanned<Vec<String>>>,
    pub tables: Option<Spanned<usize>>,
    pub table_size: Option<Spanned<u64>>,
    pub read_secs: Option<Spanned<f64>>,
    pub write_secs: Option<Spanned<f64>>,
    pub warmup_secs: Option<Spanned<f64>>,
    pub warm_secs: Option<Spanned<f64>>,
    pub settle_secs: Option<Spanned<f64>>,
    pub ps_mode: Option<Spanned<String>>,
    pub rand_type: Option<Spanned<String>>,
    /// Insert Benchmark (`suite = "ibench"`): clients, rows per client in
    /// l.i0, writes of l.i1 + l.i2, seconds per qr/qp step, rates per client.
    pub clients: Option<Spanned<usize>>,
    pub rows_per_client: Option<Spanned<u64>>,
    pub writes: Option<Spanned<u64>>,
    pub query_secs: Option<Spanned<f64>>,
    pub rates: Option<Spanned<Vec<u64>>>,
    /// MySQL/MariaDB: storage engine of the tables (default InnoDB).
    pub mysql_storage_engine: Option<Spanned<String>>,
    /// Seconds to wait between targets so the machine quiets down.
    pub cooldown_secs: Option<Spanned<f64>>,
    /// The target reports compare against (default: the first).
    pub base: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetEntry {
    pub name: Spanned<String>,
    /// `sqlite`, `postgres`, `mariadb`, `postgres@16.15`, `mariadb@11.4.5`.
    pub engine: Option<Spanned<String>>,
    /// A server rqps does not manage.
    pub url: Option<Spanned<String>>,
    /// SQLite: PRAGMA lines; servers: postgresql.conf / my.cnf lines. Relative to the matrix file.
    pub config: Option<Spanned<String>>,
    /// MySQL/MariaDB: this target's table storage engine (overrides `[defaults]`).
    pub mysql_storage_engine: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: Settings,
    #[serde(default)]
    target: Vec<TargetEntry>,
}

/// One target as it will run.
#[derive(Clone, Debug)]
pub struct Target {
    pub name: String,
    pub engine: Option<EngineRef>,
    pub url: Option<String>,
    pub config: Option<PathBuf>,
    pub mysql_storage_engine: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Matrix {
    pub path: PathBuf,
    pub defaults: Settings,
    pub targets: Vec<Target>,
    pub repeats: usize,
    pub base: String,
    pub cooldown_secs: f64,
}

/// One (target, repeat) run, in the order they run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub target: String,
    pub repeat: usize,
}

/// `file:line: field: message`.
fn at(path: &Path, src: &str, span: std::ops::Range<usize>, field: &str, msg: &str) -> String {
    let line = src[..span.start.min(src.len())].matches('\n').count() + 1;
    format!("{}:{line}: {field}: {msg}", path.display())
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix, String> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read matrix file {}: {e}", path.display()))?;
        Matrix::parse(path, &src)
    }

    pub fn parse(path: &Path, src: &str) -> Result<Matrix, String> {
        let file: File = toml::from_str(src).map_err(|e| {
            let line = e
                .span()
                .map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1);
            let msg = e.message().trim().to_string();
            match line {
                Some(l) => format!("{}:{l}: {msg}", path.display()),
                None => format!("{}: {msg}", path.display()),
            }
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        if file.target.is_empty() {
            return Err(format!(
                "{}: no [[target]] tables: a matrix needs at least one target",
                path.display()
            ));
        }
        if let Some(s) = &file.defaults.suite
            && !["sysbench", "ibench"].contains(&s.get_ref().as_str())
        {
            return Err(at(
                path,
                src,
                s.span(),
                "suite",
                &format!(
                    "unknown suite '{}' (expected sysbench or ibench)",
                    s.get_ref()
                ),
            ));
        }
        let mut targets: Vec<Target> = Vec::new();
        for t in &file.target {
            let name = t.name.get_ref().trim().to_string();
            if name.is_empty() || name.contains(['/', '\\']) {
                return Err(at(
                    path,
                    src,
                    t.name.span(),
                    "name",
                    "must be a non-empty name without slashes",
                ));
            }
            if targets.iter().any(|o| o.name == name) {
                return Err(at(
                    path,
                    src,
                    t.name.span(),
                    "name",
                    &format!("'{name}' is used by two targets"),
                ));
            }
            let engine = match (&t.engine, &t.url) {
                (Some(_), Some(u)) => {
                    return Err(at(
                        path,
                        src,
                        u.span(),
                        "url",
                        "give either engine or url, not both",
                    ));
                }
                (None, None) => {
                    return Err(at(
                        path,
                        src,
                        t.name.span(),
                        "engine",
                        &format!("target '{name}' needs engine = \"...\" or url = \"...\""),
                    ));
                }
                (Some(e), None) => Some(
                    e.get_ref()
                        .parse::<EngineRef>()
                        .map_err(|m| at(path, src, e.span(), "engine", &m))?,
                ),
                (None, Some(u)) => {
                    crate::engine::target::Target::parse(u.get_ref())
                        .map_err(|m| at(path, src, u.span(), "url", &m))?;
                    None
                }
            };
            let config = match &t.config {
                None => None,
                Some(c) => {
                    let p = dir.join(c.get_ref());
                    if !p.is_file() {
                        return Err(at(
                            path,
                            src,
                            c.span(),
                            "config",
                            &format!("no such file {}", p.display()),
                        ));
                    }
                    Some(p)
                }
            };
            targets.push(Target {
                name,
                engine,
                url: t.url.as_ref().map(|u| u.get_ref().clone()),
                config,
                mysql_storage_engine: one(&t.mysql_storage_engine),
            });
        }
        let d = &file.defaults;
        let repeats = d.repeats.as_ref().map(|r| *r.get_ref()).unwrap_or(1);
        if repeats == 0 {
            return Err(at(
                path,
                src,
                d.repeats.as_ref().map(|r| r.span()).unwrap_or(0..0),
                "repeats",
                "must be at least 1",
            ));
        }
        let base = match &d.base {
            Some(b) => {
                if !targets.iter().any(|t| &t.name == b.get_ref()) {
                    return Err(at(
                        path,
                        src,
                        b.span(),
                        "base",
                        &format!("no target is named '{}'", b.get_ref()),
                    ));
                }
                b.get_ref().clone()
            }
            None => targets[0].name.clone(),
        };
        let cooldown_secs = d
            .cooldown_secs
            .as_ref()
            .map(|c| *c.get_ref())
            .unwrap_or(10.0);
        if !(cooldown_secs >= 0.0 && cooldown_secs.is_finite()) {
            return Err(at(
                path,
                src,
                d.cooldown_secs.as_ref().map(|c| c.span()).unwrap_or(0..0),
                "cooldown_secs",
                "must be >= 0",
            ));
        }
        let m = Matrix {
            path: path.to_path_buf(),
            defaults: file.defaults.clone(),
            targets,
            repeats,
            base,
            cooldown_secs,
        };
        // Every target's arguments must parse and validate now, not halfway through.
        for t in &m.targets {
            let args = m.run_args(t, 1, Path::new("rqps-results"));
            crate::cli::parse_run_args(&args)
                .and_then(|a| {
                    crate::cli::run::params(&a)
                        .and_then(|p| p.steps().map_err(crate::cli::CliError::Usage))
                })
                .map_err(|e| format!("{}: target '{}': {}", path.display(), t.name, e.message()))?;
        }
        Ok(m)
    }

    /// Runs in order: every target once per repeat, repeats interleaved (A B A B).
    pub fn steps(&self) -> Vec<Step> {
        (1..=self.repeats)
            .flat_map(|r| {
                self.targets.iter().map(move |t| Step {
                    target: t.name.clone(),
                    repeat: r,
                })
            })
            .collect()
    }

    /// The `rqps run` arguments of one target's repeat.
    pub fn run_args(&self, t: &Target, repeat: usize, results: &Path) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "run".into(),
            "--name".into(),
            t.name.clone(),
            "--results".into(),
            results.display().to_string(),
        ];
        a.extend(["--repeat-number".into(), repeat.to_string()]);
        let d = &self.defaults;
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.into());
                a.push(v);
            }
        };
        opt("--suite", one(&d.suite));
        opt("--profile", one(&d.profile));
        opt("--list", one(&d.list));
        opt("--threads", list(&d.threads));
        opt("--tests", list(&d.tests));
        opt("--tables", one(&d.tables));
        opt("--table-size", one(&d.table_size));
        opt("--read-secs", one(&d.read_secs));
        opt("--write-secs", one(&d.write_secs));
        opt("--warmup-secs", one(&d.warmup_secs));
        opt("--warm-secs", one(&d.warm_secs));
        opt("--settle-secs", one(&d.settle_secs));
        opt("--ps-mode", one(&d.ps_mode));
        opt("--rand-type", one(&d.rand_type));
        opt("--clients", one(&d.clients));
        opt("--rows-per-client", one(&d.rows_per_client));
        opt("--writes", one(&d.writes));
        opt("--query-secs", one(&d.query_secs));
        opt("--rates", list(&d.rates));
        opt(
            "--mysql-storage-engine",
            t.mysql_storage_engine
                .clone()
                .or_else(|| one(&d.mysql_storage_engine)),
        );
        match (&t.engine, &t.url) {
            (Some(EngineRef::Sqlite), _) => {}
            (Some(EngineRef::System(k)), _) => opt("--server", Some(k.key().into())),
            (Some(EngineRef::Cached(k, v)), _) => opt("--server", Some(format!("{}@{v}", k.key()))),
            (None, Some(u)) => opt("--target", Some(u.clone())),
            (None, None) => {}
        }
        opt(
            "--config",
            t.config.as_ref().map(|c| c.display().to_string()),
        );
        a
    }

    /// Engines that must be installed before the matrix can run.
    pub fn missing_engines(&self) -> Vec<EngineRef> {
        let mut v: Vec<EngineRef> = Vec::new();
        for t in &self.targets {
            if let Some(e @ EngineRef::Cached(k, ver)) = &t.engine
                && crate::engine::install::installed(*k, ver).is_none()
                && !v.contains(e)
            {
                v.push(e.clone());
            }
        }
        v
    }
}

/// A setting as a command-line value.
fn one<T: ToString>(v: &Option<Spanned<T>>) -> Option<String> {
    v.as_ref().map(|v| v.get_ref().to_string())
}

/// A list setting as a comma-separated command-line value.
fn list<T: ToString>(v: &Option<Spanned<Vec<T>>>) -> Option<String> {
    v.as_ref().map(|v| {
        v.get_ref()
            .iter()
            .map(T::to_string)
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// Which steps of a matrix finished, kept beside the results so `--resume` can skip them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Progress {
    pub matrix: String,
    pub done: Vec<Step>,
}

impl Progress {
    pub fn path(results: &Path, matrix: &Path) -> PathBuf {
        let stem = matrix
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "matrix".into());
        results.join(format!(".matrix-{}.json", crate::util::file_safe(&stem)))
    }

    pub fn load(path: &Path) -> Progress {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        crate::util::write_atomic(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<Matrix, String> {
        Matrix::parse(Path::new("m.toml"), src)
    }

    const TWO: &str = r#"
[defaults]
profile = "ci"
repeats = 3
tests = ["point-query", "update-index"]
[[target]]
name = "wal"
engine = "sqlite"
[[target]]
name = "other"
engine = "sqlite"
"#;

    #[test]
    fn repeats_are_interleaved_across_targets() {
        let m = parse(TWO).unwrap();
        let order: Vec<(String, usize)> = m
            .steps()
            .into_iter()
            .map(|s| (s.target, s.repeat))
            .collect();
        let want = [
            ("wal", 1),
            ("other", 1),
            ("wal", 2),
            ("other", 2),
            ("wal", 3),
            ("other", 3),
        ];
        assert_eq!(order, want.map(|(t, r)| (t.to_string(), r)));
        assert_eq!(m.base, "wal");
        let args = m.run_args(&m.targets[1], 2, Path::new("res"));
        let joined = args.join(" ");
        assert!(
            joined.contains("--name other")
                && joined.contains("--repeat-number 2")
                && joined.contains("--tests point-query,update-index"),
            "{joined}"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let e = parse("[[target]]\nname = \"a\"\nengine = \"oracle@1\"\n").unwrap_err();
        assert!(e.starts_with("m.toml:3: engine:"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\nsurprise = 1\n").unwrap_err();
        assert!(e.starts_with("m.toml:4:") && e.contains("surprise"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\nconfig = \"nope.conf\"\n")
            .unwrap_err();
        assert!(e.starts_with("m.toml:4: config:"), "{e}");
        let e =
            parse("[defaults]\nrepeats = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
                .unwrap_err();
        assert!(e.starts_with("m.toml:2:"), "{e}");
        let e = parse("[defaults]\nbase = \"zz\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
            .unwrap_err();
        assert!(e.starts_with("m.toml:2: base:"), "{e}");
        let e = parse(
            "[defaults]\ntests = [\"nope\"]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap_err();
        assert!(e.contains("nope"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\n").unwrap_err();
        assert!(e.contains("engine"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n").unwrap_err();
        assert!(e.starts_with("m.toml:5: name:"), "{e}");
        assert!(parse("").unwrap_err().contains("no [[target]]"));
    }

    #[test]
    fn an_insert_benchmark_matrix_passes_its_options_on() {
        let m = parse(
            "[defaults]\nsuite = \"ibench\"\nclients = 2\nrows_per_client = 500\nwrites = 40\nquery_secs = 1.5\nrates = [100, 500]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap();
        let joined = m.run_args(&m.targets[0], 1, Path::new("res")).join(" ");
        for want in [
            "--suite ibench",
            "--clients 2",
            "--rows-per-client 500",
            "--writes 40",
            "--query-secs 1.5",
            "--rates 100,500",
        ] {
            assert!(joined.contains(want), "{want}: {joined}");
        }
        let e =
            parse("[defaults]\nsuite = \"tpcc\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
                .unwrap_err();
        assert!(
            e.starts_with("m.toml:2: suite:") && e.contains("ibench"),
            "{e}"
        );
    }

    #[test]
    fn progress_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let p = Progress::path(d.path(), Path::new("x/my matrix.toml"));
        let mut pr = Progress {
            matrix: "x".into(),
            done: vec![],
        };
        pr.done.push(Step {
            target: "a".into(),
            repeat: 1,
        });
        pr.save(&p).unwrap();
        assert_eq!(Progress::load(&p).done, pr.done);
    }
}
