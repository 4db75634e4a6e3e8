//! CPU and memory facts: the CPU model, the number of CPUs online, the memory size and the
//! CPU's `hypervisor` flag (by system call or CPUID on the live system, else from /proc and
//! /sys).

use super::Probe;

impl Probe {
    pub(super) fn cpuinfo(&self) -> &str {
        self.cpuinfo
            .get_or_init(|| self.read("proc/cpuinfo").unwrap_or_default())
    }

    /// The start of /proc/cpuinfo up to the end of the first CPU's block, where x86 and
    /// most others give the model and the flags: the kernel writes each CPU's block afresh
    /// (reading its clock frequency), so the whole file is read only when this lacks a fact.
    pub(super) fn cpuinfo_head(&self) -> &str {
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
    pub(super) fn hypervisor_flag(&self) -> bool {
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
}
