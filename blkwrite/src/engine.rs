//! The write phase and the flush: pwrite(2) one at a time at depth 1 (fio's psync), io_uring
//! for several writes in flight; per-write latency into a histogram, a tick every second.

use crate::pattern::{Order, Pool};
use hdrhistogram::Histogram;
use io_uring::{IoUring, opcode, types};
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// When to flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    /// Once after the last write (dd's conv=fsync).
    End,
    /// After every N writes, and after the last.
    Every(u64),
    None,
}

/// How writes are issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sync,
    IoUring,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sync => "psync",
            Engine::IoUring => "io_uring",
        }
    }
}

/// What to write and how.
#[derive(Clone, Debug)]
pub struct Plan {
    pub size: u64,
    pub bs: u64,
    pub blocks: u64,
    pub order: Order,
    pub iodepth: u32,
    pub flush: Flush,
    pub datasync: bool,
    pub time: Option<Duration>,
    pub engine: Engine,
}

impl Plan {
    /// Offset and length of block `b` (the last one may be short).
    pub fn extent(&self, b: u64) -> (u64, u64) {
        let off = b * self.bs;
        (off, self.bs.min(self.size - off))
    }
}

/// Why the write phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Done,
    Time,
    Interrupted,
    Failed,
    /// The record output went away (a closed pipe): stop quietly.
    OutputGone,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Done => "done",
            Stop::Time => "time",
            Stop::Interrupted => "interrupted",
            Stop::Failed => "failed",
            Stop::OutputGone => "output-gone",
        }
    }
}

/// Progress over one interval.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    pub elapsed_s: f64,
    pub interval_s: f64,
    pub bytes: u64,
    pub writes: u64,
    pub total_bytes: u64,
}

/// What the write phase and the flush did.
#[derive(Debug)]
pub struct Outcome {
    pub bytes: u64,
    pub writes: u64,
    /// Writes issued, in order (all of them completed unless the stop is `Failed`).
    pub issued: u64,
    pub write_s: f64,
    pub flush_s: f64,
    pub periodic_flush_s: f64,
    pub sync_count: u64,
    pub hist: Histogram<u64>,
    pub stop: Stop,
    pub error: Option<String>,
    pub errno: Option<i32>,
    pub fixed_buffers: bool,
}

struct Ticker {
    start: Instant,
    next: Instant,
    last: Instant,
    last_bytes: u64,
    last_writes: u64,
}

impl Ticker {
    fn new(start: Instant) -> Self {
        Ticker {
            start,
            next: start + Duration::from_secs(1),
            last: start,
            last_bytes: 0,
            last_writes: 0,
        }
    }

    /// Calls `f` when a second has passed; false when `f` says to stop.
    fn check(
        &mut self,
        now: Instant,
        bytes: u64,
        writes: u64,
        f: &mut dyn FnMut(&Tick) -> bool,
    ) -> bool {
        if now < self.next {
            return true;
        }
        let t = Tick {
            elapsed_s: (now - self.start).as_secs_f64(),
            interval_s: (now - self.last).as_secs_f64(),
            bytes: bytes - self.last_bytes,
            writes: writes - self.last_writes,
            total_bytes: bytes,
        };
        self.last = now;
        self.last_bytes = bytes;
        self.last_writes = writes;
        while self.next <= now {
            self.next += Duration::from_secs(1);
        }
        f(&t)
    }
}

fn new_hist() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits (0.1% resolution); longer writes saturate.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("fixed bounds and precision are valid for a histogram")
}

fn record(h: &mut Histogram<u64>, d: Duration) {
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1);
    h.saturating_record(ns);
}

/// fsync(2) or fdatasync(2), retried on EINTR.
fn sync_fd(fd: RawFd, datasync: bool) -> io::Result<()> {
    loop {
        // SAFETY: plain system calls on a descriptor the caller keeps open.
        let rc = unsafe {
            if datasync {
                libc::fdatasync(fd)
            } else {
                libc::fsync(fd)
            }
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn pwrite_all(fd: RawFd, mut buf: &[u8], mut off: u64) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the call's duration.
        let n = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as libc::off_t) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        buf = &buf[n as usize..];
        off += n as u64;
    }
    Ok(())
}

fn failed(out: &mut Outcome, context: String, e: &io::Error) {
    if out.error.is_none() {
        out.error = Some(format!("{context}: {e}"));
        out.errno = e.raw_os_error();
    }
    out.stop = Stop::Failed;
}

/// Runs the write phase and then the flush.
pub fn run(fd: RawFd, pool: &Pool, plan: &Plan, tick: &mut dyn FnMut(&Tick) -> bool) -> Outcome {
    let mut out = Outcome {
        bytes: 0,
        writes: 0,
        issued: 0,
        write_s: 0.0,
        flush_s: 0.0,
        periodic_flush_s: 0.0,
        sync_count: 0,
        hist: new_hist(),
        stop: Stop::Done,
        error: None,
        errno: None,
        fixed_buffers: false,
    };
    // The ring and its registered buffers are set up before the clock starts, as fio does:
    // pinning the pool's pages is not part of writing.
    let ring = match plan.engine {
        Engine::IoUring => Some(setup_ring(pool, plan, &mut out)),
        Engine::Sync => None,
    };
    let start = Instant::now();
    let deadline = plan.time.map(|t| start + t);
    match ring {
        None => run_sync(fd, pool, plan, start, deadline, &mut out, tick),
        Some(Err(e)) => failed(&mut out, "io_uring".into(), &e),
        Some(Ok(ring)) => {
            if let Err(e) = run_uring(ring, fd, pool, plan, start, deadline, &mut out, tick) {
                failed(&mut out, "io_uring".into(), &e);
            }
        }
    }
    out.write_s = start.elapsed().as_secs_f64();
    if matches!(out.stop, Stop::Done | Stop::Time) && plan.flush != Flush::None {
        let f0 = Instant::now();
        match sync_fd(fd, plan.datasync) {
            Ok(()) => out.sync_count += 1,
            Err(e) => failed(&mut out, "flushing at the end".into(), &e),
        }
        out.flush_s = f0.elapsed().as_secs_f64();
    }
    out
}

fn periodic_flush(fd: RawFd, plan: &Plan, out: &mut Outcome) -> bool {
    let f0 = Instant::now();
    let r = sync_fd(fd, plan.datasync);
    out.periodic_flush_s += f0.elapsed().as_secs_f64();
    match r {
        Ok(()) => {
            out.sync_count += 1;
            true
        }
        Err(e) => {
            failed(out, format!("flushing after {} writes", out.writes), &e);
            false
        }
    }
}

fn run_sync(
    fd: RawFd,
    pool: &Pool,
    plan: &Plan,
    start: Instant,
    deadline: Option<Instant>,
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
) {
    let mut ticker = Ticker::new(start);
    for i in 0..plan.blocks {
        if measure::cli::interrupted() {
            out.stop = Stop::Interrupted;
            return;
        }
        let b = plan.order.block(i);
        let (off, len) = plan.extent(b);
        let t0 = Instant::now();
        if deadline.is_some_and(|d| t0 >= d) {
            out.stop = Stop::Time;
            return;
        }
        out.issued += 1;
        if let Err(e) = pwrite_all(fd, &pool.block(b)[..len as usize], off) {
            failed(out, format!("write of {len} bytes at offset {off}"), &e);
            return;
        }
        let t1 = Instant::now();
        record(&mut out.hist, t1 - t0);
        out.bytes += len;
        out.writes += 1;
        if let Flush::Every(n) = plan.flush
            && out.writes % n == 0
            && out.writes < plan.blocks
            && !periodic_flush(fd, plan, out)
        {
            return;
        }
        if !ticker.check(t1, out.bytes, out.writes, tick) {
            out.stop = Stop::OutputGone;
            return;
        }
    }
}

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    off: u64,
    len: u64,
    done: u64,
    ptr: *const u8,
}

/// The ring for `--iodepth` above 1, with the pool registered as a fixed buffer where the
/// kernel allows (recorded in `out.fixed_buffers`).
fn setup_ring(pool: &Pool, plan: &Plan, out: &mut Outcome) -> io::Result<IoUring> {
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
    let whole = pool.as_slice();
    let iov = libc::iovec {
        iov_base: whole.as_ptr() as *mut libc::c_void,
        iov_len: whole.len(),
    };
    // Registered ("fixed") buffers save pinning the pages on every write, as fio's
    // fixedbufs does; one region covers the pool (the kernel limit is 1 GiB a buffer).
    // SAFETY: the pool outlives the ring: `run` borrows the pool for all of its run and drops
    // the ring before it returns; the pool is not moved or unmapped meanwhile.
    out.fixed_buffers =
        whole.len() <= 1 << 30 && unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
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

#[allow(clippy::too_many_arguments)]
fn run_uring(
    mut ring: IoUring,
    fd: RawFd,
    pool: &Pool,
    plan: &Plan,
    start: Instant,
    deadline: Option<Instant>,
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
) -> io::Result<()> {
    let depth = plan.iodepth.max(1) as usize;
    let fixed = out.fixed_buffers;
    let mut slots: Vec<Option<Slot>> = vec![None; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut inflight = 0usize;
    let mut next = 0u64;
    let mut stopping = false;
    let mut flush_at = match plan.flush {
        Flush::Every(n) => n.min(plan.blocks),
        _ => plan.blocks,
    };
    let mut ticker = Ticker::new(start);
    let mut resubmit: Vec<usize> = Vec::new();
    let push = |ring: &mut IoUring, idx: usize, s: &Slot| -> io::Result<()> {
        let ptr = s.ptr.wrapping_add(s.done as usize);
        let len = (s.len - s.done) as u32;
        let off = s.off + s.done;
        let e = if fixed {
            opcode::WriteFixed::new(types::Fd(fd), ptr, len, 0)
                .offset(off)
                .build()
        } else {
            opcode::Write::new(types::Fd(fd), ptr, len)
                .offset(off)
                .build()
        }
        .user_data(idx as u64);
        // SAFETY: the buffer lies in the pool, which outlives every request; the entry is
        // valid and the queue has room (never more requests than slots, slots <= entries).
        unsafe { ring.submission().push(&e) }.map_err(|_| io::Error::other("submission queue full"))
    };
    loop {
        // Reap what the last enter posted (no system call).
        let now = Instant::now();
        for cqe in ring.completion() {
            let idx = cqe.user_data() as usize;
            let res = cqe.result();
            let Some(mut s) = slots.get(idx).copied().flatten() else {
                continue;
            };
            if res <= 0 {
                let e = io::Error::from_raw_os_error(if res < 0 { -res } else { libc::ENOSPC });
                failed(
                    out,
                    format!("write of {} bytes at offset {}", s.len, s.off),
                    &e,
                );
                stopping = true;
            } else {
                s.done += res as u64;
                if s.done < s.len {
                    slots[idx] = Some(s);
                    resubmit.push(idx);
                    continue;
                }
                record(&mut out.hist, now - s.start);
                out.bytes += s.len;
                out.writes += 1;
            }
            slots[idx] = None;
            free.push(idx);
            inflight -= 1;
        }
        for idx in resubmit.drain(..) {
            if let Some(s) = slots[idx] {
                push(&mut ring, idx, &s)?;
            }
        }
        if !stopping && measure::cli::interrupted() {
            stopping = true;
            out.stop = Stop::Interrupted;
        }
        if !stopping && !ticker.check(now, out.bytes, out.writes, tick) {
            stopping = true;
            out.stop = Stop::OutputGone;
        }
        if !stopping && deadline.is_some_and(|d| now >= d) {
            stopping = true;
            out.stop = Stop::Time;
        }
        // One new write per io_uring_enter, submitted as soon as it is made, as fio does by
        // default (iodepth_batch_submit=1): the device gets each write while the next is
        // prepared. Submitting every free slot at once (up to 31 writes an enter) left the
        // device idle while the batch was built and then gave it a burst: 4k random writes
        // at depth 32 on this VM's ext4 (virtio) ran at 302 MB/s that way, 465 this way
        // (fio 461), median of 8 alternating runs of 256 MiB.
        let mut pending = ring.submission().len();
        while !stopping && inflight < depth && next < flush_at && pending < SUBMIT_BATCH {
            let Some(idx) = free.pop() else { break };
            let b = plan.order.block(next);
            let (off, len) = plan.extent(b);
            let s = Slot {
                start: Instant::now(),
                off,
                len,
                done: 0,
                ptr: pool.block(b).as_ptr(),
            };
            slots[idx] = Some(s);
            push(&mut ring, idx, &s)?;
            pending += 1;
            inflight += 1;
            next += 1;
            out.issued += 1;
        }
        if inflight == 0 {
            if !stopping && out.error.is_none() && next == flush_at && next < plan.blocks {
                if let Flush::Every(n) = plan.flush {
                    if !periodic_flush(fd, plan, out) {
                        break;
                    }
                    flush_at = (flush_at + n).min(plan.blocks);
                    continue;
                }
            }
            break;
        }
        // Wait only when no more can be issued now; otherwise just submit (and collect
        // whatever has completed meanwhile).
        let can_issue = !stopping && inflight < depth && next < flush_at;
        enter(&ring, pending as u32, u32::from(!can_issue))?;
    }
    Ok(())
}
