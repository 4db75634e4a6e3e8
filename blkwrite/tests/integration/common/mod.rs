//! Shared helpers for blkwrite's and blkread's integration tests: running a binary and reading its
//! records; loop devices and mounts come from testkit (skipped, with the reason, where the
//! machine cannot give them).
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use testkit::LoopDev;
use testkit::mount::{self, Mount};

/// The release blkwrite under test.
pub fn bin() -> &'static str {
    testkit::tool("blkwrite")
}

/// The release blkread under test.
pub fn blkread_bin() -> &'static str {
    testkit::tool("blkread")
}

/// What one run printed: exit code, records (each checked by the strict reader), stderr.
pub struct Run {
    pub code: i32,
    pub records: Vec<Value>,
    pub stderr: String,
}

impl Run {
    pub fn of(kind: &str, r: &Run) -> Vec<Value> {
        r.records
            .iter()
            .filter(|v| v["type"] == kind)
            .cloned()
            .collect()
    }
    pub fn summary(&self) -> Value {
        let s = Run::of("summary", self);
        assert_eq!(s.len(), 1, "one summary: {:?}", self.records);
        s[0].clone()
    }
    pub fn begin(&self) -> Value {
        Run::of("begin", self)[0].clone()
    }
    pub fn value(&self, key: &str) -> f64 {
        self.summary()["values"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("no {key} in {}", self.summary()))
    }
}

pub fn parse(out: &Output) -> Run {
    let text = String::from_utf8_lossy(&out.stdout);
    let records = text
        .lines()
        .map(|l| {
            measure::parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e:?}"));
            serde_json::from_str::<Value>(l).unwrap()
        })
        .collect();
    Run {
        code: out.status.code().unwrap_or(-1),
        records,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn blkwrite(args: &[&str]) -> Run {
    let out = Command::new(bin()).args(args).output().unwrap();
    parse(&out)
}

pub fn blkread(args: &[&str]) -> Run {
    let out = Command::new(blkread_bin()).args(args).output().unwrap();
    parse(&out)
}

/// A fresh temporary directory named `prefix...` under cargo's test scratch directory.
pub fn tmp_in(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(std::env::var("CARGO_TARGET_TMPDIR").unwrap_or_else(|_| "/tmp".into()))
        .unwrap()
}

/// A path as a command-line argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `cmd` and sends it Ctrl-C (SIGINT, to this child by its PID) once its first interval
/// record shows the work under way (the command's --time bounds the wait); `under_way` runs
/// just before the signal. What it printed, all of it.
pub fn interrupted(cmd: Command, under_way: impl FnOnce()) -> Run {
    signalled(cmd, "INT", under_way)
}

/// As [`interrupted`], with the signal `sig` (kill's name: INT, TERM, HUP).
pub fn signalled(mut cmd: Command, sig: &str, under_way: impl FnOnce()) -> Run {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stdout = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let working = line.contains(r#""type":"interval""#);
        stdout.push_str(&line);
        stdout.push('\n');
        if working {
            break;
        }
    }
    under_way();
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-s", sig, &pid])
            .status()
            .unwrap()
            .success()
    );
    for line in lines {
        stdout.push_str(&line.unwrap());
        stdout.push('\n');
    }
    let mut out = child.wait_with_output().unwrap();
    out.stdout = stdout.into_bytes();
    parse(&out)
}

pub fn sh(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", cmd])
        .status()
        .is_ok_and(|s| s.success())
}

/// A loop device of `mib` MiB with further losetup options (`-b 4096`, `-P`), or None after
/// a skip (not root, or losetup failed).
pub fn loop_dev(mib: u64, args: &[&str]) -> Option<LoopDev> {
    if !testkit::need_root("losetup") {
        return None;
    }
    LoopDev::with_args(&std::env::temp_dir(), mib << 20, args)
        .map_err(|e| testkit::skip(&format!("losetup failed: {e}")))
        .ok()
}

/// A loop device of `mib` MiB with the file system `mkfs` made on it, or None after a skip
/// (not root, the mkfs program is missing, or it failed).
pub fn fs_loop(mib: u64, mkfs: &str) -> Option<LoopDev> {
    let tool = mkfs.split_whitespace().next().unwrap();
    if !testkit::need_root("losetup") || !testkit::need_tool(tool) {
        return None;
    }
    mount::loop_with_fs(&std::env::temp_dir(), mib << 20, mkfs)
        .map_err(|e| testkit::skip(&e))
        .ok()
}

/// `dev` mounted with `opts` on a fresh directory, or None after a skip.
pub fn mounted(dev: &str, opts: &str) -> Option<Mount> {
    Mount::new(dev, opts).map_err(|e| testkit::skip(&e)).ok()
}

/// Has the kernel read `dev`'s partition table again.
pub fn rescan(dev: &str) {
    sh(&format!("blockdev --rereadpt {dev} 2>/dev/null"));
}
