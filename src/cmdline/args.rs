//! Typed options back to the command line that gives them: the one way rqps
//! writes a command line from a clap options struct (`rqps run`'s run
//! options, its output options, a suite's options), for the command line
//! stored with a run and the arguments of a matrix's child runs. What clap
//! reads back from [`args_of`]'s arguments is the value it was given (the
//! round-trip tests of `cli::run` and of this module hold it to that).

use serde::Serialize;

/// `value`'s options that differ from their defaults (`T::default()`, which
/// must be what an empty command line gives: each caller's tests hold it), as
/// the arguments that set them, in the order clap declares them: a flag
/// without a value (`--cpu-profile`) for a `true`, `--long VALUE` otherwise
/// (`--keying false` for an `Option<bool>` set to `false`), a list joined by
/// its option's delimiter (`--threads 1,2`) or, when the option has none, the
/// option repeated (`--define a=1 --define b=x`).
///
/// An option's value is found under its serde name, which is its long name
/// with `_` for `-` (what a matrix key is), else its field name.
pub fn args_of<T: clap::Args + Serialize + Default>(value: &T) -> Vec<String> {
    let table = |v: &T| toml::Table::try_from(v).unwrap_or_default();
    let cmd = T::augment_args(clap::Command::new("args"));
    let default = table(&T::default());
    let now = table(value);
    let mut out = Vec::new();
    let mut last = Vec::new();
    for a in cmd.get_arguments() {
        let Some(long) = a.get_long() else {
            // The arguments after `--` (`last`), written after them all.
            if a.is_last_set()
                && let Some(toml::Value::Array(list)) = now.get(a.get_id().as_str())
                && !list.is_empty()
            {
                last.push("--".to_string());
                last.extend(list.iter().map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    v => cli_value(v),
                }));
            }
            continue;
        };
        let key = long.replace('-', "_");
        let key = if now.contains_key(&key) || default.contains_key(&key) {
            key
        } else {
            a.get_id().to_string()
        };
        let Some(v) = now.get(&key).filter(|v| default.get(&key) != Some(*v)) else {
            continue;
        };
        let flag = format!("--{long}");
        let takes_value = a.get_num_args().is_none_or(|n| n.takes_values())
            && !matches!(
                a.get_action(),
                clap::ArgAction::SetTrue | clap::ArgAction::SetFalse | clap::ArgAction::Count
            );
        match v {
            toml::Value::Boolean(true) if !takes_value => out.push(flag),
            toml::Value::Boolean(false) if !takes_value => {}
            toml::Value::Array(list) => match a.get_value_delimiter() {
                Some(d) => out.extend([
                    flag,
                    list.iter()
                        .map(cli_value)
                        .collect::<Vec<_>>()
                        .join(&d.to_string()),
                ]),
                None => {
                    for v in list {
                        out.extend([flag.clone(), cli_value(v)]);
                    }
                }
            },
            v => out.extend([flag, cli_value(v)]),
        }
    }
    out.extend(last);
    out
}

/// A TOML value as a command-line value (lists comma-separated, numbers as
/// Rust writes them: `30`, not `30.0`).
pub fn cli_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Array(a) => a.iter().map(cli_value).collect::<Vec<_>>().join(","),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Args, Serialize, Debug, PartialEq)]
    struct Opts {
        #[arg(long, value_delimiter = ',')]
        threads: Option<Vec<u32>>,
        #[arg(long)]
        define: Option<Vec<String>>,
        #[arg(long)]
        flag: bool,
        #[arg(long, num_args = 0..=1, default_missing_value = "true")]
        keying: Option<bool>,
        #[arg(long = "lb-secs")]
        #[serde(rename = "lb_secs")]
        secs: Option<f64>,
        #[arg(long, default_value = "out")]
        results: String,
    }

    impl Default for Opts {
        fn default() -> Opts {
            parse(&[])
        }
    }

    fn parse(args: &[String]) -> Opts {
        use clap::FromArgMatches;
        let m = <Opts as clap::Args>::augment_args(clap::Command::new("t").no_binary_name(true))
            .try_get_matches_from(args)
            .unwrap();
        Opts::from_arg_matches(&m).unwrap()
    }

    #[test]
    fn every_kind_of_option_is_written_as_what_reads_it_back() {
        let o = Opts {
            threads: Some(vec![1, 2]),
            define: Some(vec!["a=1".into(), "b=x,y".into()]),
            flag: true,
            keying: Some(false),
            secs: Some(30.0),
            results: "elsewhere".into(),
        };
        let args = args_of(&o);
        assert_eq!(
            args,
            [
                "--threads",
                "1,2",
                "--define",
                "a=1",
                "--define",
                "b=x,y",
                "--flag",
                "--keying",
                "false",
                "--lb-secs",
                "30",
                "--results",
                "elsewhere"
            ]
        );
        assert_eq!(parse(&args), o);
    }

    #[test]
    fn what_an_empty_command_line_gives_is_left_out() {
        let o = parse(&[]);
        assert_eq!(o.results, "out");
        assert!(args_of(&o).is_empty());
    }
}
