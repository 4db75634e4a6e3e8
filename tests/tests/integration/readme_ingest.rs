//! The ingest examples of README.md and ingest/README.md run as written, in a shell with the
//! release tools first on PATH, against the real peers on loopback: only the peer's address,
//! the counts and the scratch sizes are made small and local.

use benchmatrix_tests::{bin_dir, decode, explain, need_tool, workspace_root};
use measure::Kind;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::{Spawned, free_port};

/// The shell commands of the first ```sh block of `file`: a line ending in a backslash goes
/// on into the next, as in the shell.
fn sh_block(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("the README");
    let start = text.find("```sh\n").expect("a sh block") + 6;
    let end = start + text[start..].find("```").expect("its end");
    let mut commands: Vec<String> = Vec::new();
    let mut open = false;
    for line in text[start..end].lines() {
        match commands.last_mut() {
            Some(last) if open => last.push_str(line.trim_start()),
            _ => commands.push(line.to_string()),
        }
        open = line.ends_with('\\');
        if let Some(last) = commands.last_mut().filter(|_| open) {
            last.pop();
            last.push(' ');
        }
    }
    commands
}

/// The commands in the README's table row `old results`.
fn table_row() -> Vec<String> {
    let text = std::fs::read_to_string(workspace_root().join("README.md")).expect("README");
    let row = text
        .lines()
        .find(|l| l.starts_with("| old results |"))
        .expect("the old results row");
    row.split('`')
        .skip(1)
        .step_by(2)
        .map(|c| c.replace("\\|", "|"))
        .collect()
}

/// An example made local: the peers on loopback, short counts, a comment dropped.
fn local(line: &str, iperf_port: &str) -> String {
    let line = line.split("  #").next().unwrap_or(line).trim();
    line.replace(
        "iperf3 -c 10.0.0.1",
        &format!("iperf3 -c 127.0.0.1 -p {iperf_port} -t 1"),
    )
    .replace("-D -c 100 10.0.0.1", "-D -c 3 -i 0.2 127.0.0.1")
    .replace("-D -c 100 host", "-D -c 3 -i 0.2 127.0.0.1")
    .replace("-C 20", "-C 3")
    .replace("10.0.0.1 10.0.0.2", "127.0.0.1 127.0.0.2")
    .replace("--output-format=json+", "--size=1M --output-format=json+")
    .replace("bs=1M count=512", "bs=1M count=4")
}

/// Runs `lines` one by one in `dir`, each with an iperf3 server waiting for it.
fn run_lines(dir: &Path, lines: &[String]) {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in lines {
        let port = free_port().to_string();
        let server = line.contains("iperf3 -c").then(|| {
            let mut s = Spawned::start(
                Command::new("iperf3")
                    .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            );
            s.wait_listening(port.parse().expect("port"), Duration::from_secs(10));
            s
        });
        let cmd = local(line, &port);
        let out = Command::new("sh")
            .args(["-ec", &cmd])
            .current_dir(dir)
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .expect("sh runs");
        assert!(out.status.success(), "{cmd}: {}", explain(&out));
        if let Some(mut s) = server {
            s.wait(Duration::from_secs(10));
        }
    }
}

/// Every records file in `dir` decodes, and holds an ok summary of `tool` for each `tool`.
fn summaries_of(dir: &Path, file: &str, tools: &[&str]) {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let recs = decode(&text);
    for tool in tools {
        assert!(
            recs.iter()
                .any(|r| r.kind == Kind::Summary && r.tool == *tool),
            "{file} has no summary of {tool}:\n{text}"
        );
    }
}

fn peers() -> bool {
    ["iperf3", "fio", "hyperfine", "ping", "fping"]
        .iter()
        .all(|t| need_tool(t))
}

#[test]
fn the_readme_table_rows_ingest_examples_run() {
    if !peers() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // The row's file comes from iperf3 -J, as the row assumes.
    let mut lines = vec!["iperf3 -c 10.0.0.1 -J > iperf3.json".to_string()];
    lines.extend(table_row());
    assert_eq!(lines.len(), 3, "{lines:?}");
    run_lines(dir.path(), &lines);
    summaries_of(dir.path(), "r.jsonl", &["iperf3", "ping"]);
}

#[test]
fn the_ingest_readme_examples_run() {
    if !peers() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = sh_block(&workspace_root().join("ingest/README.md"));
    // hf.json is the export the hyperfine line reads: hyperfine makes it first.
    lines.insert(
        0,
        "hyperfine --runs 3 --export-json hf.json true".to_string(),
    );
    run_lines(dir.path(), &lines);
    summaries_of(
        dir.path(),
        "results.jsonl",
        &["iperf3", "fio", "hyperfine", "ping", "fping", "dd"],
    );
}
