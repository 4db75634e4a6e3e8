//! The `./benchmatrix` script's command line: bad options are refused before anything runs,
//! `--help` prints the usage text the clap Command of its man page is made from, the
//! option parser takes exactly that Command's options, and bash completes `--only` and
//! `--workload` with their values (item by item in `--only`'s comma-separated list).

use benchmatrix_tests::suite::script_path;
use benchmatrix_tests::suite_cli::{block, command, entries, environment, term_parts, usage};
use benchmatrix_tests::{empty_dir, explain, need_tool, ok, path_str as s, run};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

/// The script run in `dir` with `args` stops at once with exit 2 and `message`, nothing on
/// stdout and nothing left in `dir`.
fn refused(dir: &Path, args: &[&str], message: &str) {
    let out = run(Command::new("sh")
        .arg(script_path())
        .args(args)
        .current_dir(dir)
        .env("BENCHMATRIX_BIN", "/nonexistent")
        .stdin(Stdio::null()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
    assert!(
        err.starts_with("benchmatrix: ") && err.contains(message),
        "{args:?}: want {message:?} in stderr: {err}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    empty_dir(dir);
}

#[test]
fn script_rejects_bad_kernel_workload_options_before_doing_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dir");
    let cases: &[(&[&str], &str)] = &[
        (&["--workload", "gpu"], "--workload gpu: unknown workload"),
        (&["--kernel-tarball", s(&missing)], "--kernel-tarball"),
        (
            &["--kernel-tarball", "/etc/passwd"],
            "not a .tar.xz, .tar.gz or .tar.bz2",
        ),
        (&["--tree-dir", s(&missing)], "--tree-dir"),
        (
            &["--kernel-config", "vmlinux"],
            "a make target that writes .config",
        ),
    ];
    for (args, message) in cases {
        refused(tmp.path(), args, message);
    }
}

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
            &["--serve", "--token", "fifteen-chars-x"],
            "--token: give 16 to 48 characters (this one has 15): a shorter token can be guessed",
        ),
        (
            &[
                "--serve",
                "--token",
                "forty-nine-characters-are-one-too-many-0123456789",
            ],
            "--token: give 16 to 48 characters (this one has 49)",
        ),
        (
            &["--serve", "--token", "two words 0123456789"],
            "--token: give printable characters without spaces",
        ),
    ];
    for (args, message) in cases {
        refused(tmp.path(), args, message);
    }
    let help = run(Command::new("sh").arg(script_path()).arg("--help"));
    ok(&help, "--help");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("BENCHMATRIX_BIN"), "{text}");
    assert!(text.contains("--peer HOST"), "{text}");
}

/// The script's `--help`.
fn script_help() -> String {
    let help = run(Command::new("sh").arg(script_path()).arg("--help"));
    ok(&help, "--help");
    String::from_utf8(help.stdout).expect("UTF-8 help")
}

#[test]
fn script_help_is_the_usage_text_its_command_is_made_from() {
    // What a user reads is the text the man page and completions are made from.
    assert_eq!(script_help(), format!("{}\n", usage()));
    // Every entry of it is well formed: a term, two spaces, a description (a single space
    // would run the description into the term and leave it empty).
    let options = entries(&block(usage(), "Options:"));
    assert!(options.len() > 20, "{options:?}");
    for (term, desc) in &options {
        let (_, long, value) = term_parts(term);
        assert!(
            long.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !desc.is_empty(),
            "Options: {term:?} {desc:?}"
        );
        assert!(
            value.is_none_or(|v| v.chars().all(|c| c.is_ascii_uppercase())),
            "Options: {term:?}: a value name in capitals"
        );
    }
    let cmd = command();
    assert_eq!(cmd.get_arguments().count(), options.len());
    for (name, desc) in environment() {
        assert!(
            name.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !desc.is_empty(),
            "Environment: {name:?} {desc:?}"
        );
    }
    assert!(environment().iter().any(|(n, _)| *n == "BENCHMATRIX_BIN"));
    let examples = cmd.get_after_help().expect("examples").to_string();
    assert!(examples.starts_with("Examples:\n  "), "{examples}");
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

/// What the committed bash completion offers for the command line `words` (the last one
/// being completed), as bash would call it.
fn bash_offers(words: &[&str]) -> Vec<String> {
    let script = benchmatrix_tests::workspace_root().join("completions/bash/benchmatrix");
    let out = run(Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_benchmatrix benchmatrix "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(&script)
        .args(words)
        .stdin(Stdio::null()));
    ok(&out, "the bash completion");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_the_steps_and_workloads_not_file_names() {
    if !need_tool("bash") {
        return;
    }
    let steps = ["net", "icmp", "tar", "make", "cpu", "disk", "kernel"];
    assert_eq!(bash_offers(&["benchmatrix", "--only", ""]), steps);
    assert_eq!(bash_offers(&["benchmatrix", "--only", "c"]), ["cpu"]);
    assert_eq!(
        bash_offers(&["benchmatrix", "--only", "net,d"]),
        ["net,disk"]
    );
    assert_eq!(
        bash_offers(&["benchmatrix", "--only", "net,cpu,"]).len(),
        steps.len()
    );
    assert_eq!(bash_offers(&["benchmatrix", "--workload", ""]), ["kernel"]);
}
