//! The client-part launchers of examples/parts/ under the tools they are
//! written for. The Slurm job array is submitted as written to a real
//! one-node Slurm (munged, slurmctld and slurmd, started in a temporary
//! directory on loopback ports) against a throwaway PostgreSQL; its parts are
//! merged with `rqps merge`. The Kubernetes Indexed Job goes through
//! kubectl's client-side dry run: no cluster can run it here.
//!
//! Without Slurm, munge, kubectl or root these tests print why and pass,
//! unless `RQPS_REQUIRE_SERVERS=1` (set by `.ci/run`), in which case they
//! fail.

mod common;
use common::{rqps, server_available, servers_required, text};

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `name` on PATH or in the sbin directories (daemons live there, and
/// PATH may lack them).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `true` when nothing is missing; otherwise one line saying what and how to
/// get it, then a skip, or a failure under `RQPS_REQUIRE_SERVERS=1`.
fn have_all(test: &str, missing: &[String], remedy: &str) -> bool {
    if missing.is_empty() {
        return true;
    }
    let why = format!("{} not available ({remedy})", missing.join(", "));
    if servers_required() {
        panic!("RQPS_REQUIRE_SERVERS=1 but {why}");
    }
    eprintln!("skipping {test}: {why} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
    false
}

/// [`have_all`] for one thing.
fn have(test: &str, what: &str, present: bool, remedy: &str) -> bool {
    let missing: Vec<String> = (!present).then(|| what.to_string()).into_iter().collect();
    have_all(test, &missing, remedy)
}

fn unix_now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

/// A daemon this test started, in the foreground: SIGTERM on drop (also
/// when the test fails), SIGKILL if it has not gone after 10 s.
struct Daemon {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn spawn(name: &'static str, cmd: &mut Command, log: PathBuf) -> Daemon {
        let out = std::fs::File::create(&log).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        Daemon { name, child, log }
    }

    /// Panics with the daemon's log when it has exited.
    fn check_alive(&mut self) {
        if let Some(st) = self.child.try_wait().unwrap() {
            panic!(
                "{} exited ({st}):\n{}",
                self.name,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("{} ignored SIGTERM for 10 s: killing it", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two loopback ports free now (Slurm takes its ports from slurm.conf).
fn free_ports() -> (u16, u16) {
    let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

/// This host's short name: slurmctld runs only on the host slurm.conf names.
fn short_hostname() -> String {
    let mut buf = [0u8; 256];
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(r, 0, "gethostname");
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    name.split('.').next().unwrap().to_string()
}

const NODE: &str = "rqpsnode";

/// A one-node Slurm in a temporary directory: munged with its own key and
/// socket, slurmctld and slurmd on free loopback ports, 2 CPUs. Dropping it
/// cancels the jobs still queued or running, then stops slurmd, slurmctld
/// and munged (the fields drop in that order) and removes the directory.
struct Slurm {
    jobs: Vec<String>,
    slurmd: Daemon,
    slurmctld: Daemon,
    munged: Daemon,
    conf: PathBuf,
    dir: tempfile::TempDir,
}

impl Slurm {
    fn start() -> Slurm {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let key = d.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut bytes)
            .unwrap();
        std::fs::write(&key, &bytes).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        let socket = d.join("munge/munge.sock");
        // -F: in the foreground, so that it is our child; -f: run although
        // the temporary directory's parents are writable by others.
        let munged = Daemon::spawn(
            "munged",
            Command::new(program("munged").unwrap())
                .arg("-F")
                .arg("-f")
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!(
                    "--pid-file={}",
                    d.join("munge/munged.pid").display()
                ))
                .arg(format!(
                    "--seed-file={}",
                    d.join("munge/munged.seed").display()
                ))
                .arg(format!("--log-file={}", d.join("log/munged.log").display())),
            d.join("log/munged.out"),
        );
        let (ctld_port, slurmd_port) = free_ports();
        let conf = d.join("slurm.conf");
        let p = |sub: &str| d.join(sub).display().to_string();
        let conf_text = format!(
            "# A one-node Slurm for tests/fleet.rs, on loopback.
ClusterName=rqpstest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={log}/slurmctld.pid
SlurmdPidFile={log}/slurmd.pid
SlurmctldLogFile={log}/slurmctld.log
SlurmdLogFile={log}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=rqps Nodes={NODE} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:4
",
            host = short_hostname(),
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            log = p("log"),
        );
        std::fs::write(&conf, conf_text).unwrap();
        let slurm_cmd = |prog: &str| {
            let mut c = Command::new(program(prog).unwrap());
            c.arg("-D").arg("-f").arg(&conf).env("SLURM_CONF", &conf);
            c
        };
        let mut munged = munged;
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            munged.check_alive();
            assert!(Instant::now() < deadline, "munged made no socket in 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        let slurmctld = Daemon::spawn(
            "slurmctld",
            &mut slurm_cmd("slurmctld"),
            d.join("log/slurmctld.out"),
        );
        let slurmd = Daemon::spawn(
            "slurmd",
            slurm_cmd("slurmd").arg("-N").arg(NODE),
            d.join("log/slurmd.out"),
        );
        let mut s = Slurm {
            jobs: Vec::new(),
            slurmd,
            slurmctld,
            munged,
            conf,
            dir,
        };
        // Up when the node is idle (slurmd registered with slurmctld).
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            s.munged.check_alive();
            s.slurmctld.check_alive();
            s.slurmd.check_alive();
            let o = s
                .cmd("sinfo")
                .args(["-h", "-N", "-o", "%t"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the Slurm node is not idle after 30 s: {}\n{}",
                text(&o),
                s.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A Slurm client command (sbatch, squeue, ...) for this cluster, with
    /// an empty environment but PATH and SLURM_CONF.
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(program(prog).unwrap_or_else(|| panic!("{prog} not found")));
        c.env_clear()
            .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
            .env("SLURM_CONF", &self.conf);
        c
    }

    /// Whether job `id` (all of its array tasks) has left the queue.
    fn done(&self, id: &str) -> bool {
        let o = self.cmd("squeue").args(["-h", "-j", id]).output().unwrap();
        o.status.success() && o.stdout.trim_ascii().is_empty()
    }

    fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.path().join("log").join(f))
                    .unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                format!(
                    "--- {f}:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let running: Vec<String> = self
            .jobs
            .iter()
            .filter(|j| !self.done(j))
            .cloned()
            .collect();
        if running.is_empty() {
            return;
        }
        let _ = self.cmd("scancel").args(&running).status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline && running.iter().any(|j| !self.done(j)) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Who opens one file: a fanotify mark for FAN_OPEN, which reports the
/// process (pid) of every open. Root only.
struct OpenWatch(OwnedFd);

impl OpenWatch {
    fn new(path: &Path) -> OpenWatch {
        let fd = unsafe {
            libc::fanotify_init(
                libc::FAN_CLASS_NOTIF | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK,
                (libc::O_RDONLY | libc::O_CLOEXEC) as u32,
            )
        };
        assert!(
            fd >= 0,
            "fanotify_init: {}",
            std::io::Error::last_os_error()
        );
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let r = unsafe {
            libc::fanotify_mark(
                fd.as_raw_fd(),
                libc::FAN_MARK_ADD,
                libc::FAN_OPEN,
                libc::AT_FDCWD,
                c.as_ptr(),
            )
        };
        assert_eq!(r, 0, "fanotify_mark: {}", std::io::Error::last_os_error());
        OpenWatch(fd)
    }

    /// The pids of the opens reported since the last call.
    fn openers(&self) -> Vec<i32> {
        let mut pids = Vec::new();
        let mut buf = vec![0u64; 512];
        loop {
            let n =
                unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len() * 8) };
            if n <= 0 {
                return pids;
            }
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
            let mut off = 0;
            while off + std::mem::size_of::<libc::fanotify_event_metadata>() <= bytes.len() {
                let m: libc::fanotify_event_metadata =
                    unsafe { std::ptr::read_unaligned(bytes[off..].as_ptr().cast()) };
                if m.fd >= 0 {
                    unsafe { libc::close(m.fd) };
                }
                pids.push(m.pid);
                off += m.event_len as usize;
            }
        }
    }
}

/// What /proc showed of one running array task.
struct Seen {
    part: String,
    /// Unix time at which /proc first showed it as rqps.
    at: f64,
    argv: Vec<String>,
    environ: Vec<u8>,
}

/// The rqps processes (by /proc/PID/exe) whose working directory is `cwd`:
/// the array's tasks, which Slurm starts there (sbatch --chdir).
fn tasks_in(cwd: &Path, exe: &Path, seen: &mut BTreeMap<i32, Seen>) {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if seen.contains_key(&pid) {
            continue;
        }
        let p = e.path();
        if std::fs::read_link(p.join("exe")).ok().as_deref() != Some(exe)
            || std::fs::read_link(p.join("cwd")).ok().as_deref() != Some(cwd)
        {
            continue;
        }
        let (Ok(cmdline), Ok(environ)) = (
            std::fs::read(p.join("cmdline")),
            std::fs::read(p.join("environ")),
        ) else {
            continue;
        };
        let argv: Vec<String> = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        // Caught in the middle of its exec, /proc can show the new exe with
        // an empty command line: look again on the next round.
        let Some(part) = argv
            .iter()
            .position(|a| a == "--part")
            .and_then(|i| argv.get(i + 1).cloned())
        else {
            continue;
        };
        seen.insert(
            pid,
            Seen {
                part,
                at: unix_now().as_secs_f64(),
                argv,
                environ,
            },
        );
    }
}

/// Whether `bytes` contain `secret`.
fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// Every process whose command line or environment holds `secret`.
fn processes_holding(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name().to_string_lossy().parse::<i32>().is_err() {
            continue;
        }
        for what in ["cmdline", "environ"] {
            if std::fs::read(e.path().join(what)).is_ok_and(|b| holds(&b, secret)) {
                out.push(format!("{} ({what})", e.path().display()));
            }
        }
    }
    out
}

fn one_run(dir: &Path) -> rqps::results::RunDoc {
    let runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    assert_eq!(runs.len(), 1, "{}", dir.display());
    rqps::results::read_run(&runs[0]).unwrap()
}

fn rfc3339_secs(t: &str) -> f64 {
    humantime::parse_rfc3339(t)
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A knob for a longer run by hand (the figures in docs/matrices.md).
fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

/// examples/parts/slurm-array.sh, submitted as written (only sbatch's own
/// options and the script's documented variables differ) as a 2-task array
/// to a one-node Slurm against a throwaway PostgreSQL: every task exits 0,
/// the parts begin together at START_AT (none late, their starts within
/// rqps's 1 s tolerance), the password reaches each task through the file the
/// example names (fanotify sees each task open it; no task's argv or
/// environment, nor any process's, holds it), and `rqps merge` gives a total
/// that is the sum of the parts.
///
/// RQPS_FLEET_TASKS and RQPS_FLEET_SECS make a longer run by hand (the
/// figures in docs/matrices.md).
#[test]
fn the_slurm_array_example_runs_under_a_real_slurm_and_its_parts_merge() {
    let mut missing: Vec<String> = ["munged", "slurmctld", "slurmd", "sbatch"]
        .iter()
        .filter(|p| program(p).is_none())
        .map(|p| p.to_string())
        .collect();
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root (slurmd starts jobs as root)".into());
    }
    if !have_all(
        "the Slurm array",
        &missing,
        "apt-get install slurm-wlm munge",
    ) || !server_available(PG)
    {
        return;
    }
    let tasks = knob("RQPS_FLEET_TASKS", 2);
    let secs = knob("RQPS_FLEET_SECS", 2);
    let began = Instant::now();
    // Slurm first: a controller just started schedules its first job only
    // after about 2 s, which the server's start and the load cover.
    let mut slurm = Slurm::start();
    let slurm_up = began.elapsed();

    let srv = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting {PG}: {e}"));
    let pw = srv.password().to_string();
    let target = srv.url_without_password();
    let work = tempfile::tempdir().unwrap();
    // The task's HOME, holding the file the example reads by default
    // (~/.rqps-pw), made as its comment says: private to its owner.
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let pw_file = home.join(".rqps-pw");
    std::fs::write(&pw_file, format!("{pw}\n")).unwrap();
    std::fs::set_permissions(&pw_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let redact = |s: &str| s.replace(&pw, "<password>");

    // The tables, once, by a run without --part (as the example says).
    let o = rqps(&[
        "run",
        "--target",
        &target,
        "--password-file",
        pw_file.to_str().unwrap(),
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--read-secs",
        "0.2",
        "--warmup-secs",
        "0",
        "--results",
        work.path().join("load").to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "load: {}", redact(&text(&o)));
    let loaded = began.elapsed();

    let job_dir = work.path().join("job");
    std::fs::create_dir(&job_dir).unwrap();
    let job_dir = job_dir.canonicalize().unwrap();
    let rqps_exe = PathBuf::from(env!("CARGO_BIN_EXE_rqps"))
        .canonicalize()
        .unwrap();
    let watch = OpenWatch::new(&pw_file);

    // The agreed start: 7 to 8 s ahead. Slurm ran the tasks (rqps exec'd)
    // 1 to 4 s after sbatch on this 2-core machine shared with builds (up to
    // 2 s to allocate, 2 s to launch); the rest is slack.
    let submitted = unix_now().as_secs_f64();
    let start_at = submitted as u64 + 8;
    let path = format!(
        "{}:/usr/bin:/bin:/usr/sbin:/sbin",
        rqps_exe.parent().unwrap().display()
    );
    let script = repo().join("examples/parts/slurm-array.sh");
    let o = slurm
        .cmd("sbatch")
        .env("HOME", &home)
        .env("PATH", &path)
        .args([
            "--parsable",
            &format!("--array=1-{tasks}"),
            "--cpus-per-task=1",
            "--oversubscribe",
        ])
        .arg(format!("--chdir={}", job_dir.display()))
        .arg(format!(
            "--export=ALL,START_AT={start_at},RQPS_TARGET={target},RQPS_THREADS={},RQPS_READ_SECS={secs},RQPS_NAME=pg-slurm",
            2 * tasks
        ))
        .arg(&script)
        .args(["--profile", "ci", "--warmup-secs", "0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "sbatch: {}\n{}", text(&o), slurm.logs());
    let job = String::from_utf8_lossy(&o.stdout).trim().to_string();
    slurm.jobs.push(job.clone());

    // Watch the tasks while they run, until the job has left the queue.
    let mut seen = BTreeMap::new();
    let mut leaks = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(8 + secs as u64 + 60);
    while !slurm.done(&job) {
        slurm.slurmctld.check_alive();
        slurm.slurmd.check_alive();
        let before = seen.len();
        tasks_in(&job_dir, &rqps_exe, &mut seen);
        if seen.len() == tasks && before < tasks {
            // All tasks are up: nothing on this machine may hold the password
            // in its command line or environment.
            leaks = processes_holding(&pw);
        }
        assert!(
            Instant::now() < deadline,
            "job {job} still queued after {} s:\n{}",
            deadline.duration_since(began).as_secs(),
            slurm.logs()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    let ran = began.elapsed();
    let task_log = |i: usize| {
        redact(
            &std::fs::read_to_string(job_dir.join(format!("rqps-part-{i}.log")))
                .unwrap_or_default(),
        )
    };
    let all_logs = || {
        (1..=tasks)
            .map(|i| format!("--- task {i}:\n{}", task_log(i)))
            .collect::<Vec<_>>()
            .join("\n")
    };

    // Every task ran and exited 0 (slurmctld keeps finished jobs for MinJobAge).
    let o = slurm
        .cmd("scontrol")
        .args(["-o", "show", "job", &job])
        .output()
        .unwrap();
    let states = String::from_utf8_lossy(&o.stdout).to_string();
    let done: Vec<&str> = states
        .lines()
        .filter(|l| l.contains("JobState=COMPLETED") && l.contains("ExitCode=0:0"))
        .collect();
    assert_eq!(done.len(), tasks, "{states}\n{}", all_logs());

    // The password: each task's argv names the example's file and holds no
    // password; its environment holds neither the password nor a variable
    // that could carry one; and each task opened the file.
    let parts: Vec<&str> = seen.values().map(|s| s.part.as_str()).collect();
    let want: Vec<String> = (1..=tasks).map(|i| format!("{i}/{tasks}")).collect();
    let mut got: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    got.sort();
    assert_eq!(got, want, "tasks seen running: {:?}", seen.keys());
    let openers = watch.openers();
    for (pid, s) in &seen {
        let argv = s.argv.join(" ");
        assert!(!argv.contains(&pw), "task {}: password in argv", s.part);
        let i = s.argv.iter().position(|a| a == "--password-file").unwrap();
        assert_eq!(
            Path::new(&s.argv[i + 1]),
            pw_file,
            "task {}: {}",
            s.part,
            argv
        );
        assert!(
            !holds(&s.environ, &pw),
            "task {}: password in its environment",
            s.part
        );
        for var in s.environ.split(|&b| b == 0) {
            let name = String::from_utf8_lossy(var.split(|&b| b == b'=').next().unwrap());
            assert!(
                !["PGPASSWORD", "PGPASSFILE", "MYSQL_PWD", "RQPS_PASSWORD"].contains(&&*name),
                "task {}: {name} in its environment",
                s.part
            );
        }
        assert!(
            openers.contains(pid),
            "task {} (pid {pid}) never opened {}; openers: {openers:?}",
            s.part,
            pw_file.display()
        );
    }
    assert!(!home.join(".pgpass").exists());
    assert!(leaks.is_empty(), "the password is held by {leaks:?}");

    // Merge the parts.
    let merged_dir = work.path().join("merged");
    let mut args = vec!["merge".to_string()];
    args.extend((1..=tasks).map(|i| {
        job_dir
            .join(format!("results/part-{i}"))
            .display()
            .to_string()
    }));
    args.extend(["--results".into(), merged_dir.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rqps(&args);
    assert!(
        o.status.success(),
        "merge: {}\n{}",
        redact(&text(&o)),
        all_logs()
    );
    assert!(
        !text(&o).contains("late"),
        "{}\n{}",
        redact(&text(&o)),
        slurm.logs()
    );

    let part_runs: Vec<_> = (1..=tasks)
        .map(|i| one_run(&job_dir.join(format!("results/part-{i}"))))
        .collect();
    let merged = one_run(&merged_dir);
    assert_eq!(merged.merged_from.len(), tasks);
    assert!(!merged.tests.is_empty());
    for (k, t) in merged.tests.iter().enumerate() {
        let sum: f64 = part_runs.iter().map(|p| p.tests[k].qps).sum();
        assert!(
            (t.qps - sum).abs() <= 1e-9 * sum,
            "{}: {} != {sum}",
            t.test,
            t.qps
        );
        let events: u64 = part_runs.iter().map(|p| p.tests[k].events).sum();
        assert_eq!(t.events, events, "{}", t.test);
        let threads: usize = part_runs.iter().map(|p| p.tests[k].threads).sum();
        assert_eq!((t.threads, threads), (2 * tasks, 2 * tasks), "{}", t.test);
        assert!(t.qps > 0.0, "{}", t.test);
    }
    // Together: every part began at the agreed time, none late.
    let starts: Vec<f64> = merged
        .merged_from
        .iter()
        .map(|p| rfc3339_secs(&p.started))
        .collect();
    for p in &merged.merged_from {
        assert!(
            !p.late,
            "part {}/{} late by {} s",
            p.index, p.count, p.late_secs
        );
        assert_eq!(
            p.start_at.as_deref().map(rfc3339_secs),
            Some(start_at as f64),
            "part {}",
            p.index
        );
    }
    let first = starts.iter().cloned().fold(f64::INFINITY, f64::min);
    let last = starts.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    assert!(
        first >= start_at as f64,
        "a part began before START_AT: {starts:?}"
    );
    let skew = last - first;
    assert!(
        skew <= rqps::results::LATE_TOLERANCE_SECS,
        "start skew {skew} s"
    );

    // Nothing the job wrote holds the password.
    let mut stack = vec![job_dir.clone(), merged_dir.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let b = std::fs::read(&p).unwrap();
                assert!(!holds(&b, &pw), "password stored in {}", p.display());
            }
        }
    }

    // The figures of docs/matrices.md.
    let t = &merged.tests[0];
    eprintln!(
        "slurm array: {tasks} tasks, {} at {} threads for {secs} s; QPS per part: {}; merged QPS {:.0}, p99 {:.0} µs; \
         start skew {:.0} ms; tasks running {:.1} to {:.1} s after sbatch, START_AT {:.1} s after it; timeline: Slurm up {:.1} s, tables loaded {:.1} s, job done {:.1} s",
        t.test,
        t.threads,
        part_runs
            .iter()
            .map(|p| format!("{:.0}", p.tests[0].qps))
            .collect::<Vec<_>>()
            .join(", "),
        t.qps,
        t.latency_us.p99,
        skew * 1000.0,
        seen.values().map(|s| s.at).fold(f64::INFINITY, f64::min) - submitted,
        seen.values()
            .map(|s| s.at)
            .fold(f64::NEG_INFINITY, f64::max)
            - submitted,
        start_at as f64 - submitted,
        slurm_up.as_secs_f64(),
        loaded.as_secs_f64(),
        ran.as_secs_f64(),
    );
    drop(slurm);
    srv.stop().unwrap();
}

/// The Kubernetes example as `kubectl apply` gets it from the documented
/// `envsubst '$START_AT' < k8s-indexed-job.yaml`.
fn k8s_example(start_at: &str) -> String {
    let text = std::fs::read_to_string(repo().join("examples/parts/k8s-indexed-job.yaml")).unwrap();
    assert!(text.contains("\"${START_AT}\""), "the Job takes START_AT");
    text.replace("${START_AT}", start_at)
}

/// A kubeconfig whose cluster cannot answer (nothing listens on port 1),
/// and a discovery cache holding what every cluster since 1.21 serves for
/// the kinds the example uses (core v1, batch/v1 Job). Even a client-side
/// dry run maps `kind: Job` to its API through discovery; kubectl reads it
/// from this cache while it is fresh, so nothing is asked of a server, and
/// a kind the cache lacks fails on the unreachable cluster.
fn offline_kubectl(dir: &Path) -> Command {
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: 'http://127.0.0.1:1'}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
users: [{name: none, user: {}}]
current-context: none
",
    )
    .unwrap();
    let disc = dir.join("cache/discovery/127.0.0.1_1");
    std::fs::create_dir_all(disc.join("v1")).unwrap();
    std::fs::create_dir_all(disc.join("batch/v1")).unwrap();
    let group = |name: &str, gv: &str| {
        serde_json::json!({"name": name, "versions": [{"groupVersion": gv, "version": "v1"}],
            "preferredVersion": {"groupVersion": gv, "version": "v1"}})
    };
    let groups = serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1",
        "groups": [group("", "v1"), group("batch", "batch/v1")]});
    let resources = |gv: &str, name: &str, kind: &str| {
        serde_json::json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": [{"name": name, "singularName": kind.to_lowercase(), "namespaced": true,
                "kind": kind, "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]})
    };
    std::fs::write(disc.join("servergroups.json"), groups.to_string()).unwrap();
    std::fs::write(
        disc.join("v1/serverresources.json"),
        resources("v1", "secrets", "Secret").to_string(),
    )
    .unwrap();
    std::fs::write(
        disc.join("batch/v1/serverresources.json"),
        resources("batch/v1", "jobs", "Job").to_string(),
    )
    .unwrap();
    let mut c = Command::new(program("kubectl").unwrap());
    c.env("KUBECONFIG", &kubeconfig)
        .arg("--cache-dir")
        .arg(dir.join("cache"));
    c
}

/// `kubectl create --dry-run=client -f` on examples/parts/k8s-indexed-job.yaml
/// exits 0 with no cluster (kubectl's field validation downloads the
/// cluster's schema, hence --validate=false; the schema check is the next
/// test), and the Job it would create is the one the example means: 4
/// indexed pods at once, each part I/4 with I = index + 1, the agreed start
/// substituted, the password from the Secret's file (mode 0400), none in the
/// URL. A kind kubectl cannot map fails the same dry run.
#[test]
fn the_kubernetes_indexed_job_passes_kubectls_client_side_dry_run() {
    if !have(
        "the Kubernetes Job",
        "kubectl",
        program("kubectl").is_some(),
        "apt-get install kubernetes-client",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.yaml");
    let dry_run = || {
        offline_kubectl(d.path())
            .args([
                "create",
                "--dry-run=client",
                "--validate=false",
                "-o",
                "json",
                "-f",
            ])
            .arg(&job)
            .output()
            .unwrap()
    };
    std::fs::write(&job, k8s_example("2026-11-23T10:00:00Z")).unwrap();
    let o = dry_run();
    assert!(o.status.success(), "kubectl: {}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["apiVersion"].as_str(), v["kind"].as_str()),
        (Some("batch/v1"), Some("Job"))
    );
    let spec = &v["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 4);
    assert_eq!(spec["parallelism"], 4, "all parts at once");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    let script = c["args"][0].as_str().unwrap();
    for want in [
        "PART=$((JOB_COMPLETION_INDEX + 1))",
        "--part \"$PART/4\"",
        "--start-at \"2026-11-23T10:00:00Z\"",
        "--password-file /var/run/secrets/rqps/password",
        "--results \"/results/part-$PART\"",
        "--skip-prepare",
    ] {
        assert!(script.contains(want), "{want:?} not in {script}");
    }
    let target = script
        .split("--target ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let userinfo = target
        .split("://")
        .nth(1)
        .unwrap()
        .split('@')
        .next()
        .unwrap();
    assert!(!userinfo.contains(':'), "a password in the URL: {target}");
    let mounts = c["volumeMounts"].as_array().unwrap();
    assert!(
        mounts
            .iter()
            .any(|m| m["mountPath"] == "/var/run/secrets/rqps" && m["readOnly"] == true)
    );
    let secret = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|v| v.get("secret"))
        .expect("a Secret volume");
    assert_eq!(secret["defaultMode"], 0o400, "only the owner may read it");
    assert!(
        pod["securityContext"]["fsGroup"].is_null(),
        "fsGroup adds group read"
    );
    // The Secret's file is root's: the image's own user (Containerfile) cannot read it.
    assert_eq!(c["securityContext"]["runAsUser"], 0);
    let containerfile = std::fs::read_to_string(repo().join("Containerfile")).unwrap();
    assert!(
        containerfile.lines().any(|l| l.trim() == "USER rqps"),
        "the image's user changed: recheck the Job's runAsUser"
    );

    // The same dry run refuses a kind it cannot map.
    std::fs::write(
        &job,
        k8s_example("2026-11-23T10:00:00Z").replace("kind: Job", "kind: Jobs"),
    )
    .unwrap();
    let o = dry_run();
    assert!(!o.status.success(), "kubectl took kind: Jobs: {}", text(&o));
}

/// The Kubernetes example against the API's published schemas, strictly
/// (an unknown field fails), offline, with kubernetes-validate: on the
/// oldest (1.25) and newest releases it knows. A misspelt field fails.
#[test]
fn the_kubernetes_indexed_job_matches_the_api_schemas() {
    let installed = Command::new("python3")
        .args(["-c", "import kubernetes_validate"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have(
        "the Kubernetes schemas",
        "kubernetes-validate",
        installed,
        "python3 -m pip install kubernetes-validate",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.yaml");
    let validate = |version: Option<&str>| {
        let mut c = Command::new("python3");
        c.args(["-m", "kubernetes_validate", "--strict"]);
        if let Some(v) = version {
            c.args(["-k", v]);
        }
        c.arg(&job).output().unwrap()
    };
    std::fs::write(&job, k8s_example("2026-11-23T10:00:00Z")).unwrap();
    for v in [Some("1.25.0"), None] {
        let o = validate(v);
        assert!(o.status.success(), "{v:?}: {}", text(&o));
        assert!(text(&o).contains("passed"), "{}", text(&o));
    }
    std::fs::write(
        &job,
        k8s_example("2026-11-23T10:00:00Z").replace("completionMode:", "completionmode:"),
    )
    .unwrap();
    let o = validate(None);
    assert!(!o.status.success(), "a misspelt field passed: {}", text(&o));
    assert!(text(&o).contains("completionmode"), "{}", text(&o));
}
