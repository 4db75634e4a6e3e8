//! Shared helpers for fsmeta's integration tests: running the binary, reading its records
//! strictly, listing a directory tree to compare before and after, and the loop-device file
//! systems (skipped, with the reason, where the machine cannot give them).
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testkit::LoopDev;
use testkit::mount::{self, Mount};

/// The release binary under test.
pub fn bin() -> &'static str {
    testkit::tool("fsmeta")
}

/// What one run printed: exit code, records (each checked by the strict reader), stderr.
pub struct Run {
    pub code: i32,
    pub records: Vec<Value>,
    pub stderr: String,
}

impl Run {
    pub fn of(&self, kind: &str) -> Vec<Value> {
        self.records
            .iter()
            .filter(|v| v["type"] == kind)
            .cloned()
            .collect()
    }
    pub fn summary(&self) -> Value {
        let s = self.of("summary");
        assert_eq!(
            s.len(),
            1,
            "one summary: {:?} {}",
            self.records,
            self.stderr
        );
        s[0].clone()
    }
    pub fn value(&self, key: &str) -> f64 {
        self.summary()["values"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("no {key} in {}", self.summary()))
    }
}

/// The records of `text`, each line checked by measure's strict reader.
pub fn records(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            measure::parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e:?}"));
            serde_json::from_str::<Value>(l).unwrap()
        })
        .collect()
}

pub fn parse(out: &Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        records: records(&String::from_utf8_lossy(&out.stdout)),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn fsmeta(args: &[&str]) -> Run {
    parse(&Command::new(bin()).args(args).output().unwrap())
}

/// Every entry under `dir` (not `dir` itself), sorted: path, type, mode, size, inode, mtime.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = std::fs::symlink_metadata(e.path()).unwrap();
        let rel = e.path().strip_prefix(root).unwrap().display().to_string();
        out.push(format!(
            "{rel} mode={:o} size={} ino={} mtime={}.{}",
            m.mode(),
            m.len(),
            m.ino(),
            m.mtime(),
            m.mtime_nsec()
        ));
        if m.is_dir() {
            walk(root, &e.path(), out);
        }
    }
}

/// A directory removed on drop, even when the test fails.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new directory on the file system of cargo's target directory (a real disk here),
    /// with a file, a subdirectory and a symlink in it, so that "DIR as found" has content.
    pub fn with_content(tag: &str) -> TempDir {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let d = base.join(format!("{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("keep.txt"), b"not fsmeta's").unwrap();
        std::fs::write(d.join("sub/f0"), b"a name fsmeta uses in its own directory").unwrap();
        std::os::unix::fs::symlink("keep.txt", d.join("link")).unwrap();
        TempDir(d)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A loop device of `mib` MiB with the file system `mkfs` made on it, mounted with `opts`,
/// or None after a skip (not root, the mkfs program is missing, or it failed). The mount
/// comes first, so that it is unmounted before the device is detached.
pub fn fs_mounted(mib: u64, mkfs: &str, opts: &str) -> Option<(Mount, LoopDev)> {
    let tool = mkfs.split_whitespace().next().unwrap();
    if !testkit::need_root("losetup and mount") || !testkit::need_tool(tool) {
        return None;
    }
    let dev = mount::loop_with_fs(&std::env::temp_dir(), mib << 20, mkfs)
        .map_err(|e| testkit::skip(&e))
        .ok()?;
    let m = Mount::new(&dev.dev, opts)
        .map_err(|e| testkit::skip(&e))
        .ok()?;
    Some((m, dev))
}
