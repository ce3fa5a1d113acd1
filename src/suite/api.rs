//! What every suite implements and imports: the [`Workload`] trait (a
//! suite, typed), the [`Suite`] and [`Plan`] faces the CLI, the matrix and
//! the report see, and the helpers suites read their options with. The
//! registry that lists the suites is apart, in `suite/mod.rs`, so that no
//! suite imports a module that imports it.

use crate::error::usage;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use super::compat::{CompatConcurrent, CompatPlan, CompatTable, CompatTest, Condition};
use crate::engine::Face;
pub use crate::engine::capacity::Need;
use crate::error::Error;
use crate::harness::{Harness, RunEnd};
use crate::report::section::Section;
use crate::results::TestResult;

/// The basics of a run that every suite's parameters start from: a named
/// profile, the seed and the client part.
#[derive(Clone, Debug)]
pub struct RunBasics {
    pub profile: String,
    pub seed: u64,
    /// `--part I/N`: run this client part's share of the load (suites that
    /// [`Workload::SPLITS`]; the others refuse it).
    pub part: Option<super::part::ClientPart>,
}

/// A flag of the reference tool a suite reproduces (pgbench's `-c`) that
/// rqps spells otherwise: a user's habit gets one line that points at
/// rqps's option instead of clap's "unexpected argument".
#[derive(Clone, Copy, Debug)]
pub struct PeerFlag {
    /// As the peer spells it: `-c`, `--jobs`.
    pub flag: &'static str,
    /// Whether it takes a value (`-c 8`, `-c8`, `--jobs=2`).
    pub value: bool,
    /// What to write instead, `{}` standing for the value (`--clients {}`),
    /// or, where rqps has no such option, what it does instead.
    pub instead: &'static str,
}

/// The pointer for a command line that uses any of `flags`: one line naming
/// every such flag of the peer's and what to write instead, all at once
/// (`-c 8 -T 10 are pgbench's spellings: rqps takes --clients 8 --time 10`).
/// `before` goes before rqps's spellings (`--suite pgbench `, or nothing).
pub fn peer_flag_hint(
    args: &[String],
    peer: &str,
    flags: &[PeerFlag],
    before: &str,
) -> Option<String> {
    let hits = peer_flag_hits(args, flags);
    let (spelt, other): (Vec<_>, Vec<_>) = hits.iter().partition(|(_, i)| i.starts_with("--"));
    let mut parts = Vec::new();
    if !spelt.is_empty() {
        let written: Vec<&str> = spelt.iter().map(|(w, _)| w.as_str()).collect();
        let instead: Vec<&str> = spelt.iter().map(|(_, i)| i.as_str()).collect();
        parts.push(format!(
            "{} {} {peer}'s spelling{}: rqps takes {before}{}",
            written.join(" "),
            if spelt.len() > 1 { "are" } else { "is" },
            if spelt.len() > 1 { "s" } else { "" },
            instead.join(" ")
        ));
    }
    for (written, instead) in other {
        parts.push(format!("{written} is {peer}'s: {instead}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The flags of `flags` that `args` use, as written (`-c 8`) and what to
/// write instead (`--clients 8`), in the order given.
pub fn peer_flag_hits(args: &[String], flags: &[PeerFlag]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        for f in flags {
            let value = if a == f.flag {
                if f.value {
                    Some(it.clone().next().cloned().unwrap_or_else(|| "N".into()))
                } else {
                    None
                }
            } else if f.value && f.flag.len() == 2 && a.len() > 2 && a.starts_with(f.flag) {
                // `-c8`
                Some(a[2..].to_string())
            } else if let Some(v) = a
                .strip_prefix(f.flag)
                .and_then(|r| r.strip_prefix('='))
                .filter(|_| f.flag.starts_with("--"))
            {
                Some(v.to_string())
            } else {
                continue;
            };
            let written = match &value {
                Some(v) => format!("{} {v}", f.flag),
                None => f.flag.to_string(),
            };
            let instead = f.instead.replace("{}", value.as_deref().unwrap_or("N"));
            out.push((written, instead));
            break;
        }
    }
    out
}

/// What an option does that other suites' options do too under another
/// name (sysbench's `--threads` is pgbench's `--clients`), so that one
/// suite's option given to another points at that suite's own spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// How many clients (connections) run the load.
    Clients,
    /// How long a test is measured.
    MeasuredSecs,
    /// How long a test warms up before it is measured.
    WarmupSecs,
}

impl Role {
    /// What a suite sets with it: "sets {what} with --OPTION".
    pub fn what(self) -> &'static str {
        match self {
            Role::Clients => "its clients",
            Role::MeasuredSecs => "how long a test is measured",
            Role::WarmupSecs => "its warm-up",
        }
    }
}

/// Where `option` (a long name, or a matrix key with `_`) is `other`'s, the
/// words that name what `chosen` sets the same thing with, if it has one:
/// `--suite sysbench sets its clients with --threads`. `key` writes an
/// option as the reader spells it (`--threads`, or `threads` in a matrix).
pub fn counterpart(
    chosen: &dyn Suite,
    other: &dyn Suite,
    option: &str,
    key: &dyn Fn(&str) -> String,
) -> Option<String> {
    let option = option.replace('_', "-");
    let (role, _) = other.roles().iter().find(|(_, o)| *o == option)?;
    let ours: Vec<String> = chosen
        .roles()
        .iter()
        .filter(|(r, _)| r == role)
        .map(|(_, o)| key(o))
        .collect();
    (!ours.is_empty()).then(|| {
        format!(
            "{} sets {} with {}",
            chosen.name(),
            role.what(),
            ours.join(" and ")
        )
    })
}

/// A workload, typed. Implement this in the suite's folder and add one line to
/// the registry (`suite/mod.rs`).
pub trait Workload: Sync + 'static {
    /// `--suite NAME`, `suite = "NAME"` in matrices, `suite` in every stored result.
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    /// Whether [`Workload::params`] splits its load by [`RunBasics::part`]
    /// (`rqps run --part I/N`); a suite that does not is refused a part.
    const SPLITS: bool = false;
    /// The engine face it drives: [`Face::Sql`] (the default) or
    /// [`Face::Kv`]. An engine kind without it is refused before it opens.
    const FACE: Face = Face::Sql;
    /// The profiles it knows; the first is the default.
    const PROFILES: &'static [&'static str] = &["quick", "ci", "small-server", "large-server"];
    /// The reference tool's name and the flags of it that rqps spells
    /// otherwise (see [`PeerFlag`]). Default: none.
    const PEER: (&'static str, &'static [PeerFlag]) = ("", &[]);
    /// Its options that other suites spell otherwise, by what they do
    /// (long names): `(Role::Clients, "threads")`. Every suite names its
    /// clients' option.
    const ROLES: &'static [(Role, &'static str)];
    /// The options a user may set, all optional: `rqps run --flag` (clap) and
    /// matrix keys (serde, snake_case field names) fill the same struct.
    /// Declare durations and counts with the [`bounds`](super::bounds) types (`Option<Secs>`,
    /// `Option<Vec<Threads>>`, `Option<Rows>`) so both readers check their limits,
    /// and read them with [`set`] and [`set_all`].
    type Options: clap::Args + Serialize + DeserializeOwned + Default + Clone + Send + Sync;
    /// The checked parameters of a run, stored with every result.
    type Params: Serialize + Send + Sync + 'static;
    /// The keys of the stored [`Workload::Params`] that make the workload,
    /// what the server is asked to do and how much: its shape (tables, rows,
    /// keys, value size and the like), the measured durations, the
    /// distribution, the rates, the test selection. `rqps report` and `rqps
    /// compare` compare only runs that agree on them (in this order they are
    /// named where not). How the same work reaches the server is a treatment,
    /// compared and shown under "what differs": the statement mode
    /// (`ps_mode`), the protocol, and what rqps adds (engine options, CPU
    /// budgets, TLS). Thread counts are compared cell by cell; warm-ups, load
    /// options, the profile's name and the seed may differ. docs/reports.md
    /// lists every key with its reason.
    const WORKLOAD: &'static [&'static str];
    /// The keys of the stored parameters that are treatments of the suite's
    /// own (`ps_mode`, `protocol`): compared by reports, but, with the
    /// workload and what rqps adds (engine options, CPU budgets, TLS), part
    /// of what makes a name's repeats one experiment. Default: none.
    const TREATMENTS: &'static [&'static str] = &[];
    /// The keys of stored parameters that record how a run was made but
    /// are neither compared nor shown under what differs (a script's plan
    /// as it ran, with the seed it drew). Default: none.
    const RECORDED: &'static [&'static str] = &[];

    /// The profile with the options applied, checked: one line saying what is
    /// wrong otherwise.
    fn params(common: &RunBasics, o: Self::Options) -> Result<Self::Params, crate::error::Error>;
    /// How many steps the plan has.
    fn step_count(p: &Self::Params) -> usize;
    /// Estimated seconds of the measured steps (loads depend on the engine).
    fn estimate_secs(p: &Self::Params) -> f64;
    /// Estimated bytes the plan's load puts on the engine's disk (data and
    /// indexes, before any compression), for the check against free space
    /// and the load's share of the time estimate; 0: no load.
    fn load_bytes(_p: &Self::Params) -> u64 {
        0
    }
    /// What `rqps tests --suite NAME` prints: the steps the parameters give.
    fn describe(p: &Self::Params) -> String;
    /// Runs every step through the harness.
    fn run(p: &Self::Params, h: &mut Harness<'_>) -> Result<RunEnd, Error>;
    /// Refuses a target the plan cannot start on, once it is open and before
    /// a run is stored (a usage error says what to do). Default: any.
    fn check_target(_p: &Self::Params, _driver: &dyn crate::engine::Driver) -> Result<(), Error> {
        Ok(())
    }
    /// The most connections (and prepared statements) the plan opens on a
    /// server at once, with who opens them: a throwaway server is sized
    /// for it, and a server too small is refused before anything loads.
    fn need(p: &Self::Params) -> Need;
    /// What an event is and what hardware costs are divided by
    /// ([`crate::harness::Units`]): each suite names what it counts.
    const UNITS: crate::harness::Units;
    /// The line printed when a test ends.
    fn line(label: &str, r: &TestResult) -> String {
        crate::harness::result_line(label, r)
    }
    /// What the suite adds to reports (its own tables, group titles); `None`:
    /// its results appear in the generic test x threads tables.
    fn report() -> Option<&'static dyn Section> {
        None
    }
    /// What `rqps compat` runs of the suite: its tests on its own workers,
    /// a few events each from the seed, on tables its load fills
    /// ([`CompatPlan`]). `None`: the suite takes no part (an engine face
    /// other than SQL, or nothing to compare).
    fn compat(_p: &Self::Params) -> Option<CompatPlan> {
        None
    }
}

/// The load rate the time estimates assume, bytes per second of
/// [`Workload::load_bytes`]: a TPC-C load into a server on a 2-CPU VM ran at
/// about 60 MB/s (issue 29); loads on faster machines finish sooner.
pub const LOAD_BYTES_PER_SEC: f64 = 50e6;

/// The harness's own time per step beyond its warm-up and measured time:
/// the 250 ms busy-machine window before it (its size and status probes run
/// beside it), the probes after it, connects, settling and storing. Measured
/// on a debug build on a shared 2-core machine: 0.3 s a step on a throwaway
/// PostgreSQL (`--profile ci --read-secs 0.3 --write-secs 0.3 --warmup-secs
/// 0.1`: 38 steps in 27 s, 15 s of them warm-up and measured), up to 0.55 s
/// under heavier load. Without it the start line said "about 15 s" for a run
/// of 27-36 s.
pub const STEP_OVERHEAD_SECS: f64 = 0.4;

/// Estimated seconds of `plan` as a whole: its load, its measured steps and
/// the harness's own time per step ([`STEP_OVERHEAD_SECS`]).
pub fn estimate_total_secs(plan: &dyn Plan) -> f64 {
    plan.estimate_secs()
        + plan.step_count() as f64 * STEP_OVERHEAD_SECS
        + plan.load_bytes() as f64 / LOAD_BYTES_PER_SEC
}

/// A suite as the CLI, matrix and report see it (object-safe; made from a
/// [`Workload`] by [`Registered`]).
pub trait Suite: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn profiles(&self) -> &'static [&'static str];
    /// The engine face it needs ([`Workload::FACE`]).
    fn face(&self) -> Face;
    /// Adds the suite's options to a command (`rqps run`, `rqps tests`).
    fn args(&self, cmd: clap::Command) -> clap::Command;
    /// The plan from parsed command-line options.
    fn plan_cli(
        &self,
        common: &RunBasics,
        m: &clap::ArgMatches,
    ) -> Result<Box<dyn Plan>, crate::error::Error>;
    /// The plan from a matrix file's table of options.
    fn plan_toml(
        &self,
        common: &RunBasics,
        t: &toml::Table,
    ) -> Result<Box<dyn Plan>, crate::error::Error>;
    /// Checks one matrix option on its own, so that an error can name its line.
    fn check_option(&self, key: &str, value: &toml::Value) -> Result<(), crate::error::Error>;
    /// The suite's report section, if it has one.
    fn report(&self) -> Option<&'static dyn Section>;
    /// The parameters that make its workload ([`Workload::WORKLOAD`]).
    fn workload(&self) -> &'static [&'static str];
    /// Its own treatments ([`Workload::TREATMENTS`]).
    fn treatments(&self) -> &'static [&'static str];
    /// Its parameters kept as a record only ([`Workload::RECORDED`]).
    fn recorded(&self) -> &'static [&'static str];
    /// Its options by what they do ([`Workload::ROLES`]).
    fn roles(&self) -> &'static [(Role, &'static str)];
    /// Its options as matrix keys (long names with `_` for `-`).
    fn option_keys(&self) -> Vec<String> {
        self.args(clap::Command::new("run"))
            .get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| l.replace('-', "_"))
            .collect()
    }
    /// One line pointing at rqps's option when `args` use a flag of the
    /// reference tool ([`Workload::PEER`]).
    fn peer_hint(&self, _args: &[String]) -> Option<String> {
        None
    }
    /// The reference tool's name and its flags that rqps spells otherwise
    /// ([`Workload::PEER`]).
    fn peer(&self) -> (&'static str, &'static [PeerFlag]) {
        ("", &[])
    }
}

/// A suite's checked parameters, ready to run.
pub trait Plan: Send + Sync {
    fn suite(&self) -> &'static str;
    fn profile(&self) -> &str;
    /// The engine face its suite needs ([`Workload::FACE`]).
    fn face(&self) -> Face;
    /// The parameters as stored with the run.
    fn params_json(&self) -> serde_json::Value;
    fn step_count(&self) -> usize;
    fn estimate_secs(&self) -> f64;
    /// [`Workload::load_bytes`].
    fn load_bytes(&self) -> u64;
    fn describe(&self) -> String;
    fn run(&self, h: &mut Harness<'_>) -> Result<RunEnd, Error>;
    /// [`Workload::check_target`].
    fn check_target(&self, driver: &dyn crate::engine::Driver) -> Result<(), Error>;
    /// The line printed when one of its tests ends.
    fn line(&self) -> fn(&str, &TestResult) -> String;
    /// [`Workload::UNITS`].
    fn units(&self) -> crate::harness::Units;
    /// What it opens on a server at most at once ([`Workload::need`]).
    fn need(&self) -> Need;
    /// [`Workload::compat`].
    fn compat(&self) -> Option<CompatPlan>;
    /// The same plan with another seed (a matrix's runs each draw their own).
    fn reseeded(&self, seed: u64) -> Result<Box<dyn Plan>, Error>;
    /// The options it was made from, as a matrix table writes them (only
    /// those set).
    fn options(&self) -> toml::Table;
    /// The `rqps run` arguments that make this plan again: `--suite`,
    /// `--profile` and the options set, derived from the typed options
    /// ([`args_of`](crate::cmdline::args::args_of)), whichever way they came.
    fn args(&self) -> Vec<String>;
}

impl std::fmt::Debug for dyn Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "suite {}", self.name())
    }
}

/// Makes a [`Suite`] of a [`Workload`].
pub struct Registered<W>(PhantomData<W>);

impl<W> Registered<W> {
    pub const NEW: Self = Registered(PhantomData);
}

struct TypedPlan<W: Workload> {
    common: RunBasics,
    /// The options the parameters were made from, for [`Plan::reseeded`].
    o: W::Options,
    p: W::Params,
}

impl<W: Workload> Registered<W> {
    fn plan(
        &self,
        common: &RunBasics,
        o: W::Options,
    ) -> Result<Box<dyn Plan>, crate::error::Error> {
        if !W::PROFILES.contains(&common.profile.as_str()) {
            return Err(usage(format!(
                "unknown profile '{}' for --suite {}{}: expected one of {}",
                common.profile,
                W::NAME,
                crate::util::suggest::hint(&common.profile, W::PROFILES.iter().copied()),
                W::PROFILES.join(", ")
            )));
        }
        if let Some(part) = common.part
            && !W::SPLITS
        {
            return Err(usage(format!(
                "--part {part}: suite {} cannot split its load between client parts; run it without --part",
                W::NAME
            )));
        }
        Ok(Box::new(TypedPlan::<W> {
            common: common.clone(),
            p: W::params(common, o.clone())?,
            o,
        }))
    }
}

impl<W: Workload> Suite for Registered<W> {
    fn name(&self) -> &'static str {
        W::NAME
    }

    fn about(&self) -> &'static str {
        W::ABOUT
    }

    fn profiles(&self) -> &'static [&'static str] {
        W::PROFILES
    }

    fn face(&self) -> Face {
        W::FACE
    }

    fn args(&self, cmd: clap::Command) -> clap::Command {
        <W::Options as clap::Args>::augment_args(cmd)
    }

    fn plan_cli(
        &self,
        common: &RunBasics,
        m: &clap::ArgMatches,
    ) -> Result<Box<dyn Plan>, crate::error::Error> {
        let o = <W::Options as clap::FromArgMatches>::from_arg_matches(m)
            .map_err(|e| usage(FirstLine(e)))?;
        self.plan(common, o)
    }

    fn plan_toml(
        &self,
        common: &RunBasics,
        t: &toml::Table,
    ) -> Result<Box<dyn Plan>, crate::error::Error> {
        let o = W::Options::deserialize(t.clone()).map_err(|e| usage(e.message()))?;
        self.plan(common, o)
    }

    fn report(&self) -> Option<&'static dyn Section> {
        W::report()
    }

    fn workload(&self) -> &'static [&'static str] {
        W::WORKLOAD
    }

    fn treatments(&self) -> &'static [&'static str] {
        W::TREATMENTS
    }

    fn recorded(&self) -> &'static [&'static str] {
        W::RECORDED
    }

    fn roles(&self) -> &'static [(Role, &'static str)] {
        W::ROLES
    }

    fn peer_hint(&self, args: &[String]) -> Option<String> {
        let (peer, flags) = W::PEER;
        peer_flag_hint(args, peer, flags, "")
    }

    fn peer(&self) -> (&'static str, &'static [PeerFlag]) {
        W::PEER
    }

    fn check_option(&self, key: &str, value: &toml::Value) -> Result<(), crate::error::Error> {
        let mut t = toml::Table::new();
        t.insert(key.to_string(), value.clone());
        W::Options::deserialize(t)
            .map(|_| ())
            .map_err(|e| usage(e.message()))
    }
}

impl<W: Workload> Plan for TypedPlan<W> {
    fn suite(&self) -> &'static str {
        W::NAME
    }

    fn profile(&self) -> &str {
        &self.common.profile
    }

    fn face(&self) -> Face {
        W::FACE
    }

    fn params_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.p).unwrap_or_default()
    }

    fn step_count(&self) -> usize {
        W::step_count(&self.p)
    }

    fn estimate_secs(&self) -> f64 {
        W::estimate_secs(&self.p)
    }

    fn load_bytes(&self) -> u64 {
        W::load_bytes(&self.p)
    }

    fn describe(&self) -> String {
        W::describe(&self.p)
    }

    fn run(&self, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
        W::run(&self.p, h)
    }

    fn check_target(&self, driver: &dyn crate::engine::Driver) -> Result<(), Error> {
        W::check_target(&self.p, driver)
    }

    fn line(&self) -> fn(&str, &TestResult) -> String {
        W::line
    }

    fn units(&self) -> crate::harness::Units {
        W::UNITS
    }

    fn need(&self) -> Need {
        W::need(&self.p)
    }

    fn compat(&self) -> Option<CompatPlan> {
        W::compat(&self.p)
    }

    fn reseeded(&self, seed: u64) -> Result<Box<dyn Plan>, Error> {
        let common = RunBasics {
            seed,
            ..self.common.clone()
        };
        Ok(Box::new(TypedPlan::<W> {
            p: W::params(&common, self.o.clone())?,
            o: self.o.clone(),
            common,
        }))
    }

    fn options(&self) -> toml::Table {
        toml::Table::try_from(&self.o).unwrap_or_default()
    }

    fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--suite".to_string(),
            W::NAME.to_string(),
            "--profile".to_string(),
            self.common.profile.clone(),
        ];
        a.extend(crate::cmdline::args::args_of(&self.o));
        a
    }
}

use serde::Deserialize as _;

/// A clap error shown as its first line, without its `error: ` prefix.
#[derive(Debug, thiserror::Error)]
#[error("{}", first_line(&.0.to_string()))]
struct FirstLine(#[source] clap::Error);

/// The first line of a (clap) error, without its `error: ` prefix.
fn first_line(s: &str) -> &str {
    s.lines()
        .next()
        .unwrap_or("bad arguments")
        .trim_start_matches("error: ")
}

/// Turns an `Option` setting into the value a profile gets (a checked
/// [`bounds`](super::bounds) value into its plain number).
pub fn set<T, U: Into<T>>(slot: &mut T, v: Option<U>) {
    if let Some(v) = v {
        *slot = v.into();
    }
}

/// A list option as a matrix gives it: one value (`threads = 4`) or a list
/// (`threads = [1, 4]`), as the command line takes `--threads 4` and
/// `--threads 1,4`. Every `Option<Vec<_>>` of a suite's options reads with
/// it: `#[serde(default, deserialize_with = "crate::suite::api::one_or_many")]`.
pub fn one_or_many<'de, D: serde::Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    // Read as a value first, so that a bad one says what is wrong with it
    // (`invalid type: string "four", expected i64`), as a plain field would.
    let v = toml::Value::deserialize(d)?;
    let read = match v {
        toml::Value::Array(_) => Vec::<T>::deserialize(v),
        v => T::deserialize(v).map(|one| vec![one]),
    };
    read.map(Some)
        .map_err(|e| serde::de::Error::custom(e.message()))
}

/// [`set`] for a list (`--threads 1,2,4` into `Vec<usize>`).
pub fn set_all<T, U: Into<T>>(slot: &mut Vec<T>, v: Option<Vec<U>>) {
    if let Some(v) = v {
        *slot = v.into_iter().map(Into::into).collect();
    }
}

/// `auto` or `disable`, as `--ps-mode` and matrices spell it.
pub fn ps_mode(v: &str) -> Result<crate::engine::PsMode, crate::error::Error> {
    match v {
        "auto" => Ok(crate::engine::PsMode::Auto),
        "disable" => Ok(crate::engine::PsMode::Disable),
        _ => Err(usage(format!(
            "--ps-mode must be auto or disable, got '{v}'"
        ))),
    }
}

/// A seed from the clock, for runs that were not given one.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
