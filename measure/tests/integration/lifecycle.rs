//! The lifecycle through a real binary (src/bin/lifecycle_demo.rs): the output policy piped, to
//! a file and on a real terminal (a pty from script(1)), the summary on every path, exit codes.

use measure::{Kind, Record, Status, parse_line};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn demo_path() -> PathBuf {
    testkit::release::bin("lifecycle_demo")
}

fn demo(args: &[&str]) -> Output {
    Command::new(demo_path())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run lifecycle_demo")
}

fn records(text: &str) -> Vec<Record> {
    text.lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Runs the demo (`"$DEMO"`) with `args` (constant shell text, which may use each of `env`)
/// on a pty; stdout and stderr both land in the output.
fn on_terminal(args: &str, env: &[(&str, &OsStr)]) -> Option<(i32, String)> {
    let demo = demo_path();
    let mut vars = vec![("DEMO", demo.as_os_str())];
    vars.extend_from_slice(env);
    testkit::on_terminal(&format!(r#""$DEMO" {args}"#), &vars)
}

#[test]
fn piped_stdout_gets_every_record_with_flat_facts() {
    let out = demo(&["-c", "2", "--label", "a/b", "--tag", "k=v"]);
    assert_eq!(out.status.code(), Some(0));
    let recs = records(&String::from_utf8_lossy(&out.stdout));
    let kinds: Vec<Kind> = recs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [Kind::Begin, Kind::Sample, Kind::Sample, Kind::Summary]
    );
    assert!(recs[0].info.contains_key("kernel"), "{:?}", recs[0].info);
    assert!(!recs[0].info.contains_key("machine"));
    assert_eq!(recs[0].info["count"], 2);
    assert!(
        recs.iter()
            .all(|r| r.label == "a/b" && r.tags["k"] == "v" && r.name == "demo x2")
    );
    assert_eq!(recs[3].status, Some(Status::Ok));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every tool's begin names the clock its times are read from: the kernel's current
/// clocksource (a guest's kvm-clock, hpet or tsc), as this machine's sysfs gives it.
#[test]
fn a_begin_names_the_running_kernels_clocksource() {
    let path = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    let Ok(current) = std::fs::read_to_string(path) else {
        return testkit::skip(&format!("no {path} here"));
    };
    let out = demo(&["-c", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let recs = records(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(recs[0].kind, Kind::Begin);
    assert_eq!(
        recs[0].info.get("clocksource").and_then(|v| v.as_str()),
        Some(current.trim()),
        "{:?}",
        recs[0].info
    );
    assert!(measure::envfacts::FACT_KEYS.contains(&"clocksource"));
}

#[test]
fn output_file_is_appended_and_stdout_stays_clean() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("r.jsonl");
    std::fs::write(&f, "").expect("write");
    for _ in 0..2 {
        let out = demo(&["-c", "1", "-o", f.to_str().expect("utf8")]);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
    }
    let recs = records(&std::fs::read_to_string(&f).expect("read"));
    assert_eq!(recs.len(), 6);
    assert_ne!(recs[0].run, recs[3].run);
}

#[test]
fn an_error_still_writes_begin_and_a_failed_summary() {
    let out = demo(&["--fail"]);
    assert_eq!(out.status.code(), Some(2));
    let recs = records(&String::from_utf8_lossy(&out.stdout));
    let last = recs.last().expect("records");
    assert_eq!(last.kind, Kind::Summary);
    assert_eq!(last.status, Some(Status::Failed));
    assert_eq!(last.error.as_deref(), Some("demo: failed on purpose"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim(), "lifecycle_demo: demo: failed on purpose");
}

#[test]
fn a_missing_summary_is_written_as_partial() {
    let out = demo(&["--no-summary"]);
    assert_eq!(out.status.code(), Some(0));
    let recs = records(&String::from_utf8_lossy(&out.stdout));
    let last = recs.last().expect("records");
    assert_eq!(last.status, Some(Status::Partial));
    assert_eq!(recs.iter().filter(|r| r.kind == Kind::Summary).count(), 1);
}

#[test]
fn usage_errors_exit_2_without_records() {
    for args in [
        &["-c", "0"][..],
        &["--nope"],
        &["--tag", "novalue"],
        &["--label", " "],
        &["--name", ""],
        &["--label", "two\nrows"],
        &["--name", "a\u{1b}[2Jb"],
        &["--tag", "k=a\rb"],
    ] {
        let out = demo(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    assert_eq!(demo(&["--help"]).status.code(), Some(0));
}

#[test]
fn payload_on_stdout_puts_records_on_a_piped_stderr() {
    let out = demo(&["--payload", "-c", "1"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "payload\n");
    let recs = records(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(recs.len(), 3);
}

#[test]
fn a_terminal_gets_human_lines_and_no_json() {
    let Some((code, text)) = on_terminal("-c 2", &[]) else {
        return;
    };
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("\"schema\""), "{text}");
    assert!(text.contains("sample 1"), "{text}");
    assert!(text.contains("demo x2: ok"), "{text}");
    assert!(text.contains("op  2.00 ms"), "{text}");
    let Some((_, quiet)) = on_terminal("-c 2 -q", &[]) else {
        return;
    };
    assert!(
        !quiet.contains("sample 1") && !quiet.contains("schema"),
        "{quiet}"
    );
}

#[test]
fn a_terminal_with_json_or_output_file() {
    let Some((_, text)) = on_terminal("-c 1 --json", &[]) else {
        return;
    };
    assert!(text.contains("\"schema\":\"benchmatrix/1\""), "{text}");
    assert!(!text.contains("demo x1: ok"), "{text}");
    // A space and a quote in the path: it reaches the shell as a variable, not as code.
    let dir = testkit::odd_tempdir("lifecycle");
    let f = dir.path().join("r.jsonl");
    let Some((_, text)) = on_terminal(r#"-c 1 -o "$F""#, &[("F", f.as_os_str())]) else {
        return;
    };
    assert!(
        text.contains("demo x1: ok") && !text.contains("schema"),
        "{text}"
    );
    assert_eq!(
        records(&std::fs::read_to_string(&f).expect("read")).len(),
        3
    );
    let Some((_, text)) = on_terminal("-c 1 --payload", &[]) else {
        return;
    };
    assert!(
        text.contains("payload") && text.contains("demo x1: ok"),
        "{text}"
    );
    assert!(!text.contains("schema"), "{text}");
    let Some((code, text)) = on_terminal("--fail", &[]) else {
        return;
    };
    assert_eq!(code, 2, "{text}");
    assert_eq!(text.matches("failed on purpose").count(), 1, "{text}");
}

#[test]
fn a_background_job_of_a_script_ignores_ctrl_c_and_ends_on_sigterm() {
    // A non-interactive shell starts `&` jobs with SIGINT ignored, and a signal ignored at
    // start stays ignored: the job goes on after kill -INT, and SIGTERM ends it with its
    // summary. The job has set up its signals once it wrote begin (at most 20 s).
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("r.jsonl");
    let script = r#""$DEMO" --wait -c 1 -o "$F" & pid=$!
        i=0; until grep -qs '"begin"' "$F" || [ $i -ge 400 ]; do i=$((i + 1)); sleep 0.05; done
        sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$pid/status
        kill -INT $pid; kill -0 $pid && echo running; kill -TERM $pid; wait $pid; echo $?"#;
    let out = Command::new("sh")
        .args(["-c", script])
        .env("DEMO", demo_path())
        .env("F", &f)
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    let said = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = said.lines().collect();
    let ignored = lines
        .first()
        .and_then(|m| u64::from_str_radix(m, 16).ok())
        .unwrap_or_else(|| panic!("SigIgn: {said}"));
    assert_ne!(
        ignored & 1 << (libc::SIGINT - 1),
        0,
        "SIGINT ignored: {said}"
    );
    assert_eq!(lines[1..], ["running", "130"]);
    let recs = records(&std::fs::read_to_string(&f).expect("read"));
    let last = recs.last().expect("records");
    assert_eq!(last.kind, Kind::Summary);
    assert_eq!(last.status, Some(Status::Partial));
}
