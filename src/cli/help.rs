//! What `rqps --help` says around the commands, laid out for the width it is
//! printed at: rqps's description with the suites from the registry, and
//! the examples, each command with what it does.

use crate::suite;

/// The examples of `rqps --help` and rqps(1): each command with what it does.
pub(super) const EXAMPLES: &[(&str, &str)] = &[
    ("rqps run", "quick profile on embedded SQLite"),
    (
        "rqps run --profile ci --tests point-query,insert --threads 1,2",
        "two tests at 1 and 2 threads, short",
    ),
    (
        "rqps run --target sqlite:/tmp/sb.db --table-size 1000000 --read-secs 60",
        "a database file of your own, bigger and longer",
    ),
    (
        "rqps tests --list classic",
        "the test names and their groups",
    ),
    ("rqps show", "the table of the latest stored run"),
    (
        "rqps run --suite ibench --profile quick",
        "the Insert Benchmark",
    ),
    (
        "rqps run --server postgres@16.15 --suite tpcc",
        "after `rqps engine install postgres 16.15`",
    ),
    (
        "rqps report --base NAME",
        "compare the other names with NAME",
    ),
    (
        "rqps history --name-glob 'nightly-*'",
        "change points over many runs",
    ),
    ("rqps serve", "the results as web pages, on 127.0.0.1:8080"),
];

/// The examples as `rqps --help` shows them at `width` columns: each
/// command with its comment after it where both fit one line, else the
/// comment on a line of its own above the command.
pub(super) fn examples(width: usize) -> String {
    let col = EXAMPLES.iter().map(|(c, _)| c.len()).max().unwrap_or(0) + 2;
    let mut s = String::from("Examples:");
    for (cmd, what) in EXAMPLES {
        if 2 + col + 2 + what.chars().count() <= width {
            s.push_str(&format!("\n  {cmd:<col$}# {what}"));
        } else {
            s.push_str(&format!("\n  # {what}\n  {cmd}"));
        }
    }
    s
}

/// The examples at their widest (one line each), as clap's derive takes
/// them; the command replaces them with [`examples`] at the help's width.
pub(super) const EXAMPLES_TEXT: &str = "Examples:";

/// The width help is wrapped to: standard output's terminal's, else
/// `$COLUMNS`, else 100.
pub(super) fn help_width() -> usize {
    crate::util::text::stdout_columns(100)
}

/// The suites and what they run, from the registry, for `--help` at `width`
/// columns: each suite's line wrapped under its description.
pub(super) fn suites_help(width: usize) -> String {
    let mut s = crate::util::text::wrapped(
        "Suites (--suite NAME; `rqps run --suite NAME --help` lists its options):",
        width,
        "",
        "",
    );
    for (i, x) in suite::registry().iter().enumerate() {
        let default = if i == 0 { " (the default)" } else { "" };
        let first = format!("  {:<10} ", x.name());
        let rest = " ".repeat(first.len());
        s.push_str(&crate::util::text::wrapped(
            &format!("{}{default}", x.about()),
            width,
            &first,
            &rest,
        ));
    }
    s
}

/// rqps's one-line description: its suites (the registry's names) and engines.
pub(super) fn about() -> String {
    let names: Vec<&str> = suite::registry().iter().map(|s| s.name()).collect();
    format!(
        "Database benchmark and regression finder: {} on SQLite, MariaDB/MySQL, PostgreSQL and RocksDB",
        names.join(", ")
    )
}

/// What `rqps --help` says before the commands, at `width` columns (clap
/// wraps the paragraphs; the suites' lines come wrapped under their names).
pub(super) fn long_about(width: usize) -> String {
    format!(
        "rqps runs the field's standard database benchmarks and tells a regression from noise.\n\n\
         {}\n\
         Engines: SQLite (built in), MariaDB/MySQL and PostgreSQL (a server you run: --target URL; or a \
         throwaway one rqps starts: --server KIND[@VERSION]), and RocksDB (a release's library: --server \
         rocksdb@VERSION). Every result is kept with its context in a results directory; `rqps report` \
         sets each target against a base with a verdict per test (faster, slower, or not distinguishable \
         from noise).\n\n\
         Start with `rqps run`: it loads sbtest tables into a temporary SQLite database and runs the \
         sysbench quick profile (32 tests, about 3 minutes).",
        suites_help(width)
    )
}
