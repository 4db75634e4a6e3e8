//! Shared helpers for blkwrite's integration tests: running the binary, reading its records,
//! and loop devices and mounts that clean up after themselves even when a test fails.
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_blkwrite");

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
    let out = Command::new(BIN).args(args).output().unwrap();
    parse(&out)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}

pub fn sh(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", cmd])
        .status()
        .is_ok_and(|s| s.success())
}

/// A loop device over a scratch file; detached (after unmounting it) when dropped.
pub struct Loop {
    pub dev: String,
    pub backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    /// A loop device of `mib` MiB with `extra` losetup flags (`-b 4096`, `-P`), or None
    /// (after saying why) when not root or losetup fails.
    pub fn new(mib: u64, extra: &[&str]) -> Option<Loop> {
        if !is_root() {
            eprintln!("skipped: needs root for losetup");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join(format!("disk-{}.img", std::process::id()));
        let f = std::fs::File::create(&backing).unwrap();
        f.set_len(mib << 20).unwrap();
        drop(f);
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .args(extra)
            .arg(&backing)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "skipped: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop {
            dev,
            backing,
            _dir: dir,
        })
    }

    pub fn rescan(&self) {
        sh(&format!("blockdev --rereadpt {} 2>/dev/null", self.dev));
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "for m in $(awk '$1 ~ \"^{d}\" {{print $2}}' /proc/mounts); do umount -l \"$m\"; done",
                    d = self.dev
                ),
            ])
            .status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A mount of `dev` on a fresh directory; unmounted when dropped.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(dev: &str, opts: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-o", opts, dev])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mount {dev} failed");
            return None;
        }
        Some(Mount { dir })
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A loop device with file system `mkfs` made on it (None, after saying why, when missing).
pub fn loop_with_fs(mib: u64, mkfs: &str) -> Option<Loop> {
    let tool = mkfs.split_whitespace().next().unwrap();
    if !have(tool) {
        eprintln!("skipped: {tool} is not installed");
        return None;
    }
    let l = Loop::new(mib, &[])?;
    if !sh(&format!("{mkfs} {} >/dev/null 2>&1", l.dev)) {
        eprintln!("skipped: {mkfs} failed");
        return None;
    }
    Some(l)
}
