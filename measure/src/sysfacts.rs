//! Facts the running system gives by system call or instruction (uname, sysinfo, CPUID),
//! for `envfacts` when it probes the live system: each costs one call where the /proc file
//! with the same fact costs an open, reads and a close (and for /proc/cpuinfo, the kernel
//! formatting every CPU's block). Fixture trees are still read from their files.

/// The host name and kernel release from uname(2), asked once per process (the envelope's
/// host, the machine facts and the WSL check all want them).
pub fn uname() -> Option<(String, String)> {
    static UNAME: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
    UNAME.get_or_init(ask_uname).clone()
}

fn ask_uname() -> Option<(String, String)> {
    let u = rustix::system::uname();
    let text = |c: &std::ffi::CStr| c.to_string_lossy().trim().to_string();
    Some((text(u.nodename()), text(u.release())))
}

/// Total usable RAM in bytes from sysinfo(2): MemTotal of /proc/meminfo.
pub fn memory_bytes() -> Option<u64> {
    let si = rustix::system::sysinfo();
    #[allow(
        clippy::useless_conversion,
        reason = "c_ulong is 32 bits wide on 32-bit targets"
    )]
    let total = u64::from(si.totalram);
    total.checked_mul(u64::from(si.mem_unit.max(1)))
}

/// This process's involuntary context switches so far, all its threads' (getrusage's
/// ru_nivcsw for RUSAGE_SELF).
pub fn involuntary_switches() -> Option<u64> {
    let ru = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).ok()?;
    u64::try_from(ru.involuntary_context_switches()).ok()
}

/// The CPUs in this process's affinity mask (sched_getaffinity): those it may run on.
pub fn usable_cpus() -> Option<u64> {
    let set = rustix::thread::sched_getaffinity(None).ok()?;
    Some(u64::from(set.count()))
}

/// The CPU's brand string (what /proc/cpuinfo shows as `model name` on x86), from CPUID.
/// Each CPUID costs a trip to the hypervisor in a VM (about 4 us here), so the model and
/// the hypervisor flag are asked apart, each only when wanted.
#[cfg(target_arch = "x86_64")]
pub fn cpu_model() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    // CPUID exists on every x86_64 CPU. The brand string leaves are there when the highest
    // extended leaf reaches 0x80000004.
    if __cpuid(0x8000_0000).eax < 0x8000_0004 {
        return None;
    }
    let mut brand = Vec::with_capacity(48);
    for leaf in 0x8000_0002u32..=0x8000_0004 {
        let r = __cpuid(leaf);
        for reg in [r.eax, r.ebx, r.ecx, r.edx] {
            brand.extend_from_slice(&reg.to_le_bytes());
        }
    }
    let end = brand.iter().position(|&b| b == 0).unwrap_or(brand.len());
    let name = String::from_utf8_lossy(&brand[..end]).trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// Whether the CPU runs under a hypervisor (the `hypervisor` flag, CPUID leaf 1).
#[cfg(target_arch = "x86_64")]
pub fn hypervisor() -> Option<bool> {
    Some(std::arch::x86_64::__cpuid(1).ecx & (1 << 31) != 0)
}

/// Elsewhere /proc/cpuinfo is the source.
#[cfg(not(target_arch = "x86_64"))]
pub fn cpu_model() -> Option<String> {
    None
}

/// Elsewhere /proc/cpuinfo is the source.
#[cfg(not(target_arch = "x86_64"))]
pub fn hypervisor() -> Option<bool> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(rel: &str) -> String {
        std::fs::read_to_string(rel).unwrap().trim().to_string()
    }

    #[test]
    fn the_calls_agree_with_proc() {
        let (host, release) = uname().unwrap();
        assert_eq!(host, proc("/proc/sys/kernel/hostname"));
        assert_eq!(release, proc("/proc/sys/kernel/osrelease"));
        let meminfo = proc("/proc/meminfo");
        let kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert_eq!(memory_bytes(), Some(kib * 1024));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpuid_agrees_with_cpuinfo() {
        let info = proc("/proc/cpuinfo");
        let first = info.split("\n\n").next().unwrap();
        let field = |key: &str| {
            first.lines().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.trim() == key)
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        assert_eq!(cpu_model(), field("model name"));
        let flags = field("flags").unwrap();
        assert_eq!(
            hypervisor(),
            Some(flags.split_whitespace().any(|f| f == "hypervisor"))
        );
    }
}
