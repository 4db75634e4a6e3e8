//! The pipe round trip: one byte to a forked process over one pipe, and one byte back over
//! another, as `perf bench sched pipe` does. The second process is forked (not a thread), so
//! each round trip switches address spaces as well as tasks: the cost a hypervisor changes.
//!
//! The two processes are pinned, both to one CPU or to two different ones: left to the
//! scheduler, they share a CPU in some batches and not in others, and the round trip is two
//! context switches on one CPU (about 5 us) or two wake-ups across CPUs (ten times that on a
//! VM, where waking an idle CPU is an exit): two modes whose median is neither. The reply
//! byte is the CPU the second process ran on, so that each batch says whether the two shared
//! a CPU.

use super::{Op, since};
use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Pid};
use rustix::fd::OwnedFd;
use rustix::io::Errno;
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
use serde_json::{Map, Value, json};
use std::io;
use std::time::Instant;

/// The parent's ends of the two pipes and the second process.
#[derive(Debug)]
pub struct PipePair {
    to_child: Option<OwnedFd>,
    from_child: OwnedFd,
    child: Pid,
    /// The CPU of the last reply (the child's) and the parent's right after it.
    last: Option<(u8, usize)>,
    shared: u64,
    batches: u64,
    /// This process's CPUs before the probe pinned it, given back when the probe ends.
    before: Option<CpuSet>,
    /// The CPUs of this process and of the second one.
    cpus: (usize, usize),
}

/// Pins the calling process to CPU `cpu`.
fn pin(cpu: usize) -> io::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set)?;
    Ok(())
}

impl PipePair {
    /// Forks the second process, which echoes until its pipe closes, with this process
    /// pinned to CPU `cpus.0` and the second to `cpus.1` (the same CPU or another). The
    /// second is pinned before the fork (it inherits this process's CPUs), so that it never
    /// runs anywhere else; this process is pinned after, and given its CPUs back on drop.
    pub fn start(cpus: (usize, usize)) -> io::Result<Self> {
        let before = sched_getaffinity(None)?;
        let pinned = pin(cpus.1).and_then(|()| Self::fork(cpus, before));
        let pair = match pinned {
            Ok(pair) => pair,
            Err(e) => {
                let _ = sched_setaffinity(None, &before);
                return Err(e);
            }
        };
        // On an error here, dropping the pair ends the second process and gives the CPUs back.
        pin(cpus.0)?;
        Ok(pair)
    }

    fn fork(cpus: (usize, usize), before: CpuSet) -> io::Result<Self> {
        let (a_read, a_write) = pipe_with(PipeFlags::CLOEXEC)?;
        let (b_read, b_write) = pipe_with(PipeFlags::CLOEXEC)?;
        // SAFETY: the child only calls read, write, sched_getcpu (the vDSO's getcpu), close
        // and _exit, which are async-signal-safe: it takes no lock and allocates nothing,
        // so it is sound whatever the other threads of the parent held at the fork.
        match unsafe { nix::unistd::fork() }.map_err(io::Error::from)? {
            ForkResult::Child => {
                drop(a_write);
                drop(b_read);
                echo(&a_read, &b_write);
                // SAFETY: _exit ends the forked child at once, running no handler of the
                // parent's (no atexit, no stdio flush), as a child after fork must.
                unsafe { libc::_exit(0) }
            }
            ForkResult::Parent { child } => Ok(PipePair {
                to_child: Some(a_write),
                from_child: b_read,
                child,
                last: None,
                shared: 0,
                batches: 0,
                before: Some(before),
                cpus,
            }),
        }
    }
}

/// The second process: a byte in, its CPU number out, until the pipe closes.
fn echo(rx: &OwnedFd, tx: &OwnedFd) {
    let mut b = [0u8; 1];
    loop {
        match rustix::io::read(rx, &mut b) {
            Ok(1) => {}
            Err(Errno::INTR) => continue,
            _ => return,
        }
        let cpu = [rustix::thread::sched_getcpu() as u8];
        loop {
            match rustix::io::write(tx, &cpu) {
                Ok(1) => break,
                Err(Errno::INTR) => continue,
                _ => return,
            }
        }
    }
}

/// A read or write of one byte that ended early: Ctrl-C, or the second process gone.
fn one_byte(r: rustix::io::Result<usize>, what: &str) -> io::Result<()> {
    match r {
        Ok(1) => Ok(()),
        Ok(_) => Err(io::Error::other(format!(
            "{what}: the second process closed its pipe"
        ))),
        Err(e) => Err(io::Error::from(e)),
    }
}

impl Op for PipePair {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let Some(tx) = self.to_child.as_ref() else {
            return Err(io::Error::other("the pipe is closed"));
        };
        let out = [1u8];
        let mut back = [0u8; 1];
        let t0 = Instant::now();
        for _ in 0..n {
            one_byte(rustix::io::write(tx, &out), "write")?;
            one_byte(rustix::io::read(&self.from_child, &mut back), "read")?;
        }
        let t = since(t0);
        self.last = Some((back[0], rustix::thread::sched_getcpu()));
        Ok(t)
    }

    fn batch_info(&mut self) -> Map<String, Value> {
        let Some((child, parent)) = self.last.take() else {
            return Map::new();
        };
        let same = usize::from(child) == parent % 256;
        self.batches += 1;
        self.shared += u64::from(same);
        measure::parts::info(json!({"same_cpu": same, "cpu": parent, "peer_cpu": child}))
    }

    fn info(&self) -> Map<String, Value> {
        let m = json!({
            "processes": 2,
            "bytes_each_way": 1,
            "cpu": self.cpus.0,
            "peer_cpu": self.cpus.1,
            "batches_on_one_cpu": self.shared,
            "shared_cpu": match (self.shared, self.batches) {
                (_, 0) => "unknown",
                (s, b) if s == b => "yes",
                (0, _) => "no",
                _ => "sometimes",
            },
        });
        measure::parts::info(m)
    }
}

impl Drop for PipePair {
    fn drop(&mut self) {
        // Closing the pipe ends the second process's loop; then it is reaped.
        self.to_child = None;
        let _ = waitpid(self.child, None);
        if let Some(set) = self.before.take() {
            let _ = sched_setaffinity(None, &set);
        }
    }
}
