//! PostgreSQL's own pgbench tests as rqps's conformance bar: the
//! script-level cases of `src/bin/pgbench/t/001_pgbench_with_server.pl` and
//! `002_pgbench_no_server.pl` (REL_15), translated into rqps runs on a
//! throwaway PostgreSQL (the parse errors also without a server, on
//! SQLite). Each case keeps the TAP test's name, options, scripts, exit
//! status and regular expressions as written; its rqps options are the
//! same in rqps's spelling (`-t 1` is `--transactions 1 --clients 1`).
//!
//! The outcome maps pgbench's exit statuses onto rqps's: 0 (ran) is 0; 1
//! (a bad script or option, nothing ran) is 2 (a usage error); 2 (a client
//! aborted) is 1 (the test failed). A case is one of:
//! - `Same`: that outcome, and every regular expression of the TAP test
//!   matches rqps's output;
//! - `Worded`: that outcome, said in rqps's own words (its own checks,
//!   listed) where pgbench's summary or wording differs;
//! - `Differs`: a documented difference, with its reason
//!   (docs/suites/pgbench.md lists them).
//!
//! The test fails when a case's outcome is not what it says, and when the
//! tally differs from the one docs/suites/pgbench.md states, so the two
//! cannot drift.

mod common;
use common::{server_available, servers_required, text};
use std::path::Path;
use std::process::Command;

use regex::Regex;
use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

/// How rqps's outcome relates to pgbench's.
#[derive(Clone, Copy)]
enum Expect {
    /// The same outcome, every TAP regular expression matching.
    Same,
    /// The same outcome; these regular expressions (rqps's wording, or
    /// figures from its results: `events=N`) stand for the TAP's.
    Worded(&'static [&'static str]),
    /// A documented difference, and its reason.
    Differs(&'static str),
}

struct Case {
    name: &'static str,
    /// rqps's options for pgbench's.
    opts: &'static [&'static str],
    /// Script files (`name` or `name@weight`) and their text.
    files: Vec<(&'static str, String)>,
    /// pgbench's exit status.
    status: i32,
    /// The TAP test's regular expressions (stdout and stderr together).
    re: Vec<String>,
    expect: Expect,
    /// Runs without a server (a parse error: nothing connects).
    offline: bool,
    /// The transaction log files the run must leave (the TAP's
    /// `check_pgbench_logs`).
    logs: Option<LogCheck>,
}

/// pgbench's `check_pgbench_logs`: in the run's working directory, `files`
/// files named `prefix.PID` or `prefix.PID.T`, each of `min` to `max`
/// lines, every line matching `re`.
#[derive(Clone, Copy)]
struct LogCheck {
    prefix: &'static str,
    files: usize,
    min: usize,
    max: usize,
    re: &'static str,
}

fn case(
    name: &'static str,
    opts: &'static [&'static str],
    files: &[(&'static str, &str)],
    status: i32,
    re: &[&str],
    expect: Expect,
) -> Case {
    Case {
        name,
        opts,
        files: files.iter().map(|(n, t)| (*n, t.to_string())).collect(),
        status,
        re: re.iter().map(|r| r.to_string()).collect(),
        expect,
        offline: false,
        logs: None,
    }
}

/// The options of the TAP's error cases (`-n -t 1 -D... -M prepared`),
/// and any more after them.
macro_rules! err_opts {
    ($($more:literal),*) => {
        &[
            "--transactions", "1", "--clients", "1",
            "--define", "foo=bla", "--define", "null=null", "--define", "true=true",
            "--define", "one=1", "--define", "zero=0.0", "--define", "badtrue=trueXXX",
            "--define", "maxint=9223372036854775807",
            "--define", "minint=-9223372036854775808",
            "--protocol", "prepared" $(, $more)*
        ]
    };
}
const ERR_OPTS: &[&str] = err_opts!();

/// [`ERR_OPTS`] and `--allow-shell`, for the cases with `\shell` and
/// `\setshell` (without it rqps refuses them:
/// `shell_commands_are_refused_without_allow_shell_and_run_without_secrets`).
const ERR_OPTS_SHELL: &[&str] = err_opts!("--allow-shell");

const T1: &[&str] = &["--transactions", "1", "--clients", "1"];

const EARLY: Expect = Expect::Differs(
    "deliberate: an invalid variable name after \\set and a function given more than 16 arguments are refused when the script is read (exit 2, naming file:line, before anything connects or runs); pgbench finds them only when the command runs, after the earlier commands and transactions have run (a client aborts, exit 2 of its own)",
);

/// The expressions script of the TAP test, as written.
const EXPRESSIONS: &str = include_str!("fixtures/pgbench/001_pgbench_expressions.sql");
const SERIALIZATION: &str = include_str!("fixtures/pgbench/001_pgbench_serialization.sql");
const DEADLOCK: &str = include_str!("fixtures/pgbench/001_pgbench_deadlock.sql");

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    // ---- 001_pgbench_with_server.pl
    let labels: Vec<String> = (1..=1000).map(|i| format!("'l{i}'")).collect();
    v.push(case(
        "concurrent OID generation",
        &[
            "--clients",
            "5",
            "--protocol",
            "prepared",
            "--transactions",
            "25",
        ],
        &[(
            "001_pgbench_concurrent_insert",
            &format!(
                "CREATE TYPE pg_temp.e AS ENUM ({}); DROP TYPE pg_temp.e;",
                labels.join(",")
            ),
        )],
        0,
        &[r"processed: 125/125"],
        Expect::Worded(&["events=125"]),
    ));
    v.push(case(
        "concurrent GRANT/VACUUM",
        &["--clients", "5", "--protocol", "prepared", "--transactions", "50"],
        &[
            (
                "001_pgbench_grant@9",
                "\n\t\t\tDO $$\n\t\t\tBEGIN\n\t\t\t\tPERFORM pg_advisory_xact_lock(42);\n\t\t\t\tFOR i IN 1 .. 10 LOOP\n\t\t\t\t\tGRANT SELECT ON ddl_target TO PUBLIC;\n\t\t\t\t\tREVOKE SELECT ON ddl_target FROM PUBLIC;\n\t\t\t\tEND LOOP;\n\t\t\tEND\n\t\t\t$$;\n",
            ),
            ("001_pgbench_vacuum_ddl_target@1", "VACUUM ddl_target;"),
        ],
        0,
        &[r"processed: 250/250"],
        Expect::Worded(&["events=250"]),
    ));
    v.push(case(
        "pgbench tpcb-like",
        &[
            "--transactions",
            "5",
            "--define",
            "foo=bla",
            "--clients",
            "2",
            "--protocol",
            "simple",
            "--builtin",
            "t",
        ],
        &[],
        0,
        &[
            r"builtin: TPC-B",
            r"clients: 2\b",
            r"processed: 10/10",
            r"mode: simple",
            r"maximum number of tries: 1",
        ],
        Expect::Worded(&[
            "events=10",
            r"tpcb-like +2 +1 +10 ",
            r"query mode simple, maximum number of tries 1",
        ]),
    ));
    v.push(case(
        "pgbench simple update",
        &[
            "--transactions",
            "20",
            "--clients",
            "5",
            "--protocol",
            "extended",
            "--builtin",
            "si",
            "--scale",
            "1",
        ],
        &[],
        0,
        &[
            r"builtin: simple update",
            r"clients: 5\b",
            r"threads: 1\b",
            r"processed: 100/100",
            r"mode: extended",
        ],
        Expect::Worded(&[
            "events=100",
            r"simple-update +5 +1 +100 ",
            "query mode extended",
        ]),
    ));
    v.push(case(
        "pgbench select only",
        &[
            "--transactions",
            "100",
            "--clients",
            "7",
            "--protocol",
            "prepared",
            "--builtin",
            "se",
        ],
        &[],
        0,
        &[
            r"builtin: select only",
            r"clients: 7\b",
            r"threads: 1\b",
            r"processed: 700/700",
            r"mode: prepared",
        ],
        Expect::Worded(&[
            "events=700",
            r"select-only +7 +1 +700 ",
            "query mode prepared",
        ]),
    ));
    v.push(case(
        "pgbench custom scripts",
        &["--transactions", "100", "--clients", "1", "--protocol", "prepared"],
        &[
            (
                "001_pgbench_custom_script_1@1",
                "-- select only\n\\set aid random(1, :scale * 100000)\nSELECT abalance::INTEGER AS balance\n  FROM pgbench_accounts\n  WHERE aid=:aid;\n",
            ),
            (
                "001_pgbench_custom_script_2@2",
                "-- special variables\nBEGIN;\n\\set foo 1\n-- cast are needed for typing under -M prepared\nSELECT :foo::INT + :scale::INT * :client_id::INT AS bla;\nCOMMIT;\n",
            ),
        ],
        0,
        &[
            r"type: multiple scripts",
            r"mode: prepared",
            r"script 1: .*/001_pgbench_custom_script_1",
            r"weight: 2",
            r"script 2: .*/001_pgbench_custom_script_2",
            r"weight: 1",
            r"processed: 100/100",
        ],
        Expect::Worded(&[
            "events=100",
            r"001_pgbench_custom_script_1 +1 +1 ",
            r"001_pgbench_custom_script_2 +1 +2 ",
        ]),
    ));
    let select_variant = "-- select only variant\n\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance::INTEGER AS balance\n  FROM pgbench_accounts\n  WHERE aid=:aid;\nCOMMIT;\n";
    v.push(case(
        "pgbench custom script (simple)",
        &[
            "--transactions",
            "10",
            "--clients",
            "1",
            "--protocol",
            "simple",
        ],
        &[("001_pgbench_custom_script_3", select_variant)],
        0,
        &[
            r"type: .*/001_pgbench_custom_script_3",
            r"processed: 10/10",
            r"mode: simple",
        ],
        Expect::Worded(&["events=10", "query mode simple"]),
    ));
    v.push(case(
        "pgbench custom script (extended)",
        &[
            "--transactions",
            "10",
            "--clients",
            "2",
            "--protocol",
            "extended",
        ],
        &[("001_pgbench_custom_script_4", select_variant)],
        0,
        &[
            r"type: .*/001_pgbench_custom_script_4",
            r"processed: 20/20",
            r"mode: extended",
        ],
        Expect::Worded(&["events=20", "query mode extended"]),
    ));
    let json_script = "select '{ invalid ' as value \\gset\nselect $$'Valame Dios!' dijo Sancho; 'no le dije yo a vuestra merced que mirase bien lo que hacia?'$$ as long \\gset\nselect column1::jsonb from (values (:value), (:long)) as q;\n";
    let div_script =
        "select '1' as one \\gset\nSELECT 1 / (random() / 2)::int, :one::int, :two::int;\n";
    const PREP1: &[&str] = &[
        "--transactions",
        "1",
        "--clients",
        "1",
        "--protocol",
        "prepared",
    ];
    const CONTEXT: &str = "the server's CONTEXT lines of an error (which parameters it was bound with) are in the server's log, not in rqps's message";
    for (name, script, re) in [
        (
            "server parameter logging 1",
            json_script,
            vec![
                r"ERROR:  invalid input syntax for type json",
                r"(?!unnamed portal with parameters)",
            ],
        ),
        (
            "server parameter logging 2",
            div_script,
            vec![
                r"ERROR:  division by zero",
                r"CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL",
            ],
        ),
        (
            "server parameter logging 3",
            json_script,
            vec![r"ERROR:  invalid input syntax for type json"],
        ),
        (
            "server parameter logging 4",
            div_script,
            vec![r"ERROR:  division by zero"],
        ),
        (
            "server parameter logging 5",
            json_script,
            vec![r"ERROR:  invalid input syntax for type json"],
        ),
    ] {
        let words: &'static [&'static str] = if script == div_script {
            &[r"division by zero"]
        } else {
            &[r"invalid input syntax for type json"]
        };
        let _ = CONTEXT;
        v.push(case(
            name,
            PREP1,
            &[("001_param", script)],
            2,
            &re,
            Expect::Worded(words),
        ));
    }
    v.push(case(
        "server parameter logging 6",
        PREP1,
        &[(
            "001_param_6",
            "select 42 as value1, '1a' as value2 \\gset\nselect :value1::smallint, :value2::smallint;\n",
        )],
        2,
        &[
            r#"ERROR:  invalid input syntax for type smallint: "1a""#,
            r"CONTEXT:  unnamed portal parameter \$2 = '1a'",
        ],
        Expect::Worded(&[r"001_param_6:2: parameter \$2: '1a' as int2"]),
    ));
    let mut expr_re: Vec<String> = vec![r"setting random seed to 5432\b".into()];
    for (n, v) in [
        (1, "int 17"),
        (2, "int 104"),
        (3, "int 1498"),
        (4, "int 4"),
        (5, "int 5"),
        (6, "int 6"),
        (7, "int 7"),
        (8, "int 8"),
        (9, "int 9"),
        (10, "int 10"),
        (11, "int 11"),
        (12, "int 12"),
        (15, "double 15"),
        (16, "double 16"),
        (17, "double 17"),
        (20, "int 3"),
        (21, "double -27"),
        (22, "double 1024"),
        (23, "double 1"),
        (24, "double 1"),
        (25, "double -0.125"),
        (26, "double -0.125"),
        (27, "double -0.00032"),
        (28, r"double 8.50705917302346e\+0?37"),
        (29, r"double 1e\+0?30"),
        (30, "boolean false"),
        (31, "boolean true"),
        (32, "int 32"),
        (33, "int 33"),
        (34, "double 34"),
        (35, "int 35"),
        (36, "int 36"),
        (37, "double 37"),
        (38, "int 38"),
        (39, "int 39"),
        (40, "boolean true"),
        (41, "null"),
        (42, "null"),
        (43, "boolean true"),
        (44, "boolean true"),
        (45, "boolean true"),
        (46, "int 46"),
        (47, "boolean true"),
        (48, "boolean true"),
        (49, "int -5817877081768721676"),
        (50, "boolean true"),
        (51, "int -7793829335365542153"),
        (52, r"int -?\d+"),
        (53, "boolean true"),
        (65, "int 65"),
        (74, "int 74"),
        (83, "int 83"),
        (86, "int 86"),
        (93, "int 93"),
        (95, "int 0"),
        (96, "int 1"),
        (97, "int 0"),
        (98, "int 5432"),
        (99, "int -9223372036854775808"),
        (100, "int 9223372036854775807"),
        (101, "boolean true"),
        (102, "boolean true"),
        (103, "boolean true"),
        (104, "boolean true"),
        (105, "boolean true"),
        (109, "boolean true"),
        (110, "boolean true"),
        (111, "boolean true"),
        (113, "boolean true"),
    ] {
        expr_re.push(format!(r"command={n}.: {v}\b"));
    }
    v.push(Case {
        name: "pgbench expressions",
        opts: &[
            "--seed",
            "5432",
            "--transactions",
            "1",
            "--clients",
            "1",
            "--define",
            "foo=-10.1",
            "--define",
            "bla=false",
            "--define",
            "i=+3",
            "--define",
            "n=null",
            "--define",
            "t=t",
            "--define",
            "f=of",
            "--define",
            "d=1.0",
        ],
        files: vec![("001_pgbench_expressions", EXPRESSIONS.to_string())],
        status: 0,
        re: expr_re,
        // All but the first: rqps prints no "setting random seed" line (the
        // seed is stored with the run).
        expect: Expect::Worded(&["events=1", "ALL_BUT_FIRST"]),
        offline: false,
        logs: None,
    });
    v.push(case(
        "pgbench backslash commands",
        &["--transactions", "1", "--clients", "1", "--allow-shell"],
        &[(
            "001_pgbench_backslash_commands",
            "-- run set\n\\set zero 0\n\\set one 1.0\n-- sleep\n\\sleep :one ms\n\\sleep 100 us\n\\sleep 0 s\n\\sleep :zero\n-- setshell and continuation\n\\setshell another_one\\\n  echo \\\n    :one\n\\set n debug(:another_one)\n-- shell\n\\shell echo shell-echo-output\n",
        )],
        0,
        &[r"processed: 1/1", r"shell-echo-output", r"command=8.: int 1\b"],
        Expect::Worded(&["events=1", r"shell-echo-output", r"command=8.: int 1\b"]),
    ));
    v.push(case(
        "pgbench gset command",
        T1,
        &[(
            "001_pgbench_gset",
            "-- test gset\n-- no columns\nSELECT \\gset\n-- one value\nSELECT 0 AS i0 \\gset\n\\set i debug(:i0)\n-- two values\nSELECT 1 AS i1, 2 AS i2 \\gset\n\\set i debug(:i1)\n\\set i debug(:i2)\n-- with prefix\nSELECT 3 AS i3 \\gset x_\n\\set i debug(:x_i3)\n-- overwrite existing variable\nSELECT 0 AS i4, 4 AS i4 \\gset\n\\set i debug(:i4)\n-- work on the last SQL command under \\;\n\\; \\; SELECT 0 AS i5 \\; SELECT 5 AS i5 \\; \\; \\gset\n\\set i debug(:i5)\n",
        )],
        0,
        &[
            r"command=3.: int 0\b",
            r"command=5.: int 1\b",
            r"command=6.: int 2\b",
            r"command=8.: int 3\b",
            r"command=10.: int 4\b",
            r"command=12.: int 5\b",
        ],
        Expect::Same,
    ));
    v.push(case(
        "pgbench gset command with two rows",
        T1,
        &[(
            "001_pgbench_gset_two_rows",
            "\nSELECT 5432 AS fail UNION SELECT 5433 ORDER BY 1 \\gset\n",
        )],
        2,
        &[r"expected one row, got 2\b"],
        Expect::Same,
    ));
    v.push(case(
        "pgbench aset command",
        T1,
        &[(
            "001_pgbench_aset",
            "\n-- test aset, which applies to a combined query\n\\; SELECT 6 AS i6 \\; SELECT 7 AS i7 \\; \\aset\n-- unless it returns more than one row, last is kept\nSELECT 8 AS i6 UNION SELECT 9 ORDER BY 1 DESC \\aset\n\\set i debug(:i6)\n\\set i debug(:i7)\n",
        )],
        0,
        &[r"command=3.: int 8\b", r"command=4.: int 7\b"],
        Expect::Same,
    ));
    v.push(case(
        "pgbench aset command with empty result",
        T1,
        &[(
            "001_pgbench_aset_empty",
            "\n-- empty result\n\\; SELECT 5432 AS i8 WHERE FALSE \\; \\aset\n\\set i debug(:i8)\n",
        )],
        2,
        &[
            r#"undefined variable \"i8\""#,
            r"evaluation of meta-command failed\b",
        ],
        Expect::Worded(&[r#"001_pgbench_aset_empty:4: undefined variable "i8""#]),
    ));
    let ten = "select 1;\n".repeat(10);
    for (name, opts, script, status, re, expect) in [
        (
            "working \\startpipeline",
            &[
                "--transactions",
                "1",
                "--clients",
                "1",
                "--protocol",
                "extended",
            ][..],
            format!("\n-- test startpipeline\n\\startpipeline\n{ten}\n\\endpipeline\n"),
            0,
            &[r"type: .*/001_pgbench_pipeline", r"actually processed: 1/1"][..],
            Expect::Worded(&["events=1"]),
        ),
        (
            "working \\startpipeline in prepared query mode",
            PREP1,
            format!(
                "\n-- test startpipeline\n\\startpipeline\n\\endpipeline\n\\startpipeline\n{ten}\n\\endpipeline\n"
            ),
            0,
            &[
                r"type: .*/001_pgbench_pipeline_prep",
                r"actually processed: 1/1",
            ][..],
            Expect::Worded(&["events=1"]),
        ),
        (
            "error: call \\startpipeline twice",
            &[
                "--transactions",
                "1",
                "--clients",
                "1",
                "--protocol",
                "extended",
            ][..],
            "\n-- startpipeline twice\n\\startpipeline\n\\startpipeline\n".to_string(),
            2,
            &[r"already in pipeline mode"][..],
            Expect::Same,
        ),
        (
            "error: \\endpipeline with no start",
            &[
                "--transactions",
                "1",
                "--clients",
                "1",
                "--protocol",
                "extended",
            ][..],
            "\n-- pipeline not started\n\\endpipeline\n".to_string(),
            2,
            &[r"not in pipeline mode"][..],
            Expect::Same,
        ),
        (
            "error: \\gset not allowed in pipeline mode",
            &[
                "--transactions",
                "1",
                "--clients",
                "1",
                "--protocol",
                "extended",
            ][..],
            "\n\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n".to_string(),
            2,
            &[r"gset is not allowed in pipeline mode"][..],
            Expect::Same,
        ),
        (
            "working \\startpipeline with serializable",
            &[
                "--clients",
                "4",
                "--transactions",
                "10",
                "--protocol",
                "prepared",
            ][..],
            format!(
                "\n-- test startpipeline with serializable\n\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n{ten}\nEND;\n\\endpipeline\n"
            ),
            0,
            &[
                r"type: .*/001_pgbench_pipeline_serializable",
                r"actually processed: (\d+)/\1",
            ][..],
            Expect::Worded(&["events=40"]),
        ),
    ] {
        let opts: &'static [&'static str] = Box::leak(opts.to_vec().into_boxed_slice());
        v.push(Case {
            name,
            opts,
            files: vec![("001_pgbench_pipeline", script)],
            status,
            re: re.iter().map(|r| r.to_string()).collect(),
            expect,
            offline: false,
            logs: None,
        });
    }
    // The error cases: [name, status, regexes, script, expectation].
    let too_many = format!(
        "-- MAX_ARGS=256 for prepared\n\\set i 0\nSELECT LEAST({})",
        vec![":i"; 256].join(", ")
    );
    let shell_args = format!(
        "-- 256 arguments to \\shell\n\\shell echo {}",
        vec!["arg"; 255].join(" ")
    );
    let errors: Vec<(&str, i32, Vec<&str>, String, Expect)> = vec![
        (
            "sql syntax error",
            2,
            vec![
                r"ERROR:  syntax error",
                r"prepared statement .* does not exist",
            ],
            "-- SQL syntax error\n    SELECT 1 + ;\n".into(),
            Expect::Worded(&[
                r"001_pgbench_error_sql_syntax_error:2: syntax error at end of input",
            ]),
        ),
        (
            "sql too many args",
            1,
            vec![r"statement has too many arguments.*\b255\b"],
            too_many,
            Expect::Same,
        ),
        (
            "shell bad command",
            2,
            vec![r"\(shell\) .* meta-command failed"],
            r"\shell no-such-command".into(),
            Expect::Worded(&[
                r"001_pgbench_error_shell_bad_command:1: \\shell: the shell command failed: it exited with status 127",
            ]),
        ),
        (
            "shell undefined variable",
            2,
            vec![r#"undefined variable ":nosuchvariable""#],
            "-- undefined variable in shell\n\\shell echo ::foo :nosuchvariable\n".into(),
            Expect::Same,
        ),
        (
            "shell missing command",
            1,
            vec![r"missing command "],
            r"\shell".into(),
            Expect::Same,
        ),
        (
            "shell too many args",
            1,
            vec![r#"too many arguments in command "shell""#],
            shell_args,
            Expect::Same,
        ),
        (
            "set syntax error",
            1,
            vec![r#"syntax error in command "set""#],
            r"\set i 1 +".into(),
            Expect::Worded(&[r"\\set: syntax error at column 5"]),
        ),
        (
            "set no such function",
            1,
            vec![r"unexpected function name"],
            r"\set i noSuchFunction()".into(),
            Expect::Same,
        ),
        (
            "set invalid variable name",
            2,
            vec![r"invalid variable name"],
            r"\set . 1".into(),
            EARLY,
        ),
        (
            "set division by zero",
            2,
            vec![r"division by zero"],
            r"\set i 1/0".into(),
            Expect::Same,
        ),
        (
            "set undefined variable",
            2,
            vec![r#"undefined variable "nosuchvariable""#],
            r"\set i :nosuchvariable".into(),
            Expect::Same,
        ),
        (
            "set unexpected char",
            1,
            vec![r"unexpected character .;."],
            r"\set i ;".into(),
            Expect::Same,
        ),
        (
            "set too many args",
            2,
            vec![r"too many function arguments"],
            r"\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)".into(),
            EARLY,
        ),
        (
            "set empty random range",
            2,
            vec![r"empty range given to random"],
            r"\set i random(5,3)".into(),
            Expect::Same,
        ),
        (
            "set random range too large",
            2,
            vec![r"random range is too large"],
            r"\set i random(:minint, :maxint)".into(),
            Expect::Same,
        ),
        (
            "set gaussian param too small",
            2,
            vec![r"gaussian param.* at least 2"],
            r"\set i random_gaussian(0, 10, 1.0)".into(),
            Expect::Same,
        ),
        (
            "set exponential param greater 0",
            2,
            vec![r"exponential parameter must be greater "],
            r"\set i random_exponential(0, 10, 0.0)".into(),
            Expect::Same,
        ),
        (
            "set zipfian param to 1",
            2,
            vec![r"zipfian parameter must be in range \[1\.001, 1000\]"],
            r"\set i random_zipfian(0, 10, 1)".into(),
            Expect::Same,
        ),
        (
            "set zipfian param too large",
            2,
            vec![r"zipfian parameter must be in range \[1\.001, 1000\]"],
            r"\set i random_zipfian(0, 10, 1000000)".into(),
            Expect::Same,
        ),
        (
            "set non numeric value",
            2,
            vec![r#"malformed variable "foo" value: "bla""#],
            r"\set i :foo + 1".into(),
            Expect::Same,
        ),
        (
            "set no expression",
            1,
            vec![r"syntax error"],
            r"\set i".into(),
            Expect::Worded(&[r"\\set i: missing expression"]),
        ),
        (
            "set missing argument",
            1,
            vec![r"(?i)missing argument"],
            r"\set".into(),
            Expect::Same,
        ),
        (
            "set not a bool",
            2,
            vec![r"cannot coerce double to boolean"],
            r"\set b NOT 0.0".into(),
            Expect::Same,
        ),
        (
            "set not an int",
            2,
            vec![r"cannot coerce boolean to int"],
            r"\set i TRUE + 2".into(),
            Expect::Same,
        ),
        (
            "set not a double",
            2,
            vec![r"cannot coerce boolean to double"],
            r"\set d ln(TRUE)".into(),
            Expect::Same,
        ),
        (
            "set case error",
            1,
            vec![r#"syntax error in command "set""#],
            r"\set i CASE TRUE THEN 1 ELSE 0 END".into(),
            Expect::Worded(&[r"\\set: syntax error at column 7: expected WHEN"]),
        ),
        (
            "set random error",
            2,
            vec![r"cannot coerce boolean to int"],
            r"\set b random(FALSE, TRUE)".into(),
            Expect::Same,
        ),
        (
            "set number of args mismatch",
            1,
            vec![r"unexpected number of arguments"],
            r"\set d ln(1.0, 2.0))".into(),
            Expect::Same,
        ),
        (
            "set at least one arg",
            1,
            vec![r"at least one argument expected"],
            r"\set i greatest())".into(),
            Expect::Same,
        ),
        (
            "set double to int overflow",
            2,
            vec![r"double to int overflow for 100"],
            r"\set i int(1E32)".into(),
            Expect::Same,
        ),
        (
            "set bigint add overflow",
            2,
            vec![r"int add out"],
            r"\set i (1<<62) + (1<<62)".into(),
            Expect::Same,
        ),
        (
            "set bigint sub overflow",
            2,
            vec![r"int sub out"],
            r"\set i 0 - (1<<62) - (1<<62) - (1<<62)".into(),
            Expect::Same,
        ),
        (
            "set bigint mul overflow",
            2,
            vec![r"int mul out"],
            r"\set i 2 * (1<<62)".into(),
            Expect::Same,
        ),
        (
            "set bigint div out of range",
            2,
            vec![r"bigint div out of range"],
            r"\set i :minint / -1".into(),
            Expect::Same,
        ),
        (
            "setshell not an int",
            2,
            vec![r"command must return an integer"],
            r"\setshell i echo -n one".into(),
            Expect::Same,
        ),
        (
            "setshell missing arg",
            1,
            vec![r"missing argument "],
            r"\setshell var".into(),
            Expect::Same,
        ),
        (
            "setshell no such command",
            2,
            vec![r"could not read result "],
            r"\setshell var no-such-command".into(),
            Expect::Same,
        ),
        (
            "sleep undefined variable",
            2,
            vec![r"sleep: undefined variable"],
            r"\sleep :nosuchvariable".into(),
            Expect::Same,
        ),
        (
            "sleep too many args",
            1,
            vec![r"too many arguments"],
            r"\sleep too many args".into(),
            Expect::Same,
        ),
        (
            "sleep missing arg",
            1,
            vec![r"missing argument", r"\\sleep"],
            r"\sleep".into(),
            Expect::Same,
        ),
        (
            "sleep unknown unit",
            1,
            vec![r"unrecognized time unit"],
            r"\sleep 1 week".into(),
            Expect::Same,
        ),
        (
            "misc invalid backslash command",
            1,
            vec![r#"invalid command .* "nosuchcommand""#],
            r"\nosuchcommand".into(),
            Expect::Worded(&[r"invalid command \\nosuchcommand"]),
        ),
        (
            "misc empty script",
            1,
            vec![r"empty command list for script"],
            "".into(),
            Expect::Worded(&[r"empty command list: the script has no SQL command"]),
        ),
        (
            "bad boolean",
            2,
            vec![r"malformed variable.*trueXXX"],
            r"\set b :badtrue or true".into(),
            Expect::Same,
        ),
        (
            "invalid permute size",
            2,
            vec![r"permute size parameter must be greater than zero"],
            r"\set i permute(0, 0)".into(),
            Expect::Same,
        ),
        (
            "gset no row",
            2,
            vec![r"expected one row, got 0\b"],
            r"SELECT WHERE FALSE \gset".into(),
            Expect::Same,
        ),
        (
            "gset alone",
            1,
            vec![r"gset must follow an SQL command"],
            r"\gset".into(),
            Expect::Same,
        ),
        (
            "gset no SQL",
            1,
            vec![r"gset must follow an SQL command"],
            "\\set i +1\n\\gset".into(),
            Expect::Same,
        ),
        (
            "gset too many arguments",
            1,
            vec![r"too many arguments"],
            r"SELECT 1 \gset a b".into(),
            Expect::Same,
        ),
        (
            "gset after gset",
            1,
            vec![r"gset must follow an SQL command"],
            "SELECT 1 AS i \\gset\n\\gset".into(),
            Expect::Same,
        ),
        (
            "gset non SELECT",
            2,
            vec![r"expected one row, got 0"],
            r"DROP TABLE IF EXISTS no_such_table \gset".into(),
            Expect::Same,
        ),
        (
            "gset bad default name",
            2,
            vec![r"error storing into variable \?column\?"],
            r"SELECT 1 \gset".into(),
            Expect::Same,
        ),
        (
            "gset bad name",
            2,
            vec![r"error storing into variable bad name!"],
            r#"SELECT 1 AS "bad name!" \gset"#.into(),
            Expect::Same,
        ),
    ];
    for (name, status, re, script, expect) in errors {
        let shell = script.contains("shell");
        let mut c = case(
            Box::leak(format!("pgbench script error: {name}").into_boxed_str()),
            if shell { ERR_OPTS_SHELL } else { ERR_OPTS },
            &[],
            status,
            &re,
            expect,
        );
        let file: &'static str =
            Box::leak(format!("001_pgbench_error_{}", name.replace(' ', "_")).into_boxed_str());
        c.files = vec![(file, script)];
        c.offline = status == 1;
        v.push(c);
    }
    v.push(case(
        "pgbench throttling",
        &[
            "--transactions",
            "100",
            "--builtin",
            "select-only",
            "--rate",
            "100000",
            "--latency-limit",
            "1000000",
            "--clients",
            "2",
        ],
        &[],
        0,
        &[r"processed: 200/200", r"builtin: select only"],
        Expect::Worded(&["events=200", r"select-only +2 +1 +200 "]),
    ));
    v.push(case(
        "pgbench late throttling",
        &[
            "--transactions",
            "10",
            "--rate",
            "100000",
            "--latency-limit",
            "1",
            "--clients",
            "1",
        ],
        &[("001_pgbench_sleep", r"\sleep 2ms")],
        0,
        &[
            r"processed: [01]/10",
            r"type: .*/001_pgbench_sleep",
            r"above the 1.0 ms latency limit: [01]/",
        ],
        Expect::Worded(&["events<=1", "events+skipped=10"]),
    ));
    // pgbench's one thread (-j 1, its default) is --client-threads 1: one
    // log file for both clients.
    let mut c = case(
        "pgbench logs",
        &[
            "--builtin",
            "select-only",
            "--transactions",
            "50",
            "--clients",
            "2",
            "--client-threads",
            "1",
            "--log",
            "--sampling-rate",
            "0.5",
            "--log-prefix",
            "001_pgbench_log_2",
        ],
        &[],
        0,
        &[r"select only", r"processed: 100/100"],
        Expect::Worded(&["events=100"]),
    );
    c.logs = Some(LogCheck {
        prefix: "001_pgbench_log_2",
        files: 1,
        min: 8,
        max: 92,
        re: r"^[01] \d{1,2} \d+ \d \d+ \d+$",
    });
    v.push(c);
    let mut c = case(
        "pgbench logs contents",
        &[
            "--builtin",
            "select-only",
            "--transactions",
            "10",
            "--clients",
            "1",
            "--log",
            "--log-prefix",
            "001_pgbench_log_3",
        ],
        &[],
        0,
        &[r"select only", r"processed: 10/10"],
        Expect::Worded(&["events=10"]),
    );
    c.logs = Some(LogCheck {
        prefix: "001_pgbench_log_3",
        files: 1,
        min: 10,
        max: 10,
        re: r"^0 \d{1,2} \d+ \d \d+ \d+$",
    });
    v.push(c);
    v.push(case(
        "incomplete transaction block",
        &["--transactions", "10", "--clients", "1"],
        &[(
            "001_pgbench_incomplete_transaction_block",
            "BEGIN;SELECT 1;",
        )],
        2,
        &[r"client 0 aborted: end of script reached without completing the last transaction"],
        Expect::Same,
    ));
    v.push(case(
        "concurrent update with retrying",
        &["--clients", "2", "--transactions", "1", "--max-tries", "2"],
        &[("001_pgbench_serialization", SERIALIZATION)],
        0,
        &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        Expect::Worded(&["events=2", "retried=1", "retries=1"]),
    ));
    v.push(case(
        "deadlock with retrying",
        &["--clients", "2", "--transactions", "1", "--max-tries", "2"],
        &[("001_pgbench_deadlock", DEADLOCK)],
        0,
        &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        Expect::Worded(&["events=2", "retried=1", "retries=1"]),
    ));

    // ---- 002_pgbench_no_server.pl: scripts that pgbench refuses.
    for (name, re, file, script, expect) in [
        (
            "missing endif",
            r"\\if without matching \\endif",
            "if-noendif.sql",
            r"\if 1",
            Expect::Same,
        ),
        (
            "missing if on elif",
            r"\\elif without matching \\if",
            "elif-noif.sql",
            r"\elif 1",
            Expect::Same,
        ),
        (
            "missing if on else",
            r"\\else without matching \\if",
            "else-noif.sql",
            r"\else",
            Expect::Same,
        ),
        (
            "missing if on endif",
            r"\\endif without matching \\if",
            "endif-noif.sql",
            r"\endif",
            Expect::Same,
        ),
        (
            "elif after else",
            r"\\elif after \\else",
            "else-elif.sql",
            "\\if 1\n\\else\n\\elif 0\n\\endif",
            Expect::Same,
        ),
        (
            "else after else",
            r"\\else after \\else",
            "else-else.sql",
            "\\if 1\n\\else\n\\else\n\\endif",
            Expect::Same,
        ),
        (
            "if syntax error",
            r#"syntax error in command "if""#,
            "if-bad.sql",
            "\\if\n\\endif\n",
            Expect::Worded(&[r"if-bad.sql:1: \\if: missing condition"]),
        ),
        (
            "elif syntax error",
            r#"syntax error in command "elif""#,
            "elif-bad.sql",
            "\\if 0\n\\elif +\n\\endif\n",
            Expect::Worded(&[r"elif-bad.sql:2: \\elif: syntax error"]),
        ),
        (
            "else syntax error",
            r#"unexpected argument in command "else""#,
            "else-bad.sql",
            "\\if 0\n\\else BAD\n\\endif\n",
            Expect::Worded(&[r#"else-bad.sql:2: \\else: unexpected argument "BAD""#]),
        ),
        (
            "endif syntax error",
            r#"unexpected argument in command "endif""#,
            "endif-bad.sql",
            "\\if 0\n\\endif BAD\n",
            Expect::Worded(&[r#"endif-bad.sql:2: \\endif: unexpected argument "BAD""#]),
        ),
        (
            "not enough arguments for least",
            r"at least one argument expected \(least\)",
            "bad-least.sql",
            "\\set i least()\n",
            Expect::Same,
        ),
        (
            "not enough arguments for greatest",
            r"at least one argument expected \(greatest\)",
            "bad-greatest.sql",
            "\\set i greatest()\n",
            Expect::Same,
        ),
        (
            "not enough arguments for hash",
            r"unexpected number of arguments \(hash\)",
            "bad-hash-1.sql",
            "\\set i hash()\n",
            Expect::Same,
        ),
        (
            "too many arguments for hash",
            r"unexpected number of arguments \(hash\)",
            "bad-hash-2.sql",
            "\\set i hash(1,2,3)\n",
            Expect::Same,
        ),
        (
            "bigint overflow 1",
            r"bigint constant overflow",
            "overflow-1.sql",
            "\\set i 100000000000000000000\n",
            Expect::Same,
        ),
        (
            "double overflow 2",
            r"double constant overflow",
            "overflow-2.sql",
            "\\set d 1.0E309\n",
            Expect::Same,
        ),
        (
            "double overflow 3",
            r"double constant overflow",
            "overflow-3.sql",
            "\\set d .1E310\n",
            Expect::Same,
        ),
        (
            "set i",
            r"set i 1 |\^ error found here",
            "set_i_op",
            "\\set i 1 +\n",
            Expect::Worded(&[r"set_i_op:1: \\set: syntax error at column 5: expected a value"]),
        ),
        (
            "not enough arguments to permute",
            r"unexpected number of arguments \(permute\)",
            "bad-permute-1.sql",
            "\\set i permute(1)\n",
            Expect::Same,
        ),
        (
            "too many arguments to permute",
            r"unexpected number of arguments \(permute\)",
            "bad-permute-2.sql",
            "\\set i permute(1, 2, 3, 4)\n",
            Expect::Same,
        ),
    ] {
        let mut c = case(
            Box::leak(format!("pgbench option error: {name}").into_boxed_str()),
            &[],
            &[(file, script)],
            1,
            &[re],
            expect,
        );
        c.offline = true;
        v.push(c);
    }
    v
}

/// What one rqps run said and stored.
struct Ran {
    code: i32,
    out: String,
    events: u64,
    skipped: u64,
    retried: u64,
    retries: u64,
    failed: u64,
    /// The files in the run's working directory: name and text.
    files: Vec<(String, String)>,
}

/// Runs `c` through rqps on `target`, its scripts written under `dir`.
fn run_case(c: &Case, target: &str, dir: &Path) -> Ran {
    let cdir = tempfile::tempdir_in(dir).unwrap();
    let json = cdir.path().join("run.json");
    let mut args: Vec<String> = [
        "run",
        "--suite",
        "pgbench",
        "--profile",
        "ci",
        "--target",
        target,
        "--results",
        cdir.path().join("r").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
        "--skip-init",
        "--name",
        "tap",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(c.opts.iter().map(|s| s.to_string()));
    for (name, body) in &c.files {
        let (file, weight) = name.split_once('@').unwrap_or((name, "1"));
        let p = cdir.path().join(file);
        std::fs::write(&p, body).unwrap();
        args.push("--script".into());
        args.push(format!("{}@{weight}", p.display()));
    }
    // In its own directory, as pgbench's log files go to the working one.
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        // Each message whole, as the checks read it (tests/help.rs checks the wrapping).
        .env("COLUMNS", "1000")
        .args(&args)
        .current_dir(cdir.path())
        .output()
        .unwrap();
    let files = std::fs::read_dir(cdir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    let doc: serde_json::Value = std::fs::read(&json)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let main = doc["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["test"] == "pgbench"))
        .cloned()
        .unwrap_or_default();
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    Ran {
        code: o.status.code().unwrap_or(-1),
        out: text(&o),
        events: n(&main["events"]),
        skipped: n(&main["pgbench"]["rate"]["skipped"]),
        retried: n(&main["pgbench"]["retried"]),
        retries: n(&main["pgbench"]["retries"]),
        failed: n(&main["pgbench"]["failed"]),
        files,
    }
}

/// Why the log files of a run are not what `check` says, if they are not.
fn log_problem(check: &LogCheck, r: &Ran) -> Option<String> {
    let start = format!("{}.", check.prefix);
    let logs: Vec<&(String, String)> = r.files.iter().filter(|f| f.0.starts_with(&start)).collect();
    let named = Regex::new(&format!(r"^{}\.\d+(\.\d+)?$", check.prefix)).unwrap();
    let names: Vec<&str> = logs.iter().map(|f| f.0.as_str()).collect();
    if logs.len() != check.files || !names.iter().all(|n| named.is_match(n)) {
        return Some(format!(
            "{} log files named {names:?}, expected {} named {}.PID[.T]",
            logs.len(),
            check.files,
            check.prefix
        ));
    }
    let line = Regex::new(check.re).unwrap();
    for (name, text) in logs {
        let lines: Vec<&str> = text.lines().collect();
        if !(check.min..=check.max).contains(&lines.len()) {
            return Some(format!(
                "{name}: {} lines, expected {} to {}",
                lines.len(),
                check.min,
                check.max
            ));
        }
        if let Some(bad) = lines.iter().find(|l| !line.is_match(l)) {
            return Some(format!("{name}: line '{bad}' does not match {}", check.re));
        }
    }
    None
}

/// rqps's exit status for pgbench's.
fn rqps_status(pgbench: i32) -> i32 {
    match pgbench {
        0 => 0,
        1 => 2,
        _ => 1,
    }
}

/// Whether `check` (a regular expression, or a figure: `events=N`,
/// `events<=N`, `events+skipped=N`, `retried=N`, `retries=N`) holds.
fn holds(check: &str, r: &Ran) -> bool {
    let figure = |name: &str| match name {
        "events" => Some(r.events),
        "retried" => Some(r.retried),
        "retries" => Some(r.retries),
        "events+skipped" => Some(r.events + r.skipped),
        _ => None,
    };
    if let Some((k, v)) = check.split_once("<=")
        && let (Some(got), Ok(want)) = (figure(k), v.parse::<u64>())
    {
        return got <= want;
    }
    if let Some((k, v)) = check.split_once('=')
        && let (Some(got), Ok(want)) = (figure(k), v.parse::<u64>())
    {
        return got == want;
    }
    Regex::new(check).unwrap().is_match(&r.out)
}

/// Why case `c` is not what it says, if it is not.
fn judge(c: &Case, r: &Ran) -> Option<String> {
    let want = rqps_status(c.status);
    if r.code != want {
        return Some(format!(
            "exit {} where pgbench's {} means {want}:\n{}",
            r.code, c.status, r.out
        ));
    }
    let checks: Vec<String> = match c.expect {
        Expect::Same => c.re.clone(),
        Expect::Worded(w) if w.contains(&"ALL_BUT_FIRST") => w
            .iter()
            .filter(|x| **x != "ALL_BUT_FIRST")
            .map(|s| s.to_string())
            .chain(c.re.iter().skip(1).cloned())
            .collect(),
        Expect::Worded(w) => w.iter().map(|s| s.to_string()).collect(),
        Expect::Differs(_) => return None,
    };
    if let Some(why) = c.logs.as_ref().and_then(|l| log_problem(l, r)) {
        return Some(format!("{why}:\n{}", r.out));
    }
    let missing: Vec<&String> = checks.iter().filter(|x| !holds(x, r)).collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{missing:?} do not hold (events {}, skipped {}, retried {}, retries {}):\n{}",
            r.events, r.skipped, r.retried, r.retries, r.out
        )
    })
}

/// The tally line docs/suites/pgbench.md must state.
fn tally(cases: &[Case]) -> String {
    let (mut same, mut worded, mut differs) = (0, 0, 0);
    for c in cases {
        match c.expect {
            Expect::Same => same += 1,
            Expect::Worded(_) => worded += 1,
            Expect::Differs(_) => differs += 1,
        }
    }
    format!(
        "{} cases: {same} give pgbench's outcome with output its regular expressions accept, {worded} give its outcome in rqps's own words, {differs} are documented differences",
        cases.len()
    )
}

#[test]
fn the_docs_state_the_tally_and_every_difference() {
    let cases = cases();
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/suites/pgbench.md"),
    )
    .unwrap();
    let t = tally(&cases);
    assert!(doc.contains(&t), "docs/suites/pgbench.md must say: {t}");
    for c in &cases {
        if let Expect::Differs(why) = c.expect {
            assert!(doc.contains(why), "docs/suites/pgbench.md must say: {why}");
        }
    }
}

/// Runs `cases` on `target`, three at a time (each is mostly a process
/// starting); what did not hold.
fn run_all(cases: &[Case], target: &str, dir: &Path) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(c) = cases.get(i) else { break };
                    let r = run_case(c, target, dir);
                    if let Some(why) = judge(c, &r) {
                        found.lock().unwrap().push(format!("{}: {why}", c.name));
                    }
                }
            });
        }
    });
    found.into_inner().unwrap()
}

#[test]
fn pgbench_parse_errors_are_refused_before_anything_connects() {
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    let offline: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.offline && !matches!(c.expect, Expect::Differs(_)))
        .collect();
    let bad = run_all(&offline, &target, d.path());
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// Pipelines are refused before anything runs where they cannot run: under
/// `--protocol simple` (pgbench aborts the client there), and on an engine
/// without pipelining; the same script is accepted otherwise (the TAP
/// cases run it on PostgreSQL).
#[test]
fn pipelines_are_refused_under_simple_and_on_engines_without_them() {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("p.sql");
    std::fs::write(&script, "\\startpipeline\nselect 1;\n\\endpipeline\n").unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    for (protocol, says) in [
        ("simple", "cannot run under --protocol simple"),
        ("extended", "sqlite cannot pipeline statements"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
            // Each message whole, as the checks read it (tests/help.rs checks the wrapping).
            .env("COLUMNS", "1000")
            .args([
                "run",
                "--suite",
                "pgbench",
                "--profile",
                "ci",
                "--target",
                &target,
            ])
            .args(["--results", d.path().join("r").to_str().unwrap()])
            .args(["--skip-init", "--transactions", "1", "--clients", "1"])
            .args(["--protocol", protocol, "--script", script.to_str().unwrap()])
            .output()
            .unwrap();
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{protocol}: {out}");
        assert!(out.contains(says), "{protocol}: {out}");
        assert_eq!(out.trim().lines().count(), 1, "{protocol}: one line: {out}");
    }
}

#[test]
fn shell_commands_are_refused_without_allow_shell_and_run_without_secrets() {
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    // Without --allow-shell: refused as the script is read, in one line
    // that names the option, for either command.
    for (cmd, line) in [("shell echo hi", 2), ("setshell n echo 1", 2)] {
        let c = case(
            "shell refused",
            T1,
            &[("refused.sql", &format!("SELECT 1;\n\\{cmd}\n"))],
            1,
            &[],
            Expect::Same,
        );
        let r = run_case(&c, &target, d.path());
        assert_eq!(r.code, 2, "{}", r.out);
        let lines: Vec<&str> = r.out.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {}", r.out);
        let want = format!("refused.sql:{line}: \\{}", cmd.split(' ').next().unwrap());
        assert!(
            lines[0].contains(&want) && lines[0].contains("add --allow-shell"),
            "{}",
            r.out
        );
    }
    // With it: the command's environment lacks the variables rqps takes a
    // password from, and keeps the others; a command of 254 bytes (pgbench's
    // most) runs, one of 255 is refused when it runs, as pgbench does.
    let run = |script: &str, long: usize| {
        let cdir = tempfile::tempdir_in(d.path()).unwrap();
        let file = cdir.path().join("env.sql");
        std::fs::write(&file, script).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
            // Each message whole, as the checks read it (tests/help.rs checks the wrapping).
            .env("COLUMNS", "1000")
            .args(["run", "--suite", "pgbench", "--profile", "ci", "--target"])
            .arg(&target)
            .args(["--results", cdir.path().join("r").to_str().unwrap()])
            .args(["--busy-threshold", "100", "--skip-init", "--allow-shell"])
            .args(["--transactions", "1", "--clients", "1", "--define"])
            .arg(format!("long={}", "x".repeat(long)))
            .arg("--script")
            .arg(&file)
            .env("PGPASSWORD", "secret-1")
            .env("RQPS_PASSWORD", "secret-22")
            .env("MYSQL_PWD", "secret-333")
            .env("RQPS_TAP_KEPT", "7")
            .output()
            .unwrap();
        (o.status.code(), text(&o))
    };
    let script = "SELECT 1;\n\\setshell n echo ${#PGPASSWORD}${#RQPS_PASSWORD}${#MYSQL_PWD}$RQPS_TAP_KEPT\n\\set x debug(:n)\n\\shell true :long\n";
    let (code, out) = run(script, 249);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("command=3): int 7\n"),
        "only the kept variable: {out}"
    );
    let (code, out) = run("\\shell true :long\n", 250);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("env.sql:1: \\shell: the shell command is too long: 255 bytes"),
        "{out}"
    );
}

/// A client thread drives its other connections while one client's shell
/// command runs: two clients on one thread, the first's command waiting
/// for a file that only the second client's command makes. Were the
/// thread held by the first command, the second could never run, and
/// `timeout` would fail the first after 10 s.
fn shell_waits_leave_the_thread_to_other_clients(url: &str, dir: &Path) -> Option<String> {
    let flag = dir.join("shell-flag");
    let script = format!(
        "\\if :client_id = 0\n\\shell timeout 10 sh -c \"until [ -e {f} ]; do sleep 0.01; done\"\n\\else\n\\sleep 100 ms\n\\shell touch {f}\n\\endif\nSELECT 1;\n",
        f = flag.display()
    );
    let c = case(
        "shell on a shared client thread",
        &[
            "--transactions",
            "1",
            "--clients",
            "2",
            "--client-threads",
            "1",
            "--allow-shell",
        ],
        &[("001_pgbench_shell_shared_thread", &script)],
        0,
        &[],
        Expect::Worded(&["events=2"]),
    );
    let r = run_case(&c, url, dir);
    judge(&c, &r).map(|why| format!("{}: {why}", c.name))
}

#[test]
fn pgbench_tap_cases_on_postgresql() {
    if !server_available(PG) {
        assert!(!servers_required(), "no PostgreSQL server binaries");
        return;
    }
    let server = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}")).unwrap();
    let url = server.url();
    let d = tempfile::tempdir().unwrap();
    // The tables (`pgbench -i`), and those the cases use.
    let init = Command::new(env!("CARGO_BIN_EXE_rqps"))
        // Each message whole, as the checks read it (tests/help.rs checks the wrapping).
        .env("COLUMNS", "1000")
        .args([
            "run",
            "--suite",
            "pgbench",
            "--profile",
            "ci",
            "--target",
            &url,
            "--results",
            d.path().join("init").to_str().unwrap(),
            "--builtin",
            "select-only",
            "--transactions",
            "1",
            "--clients",
            "1",
            "--busy-threshold",
            "100",
        ])
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", text(&init));
    let mut pg = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    pg.batch_execute(
        "CREATE TABLE ddl_target ();\n\
         CREATE UNLOGGED TABLE first_client_table (value integer);\n\
         CREATE UNLOGGED TABLE xy (x integer, y integer);\n\
         INSERT INTO xy VALUES (1, 2);",
    )
    .unwrap();
    let db: String = pg
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    let mut bad = Vec::new();
    // The parse errors connect to nothing: the test above runs them.
    let (retry, rest): (Vec<Case>, Vec<Case>) = cases()
        .into_iter()
        .filter(|c| !matches!(c.expect, Expect::Differs(_)) && !c.offline)
        .partition(|c| c.opts.contains(&"--max-tries"));
    // The retry cases, one at a time: the isolation level the TAP test sets
    // with PGOPTIONS, set for the database instead.
    for c in retry {
        let level = if c.name.starts_with("deadlock") {
            "read committed"
        } else {
            "repeatable read"
        };
        pg.batch_execute(&format!(
            "DELETE FROM first_client_table; ALTER DATABASE {db} SET default_transaction_isolation = '{level}'"
        ))
        .unwrap();
        let r = run_case(&c, &url, d.path());
        pg.batch_execute(&format!(
            "ALTER DATABASE {db} RESET default_transaction_isolation"
        ))
        .unwrap();
        if let Some(why) = judge(&c, &r) {
            bad.push(format!("{}: {why}", c.name));
        }
    }
    // The others, three at a time (each is mostly a process starting).
    bad.extend(run_all(&rest, &url, d.path()));
    bad.extend(shell_waits_leave_the_thread_to_other_clients(
        &url,
        d.path(),
    ));
    bad.extend(log_layouts(&mut pg, &db, &url, d.path()));
    // A pipelined read-modify-write under repeatable read: the clients'
    // serialization failures surface at \endpipeline and are retried from
    // the script's start, so every transaction commits exactly once.
    let bal = |pg: &mut postgres::Client| -> i64 {
        pg.query_one(
            "SELECT bbalance::int8 FROM pgbench_branches WHERE bid = 1",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let before = bal(&mut pg);
    let c = case(
        "pipelined retries",
        &[
            "--clients",
            "4",
            "--transactions",
            "25",
            "--protocol",
            "prepared",
            "--max-tries",
            "1000",
        ],
        &[(
            "pipelined_retry",
            "\\startpipeline\nBEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT bbalance FROM pgbench_branches WHERE bid = 1;\nUPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\nEND;\n\\endpipeline\n",
        )],
        0,
        &[],
        Expect::Worded(&["events=100"]),
    );
    let r = run_case(&c, &url, d.path());
    if let Some(why) = judge(&c, &r) {
        bad.push(format!("pipelined retries: {why}"));
    }
    assert_eq!(bal(&mut pg) - before, 100, "each transaction commits once");
    // Seeded random values are deterministic: two runs with one seed
    // insert the same four values (the TAP's "random seeded" cases).
    pg.batch_execute(
        "CREATE UNLOGGED TABLE seeded_random(seed INT8 NOT NULL, rand TEXT NOT NULL, val INTEGER NOT NULL)",
    )
    .unwrap();
    let seeded = "-- test random functions\n\\set ur random(1000, 1999)\n\\set er random_exponential(2000, 2999, 2.0)\n\\set gr random_gaussian(3000, 3999, 3.0)\n\\set zr random_zipfian(4000, 4999, 1.5)\nINSERT INTO seeded_random(seed, rand, val) VALUES\n  (:random_seed, 'uniform', :ur),\n  (:random_seed, 'exponential', :er),\n  (:random_seed, 'gaussian', :gr),\n  (:random_seed, 'zipfian', :zr);\n";
    for _ in 0..2 {
        let c = case(
            "random seeded",
            &["--seed", "733446", "--transactions", "1", "--clients", "1"],
            &[("001_pgbench_random_seed", seeded)],
            0,
            &[],
            Expect::Worded(&["events=1"]),
        );
        let r = run_case(&c, &url, d.path());
        if let Some(why) = judge(&c, &r) {
            bad.push(format!("random seeded: {why}"));
        }
    }
    let rows = pg
        .query(
            "SELECT rand, val, count(*) FROM seeded_random WHERE seed = 733446 GROUP BY rand, val",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), 4, "two runs, one seed: the same four values");
    for row in rows {
        let (rand, val, n): (String, i32, i64) = (row.get(0), row.get(1), row.get(2));
        assert_eq!(n, 2, "{rand} {val}");
        let lo = match rand.as_str() {
            "uniform" => 1000,
            "exponential" => 2000,
            "gaussian" => 3000,
            _ => 4000,
        };
        assert!((lo..lo + 1000).contains(&val), "{rand} {val}");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// A log file's lines split into fields, by the file's name (`PREFIX.PID`
/// first, then `PREFIX.PID.1`...): what pgbench's log readers see.
fn log_lines(r: &Ran, prefix: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut files: Vec<(String, Vec<Vec<String>>)> = r
        .files
        .iter()
        .filter(|f| f.0.starts_with(&format!("{prefix}.")))
        .map(|(name, text)| {
            let lines = text
                .lines()
                .map(|l| l.split(' ').map(str::to_string).collect())
                .collect();
            (name.clone(), lines)
        })
        .collect();
    files.sort_by_key(|f| (f.0.len(), f.0.clone()));
    files
}

fn num(f: &str) -> Option<u64> {
    f.parse().ok()
}

/// Unix seconds now.
fn epoch_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// rqps's log files read with the field layout pgbench 15 documents
/// ("Per-Transaction Logging", "Aggregated Logging"), their figures set
/// against the run's stored ones: a failure named by class, the lag and
/// retries columns, one file per client thread, and the aggregated form's
/// fifteen fields.
fn log_layouts(pg: &mut postgres::Client, db: &str, url: &str, dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let t0 = epoch_now();
    // One serialization failure, not retried (the TAP's script, whose
    // second client always fails once): named by --failures-detailed, in
    // client 1's own file (two client threads).
    pg.batch_execute(&format!(
        "DELETE FROM first_client_table; ALTER DATABASE {db} SET default_transaction_isolation = 'repeatable read'"
    ))
    .unwrap();
    let c = case(
        "log: a failure by class",
        &[
            "--clients",
            "2",
            "--client-threads",
            "2",
            "--transactions",
            "1",
            "--log",
            "--log-prefix",
            "fail",
            "--failures-detailed",
        ],
        &[("001_pgbench_serialization", SERIALIZATION)],
        0,
        &[],
        Expect::Worded(&["events=1"]),
    );
    let r = run_case(&c, url, dir);
    pg.batch_execute(&format!(
        "ALTER DATABASE {db} RESET default_transaction_isolation"
    ))
    .unwrap();
    let files = log_lines(&r, "fail");
    let shape: Vec<(usize, Vec<&str>)> = files
        .iter()
        .map(|(_, lines)| {
            (
                lines.len(),
                lines.iter().map(|l| l[0].as_str()).collect::<Vec<_>>(),
            )
        })
        .collect();
    let words: Vec<&str> = files
        .iter()
        .flat_map(|(_, l)| l.iter().map(|f| f[2].as_str()))
        .collect();
    let fields_ok = files.iter().flat_map(|f| &f.1).all(|l| {
        l.len() == 6
            && l[1] == "1"
            && l[3] == "0"
            && num(&l[4]).is_some_and(|s| (t0..=epoch_now()).contains(&s))
            && num(&l[5]).is_some_and(|us| us < 1_000_000)
    });
    if r.code != 0
        || r.failed != 1
        || shape != [(1, vec!["0"]), (1, vec!["1"])]
        || !words.contains(&"serialization")
        || !words.iter().any(|w| num(w).is_some())
        || !fields_ok
    {
        bad.push(format!(
            "log: a failure by class: files {files:?} (failed {}):\n{}",
            r.failed, r.out
        ));
    }
    // --rate, --latency-limit and --max-tries: eight fields; every
    // transaction of both clients in the one file of one client thread,
    // numbered from 1; as many completed and skipped as the run stored.
    let c = case(
        "log: lag and retries",
        &[
            "--builtin",
            "select-only",
            "--clients",
            "2",
            "--client-threads",
            "1",
            "--transactions",
            "30",
            "--rate",
            "2000",
            "--latency-limit",
            "1",
            "--max-tries",
            "2",
            "--log",
            "--log-prefix",
            "lag",
        ],
        &[],
        0,
        &[],
        Expect::Worded(&[]),
    );
    let agg = case(
        "log: aggregated",
        &[
            "--builtin",
            "select-only",
            "--clients",
            "2",
            "--client-threads",
            "2",
            "--time",
            "2",
            "--rate",
            "300",
            "--latency-limit",
            "50",
            "--log",
            "--log-prefix",
            "agg",
            "--aggregate-interval",
            "1",
        ],
        &[],
        0,
        &[],
        Expect::Worded(&[]),
    );
    // The two at once: neither changes what the other reads.
    let t1 = epoch_now();
    let (r, agg) = std::thread::scope(|s| {
        let a = s.spawn(|| run_case(&agg, url, dir));
        (run_case(&c, url, dir), a.join().unwrap())
    });
    let files = log_lines(&r, "lag");
    let lines: Vec<&Vec<String>> = files.iter().flat_map(|f| &f.1).collect();
    let numbered = ["0", "1"].iter().all(|client| {
        let nos: Vec<u64> = lines
            .iter()
            .filter(|l| l[0] == *client)
            .filter_map(|l| num(&l[1]))
            .collect();
        nos == (1..=30).collect::<Vec<u64>>()
    });
    let done = lines.iter().filter(|l| num(&l[2]).is_some()).count() as u64;
    let skipped = lines.iter().filter(|l| l[2] == "skipped").count() as u64;
    let fields_ok = lines.iter().all(|l| {
        l.len() == 8
            && l[3] == "0"
            && num(&l[6]).is_some_and(|lag| l[2] != "skipped" || lag == 0)
            && l[7] == "0"
    });
    if r.code != 0
        || files.len() != 1
        || lines.len() != 60
        || !numbered
        || done != r.events
        || skipped != r.skipped
        || !fields_ok
    {
        bad.push(format!(
            "log: lag and retries: {lines:?} (events {}, skipped {}):\n{}",
            r.events, r.skipped, r.out
        ));
    }
    // Aggregated: fifteen fields per interval of one second, each interval
    // the one after the last, the sums consistent with the extremes, the
    // count no more than the run's (the interval the test ends in is not
    // written).
    let r = agg;
    let files = log_lines(&r, "agg");
    let mut counted = 0;
    let mut ok = files.len() == 2;
    for (_, lines) in &files {
        ok &= (1..=3).contains(&lines.len());
        let mut prev: Option<u64> = None;
        for l in lines {
            let v: Vec<f64> = l.iter().filter_map(|f| f.parse().ok()).collect();
            if l.len() != 15 || v.len() != 15 || v.iter().any(|x| x.fract() != 0.0) {
                ok = false;
                continue;
            }
            let start = v[0] as u64;
            ok &= (t1..=epoch_now()).contains(&start);
            ok &= prev.is_none_or(|p| start == p + 1);
            prev = Some(start);
            let (n, sum, sum2, min, max) = (v[1], v[2], v[3], v[4], v[5]);
            counted += n as u64;
            if n > 0.0 {
                ok &= min <= sum / n && sum / n <= max && sum2 >= sum * sum / n * 0.999;
                ok &= v[8] <= v[9] && v[6] >= v[8] * n;
            }
            // No retries nor failures asked for: zero.
            ok &= v[11..].iter().all(|x| *x == 0.0);
        }
    }
    if r.code != 0 || !ok || counted == 0 || counted > r.events {
        bad.push(format!(
            "log: aggregated: {files:?} (events {}):\n{}",
            r.events, r.out
        ));
    }
    bad
}
