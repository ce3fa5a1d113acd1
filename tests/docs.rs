//! The docs show what rqps prints, and fail when they drift.
//!
//! Every ```console block of README.md and of docs/ (docs/suites/ too) is run by trycmd
//! and its output compared with the block: the help pages (docs/commands.md holds every
//! `rqps help` page), the errors (docs/errors.md), `rqps tests`, the shape of `rqps
//! engine list`, a matrix's `--dry-run`, and reports of committed fixtures. Output that
//! depends on the machine is elided in the page with trycmd's `[..]` (part of a line) and
//! `...` (lines); blocks whose output was measured are ```text, and are not run.
//!
//! After a deliberate change to what rqps prints, regenerate the pages and read the diff:
//!
//! ```sh
//! TRYCMD=overwrite cargo test --test docs
//! git diff README.md docs/
//! ```
//!
//! Overwrite keeps a block's `[..]` and `...` only while the output still has the block's
//! shape: when the shape changed (a new engine kind adds a line to `rqps engine list`), it
//! writes this machine's output there; put the elisions back before committing.
//!
//! README.md is read through tests/docs/README.md (a link to it), so that its report
//! example runs in tests/docs/README.in/, whose rqps-results/ holds the runs the README's
//! three commands stored. The README's own commands (its ```sh blocks) must also be
//! accepted as written: parsed with the suite's options and planned, as `rqps run` would.

use std::path::Path;

#[test]
fn every_console_block_of_the_docs_is_what_rqps_prints() {
    // An empty engine cache: `engine list` and the not-installed error read the same anywhere.
    let cache = tempfile::tempdir().unwrap();
    trycmd::TestCases::new()
        .register_bin("rqps", Path::new(env!("CARGO_BIN_EXE_rqps")))
        .env("RQPS_CACHE_DIR", cache.path().display().to_string())
        .env("NO_COLOR", "1")
        .case("tests/docs/README.md")
        .case("docs/*.md")
        .case("docs/suites/*.md");
}

#[test]
fn docs_commands_holds_every_rqps_help_page() {
    let page = std::fs::read_to_string("docs/commands.md").unwrap();
    for path in rqps::cli::command_paths() {
        let cmd = std::iter::once("$ rqps help")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            page.lines().any(|l| l == cmd),
            "docs/commands.md has no `{cmd}` block: add one and run \
             `TRYCMD=overwrite cargo test --test docs`"
        );
    }
}

/// The `rqps ...` command lines of `text`'s ```sh blocks, comments removed.
fn sh_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            in_sh = !in_sh && info.trim() == "sh";
            continue;
        }
        if in_sh && line.starts_with("rqps ") {
            // `  # a comment` after the command (a `#` inside quotes is kept).
            let words = shlex::split(line).unwrap_or_default();
            let cmd: Vec<String> = words.into_iter().take_while(|w| w != "#").collect();
            out.push(shlex::try_join(cmd.iter().map(String::as_str)).unwrap());
        }
    }
    out
}

#[test]
fn the_readme_s_commands_are_accepted_as_written() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let commands = sh_commands(&readme);
    assert!(commands.len() >= 8, "{commands:?}");
    for c in &commands {
        let argv = shlex::split(c).unwrap();
        if let Err(e) = rqps::cli::check_command_line(&argv) {
            panic!("README.md: `{c}` is refused:\n{e}");
        }
    }
}

#[test]
fn a_command_rqps_refuses_is_found() {
    let bad = sh_commands("```sh\nrqps run --profile quik   # a typo\n```\n");
    assert_eq!(bad, ["rqps run --profile quik"]);
    let argv = shlex::split(&bad[0]).unwrap();
    let e = rqps::cli::check_command_line(&argv).unwrap_err();
    assert!(e.to_string().contains("did you mean quick?"), "{e}");
    let e = rqps::cli::check_command_line(&shlex::split("rqps run --no-such-flag").unwrap());
    assert!(e.is_err());
}
