//! /proc/self/mountinfo: its lines parsed (device number, root, mount point, file system,
//! source, super options), with the octal escapes of its paths undone.

use super::Probe;

/// One line of mountinfo, the fields the facts need.
#[derive(Debug)]
pub(super) struct MountLine {
    pub device: String,
    /// The directory of the file system that is mounted here (`/` for its root; a cgroup
    /// mount inside a container shows the container's cgroup).
    pub root: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// The super block's options (for a cgroup v1 mount, its controllers: `rw,cpu,cpuacct`).
    pub options: String,
}

impl Probe {
    /// Every mount's device number (`8:1`) and mount point, from /proc/self/mountinfo.
    pub fn mounts(&self) -> Vec<(String, String)> {
        self.read("proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter_map(parse_mountinfo)
            .map(|m| (m.device, m.mount_point))
            .collect()
    }
}

/// Unescapes mountinfo's octal escapes (`\040` is a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One mountinfo line; None when it is not one.
pub(super) fn parse_mountinfo(line: &str) -> Option<MountLine> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    Some(MountLine {
        device: l.get(2)?.to_string(),
        root: unescape(l.get(3)?),
        mount_point: unescape(l.get(4)?),
        fs_type: r.first()?.to_string(),
        source: unescape(r.get(1)?),
        options: r.get(2).unwrap_or(&"").to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines() {
        let m = parse_mountinfo(
            "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
        )
        .unwrap();
        assert_eq!(m.device, "98:0");
        assert_eq!(m.mount_point, "/mnt/with space");
        assert_eq!(m.fs_type, "ext3");
        assert_eq!(m.source, "/dev/root");
        assert_eq!(m.root, "/mnt1");
        assert_eq!(m.options, "rw,errors=continue");
        assert!(parse_mountinfo("garbage").is_none());
    }
}
