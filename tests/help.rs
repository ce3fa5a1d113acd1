//! The help is right: every subcommand has its own one-line description
//! (whatever `--suite` adds to `run` and `tests`), the top-level text and the
//! package description name every suite of the registry and every engine
//! kind, `--server` and `--target` list every kind, and `engine install`
//! describes the engine cache by its rule while `engine list` names the one in use. Each check reads the
//! help the binary prints, so it holds what a user sees.

use std::collections::BTreeMap;
use std::process::Command;

use rqps::engine::registry;

fn rqps(args: &[&str], env: &[(&str, Option<&str>)]) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.args(args);
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "rqps {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn help(args: &[&str]) -> String {
    let mut a = args.to_vec();
    a.push("--help");
    rqps(&a, &[])
}

/// The `Commands:` listing of a help text: name -> one-line description
/// (clap's own `help` left out).
fn listed(text: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut inside = false;
    let mut last = String::new();
    for line in text.lines() {
        if line == "Commands:" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if !line.starts_with("  ") {
            break;
        }
        // A description wrapped to the width continues under itself.
        if line.starts_with("   ") {
            if let Some(about) = out.get_mut(&last) {
                about.push(' ');
                about.push_str(line.trim());
            }
            continue;
        }
        let (name, about) = line.trim().split_once(char::is_whitespace).unwrap();
        last = name.to_string();
        if name != "help" {
            out.insert(name.to_string(), about.trim().to_string());
        }
    }
    out
}

/// Every subcommand at any depth (`engine install`) with its description.
fn all_subcommands() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        for (name, about) in listed(&help(&args)) {
            let mut sub = path.clone();
            sub.push(name);
            out.insert(sub.join(" "), about);
            todo.push(sub);
        }
    }
    out
}

/// Names that appear twice among `subs`' descriptions, as `a, b: text`.
fn shared_descriptions(subs: &BTreeMap<String, String>) -> Vec<String> {
    let mut by_text: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, about) in subs {
        by_text.entry(about).or_default().push(name);
    }
    by_text
        .into_iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|(text, names)| format!("{}: {text}", names.join(", ")))
        .collect()
}

#[test]
fn no_two_subcommands_share_a_description() {
    let subs = all_subcommands();
    for name in ["run", "tests", "report", "engine install"] {
        assert!(subs.contains_key(name), "{name} missing from {subs:?}");
    }
    let shared = shared_descriptions(&subs);
    assert!(
        shared.is_empty(),
        "shared descriptions:\n{}",
        shared.join("\n")
    );
}

#[test]
fn a_shared_description_is_found() {
    let mut subs = BTreeMap::new();
    subs.insert("run".to_string(), "What a user may set".to_string());
    subs.insert("tests".to_string(), "What a user may set".to_string());
    subs.insert("show".to_string(), "Print a run".to_string());
    assert_eq!(
        shared_descriptions(&subs),
        vec!["run, tests: What a user may set".to_string()]
    );
}

#[test]
fn run_and_tests_keep_their_own_description_whatever_the_suite() {
    let top = listed(&help(&[]));
    for suite in rqps::suite::registry() {
        for sub in ["run", "tests"] {
            let text = help(&[sub, "--suite", suite.name()]);
            // The first paragraph (a long description adds its full stop).
            let first = text.split("\n\n").next().unwrap().replace('\n', " ");
            assert_eq!(
                first.trim_end_matches('.'),
                top[sub],
                "rqps {sub} --suite {} --help",
                suite.name()
            );
        }
    }
}

/// Whether `text` names `word`, ignoring case (PostgreSQL names postgres).
fn names(text: &str, word: &str) -> bool {
    text.to_lowercase().contains(&word.to_lowercase())
}

#[test]
fn the_top_level_help_and_the_package_description_name_every_suite_and_engine() {
    let top = help(&[]);
    let description = env!("CARGO_PKG_DESCRIPTION");
    for suite in rqps::suite::registry() {
        assert!(
            names(&top, suite.name()),
            "rqps --help lacks suite {}",
            suite.name()
        );
        assert!(
            names(description, suite.name()),
            "Cargo.toml's description lacks suite {}",
            suite.name()
        );
    }
    for kind in registry::kinds() {
        assert!(
            names(&top, kind.name),
            "rqps --help lacks engine {}",
            kind.name
        );
        assert!(
            names(description, kind.name),
            "Cargo.toml's description lacks engine {}",
            kind.name
        );
    }
}

/// What `rqps run -h` says about `--flag`: its line, and the lines under it
/// when clap puts the description there.
fn option_line(flag: &str) -> String {
    let text = rqps(&["run", "-h"], &[]);
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("--{flag} ")))
        .unwrap_or_else(|| panic!("no --{flag} in rqps run -h"));
    let mut out = lines[at].to_string();
    for l in &lines[at + 1..] {
        if indent(l) <= indent(lines[at]) {
            break;
        }
        out.push(' ');
        out.push_str(l.trim());
    }
    out
}

#[test]
fn server_and_target_list_every_kind() {
    let server = option_line("server");
    let target = option_line("target");
    for kind in registry::kinds() {
        if let Some(recipe) = kind.server {
            assert!(
                server.contains(recipe.key()),
                "--server lacks {}: {server}",
                recipe.key()
            );
        }
        if kind.library.is_some() {
            assert!(
                server.contains(kind.name),
                "--server lacks {}: {server}",
                kind.name
            );
            let form = format!("{}:PATH?version=V", kind.name);
            assert!(target.contains(&form), "--target lacks {form}: {target}");
        }
        if kind.schemes.is_empty() {
            let form = format!("{}:PATH", kind.name);
            assert!(target.contains(&form), "--target lacks {form}: {target}");
        }
        for scheme in kind.schemes {
            let form = format!("{scheme}://");
            assert!(target.contains(&form), "--target lacks {form}: {target}");
        }
    }
}

#[test]
fn engine_install_describes_the_cache_by_rule_and_engine_list_names_the_one_in_use() {
    // The help (and so the man page made from it) is the same for everyone: the rule,
    // not the path of whoever generated it.
    let install = |env: &[(&str, Option<&str>)]| rqps(&["engine", "install", "--help"], env);
    let own = install(&[("RQPS_CACHE_DIR", Some("/tmp/rqps-help-own-cache"))]);
    assert!(!own.contains("/tmp/rqps-help-own-cache"), "{own}");
    assert_eq!(own, install(&[("RQPS_CACHE_DIR", None)]));
    for part in [
        "$RQPS_CACHE_DIR",
        "~/.cache/rqps/engines",
        "XDG_CACHE_HOME",
        "rqps engine list",
    ] {
        assert!(own.contains(part), "no {part} in: {own}");
    }
    // `engine list` names the cache of the user running it, by that rule.
    let list = |env: &[(&str, Option<&str>)]| {
        let out = rqps(&["engine", "list"], env);
        out.lines().next().unwrap_or("").to_string()
    };
    assert_eq!(
        list(&[("RQPS_CACHE_DIR", Some("/tmp/rqps-help-own-cache"))]),
        "installed in /tmp/rqps-help-own-cache:"
    );
    let xdg = |v: &str| {
        list(&[
            ("RQPS_CACHE_DIR", None),
            ("XDG_CACHE_HOME", Some(v)),
            ("HOME", Some("/tmp/rqps-help-home")),
        ])
    };
    assert_eq!(
        xdg("/tmp/rqps-help-xdg"),
        "installed in /tmp/rqps-help-xdg/rqps/engines:"
    );
    // An empty or relative XDG_CACHE_HOME is ignored, as the XDG spec says.
    // SAFETY: geteuid has no preconditions.
    let default = if unsafe { libc::geteuid() } == 0 {
        "installed in /var/cache/rqps/engines:"
    } else {
        "installed in /tmp/rqps-help-home/.cache/rqps/engines:"
    };
    assert_eq!(xdg(""), default);
    assert_eq!(xdg("relative/cache"), default);
}

/// The variables and files the engines' code reads a password from when a
/// URL has none: every `env::var("…")`/`var_os("…")` of a name that holds
/// PASS or PWD under src/engine/, and libpq's ~/.pgpass where it is read.
fn password_sources_in_the_code() -> Vec<String> {
    let mut out = Vec::new();
    let mut files = vec![std::path::PathBuf::from("src/engine/secret.rs")];
    for d in std::fs::read_dir("src/engine").unwrap() {
        let p = d.unwrap().path().join("mod.rs");
        if p.is_file() {
            files.push(p);
        }
    }
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for call in ["env::var(\"", "env::var_os(\""] {
            for (i, _) in text.match_indices(call) {
                let rest = &text[i + call.len()..];
                let name = &rest[..rest.find('"').unwrap()];
                if (name.contains("PASS") || name.contains("PWD"))
                    && !out.contains(&format!("${name}"))
                {
                    out.push(format!("${name}"));
                }
            }
        }
        if text.contains(".join(\".pgpass\")") && !out.iter().any(|s| s == "~/.pgpass") {
            out.push("~/.pgpass".into());
        }
    }
    out.sort();
    out
}

#[test]
fn the_help_names_every_password_source_the_code_reads() {
    let sources = password_sources_in_the_code();
    for s in ["$PGPASSWORD", "$MYSQL_PWD", "$PGPASSFILE", "~/.pgpass"] {
        assert!(
            sources.iter().any(|x| x == s),
            "the scan finds {s}: {sources:?}"
        );
    }
    for page in [help(&["compat"]), help(&["run"])] {
        let flat = page.split_whitespace().collect::<Vec<_>>().join(" ");
        for s in &sources {
            assert!(
                flat.contains(s.as_str()),
                "--help does not name {s}:\n{page}"
            );
        }
    }
}

/// Every help page (every command at every depth, `run` and `tests` for
/// every suite) wrapped to 100 columns where standard output is not a
/// terminal; and to `COLUMNS` where it is set.
#[test]
fn every_help_page_fits_100_columns_and_the_width_asked_for() {
    let mut pages: Vec<Vec<String>> = rqps::cli::command_paths()
        .into_iter()
        .filter(|p| p.first().is_none_or(|w| w != "help"))
        .collect();
    for s in rqps::suite::registry() {
        for sub in ["run", "tests"] {
            pages.push(vec![sub.into(), "--suite".into(), s.name().into()]);
        }
    }
    let few: Vec<Vec<String>> = vec![vec![], vec!["run".into()]];
    for (columns, width, pages) in [(None, 100, &pages), (Some("60"), 60, &few)] {
        for p in pages {
            for flag in ["-h", "--help"] {
                let mut args: Vec<&str> = p.iter().map(String::as_str).collect();
                args.push(flag);
                let out = rqps(&args, &[("COLUMNS", columns)]);
                for l in out.lines() {
                    // A word longer than the width (a URL, a path) may stand alone.
                    let single_word = !l.trim().contains(' ');
                    assert!(
                        l.chars().count() <= width || single_word,
                        "rqps {} (COLUMNS={columns:?}): {} wide: {l}",
                        args.join(" "),
                        l.chars().count()
                    );
                }
            }
        }
    }
}

/// A run's progress and warnings on standard error stay within 120 columns
/// where it is not a terminal, the busy-machine warning included (a
/// threshold of 0 makes any other process's CPU one).
#[test]
fn a_run_s_lines_on_standard_error_fit_120_columns() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--profile",
            "ci",
            "--tests",
            "point-query,insert",
            "--read-secs",
            "0.2",
            "--write-secs",
            "0.2",
            "--busy-threshold",
            "0",
            "--results",
            d.path().to_str().unwrap(),
        ])
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The next-step hint too: each of its commands on lines of its own.
    assert!(err.contains("compare with"), "{err}");
    for l in err.lines() {
        assert!(
            l.chars().count() <= 120,
            "{} wide: {l}\n{err}",
            l.chars().count()
        );
    }
    // The test lines wrap under their figures; the notes under the tables too.
    assert!(err.contains("insert t1"), "{err}");
    for l in stdout
        .lines()
        .filter(|l| l.starts_with("  - ") || !l.starts_with(' '))
    {
        assert!(l.chars().count() <= 120, "{l}");
    }
}

#[test]
fn the_man_pages_are_the_same_whatever_terminal_made_them() {
    // man wraps a page to its reader's terminal: the page itself carries no
    // width (the suites' lines and the examples whole), so a page generated
    // for packaging reads the same as one made on a narrow terminal.
    for page in [&["man"][..], &["man", "run"]] {
        let at = |cols: &str| rqps(page, &[("COLUMNS", Some(cols))]);
        let (narrow, wide) = (at("60"), at("200"));
        assert_eq!(narrow, wide, "rqps {page:?} differs at 60 and 200 columns");
        assert!(
            narrow.contains(
                "db_bench\\*(Aqs standard sequence on a key\\-value engine (RocksDB), with"
            ),
            "a suite's line is wrapped: {narrow}"
        );
    }
}
