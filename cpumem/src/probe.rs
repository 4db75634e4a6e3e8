//! The probes: each one's `--only` name, its row (the role it measures), the key of its
//! per-batch figure, what one operation is, and the operation itself behind one trait.

use crate::ops::{self, Op};
use std::io;

/// The probes, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Syscall,
    PipeOneCpu,
    PipeTwoCpus,
    Spawn,
    Fault,
    MemRead,
    MemWrite,
    MemCopy,
    MemLat,
    Clock,
}

/// Whether a probe's figure is a time per operation or a rate of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Seconds per operation (`_s`).
    PerOp,
    /// Bytes per second over the batch (`_bytes_per_s`).
    Bandwidth,
}

/// What the table says about one probe.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub probe: Probe,
    /// The `--only` name.
    pub only: &'static str,
    /// The row name: the role, never a parameter, so that rows line up across machines.
    pub role: &'static str,
    /// The key of each sample's figure (and, with `_median`/`_p10`/`_p90` before the unit,
    /// of the summary's statistics).
    pub key: &'static str,
    pub figure: Figure,
    /// Whether all of an operation's work runs on the calling thread (not a forked process
    /// or a spawned program's), so that the thread's CPU time measures it: the calibration
    /// then counts CPU time, and a batch is the same work under a CPU quota as without one
    /// (it takes longer there, and so shows what the quota costs).
    pub own_work: bool,
    /// One operation, as `--help` and the man page say.
    pub op: &'static str,
}

/// Every probe, in the order they run.
pub const PROBES: &[Spec] = &[
    Spec {
        probe: Probe::Syscall,
        only: "syscall",
        role: "system call round trip",
        key: "syscall_s",
        figure: Figure::PerOp,
        own_work: true,
        op: "getppid(2) as a raw system call (never the vDSO), the empty loop's cost subtracted",
    },
    Spec {
        probe: Probe::PipeOneCpu,
        only: "pipe1",
        role: "pipe round trip on one CPU",
        key: "pipe_one_cpu_round_trip_s",
        figure: Figure::PerOp,
        own_work: false,
        op: "one byte to a forked process over a pipe and one back over another, both processes \
             pinned to the same CPU: two context switches on it (taskset -c 0 perf bench sched \
             pipe's operation)",
    },
    Spec {
        probe: Probe::PipeTwoCpus,
        only: "pipe2",
        role: "pipe round trip across two CPUs",
        key: "pipe_two_cpus_round_trip_s",
        figure: Figure::PerOp,
        own_work: false,
        op: "the same round trip with the two processes pinned to two different CPUs (the first \
             two this process may use): two wake-ups across CPUs, an idle CPU's exit among them; \
             skipped, with a note, where the process may use one CPU only (one CPU, a cpuset of \
             one, --cpu)",
    },
    Spec {
        probe: Probe::Spawn,
        only: "spawn",
        role: "process spawn and wait",
        key: "spawn_s",
        figure: Figure::PerOp,
        own_work: false,
        op: "posix_spawn(3) of a static program of about 130 bytes that only exits, and waitpid(2) for it",
    },
    Spec {
        probe: Probe::Fault,
        only: "fault",
        role: "page fault on first touch",
        key: "page_fault_s",
        figure: Figure::PerOp,
        own_work: true,
        op: "the first write to one page of a fresh anonymous mapping (MADV_NOHUGEPAGE, no \
             prefault): the fault, the page's allocation and zeroing; mmap and munmap untimed",
    },
    Spec {
        probe: Probe::MemRead,
        only: "memread",
        role: "memory read bandwidth",
        key: "mem_read_bytes_per_s",
        figure: Figure::Bandwidth,
        own_work: true,
        op: "a pass summing every 8-byte word of a buffer of 4x the last-level cache (-s)",
    },
    Spec {
        probe: Probe::MemWrite,
        only: "memwrite",
        role: "memory write bandwidth",
        key: "mem_write_bytes_per_s",
        figure: Figure::Bandwidth,
        own_work: true,
        op: "a pass storing every 8-byte word of the buffer (plain stores, so the line fills \
             the CPU makes before writing count in the time, not in the bytes)",
    },
    Spec {
        probe: Probe::MemCopy,
        only: "memcopy",
        role: "memory copy bandwidth",
        key: "mem_copy_bytes_per_s",
        figure: Figure::Bandwidth,
        own_work: true,
        op: "one memcpy of the buffer into a second one as large; the bytes copied count, as \
             perf bench mem memcpy counts them",
    },
    Spec {
        probe: Probe::MemLat,
        only: "memlat",
        role: "memory load latency of a random chase",
        key: "mem_latency_s",
        figure: Figure::PerOp,
        own_work: true,
        op: "one load that depends on the last, a random cyclic chase over 64-byte lines of a \
             buffer of 8x the last-level cache and at least 256 MiB in 4 KiB pages (far beyond \
             the caches and the TLB's reach)",
    },
    Spec {
        probe: Probe::Clock,
        only: "clock",
        role: "monotonic clock read",
        key: "clock_read_s",
        figure: Figure::PerOp,
        own_work: true,
        op: "clock_gettime(CLOCK_MONOTONIC) through the vDSO as programs call it (a trap when \
             the clocksource, named in begin, cannot be read from user space), the empty \
             loop's cost subtracted",
    },
];

impl Probe {
    pub fn spec(self) -> &'static Spec {
        PROBES
            .iter()
            .find(|s| s.probe == self)
            .unwrap_or(&PROBES[0])
    }
}

/// The `--only` name of both pipe probes at once.
pub const PIPES: &str = "pipe";

/// The probes named by `--only` (comma-separated, in the table's order whatever the order
/// given; `pipe` names both pipe probes), or why the list is wrong.
pub fn parse_only(list: &str) -> Result<Vec<Probe>, String> {
    let names: Vec<&str> = PROBES.iter().map(|s| s.only).collect();
    let mut want = Vec::new();
    for w in list.split(',').map(str::trim) {
        if w == PIPES {
            want.extend([Probe::PipeOneCpu, Probe::PipeTwoCpus]);
            continue;
        }
        match PROBES.iter().find(|s| s.only == w) {
            Some(s) => want.push(s.probe),
            None if w.is_empty() => {
                return Err(format!(
                    "--only {list}: an empty name; give probes from {}",
                    names.join(",")
                ));
            }
            None => {
                return Err(format!(
                    "--only {list}: unknown probe {w}; the probes are {} ({PIPES} is pipe1 and pipe2)",
                    names.join(",")
                ));
            }
        }
    }
    Ok(PROBES
        .iter()
        .map(|s| s.probe)
        .filter(|p| want.contains(p))
        .collect())
}

/// Sizes the probes work with.
#[derive(Clone, Debug)]
pub struct Sizes {
    /// Each bandwidth buffer.
    pub stream_bytes: u64,
    /// The pointer chase's buffer.
    pub chase_bytes: u64,
    /// The empty loop's cost per iteration.
    pub loop_s: f64,
    /// The CPUs this process may run on, in order (the pipe probes pin to them).
    pub cpus: Vec<usize>,
}

/// Why probe `p` does not apply here, if it does not: the pipe across two CPUs where this
/// process may use one.
pub fn skipped(p: Probe, cpus: &[usize]) -> Option<String> {
    match (p, cpus) {
        (Probe::PipeTwoCpus, [_]) => pipe_cpus(p, cpus).err(),
        _ => None,
    }
}

/// The CPUs of a pipe probe's two processes (this one's, the forked one's): the first CPU
/// this process may use for both, or the first two; why not, where the process may use one
/// CPU only (the probe is then skipped, not failed: the machine has no second CPU to cross to).
pub fn pipe_cpus(p: Probe, cpus: &[usize]) -> Result<(usize, usize), String> {
    match (p, cpus) {
        (_, []) => Err("this process may run on no CPU the kernel names".into()),
        (Probe::PipeTwoCpus, [one]) => Err(format!(
            "this process may run on CPU {one} only (one CPU, a cpuset of one, or --cpu), so \
             there is no second CPU to cross to"
        )),
        (Probe::PipeTwoCpus, [a, b, ..]) => Ok((*a, *b)),
        (_, [a, ..]) => Ok((*a, *a)),
    }
}

/// Prepares probe `p`.
pub fn prepare(p: Probe, z: &Sizes) -> io::Result<Box<dyn Op>> {
    Ok(match p {
        Probe::Syscall => Box::new(ops::calls::Syscall::new(z.loop_s)),
        Probe::Clock => Box::new(ops::calls::Clock::new(z.loop_s)),
        Probe::PipeOneCpu | Probe::PipeTwoCpus => match pipe_cpus(p, &z.cpus) {
            Ok(pair) => Box::new(ops::pipe::PipePair::start(pair)?),
            Err(why) => return Err(io::Error::other(why)),
        },
        Probe::Spawn => Box::new(ops::spawn::Spawn::new()?),
        Probe::Fault => Box::new(ops::fault::Fault::default()),
        Probe::MemRead => Box::new(ops::mem::Stream::new(ops::mem::Kind::Read, z.stream_bytes)?),
        Probe::MemWrite => Box::new(ops::mem::Stream::new(
            ops::mem::Kind::Write,
            z.stream_bytes,
        )?),
        Probe::MemCopy => Box::new(ops::mem::Stream::new(ops::mem::Kind::Copy, z.stream_bytes)?),
        Probe::MemLat => Box::new(ops::memlat::Chase::new(z.chase_bytes)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lists_parse_in_table_order() {
        assert_eq!(
            parse_only("clock,syscall").unwrap(),
            [Probe::Syscall, Probe::Clock]
        );
        assert_eq!(parse_only("memlat").unwrap(), [Probe::MemLat]);
        let e = parse_only("syscall,memx").unwrap_err();
        assert!(
            e.contains("unknown probe memx") && e.contains("memread"),
            "{e}"
        );
        assert!(parse_only("syscall,").is_err());
        assert_eq!(
            parse_only("spawn,pipe").unwrap(),
            [Probe::PipeOneCpu, Probe::PipeTwoCpus, Probe::Spawn]
        );
        assert_eq!(parse_only("pipe2").unwrap(), [Probe::PipeTwoCpus]);
    }

    #[test]
    fn pipe_probes_pick_one_cpu_or_two_and_a_single_cpu_skips_the_second() {
        assert_eq!(pipe_cpus(Probe::PipeOneCpu, &[2, 5]), Ok((2, 2)));
        assert_eq!(pipe_cpus(Probe::PipeTwoCpus, &[2, 5, 7]), Ok((2, 5)));
        assert_eq!(pipe_cpus(Probe::PipeOneCpu, &[3]), Ok((3, 3)));
        let why = pipe_cpus(Probe::PipeTwoCpus, &[3]).unwrap_err();
        assert!(why.contains("CPU 3 only"), "{why}");
    }

    #[test]
    fn keys_carry_units_and_roles_no_parameters() {
        for s in PROBES {
            assert!(measure::record::has_unit_suffix(s.key), "{}", s.key);
            assert!(!s.role.chars().any(|c| c.is_ascii_digit()), "{}", s.role);
            assert_eq!(s.probe.spec().only, s.only);
        }
    }
}
