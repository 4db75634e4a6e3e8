//! The cgroup limits this process runs under, v1 and v2 alike: the CPU quota and period,
//! the cpuset, the memory limit and the block I/O throttles, each the tightest along the
//! path from the process's cgroup up to its hierarchy's root (a limit on a parent binds
//! the children). A container or a systemd slice shows here; a bare host shows `max`.

use super::Probe;
use super::mountinfo::{MountLine, parse_mountinfo};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A v1 memory limit at or above this is "no limit" (the kernel writes the largest
/// page-aligned i64, 9223372036854771712).
const V1_UNLIMITED: u64 = 1 << 62;

/// Where one controller's files are for this process: the directories from its own cgroup
/// up to the mount point, nearest first.
struct Hierarchy {
    version: u8,
    dirs: Vec<String>,
}

impl Probe {
    /// The cgroup facts for begin: `cgroup` (v1, v2, hybrid or none), `cpu_quota`
    /// (`QUOTA/PERIOD` in microseconds, or `max`), `cpuset`, `memory_limit_bytes` (or
    /// `max`) and `io_throttle` (`MAJ:MIN wbps=N ...` per device, or `none`).
    pub fn cgroup_facts(&self) -> Map<String, Value> {
        let mounts: Vec<MountLine> = self
            .read("proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter_map(parse_mountinfo)
            .filter(|m| m.fs_type == "cgroup" || m.fs_type == "cgroup2")
            .collect();
        let own = self.read("proc/self/cgroup").unwrap_or_default();
        let find = |controller: &str| hierarchy(&mounts, &own, controller, |rel| self.exists(rel));
        let mut m = Map::new();
        let v1 = mounts.iter().any(|m| m.fs_type == "cgroup");
        let v2 = mounts.iter().any(|m| m.fs_type == "cgroup2");
        let version = match (v1, v2) {
            (true, true) => "hybrid",
            (true, false) => "v1",
            (false, true) => "v2",
            (false, false) => "none",
        };
        m.insert("cgroup".into(), json!(version));
        if version == "none" {
            return m;
        }
        let cpu = find("cpu").and_then(|h| self.cpu_quota(&h));
        m.insert(
            "cpu_quota".into(),
            json!(cpu.unwrap_or_else(|| "max".into())),
        );
        let cpuset = find("cpuset").and_then(|h| self.cpuset(&h));
        m.insert("cpuset".into(), json!(cpuset));
        let mem = find("memory").and_then(|h| self.memory_limit(&h));
        m.insert(
            "memory_limit_bytes".into(),
            mem.map_or_else(|| json!("max"), |b| json!(b)),
        );
        let io = find(if v1 { "blkio" } else { "io" }).map(|h| self.io_throttle(&h));
        let io = io.filter(|s| !s.is_empty());
        m.insert(
            "io_throttle".into(),
            json!(io.unwrap_or_else(|| "none".into())),
        );
        m
    }

    fn num_at(&self, dir: &str, file: &str) -> Option<u64> {
        self.read(&format!("{dir}/{file}"))?.parse().ok()
    }

    /// The tightest CPU quota as `QUOTA/PERIOD`; None when no level has one.
    fn cpu_quota(&self, h: &Hierarchy) -> Option<String> {
        let mut best: Option<(u64, u64)> = None;
        for dir in &h.dirs {
            let q = if h.version == 2 {
                // The root cgroup has no cpu.max.
                let Some(text) = self.read(&format!("{dir}/cpu.max")) else {
                    continue;
                };
                let mut it = text.split_whitespace();
                let quota = it.next()?.parse::<u64>().ok();
                let period = it.next().and_then(|p| p.parse::<u64>().ok());
                quota.zip(period)
            } else {
                // -1 is "no quota" and does not parse as a u64.
                let quota = self.num_at(dir, "cpu.cfs_quota_us");
                quota.zip(self.num_at(dir, "cpu.cfs_period_us"))
            };
            if let Some((q, p)) = q.filter(|&(_, p)| p > 0) {
                let tighter =
                    best.is_none_or(|(bq, bp)| (q as f64 / p as f64) < bq as f64 / bp as f64);
                if tighter {
                    best = Some((q, p));
                }
            }
        }
        best.map(|(q, p)| format!("{q}/{p}"))
    }

    /// The CPUs the process's cpuset allows (the kernel's effective list, which already
    /// folds in the parents').
    fn cpuset(&self, h: &Hierarchy) -> Option<String> {
        let dir = h.dirs.first()?;
        let files: &[&str] = if h.version == 2 {
            &["cpuset.cpus.effective"]
        } else {
            &["cpuset.effective_cpus", "cpuset.cpus"]
        };
        files
            .iter()
            .find_map(|f| self.read(&format!("{dir}/{f}")).filter(|s| !s.is_empty()))
    }

    /// The tightest memory limit in bytes; None when no level has one.
    fn memory_limit(&self, h: &Hierarchy) -> Option<u64> {
        let file = if h.version == 2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        h.dirs
            .iter()
            .filter_map(|dir| self.num_at(dir, file))
            .filter(|&b| b < V1_UNLIMITED)
            .min()
    }

    /// Every device's tightest throttles, `MAJ:MIN rbps=N wbps=N riops=N wiops=N` (only the
    /// limited ones), devices joined by `; `; empty when nothing is throttled.
    fn io_throttle(&self, h: &Hierarchy) -> String {
        let mut limits: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
        let mut add = |dev: &str, field: &'static str, v: u64| {
            let slot = limits
                .entry(dev.to_string())
                .or_default()
                .entry(field)
                .or_insert(v);
            *slot = (*slot).min(v);
        };
        for dir in &h.dirs {
            if h.version == 2 {
                for line in self
                    .read(&format!("{dir}/io.max"))
                    .unwrap_or_default()
                    .lines()
                {
                    let mut it = line.split_whitespace();
                    let Some(dev) = it.next() else { continue };
                    for kv in it {
                        let Some((k, v)) = kv.split_once('=') else {
                            continue;
                        };
                        let field = match k {
                            "rbps" => "rbps",
                            "wbps" => "wbps",
                            "riops" => "riops",
                            "wiops" => "wiops",
                            _ => continue,
                        };
                        if let Ok(v) = v.parse() {
                            add(dev, field, v);
                        }
                    }
                }
                continue;
            }
            for (file, field) in [
                ("read_bps_device", "rbps"),
                ("write_bps_device", "wbps"),
                ("read_iops_device", "riops"),
                ("write_iops_device", "wiops"),
            ] {
                let text = self.read(&format!("{dir}/blkio.throttle.{file}"));
                for line in text.unwrap_or_default().lines() {
                    if let Some((dev, v)) = line.split_once(' ')
                        && let Ok(v) = v.trim().parse()
                    {
                        add(dev, field, v);
                    }
                }
            }
        }
        let order = ["rbps", "wbps", "riops", "wiops"];
        let devices: Vec<String> = limits
            .iter()
            .map(|(dev, f)| {
                let parts: Vec<String> = order
                    .iter()
                    .filter_map(|k| f.get(k).map(|v| format!("{k}={v}")))
                    .collect();
                format!("{dev} {}", parts.join(" "))
            })
            .collect();
        devices.join("; ")
    }
}

/// The hierarchy that holds `controller` for this process (a v1 mount naming it, else the
/// v2 mount), with its directories from the process's cgroup up to the mount point.
/// `exists` says whether a path (relative to the probed root) exists.
fn hierarchy(
    mounts: &[MountLine],
    own: &str,
    controller: &str,
    exists: impl Fn(&str) -> bool,
) -> Option<Hierarchy> {
    let v1 = mounts
        .iter()
        .find(|m| m.fs_type == "cgroup" && m.options.split(',').any(|o| o == controller));
    let (mount, version) = match v1 {
        Some(m) => (m, 1),
        None => (mounts.iter().find(|m| m.fs_type == "cgroup2")?, 2),
    };
    // /proc/self/cgroup: `ID:CONTROLLERS:PATH`, v2's line `0::PATH`.
    let path = own.lines().find_map(|l| {
        let mut it = l.splitn(3, ':');
        let (_, ctrls, path) = (it.next()?, it.next()?, it.next()?);
        let ours = if version == 2 {
            ctrls.is_empty()
        } else {
            ctrls.split(',').any(|c| c == controller)
        };
        ours.then(|| path.to_string())
    })?;
    // The path is relative to the cgroup namespace's root; a mount of a cgroup below the
    // hierarchy's root shows that cgroup as its own root.
    let rel = path
        .strip_prefix(mount.root.trim_end_matches('/'))
        .unwrap_or(&path)
        .trim_matches('/');
    let top = mount.mount_point.trim_end_matches('/').to_string();
    let mut dirs = Vec::new();
    let mut parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    loop {
        let dir = if parts.is_empty() {
            top.clone()
        } else {
            format!("{top}/{}", parts.join("/"))
        };
        if exists(&dir) {
            dirs.push(dir);
        }
        if parts.pop().is_none() {
            break;
        }
    }
    (!dirs.is_empty()).then_some(Hierarchy { version, dirs })
}
