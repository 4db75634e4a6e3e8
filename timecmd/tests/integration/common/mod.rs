//! What timecmd's integration tests share: running the binary with records in a scratch
//! file, reading the records back, and finding processes and terminals.
#![allow(dead_code)] // each test binary uses some of these
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use measure::record::{Kind, Record, parse_line};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The release binary under test.
pub fn bin() -> &'static str {
    testkit::tool("timecmd")
}

/// A scratch directory for one test. Its path has a space and a quote: a test's shell text
/// gets such paths in its environment (`"$LOG"`), never spliced into the text.
pub fn scratch() -> tempfile::TempDir {
    testkit::odd_tempdir("timecmd")
}

/// Runs timecmd with records in `dir/records.jsonl`; returns the output and the records.
pub fn timecmd(dir: &Path, args: &[&str]) -> (Output, Vec<Record>) {
    timecmd_env(dir, args, &[])
}

/// Runs timecmd as [`timecmd`] does, with each of `env` in its environment, which its
/// --setup/--prepare/--cleanup shells and its runs inherit: their shell text uses them as
/// `"$NAME"`.
pub fn timecmd_env(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> (Output, Vec<Record>) {
    let rec = dir.join("records.jsonl");
    let _ = std::fs::remove_file(&rec);
    let out = Command::new(bin())
        .arg("-o")
        .arg(&rec)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, read_records(&rec))
}

pub fn read_records(p: &Path) -> Vec<Record> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e}")))
        .collect()
}

pub fn of(recs: &[Record], k: Kind) -> Vec<&Record> {
    recs.iter().filter(|r| r.kind == k).collect()
}

pub fn summary(recs: &[Record]) -> &Record {
    let s = of(recs, Kind::Summary);
    assert_eq!(s.len(), 1, "exactly one summary: {recs:?}");
    assert_eq!(
        recs.last().unwrap().kind,
        Kind::Summary,
        "the summary is last"
    );
    s[0]
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn info_i64(r: &Record, k: &str) -> Option<i64> {
    r.info.get(k).and_then(|v| v.as_i64())
}

/// A process's state, parent and group from /proc/PID/stat (the fields after the
/// parenthesised command name, which may hold anything); `None` once it is gone.
fn stat_of(pid: i32) -> Option<(char, i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    Some((state, f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// Every process's pid.
fn pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether a process is gone (or a zombie waiting for init).
pub fn gone(pid: i32) -> bool {
    stat_of(pid).is_none_or(|(state, _, _)| state == 'Z')
}

/// The pids of the children of `parent`.
pub fn children(parent: u32) -> Vec<i32> {
    let parent = parent as i32;
    let is_child = |&pid: &i32| stat_of(pid).is_some_and(|(_, pp, _)| pp == parent);
    pids().into_iter().filter(is_child).collect()
}

/// The live processes of group `pgrp` (a zombie waits for init to reap it, and holds
/// nothing).
pub fn in_group(pgrp: i32) -> Vec<i32> {
    let live_in = |&pid: &i32| stat_of(pid).is_some_and(|(s, _, g)| s != 'Z' && g == pgrp);
    pids().into_iter().filter(live_in).collect()
}

/// Runs `shell_cmd` (constant shell text) under script(1) on a new pseudo-terminal, with
/// timecmd's path in `$BIN` and each of `env` in its environment, feeding `input` once `ready`
/// holds; kills it after 30 s. Returns its exit code and output.
pub fn on_a_terminal(
    shell_cmd: &str,
    env: &[(&str, &OsStr)],
    input: &[u8],
    ready: impl Fn() -> bool,
) -> Option<(i32, String)> {
    use std::io::{Read, Write};
    if !testkit::need_tool("script") {
        return None;
    }
    let mut child = Command::new("script")
        .args(["-qec", shell_cmd, "/dev/null"])
        // The same shell whoever runs the tests.
        .env("SHELL", "/bin/sh")
        .env("BIN", bin())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !ready() && t.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("timecmd on a terminal did not finish: {shell_cmd}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    Some((status.code().unwrap_or(-1), out))
}

/// Whether a process whose command line is `cmdline` (NUL-terminated arguments) runs.
pub fn process_runs(cmdline: &[u8]) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == cmdline))
}
