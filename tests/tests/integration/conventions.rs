//! Conventions every crate of the workspace keeps: `//!` atop each file, the tool skeleton,
//! and the shared flag behaviour (--help, --version, usage errors exit 2 naming the flag).

use benchmatrix_tests::{SECOND_BINARIES, TOOLS, bin, crate_of, run, workspace_root};
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

/// The library source and the `main` of `tool`: its crate's lib.rs and main.rs, or, for a
/// second binary of another crate, `src/bin/tool.rs` and the module whose Tool that main runs
/// (`blkwrite::read::Tool` is `src/read/mod.rs` or `src/read.rs`).
fn skeleton_files(tool: &str) -> (PathBuf, PathBuf, String) {
    let krate = crate_of(tool);
    let src = workspace_root().join(krate).join("src");
    if krate == tool {
        return (src.join("lib.rs"), src.join("main.rs"), tool.to_string());
    }
    let main = src.join("bin").join(format!("{tool}.rs"));
    let text = std::fs::read_to_string(&main)
        .unwrap_or_else(|e| panic!("{tool}: {}: {e}", main.display()));
    let path = text
        .split("::main::<")
        .nth(1)
        .and_then(|rest| rest.split("::Tool>").next())
        .filter(|p| p.starts_with(&format!("{krate}::")))
        .unwrap_or_else(|| panic!("{tool}: {} runs no {krate}::MODULE::Tool", main.display()))
        .to_string();
    let rel: PathBuf = path.split("::").skip(1).collect();
    let module = [
        src.join(&rel).join("mod.rs"),
        src.join(rel.with_extension("rs")),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| panic!("{tool}: no module {path} in {krate}/src"));
    (module, main, path)
}

#[test]
fn every_tool_has_the_skeleton() {
    // Each tool's library gives command() (checked at compile time by TOOLS) and run(); its
    // binary is a thin main, whether the tool is a crate of its own or a second binary.
    let crates: Vec<&str> = TOOLS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| crate_of(n) == *n)
        .collect();
    assert_eq!(
        crates,
        tools(),
        "benchmatrix_tests::TOOLS lists every tool crate, in order"
    );
    for (second, krate) in SECOND_BINARIES {
        let at = |t: &str| TOOLS.iter().position(|(n, _)| *n == t);
        assert_eq!(
            at(second).map(|i| i + 1),
            at(krate),
            "{second} is listed in TOOLS just before {krate}, whose second binary it is"
        );
    }
    for (tool, command) in TOOLS {
        assert_eq!(command().get_name(), *tool);
        let (lib_file, main_file, path) = skeleton_files(tool);
        let lib = std::fs::read_to_string(&lib_file).expect("the tool's library");
        assert!(
            lib.contains("pub fn run(args: Vec<OsString>) -> Exit"),
            "{tool}: {} lacks run(args) -> Exit",
            lib_file.display()
        );
        assert!(
            [
                "impl measure::lifecycle::Tool for Tool",
                "impl lifecycle::Tool for Tool",
                "impl measure::Tool for Tool",
                // collate reads records and writes none: measure's reader lifecycle.
                "impl Reader for Tool"
            ]
            .iter()
            .any(|i| lib.contains(i)),
            "{tool}: {} has no Tool for the lifecycle",
            lib_file.display()
        );
        let main = std::fs::read_to_string(&main_file)
            .unwrap_or_else(|e| panic!("{tool}: {}: {e}", main_file.display()));
        assert!(
            main.lines().count() <= 15,
            "{tool}: {} is more than a thin bin",
            main_file.display()
        );
        // Every main is the lifecycle running the library's Tool.
        let lifecycle = if *tool == "collate" {
            "reading"
        } else {
            "lifecycle"
        };
        assert!(
            main.contains(&format!("measure::{lifecycle}::main::<{path}::Tool>()")),
            "{tool}: main is not measure::{lifecycle}::main::<{path}::Tool>()"
        );
    }
}

#[test]
fn help_version_and_usage_errors() {
    for (tool, _) in TOOLS {
        let exe = bin(tool);
        let help = run(Command::new(&exe).arg("--help"));
        assert_eq!(help.status.code(), Some(0), "{tool} --help");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("Usage"), "{tool} --help prints usage");
        // collate reads records and writes none, so it alone has no --label.
        if *tool != "collate" {
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
        let usage_code = if *tool == "timecmd" { 125 } else { 2 };
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
        if *tool != "collate" {
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
        concat!(
            "{\"schema\":\"benchmatrix/1\",\"tool\":\"t\",\"version\":\"0\",\"type\":\"sample\",\"run\":\"r\",\"seq\":0,\"at\":\"2026-12-01T00:00:00Z\",\"host\":\"h\",\"label\":\"l\",\"name\":\"n\",\"values\":{\"x_s\":1}}\n",
            "{\"schema\":\"benchmatrix/1\",\"tool\":\"t\",\"version\":\"0\",\"type\":\"summary\",\"run\":\"r\",\"seq\":0,\"at\":\"2026-12-01T00:00:01Z\",\"host\":\"h\",\"label\":\"l\",\"name\":\"n\",\"status\":\"ok\",\"headline\":\"x_s\",\"values\":{\"x_s\":1}}\n",
        ),
    )
    .expect("write records");
    let coll = exit_with_stdout_closed(Command::new(bin("collate")).arg(&records));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(blk, Some(0), "blkwrite");
    assert_eq!(time, Some(0), "timecmd");
    assert_eq!(coll, Some(0), "collate");
}
