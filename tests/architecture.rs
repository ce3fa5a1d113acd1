//! The shape of the code, held by tests: no import cycle between modules
//! (at the top level, `cli`, `engine`, ..., and one level down, `engine::url`,
//! `report::model`, ...), no code outside a suite's own folder naming
//! that suite (apart from the registry, the CLI's help and the tests), and
//! no suite naming an engine kind (suites reach engines through a face),
//! and no function returning a bare `String` as its error.

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
/// the first `#[cfg(test)]` on).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file refers to, as module paths (`crate::a::b` and `super::b`).
fn references(module: &[String], code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", {
            let mut p = module.to_vec();
            p.pop();
            p
        }),
    ] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let path: String = rest.chars().take_while(|c| ident(*c)).collect();
            let mut full = base.clone();
            full.extend(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            out.push(full);
        }
    }
    out
}

/// The module graph at `depth` (1: `engine`, 2: `engine::url`): edges between
/// distinct modules that exist.
fn graph(depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let modules: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap()))
        .filter(|(m, _)| !m.is_empty() && m != &["lib"] && m != &["main"])
        .collect();
    let cut = |m: &[String]| m[..m.len().min(depth)].join("::");
    let known: BTreeSet<String> = modules.iter().map(|(m, _)| cut(m)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &modules {
        let from = cut(m);
        for r in references(m, &code(text)) {
            if r.is_empty() {
                continue;
            }
            // The longest known module this path starts with, at this depth.
            let to = cut(&r);
            if to != from && known.contains(&to) {
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
    for depth in [1, 2] {
        let g = graph(depth);
        assert!(g.len() > 5, "the scan found the modules: {g:?}");
        if let Some(c) = a_cycle(&g) {
            panic!("import cycle at depth {depth}: {}", c.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert!(a_cycle(&g).is_none());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(a_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    // `super::` and `crate::` paths both count; comments do not.
    let m = vec!["report".to_string(), "model".to_string()];
    let refs = references(
        &m,
        &code("use super::doc::Block;\n// crate::suite::x\nlet x = crate::results::Status::Ok;"),
    );
    assert_eq!(
        refs,
        [
            vec!["results", "Status", "Ok"],
            vec!["report", "doc", "Block"]
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
    // The registry lists the suites, and the self-benchmarks (`rqps bench`)
    // sit above them and may name them.
    let allowed = ["suite/mod.rs", "cli/mod.rs"];
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed.contains(&rel.as_str()) || rel.starts_with("selfbench/") {
            continue;
        }
        let (outside, literals) = split_strings(&code(&std::fs::read_to_string(f).unwrap()));
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        for s in &suites {
            if rel.starts_with(&format!("suite/{s}/")) {
                continue;
            }
            // A name in code, or a string that is the name (a key, a suite
            // field); prose that mentions a suite among other words is fine.
            let in_code = outside.match_indices(s.as_str()).any(|(i, _)| {
                !word(outside[..i].chars().last()) && !word(outside[i + s.len()..].chars().next())
            });
            if in_code || literals.iter().any(|l| l == s) {
                found.push(format!("{rel} names {s}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The engine kinds' folders (`src/engine/<kind>/mod.rs` declares `KIND`).
fn engine_kinds(src: &Path) -> Vec<String> {
    std::fs::read_dir(src.join("engine"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            std::fs::read_to_string(p.join("mod.rs"))
                .is_ok_and(|t| t.contains("pub static KIND: EngineKind"))
        })
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The engine kinds `text` (a source file) names in its code: a path into a
/// kind's module (`crate::engine::rocksdb::X`, `engine::{rocksdb::X}`, `use
/// crate::engine::rocksdb;`).
fn kinds_named(text: &str, kinds: &[String]) -> Vec<String> {
    let (outside, _) = split_strings(&code(text));
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    kinds
        .iter()
        .filter(|k| {
            outside.match_indices(k.as_str()).any(|(i, _)| {
                let after = &outside[i + k.len()..];
                !word(outside[..i].chars().last())
                    && !word(after.chars().next())
                    && (after.starts_with("::") || outside[..i].ends_with("engine::"))
            })
        })
        .cloned()
        .collect()
}

#[test]
fn no_suite_names_an_engine_kind() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let kinds = engine_kinds(&src);
    assert!(
        kinds.len() >= 4 && kinds.contains(&"rocksdb".to_string()),
        "{kinds:?}"
    );
    // The rule catches the forms an import takes, and not prose or tests.
    for bad in [
        "use crate::engine::rocksdb::{KIND, RocksDriver};",
        "use crate::engine::{kv::KvAccess, rocksdb::RocksDriver};",
        "use crate::engine::rocksdb;",
        "let d = crate::engine::sqlite::SqliteDriver::new(p, v);",
    ] {
        assert!(!kinds_named(bad, &kinds).is_empty(), "{bad}");
    }
    for fine in [
        "// engine::rocksdb is reached through the kv face\nlet x = 1;",
        "let s = \"on rocksdb::X\";",
        "let rocksdb_like = 1;",
        "#[cfg(test)]\nmod tests { use crate::engine::sqlite::SqliteDriver; }",
    ] {
        assert!(kinds_named(fine, &kinds).is_empty(), "{fine}");
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
        for k in kinds_named(&std::fs::read_to_string(f).unwrap(), &kinds) {
            found.push(format!("{rel} names engine {k}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
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

#[test]
fn no_function_returns_a_bare_string_as_its_error() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        for hit in string_errors(&code(&std::fs::read_to_string(f).unwrap())) {
            found.push(format!("src/{rel}:{hit}"));
        }
    }
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
