//! `rqps serve` as people use it: started on a results folder that real
//! runs fill while it serves (SQLite, and PostgreSQL on a throwaway
//! server), read in headless Chromium, and attacked with hostile requests.
//!
//! The folder: a real SQLite run (`sqlite-a`), written while the server
//! runs (the runs page shows it as running, its page reloads itself, then
//! it shows ok); `v1` and `v2`, two copies each of that run 2 % apart,
//! v2 a patched engine version whose point-query QPS is 0.7 of v1's (a
//! known regression); `nightly-0..7`,
//! copies of it with point-query 25 % slower from nightly-4 on (a change
//! point); a real PostgreSQL run and a copy of it whose stored
//! target and command line carry a password; a compatibility record whose
//! target URL carries one; a corrupt run; symbolic links out of the folder.
//!
//! Chromium's pages must show the regression's verdict, the change point,
//! charts; the comparison's JSON must be `rqps report --format json`'s;
//! the hostile requests get 4xx; the password appears in no page or JSON.
//! Screenshots go to $CARGO_TARGET_TMPDIR/serve-e2e/ (and to
//! $RQPS_SERVE_SCREENSHOTS when set, for docs/).
//!
//! Without chromium or PostgreSQL's binaries the parts that need them are
//! skipped with a line saying so, unless `RQPS_REQUIRE_SERVERS=1` (CI).

mod common;
use common::{read_json, rqps, server_available, servers_required, text};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SECRET: &str = "S3cretPW-7f2a";

/// `rqps serve` on a folder, killed when dropped.
struct Served {
    child: Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(results: &Path) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["serve", "-q", "--listen", "127.0.0.1:0", "--results"])
        .arg(results)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("rqps serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Served { child, addr }
}

/// Sends `raw` and returns the status and the body.
fn raw(addr: &str, raw: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // A long request may be answered before it is all sent.
    let _ = s.write_all(raw);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).into_owned();
    let status = out
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {:?}", &out[..out.len().min(200)]));
    let body = out.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    (status, body.to_string())
}

fn get(addr: &str, target: &str) -> (u16, String) {
    raw(
        addr,
        format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
    )
}

fn get_json(addr: &str, target: &str) -> Value {
    let (status, body) = raw(
        addr,
        format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(status, 200, "{target}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"))
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run_args<'a>(results: &'a str, name: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--results",
        results,
        "--name",
        name,
        "--profile",
        "ci",
        "--tests",
        "point-query,update-index",
        "--threads",
        "1",
        "--read-secs",
        "1",
        "--write-secs",
        "1",
        "--warmup-secs",
        "0.2",
        "--busy-threshold",
        "100",
        "-q",
    ]
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// A copy of run `src` as run `id` named `name`, started at `started`,
/// each test's QPS (and per-second QPS) times `scale(test)`.
fn copy_run(
    src: &Path,
    dst_root: &Path,
    id: &str,
    name: &str,
    started: &str,
    scale: &dyn Fn(&str) -> f64,
) {
    let d = dst_root.join(id);
    std::fs::create_dir_all(d.join("tests")).unwrap();
    let mut run = read_json(&src.join("run.json"));
    run["run_id"] = id.into();
    run["name"] = name.into();
    run["started"] = started.into();
    run["finished"] = started.into();
    run.as_object_mut().unwrap().remove("owner");
    write_json(&d.join("run.json"), &run);
    for e in std::fs::read_dir(src.join("tests")).unwrap() {
        let p = e.unwrap().path();
        let mut t = read_json(&p);
        let k = scale(t["test"].as_str().unwrap());
        for key in ["qps", "tps", "statements_per_sec"] {
            t[key] = (t[key].as_f64().unwrap() * k).into();
        }
        for s in t["per_second"].as_array_mut().unwrap() {
            s["qps"] = (s["qps"].as_f64().unwrap() * k).into();
        }
        write_json(&d.join("tests").join(p.file_name().unwrap()), &t);
    }
}

/// The run directories named `name`, oldest first.
fn runs_named(results: &Path, name: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file() && read_json(&p.join("run.json"))["name"] == name)
        .collect();
    v.sort();
    v
}

fn browser() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            !servers_required(),
            "RQPS_REQUIRE_SERVERS=1 but no chromium on PATH (apt-get install chromium)"
        );
        eprintln!(
            "skipping the browser checks: no chromium on PATH (set RQPS_REQUIRE_SERVERS=1 to make this fail)"
        );
    }
    found
}

/// Headless Chromium on `url` with `action` (`--dump-dom` or
/// `--screenshot=FILE`): its standard output.
fn chromium(browser: &str, profile: &Path, action: &str, url: &str, size: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            &format!("--window-size={size}"),
            &format!("--user-data-dir={}", profile.display()),
            action,
            url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish {url} in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// Distinct colours and the share of pixels that are not white, of a PNG.
fn png_colours(path: &Path) -> (usize, f64) {
    let decoder = png::Decoder::new(BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0usize;
    for p in px.chunks_exact(step) {
        colours.insert((p[0], p[1], p[2]));
        if p[0] < 250 || p[1] < 250 || p[2] < 250 {
            ink += 1;
        }
    }
    (colours.len(), ink as f64 / (px.len() / step) as f64)
}

#[test]
fn a_folder_of_real_runs_served_read_in_a_browser_and_attacked() {
    let d = tempfile::Builder::new()
        .prefix("rqps-serve-")
        .tempdir()
        .unwrap();
    let results = d.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let r = results.to_str().unwrap();
    let srv = serve(&results);
    let addr = srv.addr.clone();

    // ---- live: the first run is written while the server serves ----
    let first = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(run_args(r, "sqlite-a"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut running_id = String::new();
    wait_for(
        "a running run on the runs page",
        Duration::from_secs(60),
        || {
            let j = get_json(&addr, "/runs?status=running");
            match j["runs"][0]["run_id"].as_str() {
                Some(id) => {
                    running_id = id.to_string();
                    true
                }
                None => false,
            }
        },
    );
    let (status, page) = get(&addr, &format!("/run/{running_id}"));
    assert_eq!(status, 200);
    assert!(
        page.contains("Running:") && page.contains("http-equiv=\"refresh\""),
        "a run being written shows as running and reloads: {page}"
    );
    let (_, runs_page) = get(&addr, "/runs");
    assert!(
        runs_page.contains("class=\"st-running\"") && runs_page.contains("http-equiv=\"refresh\"")
    );
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for("the run ok", Duration::from_secs(10), || {
        get_json(&addr, &format!("/run/{running_id}"))["status"] == "ok"
    });
    let (_, page) = get(&addr, &format!("/run/{running_id}"));
    assert!(
        !page.contains("http-equiv=\"refresh\""),
        "a finished run does not reload"
    );

    // ---- the rest of the folder ----
    let a_runs = runs_named(&results, "sqlite-a");
    assert_eq!(a_runs.len(), 1);
    // One run's page: its results, hardware per operation, per-second charts.
    let (_, page) = get(&addr, &format!("/run/{running_id}"));
    assert!(
        page.contains("Per second")
            && page.contains("<svg")
            && page.contains("hardware cost per operation"),
        "{page}"
    );
    // The known regression: v1 and v2 are two repeats each of the first
    // real run, 2 % apart, and v2's point-query is 30 % slower.
    for (i, k) in [1.0, 1.02].into_iter().enumerate() {
        copy_run(
            &a_runs[0],
            &results,
            &format!("2030010{}-000000-v1", i + 1),
            "v1",
            &format!("2030-01-0{}T00:00:00Z", i + 1),
            &|_| k,
        );
        copy_run(
            &a_runs[0],
            &results,
            &format!("2030010{}-000001-v2", i + 1),
            "v2",
            &format!("2030-01-0{}T00:00:01Z", i + 1),
            &|t| if t == "point-query" { 0.7 * k } else { k },
        );
        // v2 is another build of the engine: an A/B, not an A/A.
        let head = results.join(format!("2030010{}-000001-v2/run.json", i + 1));
        let mut doc = read_json(&head);
        doc["engine"]["version"] =
            format!("{}-patched", doc["engine"]["version"].as_str().unwrap()).into();
        write_json(&head, &doc);
    }
    for i in 0..8 {
        let noise = [1.0, 1.01, 0.99, 1.005, 0.995, 1.01, 0.99, 1.0][i];
        let step = if i >= 4 { 0.75 } else { 1.0 };
        copy_run(
            &a_runs[0],
            &results,
            &format!("2029010{}-000000-nightly-{i}", i + 1),
            &format!("nightly-{i}"),
            &format!("2029-01-0{}T00:00:00Z", i + 1),
            &|t| {
                if t == "point-query" {
                    step * noise
                } else {
                    noise
                }
            },
        );
    }
    // A real PostgreSQL run, when its binaries are here; the secret goes into a copy.
    let pg_kind: rqps::engine::server::Recipe = &rqps::engine::postgres::server::RECIPE;
    let with_pg = server_available(pg_kind);
    let secret_src = if with_pg {
        let mut args = run_args(r, "pg");
        args.extend(["--server", "postgres"]);
        args.retain(|a| *a != "point-query,update-index");
        let at = args.iter().position(|a| *a == "--tests").unwrap();
        args.insert(at + 1, "point-query");
        let o = rqps(&args);
        assert!(o.status.success(), "{}", text(&o));
        runs_named(&results, "pg").remove(0)
    } else {
        a_runs[0].clone()
    };
    let url = format!("postgres://bench:{SECRET}@127.0.0.1:5432/rqps");
    copy_run(
        &secret_src,
        &results,
        "20310101-000000-pg-secret",
        "pg-secret",
        "2031-01-01T00:00:00Z",
        &|_| 1.0,
    );
    let secret_run = results.join("20310101-000000-pg-secret/run.json");
    let mut doc = read_json(&secret_run);
    doc["target"] = url.clone().into();
    doc["command_line"] =
        serde_json::json!(["rqps", "run", "--target", url, "--name", "pg-secret"]);
    doc["params"]["dsn"] = format!("host=h password={SECRET}").into();
    write_json(&secret_run, &doc);
    {
        use rqps::results::EngineInfo;
        use rqps::results::compat::*;
        let engine = |label: &str, name: &str, target: &str| EngineCompat {
            id: EngineId {
                label: label.into(),
                engine: EngineInfo {
                    name: name.into(),
                    version: "1".into(),
                    auth: None,
                },
                target: target.into(),
            },
            left_out: None,
            statements: Vec::new(),
            tests: Vec::new(),
            differences: Vec::new(),
            probes: Vec::new(),
            conditions: Vec::new(),
            suites: Vec::new(),
        };
        let record = CompatRecord {
            rqps_version: "0".into(),
            started: "2031-01-01T00:00:00Z".into(),
            finished: "2031-01-01T00:01:00Z".into(),
            command_line: vec![
                "rqps".into(),
                "compat".into(),
                "--reference".into(),
                url.clone(),
            ],
            seed: 1,
            suites: Vec::new(),
            rules: Vec::new(),
            reference: engine("upstream-pg", "postgres", &url),
            targets: vec![engine("the-sqlite", "sqlite", "sqlite")],
        };
        store(&results, &record).unwrap();
    }
    // A corrupt run, and links out of the folder.
    std::fs::create_dir_all(results.join("20280101-000000-broken/tests")).unwrap();
    std::fs::write(
        results.join("20280101-000000-broken/run.json"),
        "{\"run_id\": tr",
    )
    .unwrap();
    let outside = d.path().join("outside");
    copy_run(
        &a_runs[0],
        &outside,
        "20270101-000000-out",
        "out",
        "2027-01-01T00:00:00Z",
        &|_| 1.0,
    );
    std::os::unix::fs::symlink(
        outside.join("20270101-000000-out"),
        results.join("20270101-000000-out"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc", results.join("etc")).unwrap();
    std::fs::create_dir_all(results.join("20270101-000001-linked/tests")).unwrap();
    std::os::unix::fs::symlink(
        "/etc/hostname",
        results.join("20270101-000001-linked/run.json"),
    )
    .unwrap();

    // ---- the runs page sees the folder as it is now ----
    wait_for("the new runs listed", Duration::from_secs(10), || {
        get_json(&addr, "/runs?per=500")["matched"].as_u64() == Some(if with_pg { 17 } else { 16 })
    });
    let j = get_json(&addr, "/runs?per=500");
    let status_of = |id: &str| {
        j["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["run_id"] == id)
            .map(|x| x["status"].clone())
    };
    assert_eq!(
        status_of("20280101-000000-broken"),
        Some("unreadable".into())
    );
    assert_eq!(
        status_of("20270101-000001-linked"),
        Some("unreadable".into())
    );
    assert_eq!(
        status_of("20270101-000000-out"),
        None,
        "a link out of the folder is not listed"
    );
    assert_eq!(j["links_not_followed"], 2);
    assert_eq!(get_json(&addr, "/runs?name=nightly-*")["matched"], 8);
    assert_eq!(get_json(&addr, "/runs?engine=sqlite&name=v")["matched"], 4);

    // ---- the comparison is `rqps report`'s ----
    let served = get_json(&addr, "/compare?base=v1&target=v2");
    let o = rqps(&[
        "report",
        "--results",
        r,
        "--base",
        "v1",
        "--targets",
        "v2",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut ours = served.clone();
    // Warnings differ by design: the report reads every run (the corrupt one too).
    cli.as_object_mut().unwrap().remove("warnings");
    ours.as_object_mut().unwrap().remove("warnings");
    assert_eq!(
        ours, cli,
        "the served comparison differs from rqps report's"
    );
    let point = served["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rows"].as_array().unwrap())
        .find(|row| row["test"] == "point-query")
        .expect("a point-query row");
    let rel = &point["cells"][0]["rel"];
    let ratio = rel["ratio"].as_f64().unwrap();
    assert!((ratio - 0.7).abs() < 1e-9, "{rel}");
    assert_eq!(rel["verdict"], "slower", "{rel}");

    // ---- the history finds the change point ----
    let h = get_json(&addr, "/history?name=nightly-*");
    let change = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["test"] == "point-query")
        .unwrap_or_else(|| panic!("no change point: {h}"));
    assert_eq!(change["index"], 4);
    let o = rqps(&[
        "history",
        "--results",
        r,
        "--name-glob",
        "nightly-*",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        h,
        serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        "the served history differs from rqps history's"
    );

    // ---- hostile requests ----
    for (target, want) in [
        ("/run/../../etc/passwd", 400),
        ("/run/%2e%2e/%2e%2e/etc/passwd", 400),
        ("/run/..%2f..%2fetc%2fpasswd", 400),
        ("/run/%2E%2E%2Fetc", 400),
        ("/compat/..%2fcompat%2f..%2f..%2fetc%2fpasswd", 400),
        ("/run/etc", 404),
        ("/run/20270101-000000-out", 404),
        ("/compat/..", 400),
        ("/etc/passwd", 404),
        ("/runs?page=abc", 400),
        ("/runs?per=100000", 400),
        ("/history?name=[", 400),
        ("/compare?base=nope&target=v2", 404),
        ("http://evil/runs", 400),
    ] {
        let (status, body) = get(&addr, target);
        assert_eq!(status, want, "{target}: {body}");
        assert!(!body.contains("root:x:0:0"), "{target}");
    }
    let long = format!(
        "GET /runs?name={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(1 << 20)
    );
    assert_eq!(raw(&addr, long.as_bytes()).0, 414, "a 1 MB URL");
    let headers = format!(
        "GET /runs HTTP/1.1\r\n{}\r\n",
        "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(2000)
    );
    assert_eq!(raw(&addr, headers.as_bytes()).0, 431);
    // DNS rebinding: a page elsewhere whose name points at 127.0.0.1.
    assert_eq!(
        raw(
            &addr,
            b"GET /runs HTTP/1.1\r\nHost: evil.example:8080\r\n\r\n"
        )
        .0,
        403
    );
    assert_eq!(
        raw(
            &addr,
            b"POST /runs HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
        )
        .0,
        405
    );
    assert_eq!(
        raw(
            &addr,
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n"
        )
        .0,
        400
    );
    assert_eq!(
        raw(&addr, b"GET /runs HTTP/1.1\r\nBroken header\r\n\r\n").0,
        400
    );
    // A client that goes away mid-answer, then the server still serves.
    for _ in 0..3 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(b"GET /compare?base=v1&target=v2 HTTP/1.1\r\n\r\n")
            .unwrap();
        drop(s);
    }
    assert_eq!(get(&addr, "/runs").0, 200);

    // ---- no page and no JSON shows the password ----
    let secret_pages = [
        "/runs?per=500",
        "/run/20310101-000000-pg-secret",
        "/compare?base=pg-secret",
        &format!(
            "/compare?base={}&target=pg-secret",
            if secret_src == a_runs[0] {
                "sqlite-a"
            } else {
                "pg"
            }
        ),
        "/compat",
        "/history?suite=sysbench&name=pg*",
        "/run/20280101-000000-broken",
    ];
    let mut seen_redacted = false;
    for p in secret_pages {
        for fmt in ["html", "json"] {
            let sep = if p.contains('?') { '&' } else { '?' };
            let (status, body) = get(&addr, &format!("{p}{sep}format={fmt}"));
            assert!(status < 500, "{p}: {status}");
            assert!(!body.contains(SECRET), "{p} ({fmt}) shows the password");
            seen_redacted |= body.contains("bench:***@");
        }
    }
    let compat = get_json(&addr, "/compat");
    let file = compat["records"][0]["file"].as_str().unwrap().to_string();
    for fmt in ["html", "json"] {
        let (status, body) = get(&addr, &format!("/compat/{file}?format={fmt}"));
        assert_eq!(status, 200);
        assert!(
            !body.contains(SECRET) && body.contains("upstream-pg"),
            "{body}"
        );
    }
    assert!(seen_redacted, "the stored target shows, redacted");

    // ---- what a person sees in a browser ----
    let Some(browser) = browser() else {
        return;
    };
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-e2e");
    std::fs::create_dir_all(&shots).unwrap();
    let profile = d.path().join("chromium");
    let url = |p: &str| format!("http://{addr}{p}");
    let dom = chromium(
        browser,
        &profile,
        "--dump-dom",
        &url("/compare?base=v1&target=v2"),
        "1280,1600",
    );
    assert!(dom.contains("Relative QPS: v2 against v1"), "{dom}");
    assert!(
        dom.contains("<td class=\"num red\">0.70 -</td>"),
        "the regression's verdict: {dom}"
    );
    assert!(
        dom.contains("<svg") && dom.contains("rqps report --results"),
        "{dom}"
    );
    let dom = chromium(
        browser,
        &profile,
        "--dump-dom",
        &url("/history?name=nightly-*"),
        "1280,1600",
    );
    assert!(
        dom.contains("Change points") && dom.contains("2029010") && dom.contains("nightly-4"),
        "{dom}"
    );
    assert!(
        dom.contains("<td>point-query</td><td>4</td><td>20290105-000000-nightly-4</td>"),
        "the change point: {dom}"
    );
    assert!(dom.contains("<svg"), "the history's charts");
    for (page, file) in [
        ("/runs", "runs.png"),
        ("/compare?base=v1&target=v2", "compare.png"),
    ] {
        let shot = shots.join(file);
        let _ = std::fs::remove_file(&shot);
        chromium(
            browser,
            &profile,
            &format!("--screenshot={}", shot.display()),
            &url(page),
            "1200,900",
        );
        let (colours, ink) = png_colours(&shot);
        assert!(
            colours > 100 && ink > 0.03,
            "{file}: {colours} colours, {ink:.3} ink: blank?"
        );
        if let Ok(dir) = std::env::var("RQPS_SERVE_SCREENSHOTS") {
            std::fs::copy(&shot, Path::new(&dir).join(format!("serve-{file}"))).unwrap();
        }
    }
    eprintln!("screenshots in {}", shots.display());
}
