//! The shape of the code, held by tests:
//! - no import cycle at any depth: between top-level modules, between the
//!   files of one folder (`a -> b -> c -> a` among a suite's files), across
//!   folders, and between a folder's face (`mod.rs`) and its own files: what
//!   a folder's files share lives in a file of its own (`suite/api.rs`,
//!   `engine/error.rs`), never in the `mod.rs` that re-exports them
//!   ([`no_module_imports_one_that_imports_it_back`]). So the module every
//!   suite imports (the traits, `suite/api.rs`) imports no suite;
//! - no code outside a suite's own folder names that suite, apart from the
//!   registry line's file and the self-benchmarks (`src/selfbench/`);
//! - no suite names an engine: no path into an engine kind's module or
//!   `engine::server`, and no engine's name as a whole string (suites reach
//!   engines through a face, SQL differences through the dialect);
//! - no function returns a bare `String` as its error;
//! - no suite reaches the client core (`evloop`): suites wait through the
//!   harness (`harness::wait`), which keeps the core's rules in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a source file: `src/engine/mysql/mod.rs` → `engine::mysql`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments and without its test modules (from
/// the first `#[cfg(test)]` on). A `//` or `/*` inside a string or char
/// literal (`"http://x"`, `r#"a//b"#`, `b"//"`) is the literal's, not a
/// comment's start; a comment's own newlines are kept, so lines keep their
/// numbers.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    let s = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if ident(s[i]) {
            // A word, or a literal's prefix: `r"..`, `b".."`, `b'x'`,
            // `br#".."#`, `c".."`, `cr".."`.
            let end = (i..s.len()).find(|&j| !ident(s[j])).unwrap_or(s.len());
            let at = match &s[i..end] {
                b"r" => Some(i),
                b"br" | b"cr" => Some(i + 1),
                b"b" | b"c" => Some(end),
                _ => None,
            };
            let literal = at
                .filter(|&at| at < s.len() && s[at] != b'/')
                .and_then(|at| skip_literal(s, at));
            let next = literal.unwrap_or(end).min(s.len());
            out.extend_from_slice(&s[i..next]);
            i = next;
            continue;
        }
        match skip_literal(s, i) {
            Some(next) => {
                let next = next.min(s.len());
                if s[i] == b'/' {
                    out.extend(s[i..next].iter().filter(|&&c| c == b'\n'));
                } else {
                    out.extend_from_slice(&s[i..next]);
                }
                i = next;
            }
            None => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn comments_are_cut_and_literals_that_hold_slashes_are_kept() {
    let cases = [
        (
            "let a = 1; // fill_core\nlet b = 2;",
            "let a = 1; \nlet b = 2;",
        ),
        (
            "let u = \"http://x\"; fill_core(); // gone",
            "let u = \"http://x\"; fill_core(); ",
        ),
        (
            "let u = \"a\\\"//\"; x(); // gone",
            "let u = \"a\\\"//\"; x(); ",
        ),
        ("let r = r#\"a\"//b\"#; x();", "let r = r#\"a\"//b\"#; x();"),
        ("let r = r\"\\\"; x(); // gone", "let r = r\"\\\"; x(); "),
        ("let b = b\"//\"; x();", "let b = b\"//\"; x();"),
        ("let b = br#\"//\"#; x();", "let b = br#\"//\"#; x();"),
        ("let c = '\"'; x(); // \"", "let c = '\"'; x(); "),
        ("let c = '\\''; x(); // '", "let c = '\\''; x(); "),
        ("let c = b'/'; x(); // y", "let c = b'/'; x(); "),
        ("let c = ('→', '/'); x(); // '", "let c = ('→', '/'); x(); "),
        ("fn f<'a>(s: &'a str) {} // 'x'", "fn f<'a>(s: &'a str) {} "),
        ("a(); /* b\n c */ d();", "a(); \n d();"),
        ("let s = \"x\ny // z\"; w();", "let s = \"x\ny // z\"; w();"),
        ("let b = b // c\n;", "let b = b \n;"),
    ];
    for (text, want) in cases {
        assert_eq!(code(text), want, "{text}");
    }
}

/// The leaves of the use tree (or plain path) that starts at `s[i..]`, each
/// appended to `base`: `a::{b::C, d, self}` gives `a::b::C`, `a::d` and `a`.
/// Returns where the tree ends.
fn use_tree(s: &[u8], mut i: usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < s.len() && s[i] == b'{' {
            i += 1;
            loop {
                let from = i;
                i = use_tree(s, i, path.clone(), out);
                while i < s.len() && (s[i].is_ascii_whitespace() || s[i] == b',') {
                    i += 1;
                }
                if i >= s.len() || s[i] == b'}' {
                    return i + 1;
                }
                if i == from {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < s.len() && ident(s[i]) {
            i += 1;
        }
        let seg = String::from_utf8_lossy(&s[start..i]).into_owned();
        if !seg.is_empty() && seg != "self" {
            path.push(seg);
        }
        if s[i..].starts_with(b"::") {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// The paths a file refers to, as module paths: `crate::a::b`, `super::b`
/// (and `super::super::b`), `self::b`, paths into the module's own
/// submodules written relative (`event::SbWorker` in `sysbench/mod.rs`,
/// `children` names them), and every leaf of a use tree
/// (`crate::a::{b::C, d}`). Paths inside string literals do not count.
fn references(module: &[String], children: &[String], code: &str) -> Vec<Vec<String>> {
    let (outside, _) = split_strings(code);
    let s = outside.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let starts_word = i == 0 || !(ident(s[i - 1]) || (i >= 2 && &s[i - 2..i] == b"::"));
        if !starts_word || !ident(s[i]) {
            i += 1;
            continue;
        }
        let end = (i..s.len()).find(|&j| !ident(s[j])).unwrap_or(s.len());
        let word = &outside[i..end];
        if !s[end..].starts_with(b"::") {
            i = end;
            continue;
        }
        let mut at = end + 2;
        let base = match word {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => {
                let mut p = module[..module.len().saturating_sub(1)].to_vec();
                while s[at..].starts_with(b"super::") {
                    p.pop();
                    at += "super::".len();
                }
                p
            }
            w if children.iter().any(|c| c == w) => {
                at = i;
                module.to_vec()
            }
            _ => {
                i = end;
                continue;
            }
        };
        i = use_tree(s, at, base, &mut out).max(end);
    }
    out
}

/// Every module of src/ (lib.rs and main.rs apart): its path and its code.
fn modules() -> Vec<(Vec<String>, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    files
        .iter()
        .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap()))
        .filter(|(m, _)| !m.is_empty() && m != &["lib"] && m != &["main"])
        .collect()
}

/// The module graph of `modules` at full depth (`suite::sysbench::event`):
/// an edge for every use of another module that exists, by the longest
/// known module a path starts with.
fn graph(modules: &[(Vec<String>, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let known: BTreeSet<Vec<String>> = modules.iter().map(|(m, _)| m.clone()).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in modules {
        let from = m.join("::");
        g.entry(from.clone()).or_default();
        let children: Vec<String> = known
            .iter()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect();
        for r in references(m, &children, &code(text)) {
            let Some(to) = (1..=r.len())
                .rev()
                .map(|n| &r[..n])
                .find(|p| known.contains(*p))
            else {
                continue;
            };
            let to = to.join("::");
            if to != from {
                g.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    g
}

/// One cycle of `g`, if it has any.
fn a_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for next in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

/// Splits code into what is outside string literals and the literals'
/// contents (plain and raw strings; escapes skipped).
fn split_strings(code: &str) -> (String, Vec<String>) {
    let mut outside = String::new();
    let mut literals = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Raw string: r"..." or r#"..."#.
        if c == 'r' && i + 1 < chars.len() && (chars[i + 1] == '"' || chars[i + 1] == '#') {
            let mut j = i + 1;
            let mut hashes = 0;
            while j < chars.len() && chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < chars.len() && chars[j] == '"' {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let body: String = chars[j + 1..].iter().collect();
                let end = body.find(&close).unwrap_or(body.len());
                literals.push(body[..end].to_string());
                i = j + 1 + body[..end].chars().count() + close.chars().count();
                outside.push(' ');
                continue;
            }
        }
        // A char literal holding a quote is not a string.
        if c == '\'' && i + 2 < chars.len() && chars[i + 1] == '"' && chars[i + 2] == '\'' {
            i += 3;
            continue;
        }
        if c == '"' {
            let mut lit = String::new();
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if j < chars.len() {
                    lit.push(chars[j]);
                }
                j += 1;
            }
            literals.push(lit);
            i = j + 1;
            outside.push(' ');
            continue;
        }
        outside.push(c);
        i += 1;
    }
    (outside, literals)
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let g = graph(&modules());
    assert!(g.len() > 100, "the scan found the modules: {g:?}");
    if let Some(c) = a_cycle(&g) {
        panic!("import cycle: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle_at_any_depth() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert!(a_cycle(&g).is_none());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(a_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    // Three files of one suite in a circle, found from their code.
    let m = |p: &str, code: &str| {
        (
            p.split("::").map(str::to_string).collect::<Vec<_>>(),
            code.to_string(),
        )
    };
    let suite = [
        m("suite::s", "pub mod a; pub mod b; pub mod c; use a::X;"),
        m("suite::s::a", "use super::b::Y;"),
        m("suite::s::b", "use crate::suite::s::{c::Z, self};"),
        m("suite::s::c", "fn f() { super::a::X::new(); }"),
    ];
    let g = graph(&suite);
    let c = a_cycle(&g).unwrap();
    assert!(c.len() >= 3, "{c:?}");
    assert!(c.iter().all(|n| n.starts_with("suite::s")), "{c:?}");
    // A folder's face and one of its files that use each other are a cycle
    // too (the face re-exports the file, the file uses the face's types);
    // a path inside a string is no use.
    let face = [
        m("engine", "pub mod kv; use kv::KvAccess;"),
        m(
            "engine::kv",
            "use super::Driver; let s = \"crate::engine::url\";",
        ),
        m("engine::url", "use crate::engine::error::DbError;"),
    ];
    let g = graph(&face);
    assert!(g["engine"].contains("engine::kv"), "{g:?}");
    assert!(!g["engine::kv"].contains("engine::url"), "{g:?}");
    assert_eq!(a_cycle(&g).unwrap(), ["engine", "engine::kv", "engine"]);
    // With the face's types in a file of their own, no cycle is left.
    let apart = [
        m("engine", "pub mod kv; pub mod core; use kv::KvAccess;"),
        m("engine::kv", "use super::core::Driver;"),
        m("engine::core", ""),
    ];
    assert!(a_cycle(&graph(&apart)).is_none());
}

#[test]
fn every_form_of_a_path_is_a_reference() {
    let m: Vec<String> = ["suite", "s", "event"].map(String::from).to_vec();
    let refs = references(
        &m,
        &["inner".to_string()],
        &code(
            "use super::schema::Table;\n// crate::suite::x\nlet x = crate::results::Status::Ok;\n\
             use crate::{engine::{Driver, kv::{self, KvAccess}}, util};\n\
             use super::super::api::Workload;\nuse self::inner::Y;\nlet z = inner::f();\n\
             let s = \"crate::report::model\"; let w = my_inner::g(); let v = a::inner::h();",
        ),
    );
    let refs: Vec<String> = refs.iter().map(|r| r.join("::")).collect();
    assert_eq!(
        refs,
        [
            "suite::s::schema::Table",
            "results::Status::Ok",
            "engine::Driver",
            "engine::kv",
            "engine::kv::KvAccess",
            "util",
            "suite::api::Workload",
            "suite::s::event::inner::Y",
            "suite::s::event::inner::f",
        ]
    );
}

#[test]
fn names_in_code_and_exact_strings_count_and_prose_does_not() {
    let (outside, lits) = split_strings(
        "let a = t.detail(\"ibench\"); let b = \"the sysbench rule\"; use crate::suite::select1::X; let c = r#\"raw \"q\"\"#; let q = '\"';",
    );
    assert!(lits.contains(&"ibench".to_string()));
    assert!(lits.contains(&"the sysbench rule".to_string()));
    assert!(lits.contains(&"raw \"q\"".to_string()));
    assert!(
        outside.contains("select1") && !outside.contains("sysbench") && !outside.contains("ibench")
    );
}

/// The suites `text`, the file `rel` of src/ (`cli/mod.rs`), names while it
/// is outside their folders: a name in code, or a string that is the name
/// (a key, a suite field); prose that mentions a suite among other words is
/// fine. The registry line's file and the self-benchmarks may name them.
fn suites_named(rel: &str, text: &str, suites: &[String]) -> Vec<String> {
    if rel == "suite/mod.rs" || rel.starts_with("selfbench/") {
        return Vec::new();
    }
    let (outside, literals) = split_strings(&code(text));
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    suites
        .iter()
        .filter(|s| !rel.starts_with(&format!("suite/{s}/")))
        .filter(|s| {
            let in_code = outside.match_indices(s.as_str()).any(|(i, _)| {
                !word(outside[..i].chars().last()) && !word(outside[i + s.len()..].chars().next())
            });
            in_code || literals.iter().any(|l| l == *s)
        })
        .cloned()
        .collect()
}

#[test]
fn only_a_suites_own_folder_names_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let suites: Vec<String> = std::fs::read_dir(src.join("suite"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(suites.len() >= 3, "{suites:?}");
    // The rule catches names in code and whole strings anywhere but the
    // registry, the suite's own folder and the self-benchmarks.
    let s = |n: &[&str]| n.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let two = s(&["sysbench", "ibench"]);
    for (rel, text, named) in [
        ("cli/mod.rs", "let h = \"sysbench\";", s(&["sysbench"])),
        ("cli/mod.rs", "use crate::suite::ibench::X;", s(&["ibench"])),
        (
            "suite/api.rs",
            "let r = sysbench::Sysbench;",
            s(&["sysbench"]),
        ),
        (
            "suite/ibench/run.rs",
            "use crate::suite::sysbench::X;",
            s(&["sysbench"]),
        ),
        (
            "suite/ibench/run.rs",
            "use crate::suite::ibench::X;",
            s(&[]),
        ),
        (
            "suite/mod.rs",
            "&Registered::<ibench::Ibench>::NEW,",
            s(&[]),
        ),
        ("selfbench/mod.rs", "use crate::suite::sysbench::X;", s(&[])),
        ("cli/mod.rs", "let h = \"the sysbench tests\";", s(&[])),
    ] {
        assert_eq!(suites_named(rel, text, &two), named, "{rel}: {text}");
    }
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for s in suites_named(&rel, &std::fs::read_to_string(f).unwrap(), &suites) {
            found.push(format!("{rel} names {s}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The engine kinds' folders (`src/engine/<kind>/mod.rs` declares `KIND`),
/// and every name they go by (`name` and `aliases`: `mariadb`, `pg`, ...).
fn engine_kinds(src: &Path) -> (Vec<String>, Vec<String>) {
    let mut kinds = Vec::new();
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(src.join("engine")).unwrap() {
        let p = e.unwrap().path();
        let Ok(text) = std::fs::read_to_string(p.join("mod.rs")) else {
            continue;
        };
        if !text.contains("pub static KIND: EngineKind") {
            continue;
        }
        let kind = p.file_name().unwrap().to_string_lossy().into_owned();
        // Every kind the folder declares (mysql/ declares MySQL and MariaDB).
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("aliases:"))
        {
            names.extend(split_strings(line).1);
        }
        names.insert(kind.clone());
        kinds.push(kind);
    }
    (kinds, names.into_iter().collect())
}

/// The engines `text` (a source file) names in its code: a path into a
/// kind's module or the servers' (`crate::engine::rocksdb::X`,
/// `engine::{rocksdb::X}`, `use crate::engine::rocksdb;`,
/// `crate::engine::server::Server`), or a string that is an engine's name
/// (`"mariadb"`; prose that mentions one among other words is fine).
fn kinds_named(text: &str, kinds: &[String], names: &[String]) -> Vec<String> {
    let (outside, literals) = split_strings(&code(text));
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let modules = kinds.iter().map(String::as_str).chain(["server"]);
    let mut found: Vec<String> = modules
        .filter(|k| {
            outside.match_indices(k).any(|(i, _)| {
                let after = &outside[i + k.len()..];
                !word(outside[..i].chars().last())
                    && !word(after.chars().next())
                    && (after.starts_with("::") || outside[..i].ends_with("engine::"))
            })
        })
        .map(|k| format!("engine::{k}"))
        .collect();
    for n in names {
        if literals.iter().any(|l| l == n) {
            found.push(format!("\"{n}\""));
        }
    }
    found
}

#[test]
fn no_suite_names_an_engine_kind() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (kinds, names) = engine_kinds(&src);
    assert!(
        kinds.len() >= 4 && kinds.contains(&"rocksdb".to_string()),
        "{kinds:?}"
    );
    for n in ["mariadb", "postgres", "mysql", "sqlite", "rocksdb"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
    // The rule catches the forms an import takes, the servers' module and
    // engines' names as strings, and not prose or tests.
    for bad in [
        "use crate::engine::rocksdb::{KIND, RocksDriver};",
        "use crate::engine::{kv::KvAccess, rocksdb::RocksDriver};",
        "use crate::engine::rocksdb;",
        "let d = crate::engine::sqlite::SqliteDriver::new(p, v);",
        "use crate::engine::server::{Server, ServerSpec};",
        "use crate::engine::{kv::KvAccess, server::Server};",
        "let s = crate::engine::server::util::run_checked(c, m);",
        "use crate::engine::server;",
        "if d.engine() == \"mariadb\" { x() }",
        "let k = \"postgres\";",
        "match e { \"mysql\" => 1, _ => 2 }",
    ] {
        assert_eq!(kinds_named(bad, &kinds, &names).len(), 1, "{bad}");
    }
    for fine in [
        "// engine::rocksdb is reached through the kv face\nlet x = 1;",
        "let s = \"on rocksdb::X\";",
        "let rocksdb_like = 1;",
        "let server = 1; let s = \"the server's mariadb log\";",
        "// engine::server starts them\nlet x = 1;",
        "#[cfg(test)]\nmod tests { use crate::engine::sqlite::SqliteDriver; let k = \"mysql\"; }",
    ] {
        assert!(kinds_named(fine, &kinds, &names).is_empty(), "{fine}");
    }
    let mut files = Vec::new();
    rs_files(&src.join("suite"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for k in kinds_named(&std::fs::read_to_string(f).unwrap(), &kinds, &names) {
            found.push(format!("{rel} names {k}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// What `find` finds in each file of `src/suite/`, as `suite/FILE: finding`.
fn in_suites(find: fn(&str) -> Vec<String>) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src.join("suite"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for n in find(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{rel}: {n}"));
        }
    }
    found
}

/// What in `text`'s code runs a timed step past the harness's one
/// (`TestRun::timed`): the runner's step, its configuration, or the core
/// fill of a result.
fn own_timed_steps(text: &str) -> Vec<String> {
    let (outside, _) = split_strings(&code(text));
    let mut found: Vec<String> = ["runner::run_step", "StepConfig", "fill_core"]
        .into_iter()
        .filter(|n| outside.contains(n))
        .map(String::from)
        .collect();
    // `use crate::harness::runner::{Worker, run_step};`
    for (i, _) in outside.match_indices("runner::{") {
        let rest = &outside[i..];
        let tree = &rest[..rest.find('}').unwrap_or(rest.len())];
        if tree
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == "run_step")
        {
            found.push("runner::{.., run_step}".into());
        }
    }
    found
}

#[test]
fn the_timed_step_rule_fires_on_a_suites_own_step_and_not_on_the_harness_one() {
    for bad in [
        "let step = crate::harness::runner::run_step(&mut w, &cfg, &mut |_| {}, &mut || {});",
        "use crate::harness::runner::{StepStatus, Worker, run_step};",
        "let cfg = StepConfig { warmup, duration, reconnect_for };",
        "crate::harness::fill_core(&mut run.result, &step);",
        // A `//` inside a string does not start a comment.
        "let u = \"http://x\"; crate::harness::fill_core(&mut run.result, &step);",
        "let u = r#\"a//b\"#; let cfg = StepConfig { warmup, duration, reconnect_for };",
    ] {
        assert_eq!(own_timed_steps(bad).len(), 1, "{bad}");
    }
    for fine in [
        "let step = run.timed(&mut workers, TimedStep::new(timing, Per::Event));",
        "use crate::harness::runner::{Worker, stop_requested};",
        "pub fn run_step(driver: &dyn Driver, spec: &StepSpec) -> StepOutcome { x() }",
        "// the runner's runner::run_step times it\nlet x = 1;",
        "let s = \"fill_core\";",
        "let u = \"http://x\"; let y = 1; // then fill_core and StepConfig",
    ] {
        assert!(own_timed_steps(fine).is_empty(), "{fine}");
    }
}

/// No suite times a step of its own: every suite's test goes through the
/// harness's one (warm-up, sampling, progress, probe, deadline).
#[test]
fn no_suite_runs_a_timed_step_of_its_own() {
    let found = in_suites(own_timed_steps);
    assert!(
        found.is_empty(),
        "run the step with TestRun::timed (or harness::bare_step outside a test):\n{}",
        found.join("\n")
    );
}

/// What in `text`'s code measures work past the harness's frames
/// (`Harness::load`, `TestRun::load`, `TestRun::measured`, `TestRun::timed`,
/// `Harness::check`): the `/proc` sampler started, the probe ended or taken
/// by hand, or a progress bar drawn.
fn own_measurements(text: &str) -> Vec<String> {
    let (outside, _) = split_strings(&code(text));
    let words: Vec<&str> = outside
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let mut found: Vec<String> = [
        "start_sampling",
        "finish_probe",
        "ProgressBar",
        "indicatif",
        "Probe",
    ]
    .into_iter()
    .filter(|n| words.contains(n))
    .map(String::from)
    .collect();
    // `h.ui.bar(..)`, `run.bar(..)`: a bar of the suite's own.
    let squeezed: String = outside.chars().filter(|c| !c.is_whitespace()).collect();
    if squeezed.contains(".bar(") {
        found.push(".bar(".into());
    }
    found
}

#[test]
fn the_load_rule_fires_on_a_suites_own_probe_or_bar_and_not_on_the_harness_frames() {
    for bad in [
        "run.start_sampling();\nlet n = load(db)?;",
        "run.finish_probe(rows as f64);",
        "let mut probe = Probe::before(h.probe, h.driver.as_ref());",
        "use crate::harness::probe::Probe;",
        "let bar = h.ui.bar(rows, \"load\".into(), TEMPLATE);",
        "let bar = run\n    .bar(p.nodes, \"{msg}\");",
        "let b = indicatif::ProgressBar::new(10);",
    ] {
        assert!(!own_measurements(bad).is_empty(), "{bad}");
    }
    for fine in [
        "h.load(\"load\", rows, |driver, progress| fill(driver, &mut |n| progress.done(n)), line)?;",
        "let secs = run.measured(\"link\", |_| build(db).map(|s| (s, links)))?;",
        "let step = run.timed(&mut workers, TimedStep::new(timing, Per::Event));",
        "// the harness calls start_sampling and draws the bar\nlet x = 1;",
        "let s = \"finish_probe\"; let foobar = barrel(1); let rebar = x.bars();",
        "let p = ProbeContext::default();",
    ] {
        assert!(
            own_measurements(fine).is_empty(),
            "{fine}: {:?}",
            own_measurements(fine)
        );
    }
}

/// No suite measures work outside the harness's frames: its loads, index
/// builds, checks and background steps are sampled, probed and shown on the
/// one bar by the harness.
#[test]
fn no_suite_samples_probes_or_draws_a_bar_of_its_own() {
    let found = in_suites(own_measurements);
    assert!(
        found.is_empty(),
        "measure a load with Harness::load (the run's) or TestRun::load (a test's), other work \
         with TestRun::measured:\n{}",
        found.join("\n")
    );
}

/// The classes of PostgreSQL's SQLSTATEs (a code's first two characters).
const SQLSTATE_CLASSES: &[&str] = &[
    "00", "01", "02", "03", "08", "09", "0A", "0B", "0F", "0L", "0P", "0Z", "20", "21", "22", "23",
    "24", "25", "26", "27", "28", "2B", "2D", "2F", "34", "38", "39", "3B", "3D", "3F", "40", "42",
    "44", "53", "54", "55", "57", "58", "72", "F0", "HV", "P0", "XX",
];

/// A SQLSTATE: five digits and capitals, of a known class, with a digit
/// after it (so `"LEVEL"` or `"BYTES"` is not one).
fn is_sqlstate(l: &str) -> bool {
    l.len() == 5
        && l.bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        && SQLSTATE_CLASSES.contains(&&l[..2])
        && l[2..].bytes().any(|b| b.is_ascii_digit())
}

/// A MySQL error number: four digits, server (1000-1999, 3000-3999) or
/// client (2000-2999).
fn is_errno(l: &str) -> bool {
    l.len() == 4 && l.parse::<u16>().is_ok_and(|n| (1000..=3999).contains(&n))
}

/// The engine error codes in `text`'s code (not its comments or tests), as
/// `line: "code"`: any SQLSTATE string, and a MySQL error number where its
/// line reads a code (`code`, `errno`) or matches on it (`=>`).
fn error_codes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code(text).lines() {
        let (outside, literals) = split_strings(line);
        let about_codes =
            outside.contains("code") || outside.contains("errno") || outside.contains("=>");
        for l in literals {
            if is_sqlstate(&l) || (about_codes && is_errno(&l)) {
                found.push(format!("{}: \"{l}\"", line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_error_code_rule_fires_on_codes_and_stays_quiet_on_other_strings() {
    for bad in [
        "match e.code.as_deref() { Some(\"40001\") => 1, _ => 0 }",
        "Some(\"40P01\" | \"1213\") => f.deadlock += 1,",
        "if e.code.as_deref() == Some(\"23505\") { dup() }",
        "let retry = [\"55P03\", \"57014\"];",
        "if code == \"1062\" { dup() }",
        "let n = errno_of(e); if n == \"1205\" { wait() }",
    ] {
        assert!(!error_codes(bad).is_empty(), "{bad}");
    }
    for fine in [
        "match e.meaning() { Meaning::Serialization => 1, _ => 0 }",
        "out.push_str(\"11111\");",
        "let k = \"LEVEL\"; let b = \"BYTES\";",
        "let rows = \"1500\";",
        "// pgbench counts \"40001\" as a serialization failure\nlet x = 1;",
        "#[cfg(test)]\nmod tests { fn f() { let c = \"40001\"; } }",
    ] {
        assert!(
            error_codes(fine).is_empty(),
            "{fine}: {:?}",
            error_codes(fine)
        );
    }
}

/// Suites ask an error what it means ([`DbError::meaning`], set by the
/// engine): the codes that say it are the engines' own.
#[test]
fn no_suite_reads_an_engine_error_code() {
    let found = in_suites(error_codes);
    assert!(
        found.is_empty(),
        "ask the error's meaning (DbError::meaning) instead of its code:\n{}",
        found.join("\n")
    );
}

/// The error types of the `-> Result<T, E>` return types in `code` that
/// are a bare `String` (a function's or a closure's), as `line: text`.
fn string_errors(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(i) = code[from..].find("-> Result<") {
        let start = from + i + "-> Result<".len();
        let (mut depth, mut j, mut last_comma) = (1, start, start);
        while j < bytes.len() && depth > 0 {
            match bytes[j] {
                b'<' => depth += 1,
                b'>' if bytes[j - 1] != b'-' => depth -= 1,
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b',' if depth == 1 => last_comma = j + 1,
                _ => {}
            }
            j += 1;
        }
        let err = code[last_comma..j.saturating_sub(1)].trim();
        if last_comma > start && (err == "String" || err == "std::string::String") {
            let line = code[..start].matches('\n').count() + 1;
            found.push(format!("{line}: -> Result<{}>", code[start..j - 1].trim()));
        }
        from = start;
    }
    found
}

/// What `find` finds in each file of src/ (its code: comments and tests
/// left out), as `src/FILE:HIT`.
fn in_src(find: fn(&str) -> Vec<String>) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        for hit in find(&code(&std::fs::read_to_string(f).unwrap())) {
            found.push(format!("src/{rel}:{hit}"));
        }
    }
    found
}

#[test]
fn no_function_returns_a_bare_string_as_its_error() {
    let found = in_src(string_errors);
    assert!(
        found.is_empty(),
        "errors are typed (a thiserror enum or struct with the context as fields), not String:\n{}",
        found.join("\n")
    );
    // The rule catches the forms a signature takes, and not prose or tests.
    for bad in [
        "pub fn f() -> Result<(), String> {",
        "fn g(s: &str)\n    -> Result<Vec<(String, String)>, String> {",
        "let push = |p: &mut String| -> Result<(), String> {",
        "fn h() -> Result<HashMap<String, Vec<u8>>, std::string::String> {",
    ] {
        assert_eq!(string_errors(&code(bad)).len(), 1, "{bad}");
    }
    for fine in [
        "fn f() -> Result<String, Error> {",
        "fn g() -> Result<Vec<(String, String)>, BadValue> {",
        "fn h() -> Result<(), Box<dyn Fn(u8) -> String>> {",
        "// returns Result<(), String>\nfn k() {}",
        "#[cfg(test)]\nmod tests { fn t() -> Result<(), String> { Ok(()) } }",
    ] {
        assert!(string_errors(&code(fine)).is_empty(), "{fine}");
    }
}

/// `code` with the contents of its string and char literals blanked (`_`),
/// char for char, so that brackets in messages do not count.
fn mask_strings(code: &str) -> Vec<char> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let raw = c == 'r'
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
            && chars[i + 1..].iter().take_while(|&&h| h == '#').count() < chars.len()
            && {
                let h = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                chars.get(i + 1 + h) == Some(&'"')
            };
        if raw {
            let h = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            let mut j = i + 2 + h;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', h))
                .collect();
            while j < chars.len() && !chars[j..].starts_with(&close) {
                out[j] = '_';
                j += 1;
            }
            i = j + close.len();
            continue;
        }
        if c == '\'' && i + 2 < chars.len() && chars[i + 2] == '\'' {
            out[i + 1] = '_';
            i += 3;
            continue;
        }
        if c == '\'' && i + 3 < chars.len() && chars[i + 1] == '\\' && chars[i + 3] == '\'' {
            out[i + 1] = '_';
            out[i + 2] = '_';
            i += 4;
            continue;
        }
        if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    out[j] = '_';
                    j += 1;
                }
                if j < chars.len() {
                    out[j] = '_';
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// Where the bracket opened at `m[i]` closes (strings masked).
fn closing(m: &[char], i: usize) -> usize {
    let mut depth = 0;
    for (j, &c) in m.iter().enumerate().skip(i) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    m.len()
}

/// `s[from..to]` split at the commas outside brackets.
fn top_level_split(m: &[char], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, from);
    for (j, &c) in m.iter().enumerate().take(to).skip(from) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, j));
                start = j + 1;
            }
            _ => {}
        }
    }
    out.push((start, to));
    out.into_iter()
        .filter(|&(a, b)| m[a..b].iter().any(|c| !c.is_whitespace()))
        .collect()
}

/// A field list's fields as their types, attributes and visibility left
/// out (`#[source] pub(crate) String` gives `String`), with their names.
fn fields(text: &str, m: &[char], (from, to): (usize, usize)) -> Vec<(String, String)> {
    let chars: Vec<char> = text.chars().collect();
    top_level_split(m, from, to)
        .into_iter()
        .map(|(mut a, b)| {
            loop {
                while a < b && chars[a].is_whitespace() {
                    a += 1;
                }
                if a < b && chars[a] == '#' {
                    a = closing(m, a + 1) + 1;
                } else {
                    break;
                }
            }
            let f: String = chars[a.min(b)..b].iter().collect();
            let f = f.trim();
            let f = f.strip_prefix("pub").map_or(f, |r| {
                let r = r.trim_start();
                match r.strip_prefix('(') {
                    Some(inner) => inner.split_once(')').map_or(r, |(_, t)| t),
                    None => r,
                }
            });
            match f.split_once(':') {
                Some((name, ty)) if !ty.starts_with(':') => {
                    (name.trim().to_string(), ty.trim().to_string())
                }
                _ => (String::new(), f.trim().to_string()),
            }
        })
        .collect()
}

/// Whether a field list (`fields`) wraps a bare `String` shown as the
/// error's whole message: a lone `String` field (tuple or named) that the
/// error's text is made of alone: `#[error("{0}")]`, `#[error("{name}")]`,
/// transparent, or a hand-written `Display` (no `#[error]` to show
/// otherwise). A lone `String` quoted inside a message of the type's own
/// (`#[error("'{0}' is not a number")]`) is a value, not a message.
fn wraps_a_string(fields: &[(String, String)], attrs: &str) -> bool {
    let string = |t: &str| t == "String" || t == "std::string::String";
    match fields {
        [(name, ty)] if string(ty) => {
            let shown = if name.is_empty() { "0" } else { name.as_str() };
            attrs.contains(&format!("#[error(\"{{{shown}}}\")]"))
                || attrs.contains("#[error(transparent)]")
                || !attrs.contains("#[error(")
        }
        _ => false,
    }
}

/// The error types in `code` that wrap a bare `String` (see
/// [`wraps_a_string`]): a struct, or an enum's variant, of a type that
/// derives `Error` or implements `std::error::Error`, as `line: Type` or
/// `line: Type::Variant`.
fn string_error_types(code: &str) -> Vec<String> {
    let m = mask_strings(code);
    let masked: String = m.iter().collect();
    let chars: Vec<char> = code.chars().collect();
    let text = |a: usize, b: usize| {
        let b = b.min(chars.len());
        chars[a.min(b)..b].iter().collect::<String>()
    };
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let line = |at: usize| chars[..at].iter().filter(|&&c| c == '\n').count() + 1;
    // Types with a hand-written `impl ... Error for T`.
    let mut by_impl = BTreeSet::new();
    for (i, _) in masked.match_indices("Error for ") {
        let before = masked[..i].trim_end_matches(|c: char| word(c) || c == ':');
        if before.trim_end().ends_with("impl") || before.ends_with("impl ") {
            let rest = &masked[i + "Error for ".len()..];
            let name: String = rest.chars().take_while(|&c| word(c)).collect();
            by_impl.insert(name);
        }
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < m.len() {
        let kw = ["struct ", "enum "].into_iter().find(|k| {
            let k: Vec<char> = k.chars().collect();
            m[i..].starts_with(&k)
        });
        let Some(kw) = kw.filter(|_| i == 0 || !word(m[i - 1])) else {
            i += 1;
            continue;
        };
        let start = i + kw.len();
        let name: String = m[start..].iter().take_while(|&&c| word(c)).collect();
        let after = start + name.chars().count();
        // The attributes above the item: back to the previous item's end.
        let prev = m[..i]
            .iter()
            .rposition(|&c| c == ';' || c == '}')
            .map_or(0, |p| p + 1);
        let attrs = text(prev, i);
        let derives_error = attrs.contains("#[derive(")
            && attrs.split("#[derive(").skip(1).any(|d| {
                d.split(')').next().unwrap_or("").split(',').any(|t| {
                    let t = t.trim();
                    t == "Error" || t.ends_with("::Error")
                })
            });
        let is_error = derives_error || by_impl.contains(&name);
        let Some(open) = (after..m.len()).find(|&j| matches!(m[j], '(' | '{' | ';')) else {
            break;
        };
        if !is_error || m[open] == ';' {
            i = open + 1;
            continue;
        }
        let close = closing(&m, open);
        if kw == "struct " {
            if wraps_a_string(&fields(code, &m, (open + 1, close)), &attrs) {
                found.push(format!("{}: {name}", line(i)));
            }
        } else {
            for (a, b) in top_level_split(&m, open + 1, close) {
                // The variant's attributes, then its name and fields.
                let mut at = a;
                loop {
                    while at < b && m[at].is_whitespace() {
                        at += 1;
                    }
                    if at < b && m[at] == '#' {
                        at = closing(&m, at + 1) + 1;
                    } else {
                        break;
                    }
                }
                let at = at.min(b);
                let v_attrs = text(a, at);
                let v_name: String = m[at..b].iter().take_while(|&&c| word(c)).collect();
                let Some(f_open) = (at..b).find(|&j| matches!(m[j], '(' | '{')) else {
                    continue;
                };
                let f = fields(code, &m, (f_open + 1, closing(&m, f_open)));
                if wraps_a_string(&f, &v_attrs) {
                    found.push(format!("{}: {name}::{v_name}", line(at)));
                }
            }
        }
        i = close + 1;
    }
    found
}

#[test]
fn no_error_type_wraps_a_bare_string() {
    // The rule catches the forms a string-wrapping error takes.
    for (bad, named) in [
        (
            "#[derive(Debug, thiserror::Error)]\n#[error(\"{0}\")]\npub struct Fault(String);",
            "3: Fault",
        ),
        (
            "#[derive(Debug, Clone, thiserror::Error)]\n#[error(\"{0}\")]\npub struct BadRate(pub(crate) String);",
            "3: BadRate",
        ),
        (
            "#[derive(Debug, Error)]\npub enum E {\n    #[error(\"code {0}\")]\n    Code(u16),\n    #[error(\"{0}\")]\n    Failed(String),\n}",
            "6: E::Failed",
        ),
        (
            "#[derive(thiserror::Error, Debug)]\nenum E {\n    #[error(\"{message}\")]\n    Setup { message: String },\n}",
            "4: E::Setup",
        ),
        (
            "pub struct ProcError(pub String);\nimpl std::error::Error for ProcError {}",
            "1: ProcError",
        ),
    ] {
        assert_eq!(string_error_types(&code(bad)), [named], "{bad}");
    }
    for fine in [
        "#[derive(Debug, thiserror::Error)]\nenum E {\n    #[error(\"{path}: {why} (a {{x}}, y)\")]\n    Bad { path: PathBuf, #[source] why: std::io::Error },\n    #[error(\"'{text}' is not a number\")]\n    NotSecs { text: String },\n    #[error(transparent)]\n    Io(#[from] std::io::Error),\n}",
        "enum Slot { Prepared(u32), Text(String) }",
        "#[derive(Debug, Clone, thiserror::Error)]\n#[error(\"bad rate '{0}': give a number\")]\npub struct BadRate(String);",
        "#[derive(Debug, Clone, PartialEq)]\npub struct Name(String);",
        "#[derive(Debug, thiserror::Error)]\n#[error(\"{context}: {source}\")]\npub struct Wrapped { context: String, #[source] source: std::io::Error }",
        "#[cfg(test)]\nmod t { #[derive(Debug, thiserror::Error)] #[error(\"{0}\")] struct T(String); }",
    ] {
        assert!(
            string_error_types(&code(fine)).is_empty(),
            "{fine}: {:?}",
            string_error_types(&code(fine))
        );
    }
    let found = in_src(string_error_types);
    assert!(
        found.is_empty(),
        "an error type says what went wrong as a variant (with the context as fields and the \
         cause as #[source]), not as a String made elsewhere:\n{}",
        found.join("\n")
    );
}

/// The most lines a function of src/ may have, from its `fn` line to its
/// closing brace: a longer one is split into steps that each have a name.
const MAX_FN_LINES: usize = 150;

/// Functions still over the limit (`file: name`), none now: the list only
/// shrinks, and an entry leaves it with its split.
const NOT_YET_SPLIT: &[&str] = &[];

/// Where `s[i..]` starts a comment, a string or a char literal, the index
/// just past it; `None` where it starts none (a lifetime `'a` is none).
fn skip_literal(s: &[u8], i: usize) -> Option<usize> {
    if s[i..].starts_with(b"//") {
        return Some(
            s[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(s.len(), |p| i + p),
        );
    }
    if s[i..].starts_with(b"/*") {
        return Some(
            s[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(s.len(), |p| i + 4 + p),
        );
    }
    let end_quote = |mut j: usize| {
        while j < s.len() && s[j] != b'"' {
            j += if s[j] == b'\\' { 2 } else { 1 };
        }
        j + 1
    };
    match s[i] {
        b'"' => Some(end_quote(i + 1)),
        b'r' if i + 1 < s.len() && (s[i + 1] == b'"' || s[i + 1] == b'#') => {
            let hashes = s[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if s.get(i + 1 + hashes) != Some(&b'"') {
                return None;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let from = i + 2 + hashes;
            let at = s[from..]
                .windows(close.len())
                .position(|w| w == close.as_slice())?;
            Some(from + at + close.len())
        }
        b'\'' if s.get(i + 1) == Some(&b'\\') => {
            // Past the escaped character, which may be a quote (`'\''`).
            let at = s.get(i + 3..)?.iter().position(|&c| c == b'\'')?;
            Some(i + 4 + at)
        }
        b'\'' => {
            // One character (of up to four UTF-8 bytes) and its closing quote;
            // a lifetime (`'a`) has none.
            let width = match s.get(i + 1)? {
                c if *c < 0x80 => 1,
                c if *c >= 0xf0 => 4,
                c if *c >= 0xe0 => 3,
                _ => 2,
            };
            (s.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
        }
        _ => None,
    }
}

/// Functions of `code` longer than [`MAX_FN_LINES`]: `LINE: name (N lines)`.
fn long_functions(code: &str) -> Vec<String> {
    let s = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let line_of = |i: usize| s[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if let Some(next) = skip_literal(s, i).filter(|_| i == 0 || !ident(s[i - 1])) {
            i = next;
            continue;
        }
        let is_fn = s[i..].starts_with(b"fn ")
            && (i == 0 || !ident(s[i - 1]))
            && s.get(i + 3).is_some_and(|&c| ident(c));
        if !is_fn {
            i += 1;
            continue;
        }
        let name: String = s[i + 3..]
            .iter()
            .take_while(|&&c| ident(c))
            .map(|&c| c as char)
            .collect();
        // The body: the first `{` before any `;` (a declaration has none).
        let mut j = i + 3;
        while j < s.len() && s[j] != b'{' && s[j] != b';' {
            j = skip_literal(s, j).unwrap_or(j + 1);
        }
        if j >= s.len() || s[j] == b';' {
            i = j;
            continue;
        }
        let mut depth = 0usize;
        let mut k = j;
        while k < s.len() {
            if let Some(next) = skip_literal(s, k).filter(|_| !ident(s[k - 1])) {
                k = next;
                continue;
            }
            match s[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let (first, last) = (line_of(i), line_of(k.min(s.len() - 1)));
        let lines = last - first + 1;
        if lines > MAX_FN_LINES {
            out.push(format!("{first}: {name} ({lines} lines)"));
        }
        // Functions inside this one are counted within it.
        i = k + 1;
    }
    out
}

#[test]
fn no_function_is_longer_than_150_lines() {
    // The rule measures from `fn` to the closing brace, past braces in
    // strings, and leaves declarations without a body alone.
    let body = "    let s = \"}}}{\";\n    let c = '}';\n".repeat(80);
    let long = format!(
        "trait T {{ fn decl(&self); }}\nfn long<'a>(x: &'a str) {{ // }} \"\n{body}}}\nfn short() {{}}\n"
    );
    assert_eq!(long_functions(&long), ["2: long (162 lines)"]);
    let fine = format!("fn fine() {{\n{}}}\n", "    x();\n".repeat(148));
    assert!(
        long_functions(&fine).is_empty(),
        "{:?}",
        long_functions(&fine)
    );

    // Read as written (comments and all: `code` would cut `"a://b"`), up
    // to the tests.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        found.extend(
            long_functions(text)
                .into_iter()
                .map(|hit| format!("src/{rel}:{hit}")),
        );
    }
    let exempt = |f: &String| {
        NOT_YET_SPLIT.iter().any(|e| {
            let (file, name) = e.split_once(": ").unwrap();
            f.starts_with(&format!("src/{file}:")) && f.contains(&format!(": {name} ("))
        })
    };
    let over: Vec<&String> = found.iter().filter(|f| !exempt(f)).collect();
    assert!(
        over.is_empty(),
        "functions longer than {MAX_FN_LINES} lines: split each into named steps:\n{}",
        over.iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Once split, a function leaves the list.
    for e in NOT_YET_SPLIT.iter() {
        assert!(
            found.iter().any(|f| {
                let (file, name) = e.split_once(": ").unwrap();
                f.starts_with(&format!("src/{file}:")) && f.contains(&format!(": {name} ("))
            }),
            "{e} is no longer than {MAX_FN_LINES} lines: take it off its list"
        );
    }
}

/// The arrows between top-level modules of src/: each module and the ones
/// it imports (`suite` → `report`, from `suite::sysbench::event`'s imports).
fn top_level_arrows() -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in graph(&modules()) {
        let from = top(&from);
        let entry = out.entry(from.clone()).or_default();
        for to in tos {
            let to = top(&to);
            if to != from {
                entry.insert(to);
            }
        }
    }
    out
}

/// The arrows docs/architecture.md states in its ```text imports block:
/// lines `from -> a, b, c` (`from -> nothing` for none).
fn documented_arrows(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let block = doc
        .split("```text imports\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/architecture.md has a ```text imports block");
    block
        .lines()
        .filter_map(|l| l.split_once("->"))
        .map(|(from, tos)| {
            let tos = tos
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty() && *t != "nothing")
                .map(String::from)
                .collect();
            (from.trim().to_string(), tos)
        })
        .collect()
}

/// Where `documented` and `actual` differ: one line per module whose arrows
/// differ, naming the missing and the extra ones.
fn arrow_differences(
    documented: &BTreeMap<String, BTreeSet<String>>,
    actual: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let none = BTreeSet::new();
    let names: BTreeSet<&String> = documented.keys().chain(actual.keys()).collect();
    let mut out = Vec::new();
    for n in names {
        let (d, a) = (
            documented.get(n).unwrap_or(&none),
            actual.get(n).unwrap_or(&none),
        );
        let undocumented: Vec<&String> = a.difference(d).collect();
        let gone: Vec<&String> = d.difference(a).collect();
        if !undocumented.is_empty() || !gone.is_empty() {
            out.push(format!(
                "{n}: imports {undocumented:?} that the docs do not state; the docs state {gone:?} that it does not import"
            ));
        }
    }
    out
}

#[test]
fn the_documented_arrows_are_the_imports() {
    // The check fires on a made-up mismatch, and is quiet on a match.
    let doc = "x\n```text imports\na -> b, c\nb -> nothing\nc -> b\n```\n";
    let documented = documented_arrows(doc);
    let mut actual = documented.clone();
    assert!(arrow_differences(&documented, &actual).is_empty());
    actual.get_mut("b").unwrap().insert("c".into());
    actual.get_mut("a").unwrap().remove("c");
    assert_eq!(
        arrow_differences(&documented, &actual),
        [
            "a: imports [] that the docs do not state; the docs state [\"c\"] that it does not import",
            "b: imports [\"c\"] that the docs do not state; the docs state [] that it does not import",
        ]
    );

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let documented = documented_arrows(&std::fs::read_to_string(path).unwrap());
    let actual = top_level_arrows();
    let d = arrow_differences(&documented, &actual);
    assert!(
        d.is_empty(),
        "docs/architecture.md's imports block and src/ differ:\n{}\nthe imports are:\n{}",
        d.join("\n"),
        actual
            .iter()
            .map(|(m, tos)| format!(
                "{m} -> {}",
                if tos.is_empty() {
                    "nothing".to_string()
                } else {
                    tos.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The rooms of `src/`: every folder (`engine/mysql`) and every file
/// directly in it (`main.rs`), as paths under `src/`.
fn rooms(src: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if p.is_dir() {
                out.push(path.clone());
                walk(&p, &path, out);
            } else if rel.is_empty() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(src, "", &mut out);
    out
}

/// The code spans (`` `x` ``) of `text`.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The rooms of `rooms` that the folder table of `doc` does not name: a
/// top-level one (`cli`, `main.rs`) needs `src/cli/` or `src/main.rs` in
/// a row's first cell; a nested one (`suite/sysbench/lua`) needs its path
/// below the top-level folder (`` `sysbench/lua/` ``) in that folder's row.
fn unnamed_rooms(doc: &str, rooms: &[String]) -> Vec<String> {
    let rows: Vec<(&str, &str)> = doc
        .lines()
        .filter(|l| l.starts_with("| `src/"))
        .map(|l| {
            let first = l[1..].split(" | ").next().unwrap_or("");
            (first, l)
        })
        .collect();
    rooms
        .iter()
        .filter(|room| {
            let named = match room.split_once('/') {
                None if room.ends_with(".rs") => rows
                    .iter()
                    .any(|(first, _)| code_spans(first).contains(&format!("src/{room}").as_str())),
                None => rows
                    .iter()
                    .any(|(first, _)| code_spans(first).contains(&format!("src/{room}/").as_str())),
                Some((top, rest)) => rows.iter().any(|(first, row)| {
                    code_spans(first).contains(&format!("src/{top}/").as_str())
                        && code_spans(row)
                            .iter()
                            .any(|s| s.starts_with(&format!("{rest}/")))
                }),
            };
            !named
        })
        .cloned()
        .collect()
}

/// The `src/` paths that `doc` names and `exists` does not find.
fn stale_paths(doc: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    code_spans(doc)
        .into_iter()
        .filter(|s| s.starts_with("src/") && !s.contains(' ') && !exists(s))
        .map(String::from)
        .collect()
}

#[test]
fn the_folder_table_rule_fires_on_an_unnamed_room_or_a_stale_path_and_not_otherwise() {
    let doc = "| folder | what |\n|---|---|\n| `src/cli/` | `run.rs` |\n| `src/engine/` | `mysql/` (wire), `server/trust.rs` |\n| `src/main.rs` | entry |\n\nSee `src/gone.rs` and `src/cli/`.";
    let rooms = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(
        unnamed_rooms(
            doc,
            &rooms(&["cli", "engine", "engine/mysql", "engine/server", "main.rs"])
        )
        .is_empty()
    );
    assert_eq!(
        unnamed_rooms(doc, &rooms(&["harness", "engine/postgres", "lib.rs"])),
        ["harness", "engine/postgres", "lib.rs"]
    );
    // A nested folder named in another folder's row is not named.
    assert_eq!(unnamed_rooms(doc, &rooms(&["cli/mysql"])), ["cli/mysql"]);
    let exists = |p: &str| p != "src/gone.rs";
    assert_eq!(stale_paths(doc, &exists), ["src/gone.rs"]);
    assert!(stale_paths("`src/cli/` and `src/ x`", &exists).is_empty());
}

/// docs/architecture.md names every room of `src/`, and no room that is gone.
#[test]
fn the_folder_table_names_every_room_of_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let unnamed = unnamed_rooms(&doc, &rooms(&root.join("src")));
    assert!(
        unnamed.is_empty(),
        "docs/architecture.md's folder table does not name these rooms of src/ (a top-level \
         one in a row of its own, a nested one in its folder's row): {}",
        unnamed.join(", ")
    );
    let stale = stale_paths(&doc, &|p| root.join(p).exists());
    assert!(
        stale.is_empty(),
        "docs/architecture.md names paths that are not in the tree: {}",
        stale.join(", ")
    );
}

/// What in `text` silences dead code: `#[allow(dead_code)]`, or
/// `let _ = x;` (or `(x, y)`) of a bare name, which only keeps an unused
/// value, parameter or import quiet. Discarding a call's result
/// (`let _ = h.join();`) is not that.
fn silenced_dead_code(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.starts_with("//") {
            continue;
        }
        if l.contains("allow(dead_code)") {
            found.push(format!("{}: {l}", i + 1));
            continue;
        }
        let Some(rest) = l.strip_prefix("let _ = ").and_then(|r| r.strip_suffix(';')) else {
            continue;
        };
        let rest = rest.trim().trim_start_matches('(').trim_end_matches(')');
        let bare = rest.split(',').all(|w| {
            let w = w.trim();
            !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if bare {
            found.push(format!("{}: {l}", i + 1));
        }
    }
    found
}

#[test]
fn the_dead_code_rule_fires_on_silenced_names_and_not_on_discarded_results() {
    for bad in [
        "fn f(p: u8) {\n    let _ = p;\n}",
        "    let _ = (deadline_ns, stop);",
        "    let _ = OPS;",
        "struct S {\n    #[allow(dead_code)]\n    n: u8,\n}",
        "#![allow(dead_code)]",
    ] {
        assert_eq!(silenced_dead_code(bad).len(), 1, "{bad}");
    }
    for fine in [
        "    let _ = shown.join();",
        "    let _ = std::fs::remove_file(&tmp);",
        "    let _ = e.print();",
        "    // let _ = p; keeps it quiet",
        "fn f(_p: u8) {}",
    ] {
        assert!(silenced_dead_code(fine).is_empty(), "{fine}");
    }
}

/// No code is kept alive only to keep the compiler quiet: an unused
/// parameter is named `_x`, and unused code is removed.
#[test]
fn no_dead_code_is_silenced() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        for n in silenced_dead_code(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{rel}:{n}"));
        }
    }
    assert!(
        found.is_empty(),
        "name an unused parameter _x and remove unused code rather than silence it:\n{}",
        found.join("\n")
    );
}

/// Where `text`'s code makes a usage error or a failure of another error's
/// text (`usage(e.to_string())`, `failed(format!("{e}"))`): the typed error
/// is the cause, and its source chain goes with it.
fn flattened_causes(text: &str) -> Vec<String> {
    let code = code(text);
    let mut found = Vec::new();
    for f in ["usage(", "usage_error(", "failed("] {
        for (i, _) in code.match_indices(f) {
            if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let arg: String = code[i + f.len()..].chars().take(40).collect();
            let arg = arg.split(')').next().unwrap_or("");
            let name = arg.split('.').next().unwrap_or("");
            let bare = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if (bare && arg.ends_with(".to_string(")) || arg.starts_with("format!(\"{e}\"") {
                found.push(format!("{f}{arg})"));
            }
        }
    }
    found
}

#[test]
fn the_flattened_cause_rule_fires_on_an_errors_text_and_not_on_the_error() {
    for bad in [
        "SbDist::new(a, b).map_err(|e| usage(e.to_string()))?;",
        ".map_err(|e| usage_error(e.to_string()))?",
        "e => crate::error::failed(e.to_string()),",
        "Err(failed(format!(\"{e}\")))",
    ] {
        assert_eq!(flattened_causes(bad).len(), 1, "{bad}");
    }
    for fine in [
        "SbDist::new(a, b).map_err(usage)?;",
        "Err(usage(format!(\"--threads must be at least 1, got {n}\")))",
        "crate::error::failed(r.reason.unwrap_or_default())",
        "let s = my_usage(e.to_string());",
    ] {
        assert!(flattened_causes(fine).is_empty(), "{fine}");
    }
}

#[test]
fn no_usage_error_or_failure_is_made_of_another_errors_text() {
    let found = in_src(flattened_causes);
    assert!(
        found.is_empty(),
        "give the typed error itself (usage(e), failed(e)): its message is the same and its \
         source chain is kept:\n{}",
        found.join("\n")
    );
}

/// The most lines a file of the CLI may have: the CLI parses and
/// dispatches, and a command that needs more has a file of its own.
const MAX_CLI_FILE_LINES: usize = 600;

/// The files of `files` (name, text) longer than `max` lines.
fn long_files(files: &[(String, String)], max: usize) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| text.lines().count() > max)
        .map(|(name, text)| format!("{name} ({} lines)", text.lines().count()))
        .collect()
}

#[test]
fn no_cli_file_is_longer_than_600_lines() {
    let sample = |n: usize| vec![("x.rs".to_string(), "l\n".repeat(n))];
    assert_eq!(long_files(&sample(601), 600), ["x.rs (601 lines)"]);
    assert!(long_files(&sample(600), 600).is_empty());
    let mut paths = Vec::new();
    rs_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli"),
        &mut paths,
    );
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let long = long_files(&files, MAX_CLI_FILE_LINES);
    assert!(
        long.is_empty(),
        "give a command that needs more a file of its own:\n{}",
        long.join("\n")
    );
}

/// The paths into the client core (`crate::evloop`) that `text`'s code
/// (the file of module `module`) takes, as `evloop::...`.
fn core_paths(module: &[String], text: &str) -> Vec<String> {
    references(module, &[], &code(text))
        .into_iter()
        .filter(|r| r.first().is_some_and(|m| m == "evloop"))
        .map(|r| r.join("::"))
        .collect()
}

#[test]
fn no_suite_reaches_the_client_core() {
    let m = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let shell = m("suite::pgbench::shell");
    for bad in [
        "use crate::evloop;",
        "use crate::evloop::{Interest, wait_fd};",
        "if crate::evloop::active() { x() }",
        "use crate::{engine::Driver, evloop};",
    ] {
        assert!(!core_paths(&shell, bad).is_empty(), "{bad}");
    }
    for fine in [
        "use crate::harness::wait::{Readable, sleep_until};",
        "// the client core (crate::evloop) runs it\nlet x = 1;",
        "let s = \"crate::evloop::run\";",
        "let evloop = 1;",
        "#[cfg(test)]\nmod tests { use crate::evloop; }",
    ] {
        assert!(core_paths(&shell, fine).is_empty(), "{fine}");
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src.join("suite"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let module = module_of(&src, f);
        for p in core_paths(&module, &std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{}: {p}", f.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(
        found.is_empty(),
        "suites wait through the harness (harness::wait), not the client core:\n{}",
        found.join("\n")
    );
}
