//! Virtualization detection from files alone, as systemd-detect-virt does it: a container
//! first, then a virtual machine (Xen, the clock source, the DMI vendor strings, the CPU's
//! `hypervisor` flag).

use super::Probe;

impl Probe {
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
        if let Some(xen) = self.xen() {
            return Some(xen.into());
        }
        let clock = self
            .read("sys/devices/system/clocksource/clocksource0/available_clocksource")
            .unwrap_or_default();
        if clock.contains("kvm-clock") {
            // KVM whatever the DMI strings say, so they need not be read.
            return Some("kvm".into());
        }
        if let Some(found) = self.dmi_vm(&clock) {
            return Some(found.into());
        }
        self.hypervisor_flag().then(|| "vm-other".into())
    }

    /// What this system runs on: the container if in one, else the VM, else `none`.
    pub fn virtualization(&self) -> String {
        virtualization_of(self.container(), self.vm())
    }

    /// Xen: the control domain (dom0), or a guest of the kind /sys/hypervisor names.
    fn xen(&self) -> Option<&'static str> {
        if self
            .read("proc/xen/capabilities")
            .is_some_and(|c| c.contains("control_d"))
        {
            return Some("xen-dom0");
        }
        if self.read("sys/hypervisor/type").as_deref() != Some("xen") && !self.exists("proc/xen") {
            return None;
        }
        let guest = self.read("sys/hypervisor/guest_type").unwrap_or_default();
        Some(match guest.as_str() {
            "PV" => "xen-pv",
            "PVH" => "xen-pvh",
            "HVM" => "xen-hvm",
            _ if self.hypervisor_flag() => "xen-hvm",
            _ => "xen-pv",
        })
    }

    /// The hypervisor the DMI vendor strings name (or the clock source, for Hyper-V).
    fn dmi_vm(&self, clock: &str) -> Option<&'static str> {
        let dmi: Vec<String> = ["sys_vendor", "product_name", "bios_vendor", "board_vendor"]
            .iter()
            .filter_map(|f| self.read(&format!("sys/class/dmi/id/{f}")))
            .collect();
        let dmi_has = |s: &str| dmi.iter().any(|d| d.contains(s));
        Some(if dmi_has("KVM") {
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
        } else {
            return None;
        })
    }
}

/// What runs this: the container if any, else the VM, else `none`.
pub(super) fn virtualization_of(container: Option<String>, vm: Option<String>) -> String {
    container.or(vm).unwrap_or_else(|| "none".into())
}
