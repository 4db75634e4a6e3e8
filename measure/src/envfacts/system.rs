//! Kernel facts that change what a measurement costs: the clocksource (a clock read in a VM
//! costs what its clocksource costs), the CPU vulnerability mitigations in force, and the
//! namespaces this process does not share with the host.

use super::Probe;
use serde_json::{Map, Value, json};

/// The namespace kinds whose initial namespace has a fixed inode number
/// (include/linux/proc_ns.h): another number there means a namespace of one's own.
const INITIAL_NAMESPACES: [(&str, u64); 6] = [
    ("ipc", 0xEFFF_FFFF),
    ("uts", 0xEFFF_FFFE),
    ("user", 0xEFFF_FFFD),
    ("pid", 0xEFFF_FFFC),
    ("cgroup", 0xEFFF_FFFB),
    ("time", 0xEFFF_FFFA),
];

impl Probe {
    /// The kernel's current clocksource (`tsc`, `kvm-clock`, `hpet`, `xen`,
    /// `arch_sys_counter`).
    pub fn clocksource(&self) -> Option<String> {
        self.read("sys/devices/system/clocksource/clocksource0/current_clocksource")
            .filter(|s| !s.is_empty())
    }

    /// Each CPU vulnerability the kernel lists, with its state (`Not affected`,
    /// `Mitigation: ...`, `Vulnerable`), from /sys/devices/system/cpu/vulnerabilities.
    pub fn mitigations(&self) -> Map<String, Value> {
        let dir = "sys/devices/system/cpu/vulnerabilities";
        self.list(dir)
            .into_iter()
            .filter_map(|name| {
                let state = self.read(&format!("{dir}/{name}"))?;
                Some((name, json!(state)))
            })
            .collect()
    }

    /// The namespaces of this process that are not the kernel's initial ones (`pid,uts`),
    /// or `none`; network and mount namespaces have no fixed number and are not told.
    pub fn namespaces(&self) -> String {
        let own: Vec<&str> = INITIAL_NAMESPACES
            .iter()
            .filter(|(kind, initial)| {
                let link = std::fs::read_link(self.path(&format!("proc/self/ns/{kind}")));
                // `pid:[4026531836]`
                let inode = link.ok().and_then(|l| {
                    let s = l.to_string_lossy().into_owned();
                    let digits = s.split_once('[')?.1.strip_suffix(']')?.to_string();
                    digits.parse::<u64>().ok()
                });
                inode.is_some_and(|i| i != *initial)
            })
            .map(|(kind, _)| *kind)
            .collect();
        if own.is_empty() {
            "none".into()
        } else {
            own.join(",")
        }
    }
}
