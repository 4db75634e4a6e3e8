//! The `./benchmatrix` script's command line: bad options are refused before anything runs,
//! and `--help` and the option parser name exactly the options, environment and examples of
//! the clap Command its man page is made from.

use benchmatrix_tests::suite::script_path;
use benchmatrix_tests::suite_cli::{ENVIRONMENT, EXAMPLES, command};
use benchmatrix_tests::{empty_dir, explain, need_tool, ok, path_str as s, run};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};

#[test]
fn script_rejects_bad_options_before_doing_anything() {
    if !need_tool("sh") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dir");
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "unknown option --bogus"),
        (&["--label"], "--label needs a value"),
        (&["--runs", "0"], "--runs 0: give a whole number"),
        (&["--jobs", "many"], "--jobs many: give a whole number"),
        (
            &["--port", "70000"],
            "--port 70000: give a port from 1 to 65534",
        ),
        (
            &["--serve", "--port", "05601"],
            "--port 05601: give the port without leading zeros (5601)",
        ),
        (
            &["--serve", "--serve-time", "0"],
            "--serve-time 0: give a duration above 0",
        ),
        (&["--only", "net,disks"], "--only: unknown step disks"),
        (
            &["--format", "pdf"],
            "--format pdf: give one of text, dokuwiki",
        ),
        (&["--dir", s(&missing)], "is not a directory"),
        (&["--serve-time", "5m"], "--serve-time needs --serve"),
        (
            &["--serve", "--serve-time", "soon"],
            "--serve-time soon: give a duration",
        ),
        (
            &["--serve", "--peer", "dom0"],
            "--serve and --peer: run --serve on the peer",
        ),
        (&["--bind", "10.0.0.1"], "--bind needs --serve"),
        (&["--session-time", "5m"], "--session-time needs --serve"),
        (
            &["--serve", "--session-time", "0"],
            "--session-time 0: give a duration above 0",
        ),
        (
            &["--serve", "--session-bytes", "lots"],
            "--session-bytes lots: give a size above 0",
        ),
        (
            &["--serve", "--token", "seventeen-chars-x"],
            "--token: give at most 16 characters (this one has 17)",
        ),
        (
            &["--serve", "--token", "two words"],
            "--token: give printable characters without spaces",
        ),
    ];
    for (args, message) in cases {
        let out = run(Command::new("sh")
            .arg(script_path())
            .args(*args)
            .current_dir(tmp.path())
            .env("BENCHMATRIX_BIN", "/nonexistent")
            .stdin(Stdio::null()));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        assert!(
            err.starts_with("benchmatrix: ") && err.contains(message),
            "{args:?}: want {message:?} in stderr: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        empty_dir(tmp.path());
    }
    let help = run(Command::new("sh").arg(script_path()).arg("--help"));
    ok(&help, "--help");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("BENCHMATRIX_BIN"), "{text}");
    assert!(text.contains("--peer HOST"), "{text}");
}

/// Whitespace runs made one space, so that text wrapped differently compares equal.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The lines of `--help` under the heading `title` ("Options:"), up to the next heading.
fn block<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The entries of a `--help` list: (term, description), a description's continuation lines
/// (indented deeper than the two spaces of a term) joined to it.
fn entries(lines: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in lines {
        let term_line = line.starts_with("  ") && !line.starts_with("   ");
        match out.last_mut() {
            Some((_, desc)) if !term_line => {
                desc.push(' ');
                desc.push_str(line.trim());
            }
            _ => {
                let (term, desc) = line.trim().split_once("  ").unwrap_or((line.trim(), ""));
                out.push((term.to_string(), words(desc)));
            }
        }
    }
    out
}

/// An option as `--help` shows it: "-f, --format FMT" and its description.
fn help_option(term: &str, desc: &str) -> (Option<String>, String, Option<String>, String) {
    let (short, rest) = match term.split_once(", ") {
        Some((short, rest)) => (Some(short.to_string()), rest),
        None => (None, term),
    };
    let (long, value) = match rest.split_once(' ') {
        Some((long, value)) => (long, Some(value.to_string())),
        None => (rest, None),
    };
    (short, long.to_string(), value, desc.to_string())
}

/// The script's `--help`.
fn script_help() -> String {
    let help = run(Command::new("sh").arg(script_path()).arg("--help"));
    ok(&help, "--help");
    String::from_utf8(help.stdout).expect("UTF-8 help")
}

#[test]
fn script_help_names_exactly_the_options_of_its_command() {
    let help = script_help();
    let cmd = command();
    let want: Vec<_> = cmd
        .get_arguments()
        .map(|a| {
            let value = a
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| v.to_string());
            let long = format!("--{}", a.get_long().expect("a long name"));
            let help = words(&a.get_help().map(|h| h.to_string()).unwrap_or_default());
            (a.get_short().map(|c| format!("-{c}")), long, value, help)
        })
        .collect();
    let got: Vec<_> = entries(&block(&help, "Options:"))
        .iter()
        .map(|(term, desc)| help_option(term, desc))
        .collect();
    assert_eq!(got, want, "--help's options and suite_cli::command()");

    let env: Vec<(String, String)> = ENVIRONMENT
        .iter()
        .map(|(name, desc)| (name.to_string(), words(desc)))
        .collect();
    assert_eq!(entries(&block(&help, "Environment:")), env);

    let examples: Vec<&str> = EXAMPLES.lines().skip(1).collect();
    assert_eq!(block(&help, "Examples:"), examples);

    let about: Vec<&str> = help
        .lines()
        .skip(1)
        .take_while(|l| *l != "Options:")
        .collect();
    let long_about = cmd.get_long_about().expect("long_about").to_string();
    assert_eq!(words(&about.join("\n")), words(&long_about));
}

#[test]
fn script_parses_exactly_the_options_of_its_command() {
    let text = std::fs::read_to_string(script_path()).expect("the script");
    let parser = text
        .split_once("while [ $# -gt 0 ]; do")
        .and_then(|(_, rest)| rest.split_once("\ndone"))
        .map(|(body, _)| body)
        .expect("the option loop");
    let got: BTreeSet<String> = parser
        .lines()
        .filter_map(|l| l.trim().split_once(')'))
        .map(|(arm, _)| arm)
        .filter(|arm| arm.starts_with('-'))
        .flat_map(|arm| arm.split('|').map(str::to_string))
        .collect();
    let want: BTreeSet<String> = command()
        .get_arguments()
        .flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|c| format!("-{c}"));
            long.into_iter().chain(short)
        })
        .collect();
    assert_eq!(got, want, "the script's case arms and suite_cli::command()");
}
