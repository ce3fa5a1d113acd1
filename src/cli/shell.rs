//! `rqps completions SHELL` and `rqps man [SUBCOMMAND]`: generated from the
//! same clap definitions that parse the command line (clap_complete,
//! clap_mangen), so they never fall behind it. `run` and `tests` carry every
//! suite's options here, since the shell cannot know `--suite` in advance.

use std::io::Write;

use clap::{Args, Command};

use crate::error::Error;
use crate::suite;

#[derive(Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args)]
pub struct ManArgs {
    /// A subcommand whose page to print (rqps-run(1), ...); default: rqps(1).
    #[arg(value_name = "SUBCOMMAND")]
    subcommand: Option<String>,
}

/// `cmd` with the options of every suite in `sub` (each flag once: the
/// first suite's wins a clash).
fn with_all_suites(cmd: Command, sub: &str) -> Command {
    cmd.mut_subcommand(sub, |mut c| {
        for s in suite::registry().iter().skip(1) {
            let extra = s.args(Command::new("x"));
            for a in extra.get_arguments() {
                let flag_taken = c.get_arguments().any(|b| {
                    a.get_long().is_some() && b.get_long() == a.get_long()
                        || a.get_short().is_some() && b.get_short() == a.get_short()
                });
                if flag_taken {
                    continue;
                }
                // Two suites may name different flags with one id (`secs`).
                let id_taken = c.get_arguments().any(|b| b.get_id() == a.get_id());
                let a = if id_taken {
                    // clap takes ids as &'static str (no "string" feature): a few bytes,
                    // once per process that prints completions or a man page.
                    let id: &'static str =
                        Box::leak(format!("{}.{}", s.name(), a.get_id()).into_boxed_str());
                    a.clone().id(id)
                } else {
                    a.clone()
                };
                c = c.arg(a);
            }
        }
        c
    })
}

/// The whole command line: `cmd` (the CLI's own, with the first suite's
/// options) with every suite's options, and the suites' names as the values
/// `--suite` completes to. The caller hands `cmd` in, so that this module
/// does not import the CLI that imports it.
pub fn full_command(cmd: Command) -> Command {
    let suites = || clap::builder::PossibleValuesParser::new(suite::names());
    let cmd = with_all_suites(cmd, "run");
    let cmd = with_all_suites(cmd, "tests");
    let mut cmd = ["run", "tests"].iter().fold(cmd, |cmd, sub| {
        cmd.mut_subcommand(sub, |c| c.mut_arg("suite", |a| a.value_parser(suites())))
    });
    cmd.build();
    cmd
}

/// The completion script for `shell`, as `rqps completions SHELL` prints it
/// (`cmd`: as [`full_command`] takes it).
pub fn completions_script(shell: clap_complete::Shell, cmd: Command) -> Vec<u8> {
    let mut cmd = full_command(cmd);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rqps", &mut out);
    out
}

/// The roff man page of rqps, or of one subcommand (`rqps-run(1)`) (`cmd`:
/// as [`full_command`] takes it).
pub fn man_page(subcommand: Option<&str>, cmd: Command) -> Result<Vec<u8>, Error> {
    let cmd = full_command(cmd);
    let page = match subcommand {
        None => cmd,
        Some(name) => cmd
            .get_subcommands()
            .find(|c| c.get_name() == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
                crate::error::usage(format!(
                    "no subcommand '{name}': man pages exist for {}",
                    names.join(", ")
                ))
            })?,
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| crate::error::failed(format!("cannot render the man page: {e}")))?;
    Ok(out)
}

fn print(bytes: &[u8]) -> Result<i32, Error> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|_| stdout.flush())
        .map_err(|e| crate::error::failed(format!("cannot write to stdout: {e}")))?;
    Ok(0)
}

pub fn completions(a: &CompletionsArgs, cmd: Command) -> Result<i32, Error> {
    print(&completions_script(a.shell, cmd))
}

pub fn man(a: &ManArgs, cmd: Command) -> Result<i32, Error> {
    print(&man_page(a.subcommand.as_deref(), cmd)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's own command, as `rqps completions` and `rqps man` hand it in.
    fn cli() -> Command {
        super::super::command(suite::registry()[0])
    }

    #[test]
    fn the_command_with_every_suites_options_is_valid() {
        // clap's debug asserts reject duplicate ids and flags while building.
        let cmd = full_command(cli());
        let run = cmd.find_subcommand("run").unwrap();
        for s in suite::registry() {
            for a in s.args(Command::new("x")).get_arguments() {
                if let Some(l) = a.get_long() {
                    assert!(
                        run.get_arguments().any(|b| b.get_long() == Some(l)),
                        "--{l} of suite {} is missing from the completions",
                        s.name()
                    );
                }
            }
        }
    }

    #[test]
    fn bash_completion_knows_subcommands_and_a_suite_option_beyond_the_first() {
        let bash =
            String::from_utf8(completions_script(clap_complete::Shell::Bash, cli())).unwrap();
        assert!(bash.contains("complete -F _rqps"), "{}", &bash[..200]);
        for sub in ["run", "report", "engine", "completions", "man"] {
            assert!(bash.contains(sub), "no {sub} in the bash completion");
        }
        let other = suite::registry()
            .iter()
            .skip(1)
            .flat_map(|s| {
                s.args(Command::new("x"))
                    .get_arguments()
                    .filter_map(|a| a.get_long().map(String::from))
                    .collect::<Vec<_>>()
            })
            .next()
            .expect("a second suite with an option");
        assert!(bash.contains(&format!("--{other}")), "--{other} missing");
        // `--suite` completes to the registry's names.
        let names = suite::names().join(" ");
        assert!(bash.contains(&names), "no '{names}' in the bash completion");
    }

    #[test]
    fn man_pages_render_for_rqps_and_each_subcommand() {
        let top = String::from_utf8(man_page(None, cli()).unwrap()).unwrap();
        assert!(
            top.starts_with(".ie") || top.contains(".TH rqps 1"),
            "{top:.200}"
        );
        assert!(top.contains("rqps\\-run(1)"), "{top}");
        let run = String::from_utf8(man_page(Some("run"), cli()).unwrap()).unwrap();
        assert!(run.contains(".TH rqps-run 1"), "{run:.300}");
        assert!(run.contains("\\-\\-repeats"), "no --repeats in rqps-run(1)");
        assert!(matches!(
            man_page(Some("nope"), cli()),
            Err(Error::Usage(_))
        ));
    }
}
