//! Environment facts for `begin` records, read from /proc and /sys (or a fixture copy of them).
//!
//! Virtualization is detected the way systemd-detect-virt does it, from files alone: a
//! container first (`container=` in PID 1's environment, /run/systemd/container,
//! /run/.containerenv, /.dockerenv, OpenVZ's /proc/vz, WSL's kernel release), then a virtual
//! machine (Xen's /proc/xen and /sys/hypervisor, the DMI vendor strings, the clock source, the
//! CPU's `hypervisor` flag). For a path: the mount that holds it (from mountinfo), its file
//! system and source, and the block stack beneath it (dm/LVM, dm-crypt, md, loop, partition,
//! disk, nbd, iSCSI), each with its logical block size and whether it rotates.

use serde_json::{Map, Value, json};
use std::path::{Component, Path, PathBuf};

/// Reads facts from a root directory: `/` for the running system, or a fixture tree.
#[derive(Clone, Debug)]
pub struct Probe {
    root: PathBuf,
    /// /proc/cpuinfo whole, read once and only if needed (see `cpuinfo_head`).
    cpuinfo: std::sync::OnceLock<String>,
    /// The first CPU's block of /proc/cpuinfo, read once.
    cpuinfo_head: std::sync::OnceLock<String>,
}

/// One layer of the block stack beneath a mount.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Kernel device name (`dm-0`, `sda2`, `md0`, `loop3`), or the NFS/CIFS source.
    pub name: String,
    /// `lvm`, `crypt`, `dm`, `md`, `loop`, `partition`, `disk`, `nbd`, `iscsi`, `zram`, `nfs`...
    pub kind: String,
    /// The volume name, RAID level, backing file, or server path, when there is one.
    pub detail: Option<String>,
    pub logical_block_size: Option<u64>,
    pub rotational: Option<bool>,
}

/// Where a path lives: its mount and the block stack beneath it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathFacts {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub device: String,
    pub stack: Vec<Layer>,
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

    /// Whether this probes the running system (not a fixture tree), so that facts may come
    /// from system calls (`sysfacts`) rather than their files.
    fn live(&self) -> bool {
        self.root == Path::new("/")
    }

    fn cpuinfo(&self) -> &str {
        self.cpuinfo
            .get_or_init(|| self.read("proc/cpuinfo").unwrap_or_default())
    }

    /// The start of /proc/cpuinfo up to the end of the first CPU's block, where x86 and
    /// most others give the model and the flags: the kernel writes each CPU's block afresh
    /// (reading its clock frequency), so the whole file is read only when this lacks a fact.
    fn cpuinfo_head(&self) -> &str {
        self.cpuinfo_head.get_or_init(|| {
            self.read_up_to("proc/cpuinfo", Some(b"\n\n"))
                .unwrap_or_default()
        })
    }

    /// The CPU model name (`model name` on x86, `Model`/`Hardware` or the CPU part elsewhere).
    pub fn cpu_model(&self) -> Option<String> {
        if self.live()
            && let Some(name) = crate::sysfacts::cpu_model()
        {
            return Some(name);
        }
        // Some ARM boards name the model once, at the end of the file.
        model_in(self.cpuinfo_head()).or_else(|| model_in(self.cpuinfo()))
    }

    /// Logical CPUs online (/sys/devices/system/cpu/online, else those /proc/cpuinfo lists).
    pub fn cpu_count(&self) -> usize {
        if let Some(n) = self
            .read("sys/devices/system/cpu/online")
            .and_then(|list| count_cpu_list(&list))
        {
            return n;
        }
        let n = self
            .cpuinfo()
            .lines()
            .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
            .count();
        if n > 0 {
            n
        } else {
            std::thread::available_parallelism().map_or(1, usize::from)
        }
    }

    pub fn memory_bytes(&self) -> Option<u64> {
        if self.live()
            && let Some(b) = crate::sysfacts::memory_bytes()
        {
            return Some(b);
        }
        let info = self.read("proc/meminfo")?;
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    }

    /// The CPU's `hypervisor` flag (CPUID on the live system, else the first CPU's block
    /// of /proc/cpuinfo: every block lists the flags).
    fn hypervisor_flag(&self) -> bool {
        if self.live()
            && let Some(hypervisor) = crate::sysfacts::hypervisor()
        {
            return hypervisor;
        }
        self.cpuinfo_head().lines().any(|l| {
            l.split_once(':').is_some_and(|(k, v)| {
                matches!(k.trim(), "flags" | "Features")
                    && v.split_whitespace().any(|f| f == "hypervisor")
            })
        })
    }

    /// The container technology, if this runs in one.
    pub fn container(&self) -> Option<String> {
        if let Some(env) = std::fs::read(self.path("proc/1/environ")).ok()
            && let Some(c) = env
                .split(|&b| b == 0)
                .find_map(|kv| kv.strip_prefix(b"container="))
            && !c.is_empty()
        {
            return Some(String::from_utf8_lossy(c).into_owned());
        }
        if let Some(c) = self.read("run/systemd/container").filter(|c| !c.is_empty()) {
            return Some(c);
        }
        if self.exists("run/.containerenv") {
            return Some("podman".into());
        }
        if self.exists(".dockerenv") {
            return Some("docker".into());
        }
        if self.exists("proc/vz") && !self.exists("proc/bc") {
            return Some("openvz".into());
        }
        let rel = self.kernel().unwrap_or_default().to_lowercase();
        if rel.contains("microsoft") || rel.contains("wsl") {
            return Some("wsl".into());
        }
        None
    }

    /// The hypervisor beneath this system, if any: kvm, qemu, xen-pv, xen-hvm, xen-pvh,
    /// xen-dom0, vmware, hyperv, oracle, amazon, google, parallels, bochs or vm-other.
    pub fn vm(&self) -> Option<String> {
        if self
            .read("proc/xen/capabilities")
            .is_some_and(|c| c.contains("control_d"))
        {
            return Some("xen-dom0".into());
        }
        if self.read("sys/hypervisor/type").as_deref() == Some("xen") || self.exists("proc/xen") {
            let guest = self.read("sys/hypervisor/guest_type").unwrap_or_default();
            return Some(
                match guest.as_str() {
                    "PV" => "xen-pv",
                    "PVH" => "xen-pvh",
                    "HVM" => "xen-hvm",
                    _ if self.hypervisor_flag() => "xen-hvm",
                    _ => "xen-pv",
                }
                .into(),
            );
        }
        let clock = self
            .read("sys/devices/system/clocksource/clocksource0/available_clocksource")
            .unwrap_or_default();
        if clock.contains("kvm-clock") {
            // KVM whatever the DMI strings say, so they need not be read.
            return Some("kvm".into());
        }
        let dmi: Vec<String> = ["sys_vendor", "product_name", "bios_vendor", "board_vendor"]
            .iter()
            .filter_map(|f| self.read(&format!("sys/class/dmi/id/{f}")))
            .collect();
        let dmi_has = |s: &str| dmi.iter().any(|d| d.contains(s));
        let found = if dmi_has("KVM") {
            "kvm"
        } else if dmi_has("QEMU") {
            "qemu"
        } else if dmi_has("VMware") || dmi_has("VMW") {
            "vmware"
        } else if dmi_has("Microsoft Corporation") || clock.contains("hyperv") {
            "hyperv"
        } else if dmi_has("innotek GmbH") || dmi_has("VirtualBox") || dmi_has("Oracle Corporation")
        {
            "oracle"
        } else if dmi_has("Xen") {
            "xen-hvm"
        } else if dmi_has("Amazon EC2") {
            "amazon"
        } else if dmi_has("Google") {
            "google"
        } else if dmi_has("Parallels") {
            "parallels"
        } else if dmi_has("Bochs") {
            "bochs"
        } else if self.hypervisor_flag() {
            "vm-other"
        } else {
            return None;
        };
        Some(found.into())
    }

    /// What this system runs on: the container if in one, else the VM, else `none`.
    pub fn virtualization(&self) -> String {
        virtualization_of(self.container(), self.vm())
    }

    /// The machine facts for a `begin` record's `info`.
    pub fn machine(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("hostname".into(), json!(self.hostname()));
        m.insert("kernel".into(), json!(self.kernel()));
        m.insert("cpu_model".into(), json!(self.cpu_model()));
        m.insert("cpu_count".into(), json!(self.cpu_count()));
        m.insert("memory_bytes".into(), json!(self.memory_bytes()));
        // Each probed once for the three facts.
        let container = self.container();
        let vm = self.vm();
        m.insert(
            "virtualization".into(),
            json!(virtualization_of(container.clone(), vm.clone())),
        );
        m.insert("container".into(), json!(container));
        m.insert("vm".into(), json!(vm.unwrap_or_else(|| "none".into())));
        m
    }

    /// Every mount's device number (`8:1`) and mount point, from /proc/self/mountinfo.
    pub fn mounts(&self) -> Vec<(String, String)> {
        self.read("proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter_map(parse_mountinfo)
            .map(|m| (m.device, m.mount_point))
            .collect()
    }

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
        Some(PathFacts {
            mount_point: m.mount_point,
            fs_type: m.fs_type,
            source: m.source,
            device: m.device,
            stack,
        })
    }

    fn stack_for(&self, m: &MountLine) -> Vec<Layer> {
        let net = ["nfs", "nfs4", "cifs", "smb3", "9p", "ceph", "glusterfs"];
        if net.contains(&m.fs_type.as_str()) || m.fs_type.starts_with("fuse") {
            let kind = if m.fs_type.starts_with("nfs") {
                "nfs".to_string()
            } else {
                m.fs_type.clone()
            };
            return vec![Layer {
                name: m.source.clone(),
                kind,
                detail: None,
                logical_block_size: None,
                rotational: None,
            }];
        }
        let Some(uevent) = self.read(&format!("sys/dev/block/{}/uevent", m.device)) else {
            return Vec::new();
        };
        let Some(name) = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME=")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        self.walk(name, &mut out, 0);
        out
    }

    fn walk(&self, name: &str, out: &mut Vec<Layer>, depth: usize) {
        if depth > 16 {
            return;
        }
        let (layer, lower) = self.block_layer(name);
        out.push(layer);
        for l in lower {
            self.walk(&l, out, depth + 1);
        }
    }

    /// One block device (`dm-0`, `sda2`, `md0`, `loop3`) as a layer, and the devices directly
    /// beneath it: a partition's disk, a device-mapper or md device's slaves.
    pub fn block_layer(&self, name: &str) -> (Layer, Vec<String>) {
        let dir = format!("sys/class/block/{name}");
        let num = |rel: &str| {
            self.read(&format!("{dir}/{rel}"))
                .and_then(|s| s.parse::<u64>().ok())
        };
        let mut lower: Vec<String> = Vec::new();
        let (kind, detail) = if let Some(dm) = self.read(&format!("{dir}/dm/name")) {
            let uuid = self.read(&format!("{dir}/dm/uuid")).unwrap_or_default();
            let kind = if uuid.starts_with("LVM-") {
                "lvm"
            } else if uuid.starts_with("CRYPT-") {
                "crypt"
            } else if uuid.starts_with("mpath-") {
                "multipath"
            } else {
                "dm"
            };
            lower = self.list(&format!("{dir}/slaves"));
            (kind.to_string(), Some(dm))
        } else if let Some(level) = self.read(&format!("{dir}/md/level")) {
            lower = self.list(&format!("{dir}/slaves"));
            ("md".into(), Some(level))
        } else if let Some(back) = self.read(&format!("{dir}/loop/backing_file")) {
            ("loop".into(), Some(back))
        } else if self.exists(&format!("{dir}/partition")) {
            if let Some(parent) = self.partition_parent(name) {
                lower.push(parent);
            }
            ("partition".into(), None)
        } else {
            let real = std::fs::canonicalize(self.path(&dir))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let kind = if real.contains("/session") {
                "iscsi"
            } else if name.starts_with("nbd") {
                "nbd"
            } else if name.starts_with("zram") {
                "zram"
            } else if name.starts_with("rbd") {
                "rbd"
            } else {
                "disk"
            };
            (kind.into(), None)
        };
        let layer = Layer {
            name: name.to_string(),
            kind,
            detail,
            logical_block_size: num("queue/logical_block_size"),
            rotational: num("queue/rotational").map(|r| r == 1),
        };
        (layer, lower)
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

    /// The whole disk a partition belongs to: the parent directory of its sysfs node, or,
    /// in a tree without symlinks, the name without its partition number.
    fn partition_parent(&self, name: &str) -> Option<String> {
        if let Ok(real) = std::fs::canonicalize(self.path(&format!("sys/class/block/{name}")))
            && let Some(parent) = real.parent().and_then(Path::file_name)
            && parent != "block"
        {
            return Some(parent.to_string_lossy().into_owned());
        }
        let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let trimmed = if trimmed.len() < name.len()
            && trimmed.ends_with('p')
            && trimmed[..trimmed.len() - 1].ends_with(|c: char| c.is_ascii_digit())
        {
            &trimmed[..trimmed.len() - 1]
        } else {
            trimmed
        };
        (trimmed != name && !trimmed.is_empty()).then(|| trimmed.to_string())
    }
}

impl PathFacts {
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

#[derive(Debug)]
struct MountLine {
    device: String,
    mount_point: String,
    fs_type: String,
    source: String,
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

fn parse_mountinfo(line: &str) -> Option<MountLine> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    Some(MountLine {
        device: l.get(2)?.to_string(),
        mount_point: unescape(l.get(4)?),
        fs_type: r.first()?.to_string(),
        source: unescape(r.get(1)?),
    })
}

/// What runs this: the container if any, else the VM, else `none`.
fn virtualization_of(container: Option<String>, vm: Option<String>) -> String {
    container.or(vm).unwrap_or_else(|| "none".into())
}

/// The CPU model in /proc/cpuinfo text (`model name` on x86, `Model`/`Hardware` or the CPU
/// part elsewhere).
fn model_in(info: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware", "cpu model", "cpu"] {
        for line in info.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == key
                && !v.trim().is_empty()
            {
                return Some(v.trim().to_string());
            }
        }
    }
    None
}

/// The number of CPUs in a kernel CPU list such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut n = 0usize;
    for part in list.trim().split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count_their_cpus() {
        assert_eq!(count_cpu_list("0\n"), Some(1));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("0-63"), Some(64));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn the_live_cpu_count_agrees_with_cpuinfo() {
        let p = Probe::system();
        let listed = p
            .cpuinfo()
            .lines()
            .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
            .count();
        if listed > 0 {
            assert_eq!(p.cpu_count(), listed);
        }
        // The first block names the same model as the whole file.
        assert_eq!(model_in(p.cpuinfo_head()), model_in(p.cpuinfo()));
    }

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
        assert!(parse_mountinfo("garbage").is_none());
    }

    #[test]
    fn this_machine_answers_something() {
        let p = Probe::system();
        assert!(!p.hostname().is_empty());
        assert!(p.cpu_count() >= 1);
        let facts = p.path_facts(Path::new("/proc/nonexistent/file"));
        assert!(facts.is_some());
    }
}
