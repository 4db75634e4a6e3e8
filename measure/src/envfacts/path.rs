//! Where a path lives: the mount that holds it (the deepest mount point above it), its file
//! system and source, and the block stack beneath, as `begin` facts.

use super::Probe;
use super::block::Layer;
use super::mountinfo::{MountLine, parse_mountinfo};
use serde_json::{Map, Value, json};
use std::path::{Component, Path, PathBuf};

/// Where a path lives: its mount and the block stack beneath it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathFacts {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub device: String,
    pub stack: Vec<Layer>,
    /// The I/O scheduler of the first layer that has one (`[mq-deadline] none`).
    pub scheduler: Option<String>,
}

impl Probe {
    /// The mount holding `path` (absolute, as the probed system sees it) and the stack under it.
    pub fn path_facts(&self, path: &Path) -> Option<PathFacts> {
        let abs = if self.live() {
            resolve_existing(path)
        } else {
            path.to_path_buf()
        };
        let mountinfo = self.read("proc/self/mountinfo")?;
        let mut best: Option<(usize, MountLine)> = None;
        for line in mountinfo.lines() {
            let Some(m) = parse_mountinfo(line) else {
                continue;
            };
            let mp = Path::new(&m.mount_point);
            if abs.starts_with(mp) {
                let depth = mp.components().count();
                if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
                    best = Some((depth, m));
                }
            }
        }
        let (_, m) = best?;
        let stack = self.stack_for(&m);
        let scheduler = stack
            .iter()
            .find_map(|l| self.read(&format!("sys/class/block/{}/queue/scheduler", l.name)));
        Some(PathFacts {
            mount_point: m.mount_point,
            fs_type: m.fs_type,
            source: m.source,
            device: m.device,
            stack,
            scheduler,
        })
    }
}

impl PathFacts {
    /// The facts a disk tool's begin carries about its target's place: [`Self::to_info`]
    /// with the logical block size of the device beneath, whether any layer rotates, and the
    /// scheduler; and that logical block size. blkwrite, blkread and fsmeta report them alike.
    pub fn disk_info(place: Option<PathFacts>) -> (Map<String, Value>, Option<u64>) {
        let Some(f) = place else {
            return (Map::new(), None);
        };
        let lbs = f.stack.first().and_then(|l| l.logical_block_size);
        let rot = if f.stack.iter().any(|l| l.rotational == Some(true)) {
            Some(true)
        } else {
            f.stack.first().and_then(|l| l.rotational)
        };
        let mut m = f.to_info();
        m.insert("logical_block_size".into(), json!(lbs));
        m.insert("rotational".into(), json!(rot));
        m.insert("scheduler".into(), json!(f.scheduler));
        (m, lbs)
    }

    /// The facts as `info` entries for a `begin` record.
    pub fn to_info(&self) -> Map<String, Value> {
        let stack: Vec<Value> = self
            .stack
            .iter()
            .map(|l| {
                let mut o = Map::new();
                o.insert("name".into(), json!(l.name));
                o.insert("kind".into(), json!(l.kind));
                if let Some(d) = &l.detail {
                    o.insert("detail".into(), json!(d));
                }
                if let Some(b) = l.logical_block_size {
                    o.insert("logical_block_size".into(), json!(b));
                }
                if let Some(r) = l.rotational {
                    o.insert("rotational".into(), json!(r));
                }
                if let Some(d) = l.direct_io {
                    o.insert("direct_io".into(), json!(d));
                }
                if let Some(d) = &l.driver {
                    o.insert("driver".into(), json!(d));
                }
                Value::Object(o)
            })
            .collect();
        let mut m = Map::new();
        m.insert("fs_type".into(), json!(self.fs_type));
        m.insert("fs_source".into(), json!(self.source));
        m.insert("mount_point".into(), json!(self.mount_point));
        m.insert("block_stack".into(), Value::Array(stack));
        m
    }
}

/// The absolute path with symlinks resolved as far as it exists (a target file that does not
/// exist yet is judged by its directory).
fn resolve_existing(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut tail = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            let mut out = real;
            for t in tail.iter().rev() {
                out.push(t);
            }
            return out;
        }
        match (cur.parent(), cur.components().next_back()) {
            (Some(parent), Some(Component::Normal(last))) => {
                tail.push(last.to_os_string());
                cur = parent;
            }
            _ => return abs,
        }
    }
}
