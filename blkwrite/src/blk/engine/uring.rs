//! Depth above 1: io_uring with up to `--iodepth` writes (or reads) in flight, each timed from
//! its submission to its completion (fio's io_uring engine, with fixed buffers where allowed).

use super::{Dir, Flush, Outcome, Plan, Stop, Tick, Ticker, failed, periodic_flush, record};
use crate::blk::pattern::Pool;
use io_uring::{IoUring, opcode, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// One operation in flight: where it goes, how much of it the kernel has done, and its buffer.
#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    off: u64,
    len: u64,
    done: u64,
    ptr: *mut u8,
}

/// Where the bytes of each operation are.
pub(super) enum Bufs<'a> {
    /// Writes: each block's data, in the pool.
    Data(&'a Pool),
    /// Reads: slot `i` of the ring lands at `base + i * stride`, in a region the caller holds
    /// mutably for the whole run (from [`Pool::base_mut`]).
    Into { base: *mut u8, stride: usize },
}

/// Sets up the ring and runs the plan through it; a failure of the ring itself is the run's
/// error.
pub(super) fn run_ring(
    ring: io::Result<IoUring>,
    file: &File,
    bufs: Bufs,
    plan: &Plan,
    (start, deadline): (Instant, Option<Instant>),
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
) {
    let ran = ring.and_then(|ring| {
        let fixed = out.fixed_buffers;
        Queue::new(ring, file, bufs, plan, fixed).run(start, deadline, out, tick)
    });
    if let Err(e) = ran {
        failed(out, "io_uring".into(), &e);
    }
}

/// The ring for `--iodepth` above 1, with `region` (every buffer the operations use)
/// registered as a fixed buffer where the kernel allows (recorded in `out.fixed_buffers`).
pub(super) fn setup_ring(
    region: (*mut u8, usize),
    plan: &Plan,
    out: &mut Outcome,
) -> io::Result<IoUring> {
    let depth = plan.iodepth.max(1) as usize;
    let entries = depth.next_power_of_two() as u32;
    // Completions are run only when this thread waits for them (DEFER_TASKRUN, 6.1+), and
    // without interrupting it (COOP_TASKRUN, 5.19+), as fio sets up its rings; older
    // kernels reject the flags, so fall back to a plain ring.
    let ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
        .or_else(|_| IoUring::new(entries));
    let ring = ring.map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot set up a ring for --iodepth {depth} ({e}); io_uring may be disabled \
                 (sysctl kernel.io_uring_disabled) or blocked by a container's seccomp profile: \
                 run with --iodepth 1"
            ),
        )
    })?;
    let iov = libc::iovec {
        iov_base: region.0.cast(),
        iov_len: region.1,
    };
    // Registered ("fixed") buffers save pinning the pages on every write, as fio's
    // fixedbufs does; one region covers the pool (the kernel limit is 1 GiB a buffer).
    // SAFETY: the region outlives the ring: `engine::run` and `engine::read` borrow its pool
    // for all of their run and drop the ring before they return; it is not moved or unmapped
    // meanwhile.
    out.fixed_buffers =
        region.1 <= 1 << 30 && unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
    Ok(ring)
}

/// io_uring_enter: submit `to_submit` entries and wait for `want` completions; GETEVENTS
/// always, so that completions the kernel deferred to this thread (DEFER_TASKRUN) are posted
/// even when nothing is waited for. EINTR, EAGAIN and EBUSY are not errors: the loop reaps
/// and comes back.
fn enter(ring: &IoUring, to_submit: u32, want: u32) -> io::Result<()> {
    // SAFETY: no argument struct is passed; the entries in the queue are valid (see `push`).
    let r = unsafe {
        ring.submitter().enter::<libc::sigset_t>(
            to_submit,
            want,
            io_uring::EnterFlags::GETEVENTS.bits(),
            None,
        )
    };
    match r {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// New writes submitted per io_uring_enter (fio's iodepth_batch_submit, whose default is 1).
const SUBMIT_BATCH: usize = 1;

/// The ring's state while running: which slot holds which operation, what is in flight, what
/// is next, and where the next periodic flush falls.
struct Queue<'a> {
    ring: IoUring,
    file: &'a File,
    bufs: Bufs<'a>,
    plan: &'a Plan,
    fixed: bool,
    depth: usize,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Slots whose write the kernel took only in part: the rest is submitted again.
    resubmit: Vec<usize>,
    inflight: usize,
    next: u64,
    flush_at: u64,
    stopping: bool,
}

impl<'a> Queue<'a> {
    fn new(ring: IoUring, file: &'a File, bufs: Bufs<'a>, plan: &'a Plan, fixed: bool) -> Self {
        let depth = plan.iodepth.max(1) as usize;
        Queue {
            ring,
            file,
            bufs,
            plan,
            fixed,
            depth,
            slots: vec![None; depth],
            free: (0..depth).rev().collect(),
            resubmit: Vec::new(),
            inflight: 0,
            next: 0,
            flush_at: match plan.flush {
                Flush::Every(n) => n.min(plan.blocks),
                _ if plan.wrap => u64::MAX,
                _ => plan.blocks,
            },
            stopping: false,
        }
    }

    /// Runs the plan's blocks until done, the deadline, Ctrl-C or an error; every operation
    /// in flight when it stops is waited for.
    fn run(
        mut self,
        start: Instant,
        deadline: Option<Instant>,
        out: &mut Outcome,
        tick: &mut dyn FnMut(&Tick) -> bool,
    ) -> io::Result<()> {
        let mut ticker = Ticker::new(start, self.plan.interval);
        loop {
            let now = Instant::now();
            self.reap(now, out);
            self.resubmit_rest()?;
            self.check_stop(now, deadline, &mut ticker, out, tick);
            let pending = self.issue(out)?;
            if self.inflight == 0 {
                if self.flush_due(out)
                    && let Flush::Every(n) = self.plan.flush
                {
                    if !periodic_flush(self.file, self.plan, out) {
                        break;
                    }
                    self.flush_at = (self.flush_at + n).min(self.plan.blocks);
                    continue;
                }
                break;
            }
            // Wait only when no more can be issued now; otherwise just submit (and collect
            // whatever has completed meanwhile).
            enter(&self.ring, pending as u32, u32::from(!self.can_issue()))?;
        }
        Ok(())
    }

    fn can_issue(&self) -> bool {
        !self.stopping && self.inflight < self.depth && self.next < self.flush_at
    }

    /// Whether every write before a periodic flush has completed and more are to come.
    fn flush_due(&self, out: &Outcome) -> bool {
        !self.stopping
            && out.error.is_none()
            && self.next == self.flush_at
            && self.next < self.plan.blocks
    }

    /// Queues slot `idx`'s operation (the part the kernel has not done yet).
    fn push(&mut self, idx: usize, s: &Slot) -> io::Result<()> {
        let ptr = s.ptr.wrapping_add(s.done as usize);
        let len = (s.len - s.done) as u32;
        let off = s.off + s.done;
        let fd = types::Fd(self.file.as_raw_fd());
        let e = match (&self.bufs, self.fixed) {
            (Bufs::Data(_), true) => opcode::WriteFixed::new(fd, ptr, len, 0).offset(off).build(),
            (Bufs::Data(_), false) => opcode::Write::new(fd, ptr, len).offset(off).build(),
            (Bufs::Into { .. }, true) => {
                opcode::ReadFixed::new(fd, ptr, len, 0).offset(off).build()
            }
            (Bufs::Into { .. }, false) => opcode::Read::new(fd, ptr, len).offset(off).build(),
        }
        .user_data(idx as u64);
        // SAFETY: the buffer lies in the pool, which outlives every request (and, for a read,
        // in this slot's own part of it, written by no one else meanwhile); the entry is valid
        // and the queue has room (never more requests than slots, slots <= entries).
        unsafe { self.ring.submission().push(&e) }
            .map_err(|_| io::Error::other("submission queue full"))
    }

    /// Takes what the last enter posted (no system call): a finished operation is timed and
    /// its slot freed, a short one kept for resubmission, a failed one stops the run (a read
    /// that meets the end of the target, too: it shrank under the run).
    fn reap(&mut self, now: Instant, out: &mut Outcome) {
        for cqe in self.ring.completion() {
            let idx = cqe.user_data() as usize;
            let res = cqe.result();
            let Some(mut s) = self.slots.get(idx).copied().flatten() else {
                continue;
            };
            if res <= 0 {
                let e = match (res, self.plan.dir) {
                    (0, Dir::Read) => io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the target ends there, before the planned size",
                    ),
                    (0, Dir::Write) => io::Error::from_raw_os_error(libc::ENOSPC),
                    _ => io::Error::from_raw_os_error(-res),
                };
                let what = self.plan.dir.as_str();
                failed(
                    out,
                    format!("{what} of {} bytes at offset {}", s.len, s.off),
                    &e,
                );
                self.stopping = true;
            } else {
                s.done += res as u64;
                if s.done < s.len {
                    self.slots[idx] = Some(s);
                    self.resubmit.push(idx);
                    continue;
                }
                record(&mut out.hist, now - s.start);
                out.bytes += s.len;
                out.ops += 1;
            }
            self.slots[idx] = None;
            self.free.push(idx);
            self.inflight -= 1;
        }
    }

    /// Submits again the rest of the operations the kernel did only in part.
    fn resubmit_rest(&mut self) -> io::Result<()> {
        let mut short = std::mem::take(&mut self.resubmit);
        for idx in short.drain(..) {
            if let Some(s) = self.slots[idx] {
                self.push(idx, &s)?;
            }
        }
        self.resubmit = short;
        Ok(())
    }

    /// Stops issuing on Ctrl-C, when the record output is gone, or at the deadline.
    fn check_stop(
        &mut self,
        now: Instant,
        deadline: Option<Instant>,
        ticker: &mut Ticker,
        out: &mut Outcome,
        tick: &mut dyn FnMut(&Tick) -> bool,
    ) {
        if !self.stopping && measure::signal::interrupted() {
            self.stopping = true;
            out.stop = Stop::Interrupted;
        }
        if !self.stopping && !ticker.check(now, out.bytes, out.ops, tick) {
            self.stopping = true;
            out.stop = Stop::OutputGone;
        }
        if !self.stopping && deadline.is_some_and(|d| now >= d) {
            self.stopping = true;
            out.stop = Stop::Time;
        }
    }

    /// Issues new operations while slots are free; returns how many entries await submission.
    fn issue(&mut self, out: &mut Outcome) -> io::Result<usize> {
        // One new write per io_uring_enter, submitted as soon as it is made, as fio does by
        // default (iodepth_batch_submit=1): the device gets each write while the next is
        // prepared. Filling every free slot before one enter (up to 31 writes) leaves the
        // device idle while the batch is built and then gives it a burst: 4k random writes
        // at depth 32 on an ext4 over virtio run at 302 MB/s that way and at 465 with one
        // write an enter (fio: 461; medians of 8 alternating runs of 256 MiB).
        let mut pending = self.ring.submission().len();
        while self.can_issue() && pending < SUBMIT_BATCH {
            let Some(idx) = self.free.pop() else { break };
            let b = self.plan.block_at(self.next);
            let (off, len) = self.plan.extent(b);
            let ptr = match &self.bufs {
                Bufs::Data(pool) => pool.block(b).as_ptr().cast_mut(),
                Bufs::Into { base, stride } => base.wrapping_add(idx * stride),
            };
            let s = Slot {
                start: Instant::now(),
                off,
                len,
                done: 0,
                ptr,
            };
            self.slots[idx] = Some(s);
            self.push(idx, &s)?;
            pending += 1;
            self.inflight += 1;
            self.next += 1;
            out.issued += 1;
        }
        Ok(pending)
    }
}
