//! A script's options as sysbench reads them: the ones its
//! `sysbench.cmdline.options` declares (with their types and defaults),
//! and the ones of sysbench itself that rqps takes on a script's command
//! line; values given as `--name=value` (`-` and `_` alike), checked
//! against their type before anything connects.

use serde::{Deserialize, Serialize};

use super::fail::Fail;

/// A [`Fail`] from a format string.
macro_rules! fail {
    ($($t:tt)*) => { Fail::from(format!($($t)*)) };
}

/// A value of `sysbench.opt`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OptValue {
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<String>),
}

impl OptValue {
    pub fn to_lua(&self, lua: &mlua::Lua) -> mlua::Result<mlua::Value> {
        Ok(match self {
            OptValue::Bool(b) => mlua::Value::Boolean(*b),
            OptValue::Num(n) => mlua::Value::Number(*n),
            OptValue::Str(s) => mlua::Value::String(lua.create_string(s)?),
            OptValue::List(l) => {
                let t = lua.create_table()?;
                for (i, v) in l.iter().enumerate() {
                    t.raw_set(i + 1, v.as_str())?;
                }
                mlua::Value::Table(t)
            }
        })
    }

    pub fn num(&self) -> Option<f64> {
        match self {
            OptValue::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn text(&self) -> String {
        match self {
            OptValue::Bool(b) => if *b { "on" } else { "off" }.into(),
            OptValue::Num(n) => n.to_string(),
            OptValue::Str(s) => s.clone(),
            OptValue::List(l) => l.join(","),
        }
    }
}

/// sysbench's option types (`sysbench.cmdline.ARG_*`).
pub const ARG_BOOL: u8 = 1;
pub const ARG_INT: u8 = 2;
pub const ARG_SIZE: u8 = 3;
pub const ARG_DOUBLE: u8 = 4;
pub const ARG_STRING: u8 = 5;
pub const ARG_LIST: u8 = 6;

/// One option: its name, type and default (as text; `None`: none).
#[derive(Clone, Debug)]
pub struct Declared {
    pub name: String,
    pub kind: u8,
    pub default: Option<String>,
}

/// sysbench's own options that a script's command line may give rqps, with
/// sysbench's types and defaults (a script's `--rand-type` defaults to
/// sysbench's `special`, not to the native suite's `uniform`: these are
/// sysbench's scripts). They are in `sysbench.opt` too.
pub fn core() -> Vec<Declared> {
    let d = |name: &str, kind, default: Option<&str>| Declared {
        name: name.into(),
        kind,
        default: default.map(String::from),
    };
    vec![
        d("threads", ARG_INT, Some("1")),
        d("time", ARG_INT, Some("10")),
        d("events", ARG_INT, Some("0")),
        d("warmup_time", ARG_INT, Some("0")),
        d("rand_type", ARG_STRING, Some("special")),
        d("rand_seed", ARG_INT, Some("0")),
        d("rand_spec_iter", ARG_INT, Some("12")),
        d("rand_spec_pct", ARG_INT, Some("1")),
        d("rand_spec_res", ARG_INT, Some("75")),
        d("rand_pareto_h", ARG_DOUBLE, Some("0.2")),
        d("rand_zipfian_exp", ARG_DOUBLE, Some("0.8")),
        d("percentile", ARG_INT, Some("95")),
        d("report_interval", ARG_INT, Some("0")),
        d("verbosity", ARG_INT, Some("3")),
        d("histogram", ARG_BOOL, Some("off")),
        d("db_driver", ARG_STRING, None),
        d("db_ps_mode", ARG_STRING, Some("auto")),
        d(
            "mysql_ignore_errors",
            ARG_LIST,
            Some(super::sql::DEFAULT_IGNORE),
        ),
    ]
}

/// Why rqps does not take sysbench's own option `name` (a global one, a
/// driver's, or a built-in test's) when the script does not declare it:
/// what to do instead. `None`: not one of sysbench's.
pub fn refused(name: &str) -> Option<String> {
    const CONNECTION: &str = "rqps connects where --target says (a URL: \
        --target mysql://user@host:port/db or postgres://user@host:port/db, the password from \
        --password-file) or to a throwaway --server KIND; sysbench's connection options are \
        not taken";
    let builtin = |test: &str| {
        format!(
            "an option of sysbench's built-in '{test}' test, which measures the client machine, \
             not a database; rqps does not run it (run `sysbench {test}`)"
        )
    };
    let why = match name {
        "mysql_dry_run" => "rqps sends every statement to a server and measures it; a dry run \
            would measure nothing (give --target, or --server KIND for a throwaway server)"
            .to_string(),
        n if n.starts_with("mysql_")
            && n != "mysql_ignore_errors"
            && n != "mysql_storage_engine" =>
        {
            CONNECTION.to_string()
        }
        n if n.starts_with("pgsql_") && n != "pgsql_variant" => CONNECTION.to_string(),
        "rate" | "tx_rate" => "rqps runs a script's events back to back: it has no --rate".into(),
        "forced_shutdown" => "rqps stops an event that runs on past the test's end itself \
            (its watchdog, docs/suites/sysbench.md): leave it out"
            .into(),
        "report_checkpoints" => "not taken: --report-interval reports as the test runs, and \
            rqps stores each test's per-second figures"
            .into(),
        "luajit_cmd" => "rqps runs LuaJIT as sysbench does, with its compiler on; it takes no \
            LuaJIT command"
            .into(),
        "thread_stack_size" => "rqps sizes its threads' stacks itself".into(),
        "config_file" => "rqps reads a script's options from its command line only (a run's \
            settings can live in a matrix file: docs/matrices.md)"
            .into(),
        "debug" | "db_debug" | "validate" => {
            "not taken (rqps stores every figure of a test with its result)".into()
        }
        "help" => "give `help` as the command (after --) to print the script's options".into(),
        "version" => "rqps offers sysbench 1.0.20's API: `rqps --version` is rqps's".into(),
        "cpu_max_prime" => builtin("cpu"),
        n if n.starts_with("file_") => builtin("fileio"),
        n if n.starts_with("memory_") => builtin("memory"),
        "thread_yields" | "thread_locks" => builtin("threads"),
        n if n.starts_with("mutex_") => builtin("mutex"),
        _ => return None,
    };
    Some(why)
}

/// `text` as a value of type `kind`, or why not.
pub fn convert(kind: u8, text: &str) -> Result<OptValue, Fail> {
    match kind {
        ARG_BOOL => match text.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" | "" => Ok(OptValue::Bool(true)),
            "off" | "false" | "no" | "0" => Ok(OptValue::Bool(false)),
            _ => Err(fail!("'{text}' is not on or off")),
        },
        ARG_INT => text
            .trim()
            .parse::<i64>()
            .map(|v| OptValue::Num(v as f64))
            .map_err(|_| fail!("'{text}' is not an integer")),
        ARG_SIZE => size(text).map(OptValue::Num),
        ARG_DOUBLE => text
            .trim()
            .parse::<f64>()
            .map(OptValue::Num)
            .map_err(|_| fail!("'{text}' is not a number")),
        ARG_LIST => Ok(OptValue::List(
            text.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        )),
        _ => Ok(OptValue::Str(text.to_string())),
    }
}

/// A size with an optional binary suffix (`4K`, `2M`, `1G`, `1T`).
fn size(text: &str) -> Result<f64, Fail> {
    let t = text.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .map(|n| (n * mult) as f64)
        .map_err(|_| fail!("'{text}' is not a size (a number, optionally with K, M, G or T)"))
}

/// A script's command line after `--`: its options (names as sysbench
/// keys them, `_` for `-`) in order, and its commands.
#[derive(Debug, Default)]
pub struct Args {
    pub given: Vec<(String, String)>,
    pub commands: Vec<String>,
}

pub fn parse_args(args: &[String]) -> Result<Args, Fail> {
    let mut out = Args::default();
    for a in args {
        if let Some(opt) = a.strip_prefix("--") {
            let (name, value) = match opt.split_once('=') {
                Some((n, v)) => (n, v),
                None => (opt, ""),
            };
            if name.is_empty() {
                return Err(fail!("'{a}' names no option"));
            }
            let name = name.replace('-', "_");
            // sysbench 1.0's deprecated aliases, taken as it takes them.
            let name = match name.as_str() {
                "max_requests" => "events".to_string(),
                "max_time" => "time".to_string(),
                "num_threads" => "threads".to_string(),
                _ => name,
            };
            out.given.push((name, value.to_string()));
        } else if a.starts_with('-') {
            return Err(fail!(
                "'{a}': a script's options are given as --name=value, as sysbench takes them"
            ));
        } else {
            out.commands.push(a.clone());
        }
    }
    Ok(out)
}

/// The value of every option: the given ones over the defaults, in
/// declaration order (core first); an option neither declares is refused.
///
/// A script that declares no options takes any, as text (sysbench's
/// legacy scripts read them so): `declares` false.
pub fn resolve(
    declared: &[Declared],
    given: &[(String, String)],
    script: &str,
    declares: bool,
) -> Result<Vec<(String, OptValue)>, Fail> {
    let mut declared = declared.to_vec();
    for (name, _) in given {
        if !declares && !declared.iter().any(|d| &d.name == name) {
            declared.push(Declared {
                name: name.clone(),
                kind: ARG_STRING,
                default: None,
            });
        }
    }
    let declared = &declared[..];
    for (name, _) in given {
        if !declared.iter().any(|d| &d.name == name) {
            // As a user writes them: `--table-size`.
            let mut names: Vec<String> = Vec::new();
            for d in declared {
                let n = format!("--{}", d.name.replace('_', "-"));
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            let typed = format!("--{}", name.replace('_', "-"));
            let hint = crate::util::suggest::hint(&typed, names.iter().map(String::as_str));
            return Err(fail!(
                "--{}: {script} declares no such option{hint} (it takes: {})",
                name.replace('_', "-"),
                names.join(", ")
            ));
        }
    }
    let mut out = Vec::new();
    for d in declared {
        let text = given
            .iter()
            .rev()
            .find(|(n, _)| n == &d.name)
            .map(|(_, v)| v.clone());
        let value = match (text, &d.default) {
            (Some(t), _) => {
                convert(d.kind, &t).map_err(|e| fail!("--{}={t}: {e}", d.name.replace('_', "-")))?
            }
            (None, Some(def)) => convert(d.kind, def).unwrap_or(OptValue::Str(def.clone())),
            // An option without a default is an empty string, a list empty.
            (None, None) if d.kind == ARG_LIST => OptValue::List(Vec::new()),
            (None, None) if d.kind == ARG_BOOL => OptValue::Bool(false),
            (None, None) => OptValue::Str(String::new()),
        };
        if let Some(slot) = out
            .iter_mut()
            .find(|(n, _): &&mut (String, OptValue)| n == &d.name)
        {
            slot.1 = value;
        } else {
            out.push((d.name.clone(), value));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_s_options_rqps_does_not_take_say_what_to_do_instead() {
        for (name, says) in [
            ("mysql_host", "--target"),
            ("pgsql_password", "--password-file"),
            ("mysql_dry_run", "dry run"),
            ("cpu_max_prime", "built-in 'cpu' test"),
            ("file_total_size", "built-in 'fileio' test"),
            ("forced_shutdown", "watchdog"),
        ] {
            let why = refused(name).unwrap_or_else(|| panic!("{name} is taken"));
            assert!(why.contains(says), "{name}: {why}");
        }
        for taken in [
            "mysql_ignore_errors",
            "mysql_storage_engine",
            "tables",
            "pgsql_variant",
        ] {
            assert_eq!(refused(taken), None, "{taken}");
        }
    }

    #[test]
    fn values_take_sysbench_s_types() {
        assert_eq!(convert(ARG_BOOL, "off").unwrap(), OptValue::Bool(false));
        assert_eq!(convert(ARG_INT, "12").unwrap(), OptValue::Num(12.0));
        assert!(convert(ARG_INT, "1.5").is_err());
        assert_eq!(convert(ARG_SIZE, "2K").unwrap(), OptValue::Num(2048.0));
        assert_eq!(
            convert(ARG_LIST, "a,b").unwrap(),
            OptValue::List(vec!["a".into(), "b".into()])
        );
    }

    #[test]
    fn an_undeclared_option_is_refused_with_the_names_it_could_mean() {
        let declared = vec![Declared {
            name: "table_size".into(),
            kind: ARG_DOUBLE,
            default: Some("10000".into()),
        }];
        let args = parse_args(&["--table-size=5".into(), "run".into()]).unwrap();
        let v = resolve(&declared, &args.given, "x.lua", true).unwrap();
        assert_eq!(v, vec![("table_size".into(), OptValue::Num(5.0))]);
        assert_eq!(args.commands, ["run"]);
        let e = resolve(
            &declared,
            &[("table_sise".into(), "1".into())],
            "x.lua",
            true,
        )
        .unwrap_err()
        .message;
        assert!(
            e.contains("--table-sise") && e.contains("did you mean --table-size?"),
            "{e}"
        );
        // A script that declares nothing takes any option, as text.
        let v = resolve(&declared, &[("x".into(), "1".into())], "x.lua", false).unwrap();
        assert!(
            v.contains(&("x".into(), OptValue::Str("1".into()))),
            "{v:?}"
        );
    }
}
