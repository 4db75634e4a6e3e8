//! The facts that decide these costs, for begin: the clocksource, the frequency governor,
//! the transparent huge page setting, the last-level cache's size and the CPUs the probes
//! may run on.

use std::path::Path;

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The kernel's clocksource (`tsc`, `kvm-clock`, `hpet`, `xen`, `arch_sys_counter`...), as
/// every begin's machine facts name it.
pub fn clocksource() -> Option<String> {
    measure::envfacts::Probe::system().clocksource()
}

/// The frequency governor of the first CPU the probes use, where the kernel shows one (a VM
/// usually has none).
pub fn governor(cpu: usize) -> Option<String> {
    read(format!(
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
    ))
}

/// The bracketed choice of a sysfs setting such as `always [madvise] never`.
pub fn chosen(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// The transparent huge page setting (`always`, `madvise`, `never`).
pub fn thp() -> Option<String> {
    read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|t| chosen(&t))
}

/// A cache size as sysfs writes it (`32768K`, `1M`).
pub fn cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'K') => (&t[..i], 1024),
        (i, 'M') => (&t[..i], 1 << 20),
        (i, 'G') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The size of the largest data or unified cache of CPU `cpu` (the last level), from sysfs.
pub fn llc_bytes(cpu: usize) -> Option<u64> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let mut best: Option<(u32, u64)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if !e.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        if read(p.join("type")).as_deref() == Some("Instruction") {
            continue;
        }
        let level: u32 = read(p.join("level")).and_then(|l| l.parse().ok())?;
        let Some(size) = read(p.join("size")).and_then(|s| cache_size(&s)) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, size));
        }
    }
    best.map(|(_, s)| s)
}

/// The CPUs this process may run on, in the kernel's list form (`0-3,6`).
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// `[0, 1, 2, 5]` as `0-2,5`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Pins this process (and the processes it forks and spawns) to CPU `cpu`.
pub fn pin(cpu: usize) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_spellings() {
        assert_eq!(chosen("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(chosen("never"), None);
        assert_eq!(cache_size("32768K"), Some(32 << 20));
        assert_eq!(cache_size("1M\n"), Some(1 << 20));
        assert_eq!(cache_size("512"), Some(512));
        assert_eq!(cache_size("x"), None);
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[3]), "3");
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn this_machine_has_cpus_to_run_on() {
        assert!(!allowed_cpus().is_empty());
    }
}
