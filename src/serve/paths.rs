//! From a request target to a page: the path checked segment by segment
//! (no `..` or `.`, no encoded slash or backslash, no NUL, whatever the
//! escaping), the query decoded and checked against the keys the page
//! takes, and JSON or HTML chosen. Nothing here touches the disk: a run or
//! a record is named by one segment, which the folder's index must hold
//! (`index.rs`), so no request reaches a path the index did not list.

use crate::engine::url::decode;

/// The longest request target taken, in bytes (a head may be longer).
pub const MAX_TARGET: usize = 8 * 1024;
/// The most query parameters taken.
const MAX_PARAMS: usize = 64;

/// The pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Page {
    /// `/` and `/runs`: the runs, filtered and paged.
    Runs,
    /// `/compare?base=A&target=B`.
    Compare,
    /// `/history?suite=S&name=GLOB`.
    History,
    /// `/run/RUN-ID`.
    Run(String),
    /// `/compat` (the latest record) and `/compat/FILE`.
    Compat(Option<String>),
}

impl Page {
    /// The query keys the page takes (`format` is every page's).
    fn keys(&self) -> &'static [&'static str] {
        match self {
            Page::Runs => &["name", "suite", "engine", "status", "page", "per"],
            Page::Compare => &["base", "target", "all", "allow_mismatch"],
            Page::History => &["suite", "name", "order", "test", "last", "all", "max_p"],
            Page::Run(_) | Page::Compat(_) => &[],
        }
    }
}

/// A request target, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub page: Page,
    /// The query's pairs, decoded, in order; empty values left out (a form
    /// sends its empty fields).
    pub query: Vec<(String, String)>,
    /// Answer as JSON rather than HTML.
    pub json: bool,
}

impl Target {
    /// The value of `key`, the last one given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order, each split at commas.
    pub fn all(&self, key: &str) -> Vec<String> {
        self.query
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
            .collect()
    }

    /// `key` as a flag: absent, `0`, `false` or `off` are false.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| !matches!(v, "0" | "false" | "off" | "no"))
    }
}

/// Why a target is refused, with the status it gets.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub status: u16,
    pub why: String,
}

fn bad(why: impl Into<String>) -> Refused {
    Refused {
        status: 400,
        why: why.into(),
    }
}

pub fn not_found(why: impl Into<String>) -> Refused {
    Refused {
        status: 404,
        why: why.into(),
    }
}

/// One path segment, decoded; refused when it escapes a slash or a
/// backslash, or decodes to `.`, `..`, a control character or a slash.
fn segment(raw: &str) -> Result<String, Refused> {
    let lower = raw.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return Err(bad("an encoded slash or backslash in a path is not served"));
    }
    let s = decode(raw).map_err(|e| bad(format!("path segment '{raw}': {e}")))?;
    if s == "." || s == ".." {
        return Err(bad("a path with . or .. in it is not served"));
    }
    if s.contains(['/', '\\']) || s.chars().any(char::is_control) {
        return Err(bad(
            "a path segment with a slash, backslash or control character is not served",
        ));
    }
    Ok(s)
}

/// A query string's pairs: `+` is a space, `%XX` escapes are UTF-8.
fn query(q: &str) -> Result<Vec<(String, String)>, Refused> {
    let mut out = Vec::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        if out.len() == MAX_PARAMS {
            return Err(bad(format!("more than {MAX_PARAMS} query parameters")));
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let dec = |s: &str| {
            decode(&s.replace('+', " ")).map_err(|e| bad(format!("query parameter '{k}': {e}")))
        };
        let (k, v) = (dec(k)?, dec(v)?);
        if k.chars().any(char::is_control) || v.chars().any(|c| c.is_control() && c != '\t') {
            return Err(bad(format!(
                "query parameter '{k}' holds a control character"
            )));
        }
        out.push((k, v));
    }
    Ok(out)
}

/// Whether `accept` asks for JSON before HTML (`Accept: application/json`).
fn wants_json(accept: Option<&str>) -> bool {
    let Some(a) = accept else {
        return false;
    };
    let pos = |what: &str| a.find(what);
    match (pos("application/json"), pos("text/html")) {
        (Some(_), None) => true,
        (Some(j), Some(h)) => j < h,
        _ => false,
    }
}

/// The page a request target asks for.
pub fn route(raw: &str, accept: Option<&str>) -> Result<Target, Refused> {
    if raw.len() > MAX_TARGET {
        return Err(Refused {
            status: 414,
            why: format!("the request target is longer than {MAX_TARGET} bytes"),
        });
    }
    if !raw.starts_with('/') {
        return Err(bad("the request target must be a path that starts with /"));
    }
    if raw.contains('#') {
        return Err(bad("a request target holds no fragment (#)"));
    }
    let (path, q) = raw.split_once('?').unwrap_or((raw, ""));
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(segment)
        .collect::<Result<_, _>>()?;
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    let page = match parts.as_slice() {
        [] | ["runs"] => Page::Runs,
        ["compare"] => Page::Compare,
        ["history"] => Page::History,
        ["run", id] => Page::Run(id.to_string()),
        ["compat"] => Page::Compat(None),
        ["compat", file] => Page::Compat(Some(file.to_string())),
        _ => {
            return Err(not_found(format!(
                "no page {path}: the pages are /runs, /compare, /history, /run/RUN-ID and /compat"
            )));
        }
    };
    let mut pairs = query(q)?;
    let mut json = wants_json(accept);
    if let Some(i) = pairs.iter().rposition(|(k, _)| k == "format") {
        json = match pairs[i].1.as_str() {
            "json" => true,
            "html" => false,
            other => {
                return Err(bad(format!(
                    "format={other}: the pages come as format=html or format=json"
                )));
            }
        };
    }
    pairs.retain(|(k, v)| k != "format" && !v.is_empty());
    let keys = page.keys();
    if let Some((k, _)) = pairs.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
        return Err(bad(if keys.is_empty() {
            format!("this page takes no query parameter '{k}' (only format)")
        } else {
            format!(
                "this page takes no query parameter '{k}'; it takes {} and format",
                keys.join(", ")
            )
        }));
    }
    Ok(Target {
        page,
        query: pairs,
        json,
    })
}

/// `s` escaped for a URL's query value or path segment: everything but
/// unreserved characters as `%XX`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `/path?k=v&...` with every value escaped; empty values left out.
pub fn link(path: &str, pairs: &[(&str, &str)]) -> String {
    let q: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", escape(v)))
        .collect();
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", q.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(raw: &str) -> u16 {
        match route(raw, None) {
            Ok(_) => 200,
            Err(r) => r.status,
        }
    }

    #[test]
    fn the_pages_route_with_their_queries() {
        let t = route("/compare?base=pg%2015&target=a,b&target=c&all=", None).unwrap();
        assert_eq!(t.page, Page::Compare);
        assert_eq!(t.get("base"), Some("pg 15"));
        assert_eq!(t.all("target"), ["a", "b", "c"]);
        assert!(!t.flag("all") && !t.json);
        assert_eq!(route("/", None).unwrap().page, Page::Runs);
        assert_eq!(
            route("/run/20250101-100000-pg15/", None).unwrap().page,
            Page::Run("20250101-100000-pg15".into())
        );
        assert_eq!(
            route("/compat/a.json", None).unwrap().page,
            Page::Compat(Some("a.json".into()))
        );
        assert_eq!(
            route("/runs?name=a+b", None).unwrap().get("name"),
            Some("a b")
        );
    }

    #[test]
    fn json_by_accept_or_format() {
        assert!(route("/runs", Some("application/json")).unwrap().json);
        assert!(
            !route("/runs", Some("text/html,application/json;q=0.9"))
                .unwrap()
                .json
        );
        assert!(route("/runs?format=json", Some("text/html")).unwrap().json);
        assert!(
            !route("/runs?format=html", Some("application/json"))
                .unwrap()
                .json
        );
        assert_eq!(status("/runs?format=xml"), 400);
    }

    #[test]
    fn hostile_targets_are_4xx() {
        for raw in [
            "/run/../../etc/passwd",
            "/run/%2e%2e/%2e%2e/etc/passwd",
            "/run/%2E%2E",
            "/run/..%2f..%2fetc%2fpasswd",
            "/run/a%2Fb",
            "/run/a%5cb",
            "/run/a%00b",
            "/run/%zz",
            "/run/%c3%28",
            "/./runs",
            "http://example.com/runs",
            "*",
            "/runs#x",
            "/runs?name=%0d%0aX",
        ] {
            assert_eq!(status(raw), 400, "{raw}");
        }
        assert_eq!(status("/etc/passwd"), 404);
        assert_eq!(status("/run/a/b"), 404);
        assert_eq!(status("/favicon.ico"), 404);
        assert_eq!(
            status(&format!("/runs?name={}", "a".repeat(MAX_TARGET))),
            414
        );
        assert_eq!(status("/runs?nmae=x"), 400);
        assert_eq!(status("/run/x?base=y"), 400);
        let many: Vec<String> = (0..100).map(|i| format!("name={i}")).collect();
        assert_eq!(status(&format!("/runs?{}", many.join("&"))), 400);
    }

    #[test]
    fn links_escape_what_they_carry() {
        assert_eq!(
            link("/compare", &[("base", "a b&c"), ("target", ""), ("x", "é")]),
            "/compare?base=a%20b%26c&x=%C3%A9"
        );
        let t = route(&link("/runs", &[("name", "a/b?c=d&e")]), None).unwrap();
        assert_eq!(t.get("name"), Some("a/b?c=d&e"));
    }
}
