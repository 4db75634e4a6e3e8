//! The `./benchmatrix` script's command line: bad options are refused before anything runs,
//! and `--help` documents the options and the environment.

use benchmatrix_tests::suite::script_path;
use benchmatrix_tests::{empty_dir, explain, need_tool, ok, path_str as s, run};
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
        (&["--only", "net,disks"], "--only: unknown step disks"),
        (
            &["--format", "pdf"],
            "--format pdf: give one of text, dokuwiki",
        ),
        (&["--dir", s(&missing)], "is not a directory"),
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
