//! Environment facts for `begin` records, read from /proc and /sys (or a fixture copy of them).
//!
//! Virtualization is detected the way systemd-detect-virt does it, from files alone: a
//! container first (`container=` in PID 1's environment, /run/systemd/container,
//! /run/.containerenv, /.dockerenv, OpenVZ's /proc/vz, WSL's kernel release), then a virtual
//! machine (Xen's /proc/xen and /sys/hypervisor, the DMI vendor strings, the clock source, the
//! CPU's `hypervisor` flag). Then what a container or VM changes: the cgroup limits, the
//! namespaces of one's own, the clocksource and the vulnerability mitigations. For a path: the mount that holds it (from mountinfo), its file
//! system and source, and the block stack beneath it (dm/LVM, dm-crypt, md, loop, partition,
//! disk, nbd, iSCSI), each with its logical block size and whether it rotates.

mod block;
mod cpu;
mod limits;
mod load;
mod mountinfo;
mod path;
mod system;
mod virt;

pub use block::Layer;
pub use load::LoadNow;
pub use path::PathFacts;

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The `info` keys of begin records that describe the environment (the machine, its limits,
/// and where a disk tool's target lives), as opposed to a tool's parameters: collate shows
/// those that differ between a matrix's columns.
pub const FACT_KEYS: &[&str] = &[
    "hostname",
    "kernel",
    "cpu_model",
    "cpu_count",
    "memory_bytes",
    "virtualization",
    "container",
    "vm",
    "hypervisor",
    "clocksource",
    "namespaces",
    "cgroup",
    "cpu_quota",
    "cpuset",
    "memory_limit_bytes",
    "io_throttle",
    "mitigations",
    "governor",
    "transparent_hugepage",
    "fs_type",
    "fs_source",
    "block_stack",
    "logical_block_size",
    "rotational",
    "scheduler",
    "given",
];

/// Reads facts from a root directory: `/` for the running system, or a fixture tree.
#[derive(Clone, Debug)]
pub struct Probe {
    root: PathBuf,
    /// /proc/cpuinfo whole, read once and only if needed (see `cpuinfo_head`).
    cpuinfo: std::sync::OnceLock<String>,
    /// The first CPU's block of /proc/cpuinfo, read once.
    cpuinfo_head: std::sync::OnceLock<String>,
}

/// The host name of the running system (uname's, asked once per process).
pub fn hostname() -> String {
    crate::sysfacts::uname()
        .map(|(host, _)| host)
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| Probe::system().read_hostname())
}

impl Probe {
    pub fn system() -> Self {
        Probe::at("/")
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        Probe {
            root: root.into(),
            cpuinfo: std::sync::OnceLock::new(),
            cpuinfo_head: std::sync::OnceLock::new(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// The text of the file at `rel` under the probed root (`sys/class/block/sda/dev`),
    /// trimmed; None when it cannot be read.
    pub fn read(&self, rel: &str) -> Option<String> {
        self.read_up_to(rel, None)
    }

    /// The file's text, or with `stop` only up to the read that brought `stop` in.
    fn read_up_to(&self, rel: &str, stop: Option<&[u8]>) -> Option<String> {
        use std::io::Read;
        // Files under /proc say their size is 0, so std's read to the end would ask for the
        // size, then start with a tiny buffer: 4 KiB reads into the vector's own room instead
        // (through `take`, which has no size to ask for).
        let mut f = std::fs::File::open(self.path(rel)).ok()?;
        let mut bytes = Vec::with_capacity(4096);
        loop {
            let seen = bytes.len().saturating_sub(1);
            let n = (&mut f).take(4096).read_to_end(&mut bytes).ok()?;
            let found = |s: &[u8]| {
                // First bytes first: a slice comparison per window would call memcmp each time.
                (bytes[seen..].windows(s.len())).any(|w| w[0] == s[0] && w == s)
            };
            // Fewer than asked for: take's read to the end met the end of the file.
            if n < 4096 || stop.is_some_and(found) {
                break;
            }
        }
        String::from_utf8(bytes).ok().map(|s| s.trim().to_string())
    }

    fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// The names in the directory at `rel` under the probed root, sorted; none when it
    /// cannot be read.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Whether this probes the running system (not a fixture tree), so that facts may come
    /// from system calls (`sysfacts`) rather than their files.
    fn live(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn hostname(&self) -> String {
        if self.live() {
            return hostname();
        }
        self.read_hostname()
    }

    fn read_hostname(&self) -> String {
        self.read("proc/sys/kernel/hostname")
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string())
    }

    pub fn kernel(&self) -> Option<String> {
        if self.live()
            && let Some((_, release)) = crate::sysfacts::uname()
        {
            return Some(release);
        }
        self.read("proc/sys/kernel/osrelease")
    }

    /// The machine facts for a `begin` record's `info`.
    pub fn machine(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("hostname".into(), json!(self.hostname()));
        m.insert("kernel".into(), json!(self.kernel()));
        m.insert("cpu_model".into(), json!(self.cpu_model()));
        m.insert("cpu_count".into(), json!(self.cpu_count()));
        m.insert("cpu_usable_count".into(), json!(self.cpu_usable_count()));
        m.insert("memory_bytes".into(), json!(self.memory_bytes()));
        // Each probed once for the three facts.
        let container = self.container();
        let vm = self.vm();
        m.insert(
            "virtualization".into(),
            json!(virt::virtualization_of(container.clone(), vm.clone())),
        );
        m.insert("container".into(), json!(container));
        m.insert("vm".into(), json!(vm.unwrap_or_else(|| "none".into())));
        m.insert("hypervisor".into(), json!(self.hypervisor_flag()));
        m.insert("clocksource".into(), json!(self.clocksource()));
        m.insert("namespaces".into(), json!(self.namespaces()));
        m.extend(self.cgroup_facts());
        m.insert("mitigations".into(), Value::Object(self.mitigations()));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_answers_something() {
        let p = Probe::system();
        assert!(!p.hostname().is_empty());
        assert!(p.cpu_count() >= 1);
        let facts = p.path_facts(Path::new("/proc/nonexistent/file"));
        assert!(facts.is_some());
    }
}
