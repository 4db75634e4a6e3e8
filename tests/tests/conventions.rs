//! Conventions every crate of the workspace keeps: `//!` atop each file, the tool skeleton,
//! and the shared flag behaviour (--help, --version, usage errors exit 2 naming the flag).

use benchmatrix_tests::{TOOLS, bin, run, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool crates: workspace members other than the library, the test support and this test crate.
fn tools() -> Vec<String> {
    let text = std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("Cargo.toml");
    let members = text
        .split_once("members")
        .and_then(|(_, rest)| rest.split_once('['))
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("members list");
    members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty() && !["measure", "testkit", "tests"].contains(&m.as_str()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_doc_line() {
    let mut files = Vec::new();
    rust_files(&workspace_root(), &mut files);
    assert!(files.len() > 5);
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap_or_default()
                .starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files without a //! line atop: {missing:?}"
    );
}

#[test]
fn every_tool_has_the_skeleton() {
    // Each tool's library gives command() (checked at compile time by TOOLS) and run(); its
    // binary is a thin main.
    let listed: Vec<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        listed,
        tools(),
        "benchmatrix_tests::TOOLS lists every tool crate, in order"
    );
    for (tool, command) in TOOLS {
        assert_eq!(command().get_name(), *tool);
        let dir = workspace_root().join(tool).join("src");
        let lib = std::fs::read_to_string(dir.join("lib.rs")).expect("lib.rs");
        assert!(
            lib.contains("pub fn run(args: Vec<OsString>) -> Exit"),
            "{tool}: lib.rs lacks run(args) -> Exit"
        );
        assert!(
            [
                "impl measure::lifecycle::Tool for Tool",
                "impl lifecycle::Tool for Tool",
                "impl measure::Tool for Tool"
            ]
            .iter()
            .any(|i| lib.contains(i)),
            "{tool}: lib.rs has no Tool for the lifecycle"
        );
        let main = std::fs::read_to_string(dir.join("main.rs")).expect("main.rs");
        assert!(
            main.lines().count() <= 15,
            "{tool}: main.rs is more than a thin bin"
        );
        // Every main is the lifecycle running the library's Tool.
        assert!(
            main.contains(&format!("measure::lifecycle::main::<{tool}::Tool>()")),
            "{tool}: main is not measure::lifecycle::main::<{tool}::Tool>()"
        );
    }
}

#[test]
fn help_version_and_usage_errors() {
    for tool in tools() {
        let exe = bin(&tool);
        let help = run(Command::new(&exe).arg("--help"));
        assert_eq!(help.status.code(), Some(0), "{tool} --help");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("Usage"), "{tool} --help prints usage");
        // collate reads records and writes none, so it alone has no --label.
        if tool != "collate" {
            assert!(
                text.contains("--label"),
                "{tool} --help shows the shared --label flag"
            );
        }
        let version = run(Command::new(&exe).arg("--version"));
        assert_eq!(version.status.code(), Some(0), "{tool} --version");
        assert!(String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
        let bad = run(Command::new(&exe).arg("--no-such-flag"));
        // timecmd passes its command's status on, so its own failures are 125 as env(1)'s.
        let usage_code = if tool == "timecmd" { 125 } else { 2 };
        assert_eq!(
            bad.status.code(),
            Some(usage_code),
            "{tool}: a bad flag exits {usage_code}"
        );
        assert!(
            String::from_utf8_lossy(&bad.stderr).contains("--no-such-flag"),
            "{tool}: the usage error names the flag"
        );
        assert!(
            bad.stdout.is_empty(),
            "{tool}: a usage error writes nothing on stdout"
        );
        if tool != "collate" {
            let tag = run(Command::new(&exe).args(["--tag", "novalue", "--help"]));
            assert_eq!(
                tag.status.code(),
                Some(0),
                "{tool}: --help wins over other flags"
            );
        }
    }
}

/// Runs a tool whose stdout reader is gone before it writes, and returns its exit code.
fn exit_with_stdout_closed(cmd: &mut Command) -> Option<i32> {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains("Broken pipe"),
        "a gone reader is not an error to report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.code()
}

#[test]
fn a_reader_that_goes_away_is_not_a_failure() {
    let dir = std::env::temp_dir().join(format!("bm-epipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("blockfile");
    let blk = exit_with_stdout_closed(
        Command::new(bin("blkwrite"))
            .args(["-s", "4M", "-b", "1M"])
            .arg(&file),
    );
    let time = exit_with_stdout_closed(
        Command::new(bin("timecmd")).args(["-o", "-", "-r", "3", "--", "true"]),
    );
    let records = dir.join("r.jsonl");
    std::fs::write(
        &records,
        "{\"schema\":\"benchmatrix/1\",\"tool\":\"t\",\"version\":\"0\",\"type\":\"sample\",\"run\":\"r\",\"seq\":0,\"at\":\"a\",\"host\":\"h\",\"label\":\"l\",\"name\":\"n\",\"values\":{\"x_s\":1}}\n",
    )
    .expect("write records");
    let coll = exit_with_stdout_closed(Command::new(bin("collate")).arg(&records));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(blk, Some(0), "blkwrite");
    assert_eq!(time, Some(0), "timecmd");
    assert_eq!(coll, Some(0), "collate");
}
