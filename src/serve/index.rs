//! The results folder as `rqps serve` reads it: an index of its runs, kept
//! in memory and refreshed at most once a second by a scan that stats each
//! run's `run.json` and `tests/` and rereads only what changed (and runs
//! still `running`, whose writer may have died); the compatibility records;
//! a compact cache of each run's QPS per test for histories; and a bounded
//! cache of rendered pages. A request reads the index, never every file.
//!
//! Only what the folder holds is served: a run is a directory directly in
//! it (a symbolic link is counted and left out, never followed), its files
//! are read by `results::read_result_file` (no link, no FIFO, bounded), and
//! every string that can carry a URL or a command line passes through the
//! engines' redaction before anything renders it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::engine::target::{redact, redact_args};
use crate::results::compat::CompatRecord;
use crate::results::{self, Keep, RunDoc, Status, TestResult};

/// How often the folder is scanned at most.
const SCAN_EVERY: Duration = Duration::from_secs(1);
/// A request that finds the last scan older than this waits for a new one;
/// between [`SCAN_EVERY`] and this it takes the last, and the scanner
/// thread scans again (pages of a live run reload every 5 s).
const SCAN_WAIT: Duration = Duration::from_secs(10);
/// The rendered pages kept, in bytes (the least recently used go first).
const PAGE_CACHE_BYTES: usize = 64 << 20;

/// What changes when a run's files change: `run.json`'s time and size, and
/// the time of its `tests/` folder (a test file written or replaced).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sig {
    run_mtime: i128,
    run_size: u64,
    tests_mtime: i128,
}

fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The signature of run directory `dir`; `None` when it holds no
/// `run.json` (not a run, or one whose first file is not written yet).
fn sig_of(dir: &Path) -> Option<Sig> {
    let run = std::fs::symlink_metadata(dir.join("run.json")).ok()?;
    let tests = std::fs::symlink_metadata(dir.join("tests")).ok();
    Some(Sig {
        run_mtime: mtime_ns(&run),
        run_size: run.len(),
        tests_mtime: tests.as_ref().map_or(0, mtime_ns),
    })
}

/// One run as the runs page lists it.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// The run's directory in the folder (its id).
    pub run_id: String,
    pub name: String,
    pub suite: String,
    pub repeat: usize,
    /// `running`, `ok`, `failed`, `interrupted`, `killed`, or `unreadable`.
    pub status: String,
    pub engine: String,
    pub version: String,
    pub started: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
    /// The target, credentials redacted.
    pub target: String,
    /// Test files stored so far.
    pub tests: usize,
    /// `2/4`: one client part of a split load, not reported until merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Why the run cannot be read (status `unreadable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A run of commands alone (a script's `prepare` or `cleanup`): it
    /// measured nothing, and reports neither count nor compare it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub commands_only: bool,
    #[serde(skip)]
    pub sig: Sig,
}

impl RunSummary {
    pub fn running(&self) -> bool {
        self.status == Status::Running.as_str()
    }

    /// Readable, whole (not one part of a split load): what reports count.
    pub fn reportable(&self) -> bool {
        self.error.is_none() && self.part.is_none()
    }
}

/// `20250101-100000-x` → `2025-01-01T10:00:00Z`, to place a run that does
/// not read among the others.
fn stamp_time(dir: &str) -> String {
    let b = dir.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if digits(0..8) && b.get(8) == Some(&b'-') && digits(9..15) {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &dir[0..4],
            &dir[4..6],
            &dir[6..8],
            &dir[9..11],
            &dir[11..13],
            &dir[13..15]
        )
    } else {
        String::new()
    }
}

/// A value's strings redacted, at any depth.
fn redact_value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => *s = redact(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_value),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_value),
        _ => {}
    }
}

/// A run with every string that may hold a credential redacted: the
/// target, the command line, parameters, settings, the server's config,
/// and what tests say of themselves. rqps stores them redacted; a run
/// written by hand, or by another tool, may not be.
pub fn scrub(doc: &mut RunDoc) {
    doc.target = redact(&doc.target);
    doc.command_line = redact_args(&doc.command_line);
    redact_value(&mut doc.params);
    for v in doc.settings.values_mut() {
        *v = redact(v);
    }
    if let Some(s) = &mut doc.server {
        s.config = redact_args(&s.config);
        s.config_file = s.config_file.as_deref().map(redact);
        s.binaries = redact(&s.binaries);
    }
    for t in &mut doc.tests {
        scrub_test(t);
    }
}

fn scrub_test(t: &mut TestResult) {
    t.reason = t.reason.as_deref().map(redact);
    t.warnings = redact_args(&t.warnings);
    for v in t.detail.values_mut() {
        redact_value(v);
    }
}

/// A compatibility record with its engines' targets and command line redacted.
pub fn scrub_record(r: &mut CompatRecord) {
    r.command_line = redact_args(&r.command_line);
    for e in std::iter::once(&mut r.reference).chain(r.targets.iter_mut()) {
        e.id.target = redact(&e.id.target);
        e.left_out = e.left_out.as_deref().map(redact);
    }
}

/// Reads the summary of run `id` in `root`.
fn summarize(root: &Path, id: &str, sig: Sig) -> RunSummary {
    let dir = root.join(id);
    let mut s = RunSummary {
        run_id: id.to_string(),
        name: String::new(),
        suite: String::new(),
        repeat: 0,
        status: "unreadable".into(),
        engine: String::new(),
        version: String::new(),
        started: stamp_time(id),
        finished: None,
        target: String::new(),
        tests: 0,
        part: None,
        error: None,
        commands_only: false,
        sig,
    };
    match results::read_run_keeping(&dir, Keep::Context) {
        Ok(mut doc) => {
            scrub(&mut doc);
            s.tests = std::fs::read_dir(dir.join("tests")).map_or(0, |d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count()
            });
            s.name = doc.name;
            s.suite = doc.suite;
            s.repeat = doc.repeat;
            s.status = doc.status.as_str().to_string();
            s.engine = doc.engine.name;
            s.version = doc.engine.version;
            s.started = doc.started;
            s.finished = doc.finished;
            s.target = doc.target;
            s.commands_only = !doc.measures;
            s.part = doc
                .part
                .filter(|p| p.count > 1)
                .map(|p| format!("{}/{}", p.index, p.count));
        }
        Err(e) => {
            // The message names the file: by its place in the folder.
            let msg = e.to_string().replace(&dir.display().to_string(), id);
            s.error = Some(redact(&msg));
        }
    }
    s
}

/// The runs at one moment, newest first, and what the listing left out.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub runs: Vec<RunSummary>,
    /// Entries of the folder that are symbolic links: not followed.
    pub links: usize,
    /// Every suite, and every name (newest first), of the runs that read.
    pub suites: Vec<String>,
    pub names: Vec<String>,
}

impl Snapshot {
    fn new(mut runs: Vec<RunSummary>, links: usize) -> Self {
        runs.sort_by(|a, b| (&b.started, &b.run_id).cmp(&(&a.started, &a.run_id)));
        let mut suites: Vec<String> = runs
            .iter()
            .filter(|r| r.error.is_none())
            .map(|r| r.suite.clone())
            .collect();
        suites.sort();
        suites.dedup();
        let mut seen = HashSet::new();
        let names = runs
            .iter()
            .filter(|r| r.error.is_none() && seen.insert(r.name.as_str()))
            .map(|r| r.name.clone())
            .collect();
        Snapshot {
            runs,
            links,
            suites,
            names,
        }
    }

    pub fn run(&self, id: &str) -> Option<&RunSummary> {
        self.runs.iter().find(|r| r.run_id == id)
    }
}

/// One test of a run, as a history reads it.
struct HistTest {
    test: Arc<str>,
    unit: Arc<str>,
    threads: usize,
    qps: f64,
    ok: bool,
    reported: bool,
}

/// Each run's tests as a history reads them, by run id, with the run's
/// signature when read; and the test names and units, each kept once.
type HistCache = (HashMap<String, (Sig, Arc<[HistTest]>)>, HashSet<Arc<str>>);

/// A rendered page and what it was made from.
pub struct Cached {
    /// A hash of the runs (ids and signatures) and records it read.
    pub made_from: u64,
    pub status: u16,
    pub html: Arc<str>,
    pub json: Arc<str>,
    /// A run it shows is still being written: the page reloads itself.
    pub live: bool,
}

#[derive(Default)]
struct PageCache {
    order: VecDeque<String>,
    pages: HashMap<String, Arc<Cached>>,
    bytes: usize,
}

impl PageCache {
    fn get(&mut self, key: &str, made_from: u64) -> Option<Arc<Cached>> {
        let hit = self
            .pages
            .get(key)
            .filter(|c| c.made_from == made_from)?
            .clone();
        self.order.retain(|k| k != key);
        self.order.push_back(key.to_string());
        Some(hit)
    }

    fn put(&mut self, key: String, page: Arc<Cached>) {
        let size = |c: &Cached| c.html.len() + c.json.len() + 64;
        if let Some(old) = self.pages.remove(&key) {
            self.bytes -= size(&old);
            self.order.retain(|k| *k != key);
        }
        self.bytes += size(&page);
        self.pages.insert(key.clone(), page);
        self.order.push_back(key);
        while self.bytes > PAGE_CACHE_BYTES && self.order.len() > 1 {
            let Some(k) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.pages.remove(&k) {
                self.bytes -= size(&old);
            }
        }
    }
}

/// Everything the scan keeps between requests.
#[derive(Default)]
struct State {
    scanned: Option<Instant>,
    snapshot: Arc<Snapshot>,
    compat_sig: u64,
    compat: Arc<Records>,
}

/// The compatibility records, oldest first, each with its file's name.
#[derive(Default)]
pub struct Records {
    pub records: Vec<(String, CompatRecord)>,
    pub warnings: Vec<String>,
}

/// The folder `rqps serve` serves.
pub struct Folder {
    /// As the user gave it (the commands the pages suggest name it so).
    pub root: PathBuf,
    state: Mutex<State>,
    /// Held by the one scan at a time (the state's lock is not: requests
    /// read the last snapshot while a scan runs).
    scanning: Mutex<()>,
    /// Asks the scanner thread for a scan.
    wake: Mutex<mpsc::SyncSender<()>>,
    hist: Mutex<HistCache>,
    pages: Mutex<PageCache>,
}

/// A lock whose holder panicked is still the data (every writer leaves it whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The signature of the compatibility records' folder: each file's name,
/// time and size.
fn compat_sig(root: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let dir = root.join(results::compat::DIR);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut files: Vec<(String, i128, u64)> = entries
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((
                    e.file_name().to_string_lossy().into_owned(),
                    mtime_ns(&m),
                    m.len(),
                ))
            })
            .collect();
        files.sort();
        files.hash(&mut h);
    }
    h.finish()
}

impl Folder {
    /// The folder at `root`, scanned once, with a thread that scans it
    /// again when a request finds the last scan stale (it ends with the
    /// folder).
    pub fn open(root: PathBuf) -> Arc<Folder> {
        let (wake, asked) = mpsc::sync_channel::<()>(1);
        let f = Arc::new(Folder {
            root,
            state: Mutex::new(State::default()),
            scanning: Mutex::new(()),
            wake: Mutex::new(wake),
            hist: Mutex::new(Default::default()),
            pages: Mutex::new(PageCache::default()),
        });
        f.refresh();
        let weak = Arc::downgrade(&f);
        // Without the thread, requests scan themselves (SCAN_WAIT below).
        let _ = std::thread::Builder::new()
            .name("serve-scan".into())
            .spawn(move || {
                while asked.recv().is_ok() {
                    match weak.upgrade() {
                        Some(f) => f.refresh(),
                        None => return,
                    }
                }
            });
        f
    }

    /// The runs now. A scan more than [`SCAN_EVERY`] old is followed by
    /// another, in the scanner thread, while this request takes the last
    /// one; one more than [`SCAN_WAIT`] old (the first request after a
    /// quiet while) is followed by another before the answer.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.fresh();
        Arc::clone(&lock(&self.state).snapshot)
    }

    fn fresh(&self) {
        let age = lock(&self.state).scanned.map(|t| t.elapsed());
        match age {
            Some(a) if a < SCAN_EVERY => {}
            Some(a) if a < SCAN_WAIT => {
                // Full: a scan is asked for already.
                let _ = lock(&self.wake).try_send(());
            }
            _ => self.refresh(),
        }
    }

    /// Scans the folder, unless a scan ended less than [`SCAN_EVERY`] ago
    /// (another request's, waited for).
    fn refresh(&self) {
        let _one = lock(&self.scanning);
        let old = {
            let st = lock(&self.state);
            if st.scanned.is_some_and(|t| t.elapsed() < SCAN_EVERY) {
                return;
            }
            Arc::clone(&st.snapshot)
        };
        let snapshot = self.scan(&old);
        let csig = compat_sig(&self.root);
        let records = {
            let st = lock(&self.state);
            (csig != st.compat_sig || st.scanned.is_none()).then(|| self.read_records())
        };
        let mut st = lock(&self.state);
        if let Some(snapshot) = snapshot {
            st.snapshot = Arc::new(snapshot);
        }
        if let Some(r) = records {
            st.compat = Arc::new(r);
            st.compat_sig = csig;
        }
        st.scanned = Some(Instant::now());
    }

    /// The folder's runs, when they changed since `old`: those unchanged
    /// taken from it, the rest read (in parallel). `None`: nothing changed
    /// (nothing is copied then).
    fn scan(&self, old: &Snapshot) -> Option<Snapshot> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return (!old.runs.is_empty()).then(Snapshot::default);
        };
        let mut links = 0;
        let mut listed: Vec<(String, Sig)> = Vec::new();
        for e in entries.flatten() {
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            if name.starts_with('.') || name == results::compat::DIR {
                continue;
            }
            let Ok(kind) = e.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                links += 1;
                continue;
            }
            if !kind.is_dir() {
                continue;
            }
            if let Some(sig) = sig_of(&e.path()) {
                listed.push((name, sig));
            }
        }
        let known: HashMap<&str, &RunSummary> =
            old.runs.iter().map(|r| (r.run_id.as_str(), r)).collect();
        // Runs still running are read again: their writer may have died.
        let read: Vec<&(String, Sig)> = listed
            .iter()
            .filter(|(id, sig)| {
                known
                    .get(id.as_str())
                    .is_none_or(|r| r.sig != *sig || r.running())
            })
            .collect();
        let fresh = crate::util::par_map(&read, |(id, sig)| summarize(&self.root, id, *sig));
        let changed = listed.len() != old.runs.len()
            || links != old.links
            || fresh.iter().any(|f| {
                known
                    .get(f.run_id.as_str())
                    .is_none_or(|o| o.sig != f.sig || o.status != f.status || o.tests != f.tests)
            });
        if !changed {
            return None;
        }
        let mut fresh: HashMap<String, RunSummary> =
            fresh.into_iter().map(|f| (f.run_id.clone(), f)).collect();
        let runs = listed
            .iter()
            .filter_map(|(id, _)| {
                fresh
                    .remove(id)
                    .or_else(|| known.get(id.as_str()).map(|r| (*r).clone()))
            })
            .collect();
        Some(Snapshot::new(runs, links))
    }

    fn read_records(&self) -> Records {
        let dir = self.root.join(results::compat::DIR);
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            return Records {
                records: Vec::new(),
                warnings: vec![format!(
                    "{}/ is not a folder (a symbolic link is not followed): no compatibility record read",
                    results::compat::DIR
                )],
            };
        }
        let (named, warnings) = results::compat::read_all_named(&self.root);
        let records = named
            .into_iter()
            .filter_map(|(path, mut r)| {
                scrub_record(&mut r);
                Some((path.file_name()?.to_string_lossy().into_owned(), r))
            })
            .collect();
        let root = self.root.display().to_string();
        Records {
            records,
            warnings: warnings
                .iter()
                .map(|w| redact(&w.replace(&root, ".")))
                .collect(),
        }
    }

    /// The compatibility records now.
    pub fn records(&self) -> Arc<Records> {
        self.fresh();
        Arc::clone(&lock(&self.state).compat)
    }

    /// A hash of `runs`' ids and signatures, and of the records when
    /// `with_records`: what a cached page was made from.
    pub fn made_from<'a>(
        &self,
        runs: impl Iterator<Item = &'a RunSummary>,
        with_records: bool,
    ) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for r in runs {
            (&r.run_id, r.sig, &r.status).hash(&mut h);
        }
        if with_records {
            lock(&self.state).compat_sig.hash(&mut h);
        }
        h.finish()
    }

    /// The page cached under `key` if it was made from `made_from`, else
    /// the one `make` makes, cached.
    pub fn page(&self, key: &str, made_from: u64, make: impl FnOnce() -> Cached) -> Arc<Cached> {
        if let Some(hit) = lock(&self.pages).get(key, made_from) {
            return hit;
        }
        let page = Arc::new(make());
        lock(&self.pages).put(key.to_string(), Arc::clone(&page));
        page
    }

    /// The runs of `names` read as a report reads them (`keep`), oldest
    /// first, each redacted; a run that does not read, or is one part of a
    /// split load, is left out with a warning (as `rqps report` leaves it).
    pub fn read_runs(&self, runs: &[&RunSummary], keep: Keep) -> (Vec<RunDoc>, Vec<String>) {
        let dirs: Vec<PathBuf> = runs.iter().map(|r| self.root.join(&r.run_id)).collect();
        let (mut docs, warnings) = crate::report::load::read_dirs(&dirs, keep);
        docs.iter_mut().for_each(scrub);
        // A run is named by its place in the folder.
        let root = format!("{}/", self.root.display());
        let warnings = warnings
            .iter()
            .map(|w| redact(&w.replace(&root, "")))
            .collect();
        (docs, warnings)
    }

    /// `runs` as a history reads them (each test's key, status and QPS),
    /// from the compact cache where a run is unchanged; a run that does not
    /// read is left out.
    pub fn history_runs(&self, runs: &[&RunSummary]) -> Vec<RunDoc> {
        let missing: Vec<&RunSummary> = {
            let h = lock(&self.hist);
            runs.iter()
                .filter(|r| h.0.get(&r.run_id).is_none_or(|(s, _)| *s != r.sig))
                .copied()
                .collect()
        };
        // Each read on its own, so that it stays with its directory (a
        // copied run's `run_id` may not be its directory's name).
        let read = crate::util::par_map(&missing, |r| {
            results::read_run_keeping(&self.root.join(&r.run_id), Keep::History).ok()
        });
        {
            let mut h = lock(&self.hist);
            let (cache, names) = &mut *h;
            let mut intern = |s: &str| -> Arc<str> {
                if let Some(a) = names.get(s) {
                    return Arc::clone(a);
                }
                let a: Arc<str> = Arc::from(s);
                names.insert(Arc::clone(&a));
                a
            };
            for (r, d) in missing.iter().zip(&read) {
                let Some(d) = d else {
                    continue;
                };
                let tests: Arc<[HistTest]> = d
                    .tests
                    .iter()
                    .map(|t| HistTest {
                        test: intern(&t.test),
                        unit: intern(&t.qps_unit),
                        threads: t.threads,
                        qps: t.qps,
                        ok: t.status == Status::Ok,
                        reported: t.reported,
                    })
                    .collect();
                cache.insert(r.run_id.clone(), (r.sig, tests));
            }
        }
        let h = lock(&self.hist);
        runs.iter()
            .filter_map(|r| {
                let (_, tests) = h.0.get(&r.run_id).filter(|(s, _)| *s == r.sig)?;
                Some(slim_doc(r, tests))
            })
            .collect()
    }
}

/// A run as much as a history needs of it.
fn slim_doc(r: &RunSummary, tests: &[HistTest]) -> RunDoc {
    RunDoc {
        rqps_version: String::new(),
        git_commit: None,
        run_id: r.run_id.clone(),
        name: r.name.clone(),
        suite: r.suite.clone(),
        repeat: r.repeat,
        status: Status::Ok,
        started: r.started.clone(),
        finished: r.finished.clone(),
        command_line: Vec::new(),
        target: String::new(),
        engine: results::EngineInfo {
            name: r.engine.clone(),
            version: r.version.clone(),
            auth: None,
        },
        server: None,
        settings: Default::default(),
        params: serde_json::Value::Null,
        host: Default::default(),
        load: None,
        part: None,
        merged_from: Vec::new(),
        measures: true,
        commands: Vec::new(),
        tests: tests
            .iter()
            .map(|t| {
                let mut x = TestResult::running(
                    &r.suite,
                    t.test.to_string(),
                    "",
                    t.threads,
                    t.reported,
                    &t.unit,
                );
                x.status = if t.ok { Status::Ok } else { Status::Failed };
                x.qps = t.qps;
                x
            })
            .collect(),
        owner: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_run(root: &Path, id: &str, name: &str, target: &str) {
        let d = root.join(id);
        std::fs::create_dir_all(d.join("tests")).unwrap();
        let doc = serde_json::json!({
            "rqps_version": "0", "run_id": id, "name": name, "suite": "sysbench",
            "status": "ok", "started": format!("2025-01-01T10:00:0{}Z", id.len() % 10),
            "command_line": ["rqps", "run", "--target", target], "target": target,
            "engine": {"name": "postgres", "version": "16.4"}, "params": {"url": target},
            "host": {"hostname": "h", "os": "linux", "arch": "x86_64", "cpus": 2}
        });
        std::fs::write(d.join("run.json"), doc.to_string()).unwrap();
    }

    #[test]
    fn the_index_lists_runs_redacted_and_leaves_links_and_strays_out() {
        let d = tempfile::tempdir().unwrap();
        let secret = "postgres://bench:hunter2@127.0.0.1:5432/db";
        write_run(d.path(), "20250101-100000-a", "a", secret);
        write_run(d.path(), "20250101-110000-b", "b", "sqlite:/tmp/x.db");
        // Corrupt, a link to a run elsewhere, a stray file, a folder with no run.json.
        std::fs::create_dir_all(d.path().join("20250102-000000-bad/tests")).unwrap();
        std::fs::write(d.path().join("20250102-000000-bad/run.json"), "{not json").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        write_run(
            elsewhere.path(),
            "20250103-000000-out",
            "out",
            "sqlite:/tmp/y.db",
        );
        std::os::unix::fs::symlink(
            elsewhere.path().join("20250103-000000-out"),
            d.path().join("20250103-000000-out"),
        )
        .unwrap();
        std::fs::write(d.path().join("notes.txt"), "x").unwrap();
        std::fs::create_dir(d.path().join("empty")).unwrap();

        let f = Folder::open(d.path().to_path_buf());
        let s = f.snapshot();
        let ids: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "20250102-000000-bad",
                "20250101-110000-b",
                "20250101-100000-a"
            ]
        );
        assert_eq!(s.links, 1);
        let bad = s.run("20250102-000000-bad").unwrap();
        assert_eq!(bad.status, "unreadable");
        assert!(
            bad.error
                .as_deref()
                .unwrap()
                .starts_with("20250102-000000-bad/run.json"),
            "{bad:?}"
        );
        let a = s.run("20250101-100000-a").unwrap();
        assert_eq!(a.target, "postgres://bench:***@127.0.0.1:5432/db");
        let json = serde_json::to_string(&*s.runs).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert_eq!(s.names, ["b", "a"]);

        let (docs, warnings) = f.read_runs(&s.runs.iter().collect::<Vec<_>>(), Keep::Report);
        assert_eq!(docs.len(), 2);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let all = serde_json::to_string(
            &docs
                .iter()
                .map(|d| (&d.command_line, &d.params))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(!all.contains("hunter2") && all.contains("***"), "{all}");
    }

    #[test]
    fn a_scan_rereads_only_what_changed() {
        let d = tempfile::tempdir().unwrap();
        write_run(d.path(), "20250101-100000-a", "a", "sqlite:/a");
        let f = Folder::open(d.path().to_path_buf());
        let first = f.snapshot();
        // Within a second: the same snapshot, not even a scan.
        assert!(Arc::ptr_eq(&first, &f.snapshot()));
        lock(&f.state).scanned = None;
        assert!(
            Arc::ptr_eq(&first, &f.snapshot()),
            "nothing changed: same snapshot"
        );
        write_run(d.path(), "20250101-110000-b", "b", "sqlite:/b");
        lock(&f.state).scanned = None;
        let second = f.snapshot();
        assert_eq!(second.runs.len(), 2);
        assert!(!Arc::ptr_eq(&first, &second));
    }

    #[test]
    fn the_page_cache_keeps_what_is_current_and_stays_bounded() {
        let mut c = PageCache::default();
        let page = |n: usize, from: u64| {
            Arc::new(Cached {
                made_from: from,
                status: 200,
                html: Arc::from("x".repeat(n)),
                json: Arc::from(""),
                live: false,
            })
        };
        c.put("a".into(), page(10, 1));
        assert!(c.get("a", 1).is_some());
        assert!(c.get("a", 2).is_none(), "made from other runs: not served");
        for i in 0..5 {
            c.put(format!("big{i}"), page(PAGE_CACHE_BYTES / 3, 1));
        }
        assert!(c.bytes <= PAGE_CACHE_BYTES, "{}", c.bytes);
        assert!(
            c.get("a", 1).is_none(),
            "the least recently used went first"
        );
    }

    #[test]
    fn a_stamp_places_an_unreadable_run() {
        assert_eq!(stamp_time("20250102-030405-x"), "2025-01-02T03:04:05Z");
        assert_eq!(stamp_time("odd"), "");
    }
}
