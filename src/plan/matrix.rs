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
//! # or several: suite = ["linkbench", "tpcc"], each option to the suites that take it
//! [[target]]
//! name = "pg12"
//! engine = "postgres@12.22"
//! config = "configs/pg.conf"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::engine::install::EngineSpec;
use crate::plan::open::Checked;
use crate::plan::options::{EngineArgs, Output, RunOptions};
use crate::suite::{self, Plan, RunBasics, Suite};

/// The `[defaults]` keys a matrix has whatever its suite, besides the run
/// options ([`RunOptions`]); every other key is an option of an engine kind
/// or of the suite, checked by its owner.
const MATRIX_KEYS: &[&str] = &["suite", "profile", "repeats", "cooldown_secs", "base"];

/// The most runs (targets x repeats) one matrix may plan.
pub const MAX_RUNS: u64 = 100_000;

/// A `[[target]]` table as written: its own keys (`name`, `engine`, `url`),
/// run options (`config`, ...) and the options of engine kinds
/// (`mysql_storage_engine`, ...).
type TargetEntry = BTreeMap<String, Spanned<toml::Value>>;

/// The keys of a `[[target]]` that are neither run options nor engine options.
const TARGET_KEYS: &[&str] = &["name", "engine", "url"];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    target: Vec<TargetEntry>,
}

/// One target as it will run: its engine, its run options (`[defaults]`,
/// overridden by the target's own) and what checking them read. Its `Debug`
/// redacts the URL: a matrix file may hold a password in it.
#[derive(Clone)]
pub struct Target {
    pub name: String,
    /// `engine` (a throwaway server, or none for SQLite) or `url`, parsed,
    /// with the engine kinds' options.
    pub engine: EngineArgs,
    pub options: RunOptions,
    /// The engine checked against the options and the plan, as `rqps run`
    /// checks it, with what that read (the config's text).
    pub checked: Checked,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("name", &self.name)
            .field("server", &self.engine.server)
            .field("target", &self.engine.target.as_ref().map(|t| t.display()))
            .field("engine_options", &self.engine.options)
            .field("options", &self.options)
            .finish()
    }
}

#[derive(Clone)]
pub struct Matrix {
    pub path: PathBuf,
    /// The suites every target runs, in the file's order (`suite = "tpcc"`,
    /// or `suite = ["linkbench", "tpcc"]`).
    pub suites: Vec<MatrixSuite>,
    pub targets: Vec<Target>,
    pub repeats: usize,
    pub base: String,
    pub cooldown_secs: f64,
}

/// One suite of a matrix, with its profile, options and plan.
#[derive(Clone)]
pub struct MatrixSuite {
    pub suite: &'static dyn Suite,
    /// `profile` of `[defaults]`, else the suite's first profile.
    pub profile: String,
    /// The `[defaults]` keys this suite takes (every key that is not a
    /// matrix key, a run option or an engine option goes to each suite
    /// that takes it).
    pub options: toml::Table,
    /// The suite's plan, built once from the options: the same for every
    /// target (each run draws its own seed unless the options give one).
    pub plan: Arc<dyn Plan>,
}

/// One (target, repeat) run, in the order they run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatrixRun {
    pub target: String,
    pub repeat: usize,
    /// The suite, in a matrix of several (`None`: the only one; progress
    /// files of one-suite matrices are as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
}

/// A target's own keys, read from its table.
struct Entry {
    name: Spanned<String>,
    engine: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
}

/// A mistake in a matrix file, with where it is: shown as `file:line: field:
/// message` (or `file: message` when it is about the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for MatrixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for MatrixError {}

impl MatrixError {
    /// About the whole file.
    fn whole(path: &Path, message: impl Into<String>) -> Self {
        MatrixError {
            path: path.to_path_buf(),
            line: None,
            field: None,
            message: message.into(),
        }
    }
}

/// `file:line: field: message`.
fn at(path: &Path, src: &str, span: std::ops::Range<usize>, field: &str, msg: &str) -> MatrixError {
    MatrixError {
        path: path.to_path_buf(),
        line: Some(src[..span.start.min(src.len())].matches('\n').count() + 1),
        field: Some(field.to_string()),
        message: msg.to_string(),
    }
}

impl std::fmt::Debug for Matrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matrix")
            .field("path", &self.path)
            .field(
                "suites",
                &self
                    .suites
                    .iter()
                    .map(|s| (s.suite.name(), &s.profile, &s.options))
                    .collect::<Vec<_>>(),
            )
            .field("targets", &self.targets)
            .field("repeats", &self.repeats)
            .field("base", &self.base)
            .finish()
    }
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix, MatrixError> {
        let src = crate::util::read_config(path)
            .map_err(|e| MatrixError::whole(path, format!("cannot read the matrix file: {e}")))?;
        Matrix::parse(path, &src)
    }

    pub fn parse(path: &Path, src: &str) -> Result<Matrix, MatrixError> {
        let file = decode(path, src)?;
        let cx = MatrixSource {
            path,
            src,
            dir: path.parent().unwrap_or(Path::new(".")),
            d: &file.defaults,
        };
        let (suites, profile) = cx.suites()?;
        let (options, engine_defaults, run_defaults) = cx.options(&suites)?;
        // Each suite's options must make a plan now, not halfway through;
        // it is made once (each run draws its own seed, unless one is given).
        let seed = RunOptions::from_table(run_defaults.clone())
            .ok()
            .and_then(|o| o.seed)
            .unwrap_or(0);
        let mut made = Vec::new();
        for (suite, options) in suites.into_iter().zip(options) {
            let profile = profile
                .clone()
                .unwrap_or_else(|| suite.profiles()[0].to_string());
            let plan: Arc<dyn Plan> = suite
                .plan_toml(
                    &RunBasics {
                        profile: profile.clone(),
                        seed,
                        part: None,
                    },
                    &options,
                )
                .map_err(|e| MatrixError::whole(path, format!("suite {}: {e}", suite.name())))?
                .into();
            made.push(MatrixSuite {
                suite,
                profile,
                options,
                plan,
            });
        }
        let plans: Vec<&dyn Plan> = made.iter().map(|ms| ms.plan.as_ref()).collect();
        let mut targets: Vec<Target> = Vec::new();
        let mut names = std::collections::HashSet::new();
        for t in &file.target {
            let target = cx.target(t, &plans, &engine_defaults, &run_defaults, &mut names)?;
            targets.push(target);
        }
        Ok(Matrix {
            path: path.to_path_buf(),
            suites: made,
            repeats: cx.repeats()?,
            base: cx.base(&targets)?,
            cooldown_secs: cx.secs("cooldown_secs", 0.0)?.unwrap_or(10.0),
            targets,
        })
    }

    /// Runs in order: every target once per repeat, repeats interleaved (A B
    /// A B); in a matrix of several suites, each suite's runs of a repeat in
    /// the file's order of suites.
    pub fn steps(&self) -> Vec<MatrixRun> {
        let several = self.suites.len() > 1;
        (1..=self.repeats)
            .flat_map(|r| {
                self.suites.iter().flat_map(move |ms| {
                    self.targets.iter().map(move |t| MatrixRun {
                        target: t.name.clone(),
                        repeat: r,
                        suite: several.then(|| ms.suite.name().to_string()),
                    })
                })
            })
            .collect()
    }

    /// The suite a step runs.
    pub fn suite_of(&self, s: &MatrixRun) -> &MatrixSuite {
        s.suite
            .as_deref()
            .and_then(|n| self.suites.iter().find(|ms| ms.suite.name() == n))
            .unwrap_or(&self.suites[0])
    }

    /// The plan of one step of `t`: its suite's, with the run's own seed
    /// unless the target's options give one.
    pub fn plan_for(
        &self,
        t: &Target,
        s: &MatrixRun,
    ) -> Result<Box<dyn Plan>, crate::error::Error> {
        self.suite_of(s)
            .plan
            .reseeded(t.options.seed.unwrap_or_else(crate::suite::clock_seed))
    }

    /// Where one target's repeat is stored.
    pub fn output(&self, t: &Target, repeat: usize, results: &Path) -> Output {
        Output::step(&t.name, repeat, results)
    }

    /// The `rqps run` command line a step (one target's repeat of one
    /// suite) is equivalent to, for the plan printed before a matrix runs.
    pub fn command_line(&self, t: &Target, s: &MatrixRun, results: &Path) -> Vec<String> {
        crate::plan::session::command_line(
            self.suite_of(s).plan.as_ref(),
            &t.engine,
            &t.options,
            &self.output(t, s.repeat, results),
        )
    }

    /// Engines that must be installed before the matrix can run.
    pub fn missing_engines(&self) -> Vec<EngineSpec> {
        let mut v: Vec<EngineSpec> = Vec::new();
        for t in &self.targets {
            if let Some(
                e @ EngineSpec {
                    kind,
                    version: Some(ver),
                },
            ) = &t.engine.server
                && crate::engine::install::installed(kind, ver).is_none()
                && !v.contains(e)
            {
                v.push(e.clone());
            }
        }
        v
    }
}

/// The file as TOML, with its size bounded before any target is looked at.
fn decode(path: &Path, src: &str) -> Result<File, MatrixError> {
    let file: File = toml::from_str(src).map_err(|e| MatrixError {
        path: path.to_path_buf(),
        line: e
            .span()
            .map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1),
        field: None,
        // serde's messages may quote a value: a url's password among them.
        message: crate::engine::target::redact(e.message().trim()),
    })?;
    if file.target.is_empty() {
        return Err(MatrixError::whole(
            path,
            "no [[target]] tables: a matrix needs at least one target",
        ));
    }
    // Bounded before any target is looked at: 25,000 targets x 1,000
    // repeats took 1.8 GB and more than 30 s to plan.
    // (A repeats out of its own bounds is refused below, with its line.)
    if let Some(toml::Value::Integer(r)) = file.defaults.get("repeats").map(|v| v.get_ref())
        && (1..=crate::suite::bounds::MAX_REPEATS as i64).contains(r)
    {
        let runs = (file.target.len() as u64).saturating_mul(*r as u64);
        if runs > MAX_RUNS {
            return Err(MatrixError::whole(
                path,
                format!(
                    "{} targets x {r} repeats = {runs} runs: a matrix may have at most {MAX_RUNS}; split it into several files",
                    file.target.len()
                ),
            ));
        }
    }
    if file.target.len() as u64 > MAX_RUNS {
        return Err(MatrixError::whole(
            path,
            format!(
                "{} targets: a matrix may have at most {MAX_RUNS} runs; split it into several files",
                file.target.len()
            ),
        ));
    }
    Ok(file)
}

/// What parsing one matrix file reads from: the file, its folder (paths in
/// it are relative to it) and its `[defaults]`.
struct MatrixSource<'a> {
    path: &'a Path,
    src: &'a str,
    dir: &'a Path,
    d: &'a BTreeMap<String, Spanned<toml::Value>>,
}

impl MatrixSource<'_> {
    /// `file:line: field: message`.
    fn at(&self, span: std::ops::Range<usize>, field: &str, msg: &str) -> MatrixError {
        at(self.path, self.src, span, field, msg)
    }

    /// A string of `[defaults]`.
    fn text(&self, key: &str) -> Result<Option<(String, std::ops::Range<usize>)>, MatrixError> {
        match self.d.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                toml::Value::String(s) => Ok(Some((s.clone(), v.span()))),
                _ => Err(self.at(v.span(), key, "must be a string")),
            },
        }
    }

    /// `suite` (one name, or a list; default: the first suite of the
    /// registry) and `profile` (default: each suite's first).
    fn suites(&self) -> Result<(Vec<&'static dyn Suite>, Option<String>), MatrixError> {
        let find = |name: &str, span: std::ops::Range<usize>| {
            suite::find(name).map_err(|m| self.at(span, "suite", &m.to_string()))
        };
        let suites = match self.d.get("suite") {
            None => vec![suite::registry()[0]],
            Some(v) => match v.get_ref() {
                toml::Value::String(name) => vec![find(name, v.span())?],
                toml::Value::Array(names) if !names.is_empty() => {
                    let mut out: Vec<&'static dyn Suite> = Vec::new();
                    for n in names {
                        let toml::Value::String(name) = n else {
                            return Err(self.at(
                                v.span(),
                                "suite",
                                "must be a name or a list of names",
                            ));
                        };
                        let s = find(name, v.span())?;
                        if out.iter().any(|o| o.name() == s.name()) {
                            return Err(self.at(
                                v.span(),
                                "suite",
                                &format!("{name} is listed twice"),
                            ));
                        }
                        out.push(s);
                    }
                    out
                }
                _ => {
                    return Err(self.at(
                        v.span(),
                        "suite",
                        "must be a name or a list of names (suite = [\"linkbench\", \"tpcc\"])",
                    ));
                }
            },
        };
        let profile = self.text("profile")?.map(|(p, _)| p);
        Ok((suites, profile))
    }

    /// The other `[defaults]` keys: each suite's options (a key goes to
    /// every suite that takes it, and must suit one), the engine options and
    /// the run options every target starts from.
    #[allow(clippy::type_complexity)]
    fn options(
        &self,
        suites: &[&'static dyn Suite],
    ) -> Result<(Vec<toml::Table>, toml::Table, toml::Table), MatrixError> {
        let mut options = vec![toml::Table::new(); suites.len()];
        let mut engine_defaults = toml::Table::new();
        let run_keys = RunOptions::keys();
        let mut run_defaults = toml::Table::new();
        for (key, v) in self.d {
            if MATRIX_KEYS.contains(&key.as_str()) {
                continue;
            }
            if run_keys.contains(key) {
                RunOptions::check_one(key, v.get_ref())
                    .map_err(|e| self.at(v.span(), key, &e.to_string()))?;
                run_defaults.insert(key.clone(), v.get_ref().clone());
                continue;
            }
            if crate::engine::registry::owns_option(key) {
                let one = toml::Table::from_iter([(key.clone(), v.get_ref().clone())]);
                crate::engine::registry::check_any_options(&one)
                    .map_err(|e| self.at(v.span(), key, &e.to_string()))?;
                engine_defaults.insert(key.clone(), v.get_ref().clone());
                continue;
            }
            let mut first_refusal = None;
            let mut taken = false;
            for (suite, opts) in suites.iter().zip(options.iter_mut()) {
                match suite.check_option(key, v.get_ref()) {
                    Ok(()) => {
                        opts.insert(key.clone(), v.get_ref().clone());
                        taken = true;
                    }
                    Err(m) => {
                        first_refusal.get_or_insert(m);
                    }
                }
            }
            if taken {
                continue;
            }
            let runs = suites
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ");
            // A key one of this matrix's suites takes has a bad value: its
            // suite says why. Another suite's key says whose it is, and what
            // this matrix's suite sets the same thing with.
            let ours = suites
                .iter()
                .find(|s| s.option_keys().contains(key))
                .and_then(|s| s.check_option(key, v.get_ref()).err());
            let other = suite::registry().iter().find(|o| {
                !suites.iter().any(|s| s.name() == o.name()) && o.option_keys().contains(key)
            });
            let m = match (ours, other, first_refusal) {
                (Some(m), _, _) => m.to_string(),
                (None, Some(o), _) => {
                    let instead = suites
                        .iter()
                        .find_map(|s| suite::counterpart(*s, *o, key, &|k| k.replace('-', "_")))
                        .map(|c| format!("; {c}"))
                        .unwrap_or_default();
                    format!(
                        "applies only to suite = \"{}\" (this matrix runs {runs}){instead}",
                        o.name()
                    )
                }
                (None, None, Some(m)) => m.to_string(),
                (None, None, None) => format!("no suite of this matrix ({runs}) takes it"),
            };
            return Err(self.at(v.span(), key, &m));
        }
        Ok((options, engine_defaults, run_defaults))
    }

    /// One `[[target]]` table (its name not among `names`, which it joins),
    /// checked as `rqps run` checks its options, against the plans.
    fn target(
        &self,
        t: &TargetEntry,
        plans: &[&dyn Plan],
        engine_defaults: &toml::Table,
        run_defaults: &toml::Table,
        names: &mut std::collections::HashSet<String>,
    ) -> Result<Target, MatrixError> {
        let field = |key: &str| -> Result<Option<Spanned<String>>, MatrixError> {
            match t.get(key) {
                None => Ok(None),
                Some(v) => match v.get_ref() {
                    toml::Value::String(s) => Ok(Some(Spanned::new(v.span(), s.clone()))),
                    _ => Err(self.at(v.span(), key, "must be a string")),
                },
            }
        };
        let Some(name_field) = field("name")? else {
            let span = t.values().next().map(|v| v.span()).unwrap_or(0..0);
            return Err(self.at(span, "name", "every [[target]] needs name = \"...\""));
        };
        let e = Entry {
            name: name_field,
            engine: field("engine")?,
            url: field("url")?,
        };
        let run_keys = RunOptions::keys();
        // The target's run options over the defaults'; a url target's
        // password file comes from [defaults] too, a server has its own.
        let mut run = run_defaults.clone();
        if e.url.is_none() {
            run.remove("password_file");
        }
        for (key, v) in t.iter().filter(|(k, _)| run_keys.contains(k)) {
            RunOptions::check_one(key, v.get_ref())
                .map_err(|m| self.at(v.span(), key, &m.to_string()))?;
            run.insert(key.clone(), v.get_ref().clone());
        }
        let options = RunOptions::from_table(run)
            .map_err(|m| MatrixError::whole(self.path, m.to_string()))?
            .relative_to(self.dir);
        let engine_options = self.engine_options(t, engine_defaults)?;
        let name = e.name.get_ref().trim().to_string();
        if name.is_empty() || name.contains(['/', '\\']) {
            return Err(self.at(
                e.name.span(),
                "name",
                "must be a non-empty name without slashes",
            ));
        }
        if !names.insert(name.clone()) {
            return Err(self.at(
                e.name.span(),
                "name",
                &format!("'{name}' is used by two targets"),
            ));
        }
        let (server, target) = self.engine(&e, &name, plans)?;
        let engine = EngineArgs {
            // An embedded engine (SQLite) needs no server.
            server: server.filter(|e| e.server_arg().is_some()),
            target,
            options: engine_options,
        };
        // Checked now, as the run will check it (a config or password file
        // that cannot be read is refused with its line), and what it read
        // goes on to every run of the target.
        let checked = crate::plan::open::check(&engine, &options, plans).map_err(|r| {
            let message = r.in_file();
            match r
                .option
                .as_deref()
                .and_then(|k| t.get(k).or_else(|| self.d.get(k)))
            {
                Some(v) => self.at(v.span(), r.option.as_deref().unwrap_or(""), &message),
                None => MatrixError::whole(self.path, format!("target {name}: {message}")),
            }
        })?;
        Ok(Target {
            name,
            engine,
            options,
            checked,
        })
    }

    /// `[defaults]`'s engine options, overridden by the target's own.
    fn engine_options(
        &self,
        t: &TargetEntry,
        engine_defaults: &toml::Table,
    ) -> Result<toml::Table, MatrixError> {
        let mut engine_options = engine_defaults.clone();
        let run_keys = RunOptions::keys();
        for (key, v) in t {
            if TARGET_KEYS.contains(&key.as_str()) || run_keys.contains(key) {
                continue;
            }
            if !crate::engine::registry::owns_option(key) {
                return Err(self.at(
                    v.span(),
                    key,
                    &format!(
                        "unknown field `{key}` in [[target]] (expected name, engine, url, config or an engine option such as mysql_storage_engine)"
                    ),
                ));
            }
            let one = toml::Table::from_iter([(key.clone(), v.get_ref().clone())]);
            crate::engine::registry::check_any_options(&one)
                .map_err(|e| self.at(v.span(), key, &e.to_string()))?;
            engine_options.insert(key.clone(), v.get_ref().clone());
        }
        Ok(engine_options)
    }

    /// The target's `engine` or its `url` (parsed), either one, offering
    /// each suite's face: a suite the engine cannot serve is refused here,
    /// not stored as a failed run of every repeat.
    #[allow(clippy::type_complexity)]
    fn engine(
        &self,
        e: &Entry,
        name: &str,
        plans: &[&dyn Plan],
    ) -> Result<(Option<EngineSpec>, Option<crate::engine::target::Target>), MatrixError> {
        let faces = |kind: &crate::engine::kind::EngineKind| {
            plans
                .iter()
                .try_for_each(|p| kind.check_face(p.suite(), p.face()))
        };
        match (&e.engine, &e.url) {
            (Some(_), Some(u)) => {
                Err(self.at(u.span(), "url", "give either engine or url, not both"))
            }
            (None, None) => Err(self.at(
                e.name.span(),
                "engine",
                &format!("target '{name}' needs engine = \"...\" or url = \"...\""),
            )),
            (Some(engine), None) => {
                let spec = engine
                    .get_ref()
                    .parse::<EngineSpec>()
                    .map_err(|m| self.at(engine.span(), "engine", &m.to_string()))?;
                faces(spec.kind).map_err(|m| self.at(engine.span(), "engine", &m.to_string()))?;
                Ok((Some(spec), None))
            }
            (None, Some(u)) => {
                let target = crate::engine::target::Target::parse(u.get_ref())
                    .map_err(|m| self.at(u.span(), "url", &m.to_string()))?;
                faces(target.kind()).map_err(|m| self.at(u.span(), "url", &m.to_string()))?;
                Ok((None, Some(target)))
            }
        }
    }

    /// `repeats` (default 1).
    fn repeats(&self) -> Result<usize, MatrixError> {
        let max_repeats = crate::suite::bounds::MAX_REPEATS as i64;
        match self.d.get("repeats").map(|v| (v.get_ref(), v.span())) {
            None => Ok(1),
            Some((toml::Value::Integer(n), _)) if (1..=max_repeats).contains(n) => Ok(*n as usize),
            Some((_, span)) => Err(self.at(
                span,
                "repeats",
                &format!("must be a whole number from 1 to {max_repeats}"),
            )),
        }
    }

    /// `base`: a target's name (default: the first target).
    fn base(&self, targets: &[Target]) -> Result<String, MatrixError> {
        match self.text("base")? {
            Some((b, span)) => {
                if !targets.iter().any(|t| t.name == b) {
                    return Err(self.at(span, "base", &format!("no target is named '{b}'")));
                }
                Ok(b)
            }
            None => Ok(targets[0].name.clone()),
        }
    }

    /// A duration in seconds of `[defaults]`, within the bounds and at least `min`.
    fn secs(&self, key: &str, min: f64) -> Result<Option<f64>, MatrixError> {
        let Some(v) = self.d.get(key) else {
            return Ok(None);
        };
        let secs = match v.get_ref() {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(f) => *f,
            _ => f64::NAN,
        };
        let secs = crate::suite::bounds::check_secs(secs)
            .map_err(|m| self.at(v.span(), key, &m.to_string()))?;
        if secs < min {
            return Err(self.at(
                v.span(),
                key,
                &format!("must be at least 1 second, got {secs}"),
            ));
        }
        Ok(Some(secs))
    }
}

/// Which steps of a matrix finished, kept beside the results so `--resume` can skip them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Progress {
    pub matrix: String,
    pub done: Vec<MatrixRun>,
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

    pub fn save(&self, path: &Path) -> Result<(), crate::results::StoreError> {
        let bytes = serde_json::to_vec_pretty(self).map_err(|source| {
            crate::results::StoreError::Encode {
                what: "matrix progress",
                source,
            }
        })?;
        crate::util::write_atomic(path, &bytes).map_err(|source| {
            crate::results::StoreError::Write {
                what: "matrix progress",
                path: path.to_path_buf(),
                source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step of the only suite (command lines need only its repeat).
    fn step(repeat: usize) -> MatrixRun {
        MatrixRun {
            target: String::new(),
            repeat,
            suite: None,
        }
    }

    fn parse(src: &str) -> Result<Matrix, MatrixError> {
        Matrix::parse(Path::new("m.toml"), src)
    }

    /// Where a matrix's mistake is said to be: line and field.
    fn place(e: &MatrixError) -> (Option<usize>, Option<&str>) {
        (e.line, e.field.as_deref())
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
    fn a_targets_debug_form_hides_the_password_in_its_url() {
        let m = parse(
            "[defaults]\nprofile = \"ci\"\n[[target]]\nname = \"a\"\nurl = \"postgres://u:sw0rdfish@127.0.0.1:5432/db\"\n",
        )
        .unwrap();
        let shown = format!("{:?}", m.targets[0]);
        assert!(!shown.contains("sw0rdfish"), "{shown}");
        assert!(shown.contains("127.0.0.1:5432"), "{shown}");
    }

    #[test]
    fn password_files_belong_to_url_targets_and_must_be_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let pw = d.path().join("pw");
        std::fs::write(&pw, "secret\n").unwrap();
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
        let m = |src: &str| Matrix::parse(&d.path().join("m.toml"), src);
        let src = "[defaults]\nprofile = \"ci\"\npassword_file = \"pw\"\n\
                   [[target]]\nname = \"a\"\nurl = \"postgres://u@h/db\"\n\
                   [[target]]\nname = \"b\"\nengine = \"sqlite\"\n";
        let parsed = m(src).unwrap();
        assert_eq!(
            parsed.targets[0].options.password_file.as_deref(),
            Some(pw.as_path())
        );
        assert_eq!(parsed.targets[1].options.password_file, None);
        let line = parsed.command_line(&parsed.targets[0], &step(1), Path::new("r"));
        assert!(
            line.windows(2).any(|w| w[0] == "--password-file"),
            "{line:?}"
        );
        assert!(!line.iter().any(|a| a.contains("secret")), "{line:?}");
        let e = m("[[target]]\nname = \"b\"\nengine = \"sqlite\"\npassword_file = \"pw\"\n")
            .err()
            .unwrap();
        assert_eq!(place(&e), (Some(4), Some("password_file")));
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = m(src).err().unwrap();
        assert_eq!(place(&e), (Some(3), Some("password_file")));
        assert!(e.to_string().contains("chmod 600"), "{e}");
    }

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
        let args = m.command_line(&m.targets[1], &step(2), Path::new("res"));
        let joined = args.join(" ");
        assert!(
            joined.contains("--name other")
                && joined.contains("--repeat-number 2")
                && joined.contains("--tests point-query,update-index"),
            "{joined}"
        );
    }

    #[test]
    fn one_thread_count_is_a_list_of_one_and_another_suites_key_names_ours() {
        let target = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";
        let m = parse(&format!(
            "[defaults]\nprofile = \"ci\"\nthreads = 4\n{target}"
        ))
        .unwrap();
        assert_eq!(
            m.suites[0].plan.params_json()["threads"],
            serde_json::json!([4])
        );
        let joined = m
            .command_line(&m.targets[0], &step(1), Path::new("r"))
            .join(" ");
        assert!(joined.contains("--threads 4"), "{joined}");
        // A bad value of this suite's own key says what is wrong with it.
        let e = parse(&format!("[defaults]\nthreads = \"four\"\n{target}")).unwrap_err();
        assert!(!e.message.contains("applies only"), "{e}");
        // Another suite's key: whose it is, and this suite's own.
        let e = parse(&format!(
            "[defaults]\nsuite = \"pgbench\"\nthreads = 4\n{target}"
        ))
        .unwrap_err();
        assert_eq!(
            e.message,
            "applies only to suite = \"sysbench\" (this matrix runs pgbench); \
             pgbench sets its clients with clients"
        );
    }

    #[test]
    fn a_define_list_is_stored_as_the_defines_it_ran() {
        let m = parse(
            "[defaults]\nsuite = \"pgbench\"\nprofile = \"ci\"\ndefine = [\"a=1\", \"b=x\"]\n\
[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap();
        let joined = m
            .command_line(&m.targets[0], &step(1), Path::new("r"))
            .join(" ");
        // Typed again, `--define a=1,b=x` would set a to "1,b=x".
        assert!(joined.contains("--define a=1 --define b=x"), "{joined}");
        assert_eq!(
            m.suites[0].plan.options().get("define"),
            Some(&toml::Value::from(vec!["a=1", "b=x"]))
        );
    }

    #[test]
    fn cpu_budgets_come_from_defaults_or_the_target_and_reach_the_run() {
        let m = parse(
            "[defaults]\nprofile = \"ci\"\nclient_cpus = \"0\"\n\
[[target]]\nname = \"one\"\nengine = \"postgres\"\nserver_cpus = \"0\"\n\
[[target]]\nname = \"all\"\nengine = \"postgres\"\n",
        )
        .unwrap();
        let cpus = |t: &Target| {
            (
                t.options.server_cpus.as_ref().map(|c| c.to_string()),
                t.options.client_cpus.as_ref().map(|c| c.to_string()),
            )
        };
        assert_eq!(cpus(&m.targets[0]), (Some("0".into()), Some("0".into())));
        assert_eq!(cpus(&m.targets[1]), (None, Some("0".into())));
        let joined = m
            .command_line(&m.targets[0], &step(1), Path::new("r"))
            .join(" ");
        assert!(
            joined.ends_with("--server-cpus 0 --client-cpus 0"),
            "{joined}"
        );
        let e = parse("[[target]]\nname = \"a\"\nengine = \"postgres\"\nserver_cpus = \"4096\"\n")
            .unwrap_err();
        assert_eq!(place(&e), (Some(4), Some("server_cpus")));
        assert!(e.message.contains("CPU 4096 is not on this machine"), "{e}");
        let e =
            parse("[defaults]\nclient_cpus = 1\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
                .unwrap_err();
        assert_eq!(place(&e), (Some(2), Some("client_cpus")));
    }

    #[test]
    fn cpu_profile_comes_from_defaults_or_the_target_and_reaches_the_run() {
        let m = parse(
            "[defaults]\ncpu_profile = true\n\
[[target]]\nname = \"on\"\nengine = \"postgres\"\n\
[[target]]\nname = \"off\"\nengine = \"postgres\"\ncpu_profile = false\n",
        )
        .unwrap();
        assert!(m.targets[0].options.cpu_profile && !m.targets[1].options.cpu_profile);
        let on = m
            .command_line(&m.targets[0], &step(1), Path::new("r"))
            .join(" ");
        assert!(on.ends_with("--cpu-profile"), "{on}");
        let off = m
            .command_line(&m.targets[1], &step(1), Path::new("r"))
            .join(" ");
        assert!(!off.contains("--cpu-profile"), "{off}");
        let e =
            parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\ncpu_profile = 1\n").unwrap_err();
        assert_eq!(place(&e), (Some(4), Some("cpu_profile")));
    }

    #[test]
    fn a_suite_on_an_engine_without_its_face_is_refused_at_the_engine_line() {
        let e = parse("[defaults]\nsuite = \"sysbench\"\n[[target]]\nname = \"a\"\nengine = \"rocksdb@8.10.0\"\n")
            .unwrap_err();
        assert_eq!(place(&e), (Some(5), Some("engine")));
        assert!(
            e.message.contains("suite sysbench needs SQL access")
                && e.message.contains("RocksDB (rocksdb) does not offer")
                && e.message.contains("sqlite, mysql, mariadb or postgres"),
            "{e}"
        );
        let e = parse("[defaults]\nsuite = \"dbbench\"\n[[target]]\nname = \"a\"\nurl = \"sqlite:/tmp/x.db\"\n")
            .unwrap_err();
        assert_eq!(place(&e), (Some(5), Some("url")));
        assert!(
            e.message
                .contains("suite dbbench needs key-value access, which SQLite (sqlite) does not offer: run it on rocksdb"),
            "{e}"
        );
        let ok = parse(
            "[defaults]\nsuite = \"dbbench\"\nprofile = \"ci\"\n[[target]]\nname = \"a\"\nurl = \"rocksdb:/tmp/db?version=8.10.0\"\n",
        );
        assert!(ok.is_ok(), "{:?}", ok.err());
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let e = parse("[[target]]\nname = \"a\"\nengine = \"oracle@1\"\n").unwrap_err();
        assert_eq!(place(&e), (Some(3), Some("engine")));
        assert!(
            e.to_string()
                .starts_with("m.toml:3: engine: unknown engine 'oracle'"),
            "{e}"
        );
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\nsurprise = 1\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.to_string().starts_with("m.toml:4:") && e.message.contains("surprise"),
            "{e}"
        );
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\nconfig = \"nope.conf\"\n")
            .unwrap_err();
        assert_eq!(place(&e), (Some(4), Some("config")));
        let e =
            parse("[defaults]\nrepeats = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
                .unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = parse("[defaults]\nbase = \"zz\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
            .unwrap_err();
        assert_eq!(place(&e), (Some(2), Some("base")));
        let e = parse(
            "[defaults]\ntests = [\"nope\"]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap_err();
        assert!(e.message.contains("nope"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("engine"), "{e}");
        let e = parse("[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n").unwrap_err();
        assert_eq!(place(&e), (Some(5), Some("name")));
        let e = parse("").unwrap_err();
        assert_eq!(place(&e), (None, None));
        assert!(
            e.to_string().starts_with("m.toml: ") && e.message.contains("no [[target]]"),
            "{e}"
        );
    }

    #[test]
    fn an_insert_benchmark_matrix_passes_its_options_on() {
        let m = parse(
            "[defaults]\nsuite = \"ibench\"\nclients = 2\nrows_per_client = 500\nwrites = 40\nquery_secs = 1.5\nrates = [100, 500]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap();
        let joined = m
            .command_line(&m.targets[0], &step(1), Path::new("res"))
            .join(" ");
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
        let e = parse(
            "[defaults]\nsuite = \"nosuch\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap_err();
        assert_eq!(place(&e), (Some(2), Some("suite")));
        assert!(e.message.contains("ibench"), "{e}");
    }

    #[test]
    fn progress_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let p = Progress::path(d.path(), Path::new("x/my matrix.toml"));
        let mut pr = Progress {
            matrix: "x".into(),
            done: vec![],
        };
        pr.done.push(MatrixRun {
            target: "a".into(),
            repeat: 1,
            suite: None,
        });
        pr.done.push(MatrixRun {
            target: "a".into(),
            repeat: 1,
            suite: Some("tpcc".into()),
        });
        pr.save(&p).unwrap();
        assert_eq!(Progress::load(&p).done, pr.done);
        // A one-suite matrix's progress reads as it was written before
        // matrices could have several suites.
        let old: Progress =
            serde_json::from_str(r#"{"matrix":"x","done":[{"target":"a","repeat":2}]}"#).unwrap();
        assert_eq!(old.done, [step_of("a", 2, None)]);
    }

    fn step_of(target: &str, repeat: usize, suite: Option<&str>) -> MatrixRun {
        MatrixRun {
            target: target.into(),
            repeat,
            suite: suite.map(str::to_string),
        }
    }

    #[test]
    fn a_matrix_of_two_suites_runs_each_on_every_target_with_the_options_each_takes() {
        let m = parse(
            "[defaults]\nsuite = [\"linkbench\", \"tpcc\"]\nprofile = \"ci\"\nrepeats = 2\n\
             requesters = [3]\nwarehouses = 2\n\
             [[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n",
        )
        .unwrap();
        let names: Vec<&str> = m.suites.iter().map(|s| s.suite.name()).collect();
        assert_eq!(names, ["linkbench", "tpcc"]);
        assert!(m.suites[0].options.contains_key("requesters"));
        assert!(!m.suites[0].options.contains_key("warehouses"));
        assert!(m.suites[1].options.contains_key("warehouses"));
        let steps = m.steps();
        assert_eq!(
            steps[..4],
            [
                step_of("a", 1, Some("linkbench")),
                step_of("b", 1, Some("linkbench")),
                step_of("a", 1, Some("tpcc")),
                step_of("b", 1, Some("tpcc")),
            ]
        );
        assert_eq!(steps.len(), 8);
        let line = m
            .command_line(&m.targets[0], &steps[2], Path::new("r"))
            .join(" ");
        assert!(
            line.contains("--suite tpcc --profile ci") && line.contains("--warehouses 2"),
            "{line}"
        );
        assert!(!line.contains("--requesters"), "{line}");
        // Each step's plan is its suite's.
        assert_eq!(
            m.plan_for(&m.targets[0], &steps[2]).unwrap().suite(),
            "tpcc"
        );
        assert_eq!(
            m.plan_for(&m.targets[0], &steps[0]).unwrap().suite(),
            "linkbench"
        );
        // An option no suite of the matrix takes names the suite it is for.
        let e = parse(
            "[defaults]\nsuite = [\"linkbench\", \"tpcc\"]\nclients = 2\n\
             [[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
        )
        .unwrap_err();
        assert_eq!(place(&e), (Some(3), Some("clients")));
        assert!(
            e.message.contains("this matrix runs linkbench, tpcc"),
            "{e}"
        );
        let e = parse("[defaults]\nsuite = [\"tpcc\", \"tpcc\"]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
            .unwrap_err();
        assert!(e.message.contains("tpcc is listed twice"), "{e}");
        let e = parse("[defaults]\nsuite = []\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
            .unwrap_err();
        assert!(e.message.contains("a name or a list of names"), "{e}");
    }
}
