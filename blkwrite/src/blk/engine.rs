//! The I/O phase, for blkwrite and blkread alike: pwrite(2)/pread(2) one at a time at depth 1
//! (fio's psync), io_uring for several in flight; per-operation latency into a histogram, a
//! tick every interval; for writes, the flush.

mod psync;
mod uring;

use crate::blk::pattern::{Order, Pool};
use hdrhistogram::Histogram;
use std::fs::File;
use std::io;
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
    /// pwrite/pread at depth 1, io_uring beyond.
    pub fn for_depth(iodepth: u32) -> Engine {
        if iodepth > 1 {
            Engine::IoUring
        } else {
            Engine::Sync
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sync => "psync",
            Engine::IoUring => "io_uring",
        }
    }
}

/// Which way the data goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Write,
    Read,
}

impl Dir {
    /// The noun for an error message: `write of 4096 bytes at offset 0`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Write => "write",
            Dir::Read => "read",
        }
    }
}

/// What to write (or read) and how.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The offset of block 0 in the target (blkwrite's --offset, dd's seek=).
    pub start: u64,
    pub size: u64,
    pub bs: u64,
    pub blocks: u64,
    pub order: Order,
    pub iodepth: u32,
    pub flush: Flush,
    pub datasync: bool,
    pub time: Option<Duration>,
    pub engine: Engine,
    pub dir: Dir,
    /// With a time limit, start over after the last block until the time is up (fio's
    /// time_based); a random order takes a fresh permutation each pass.
    pub wrap: bool,
    /// How often the tick (an interval record, the progress line) comes.
    pub interval: Duration,
}

impl Plan {
    /// Offset in the target and length of block `b` (the last one may be short).
    pub fn extent(&self, b: u64) -> (u64, u64) {
        let off = b * self.bs;
        (self.start + off, self.bs.min(self.size - off))
    }

    /// The block of the `i`-th operation: the order's, pass after pass when wrapping.
    pub fn block_at(&self, i: u64) -> u64 {
        if i < self.blocks || self.blocks == 0 {
            return self.order.block(i);
        }
        self.order.block_in_pass(i % self.blocks, i / self.blocks)
    }

    /// Whether operation `i` is past the plan (never, when wrapping).
    pub fn done_at(&self, i: u64) -> bool {
        !self.wrap && i >= self.blocks
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
    pub ops: u64,
    pub total_bytes: u64,
}

/// What the write phase and the flush did.
#[derive(Debug)]
pub struct Outcome {
    pub bytes: u64,
    pub ops: u64,
    /// Writes issued, in order (all of them completed unless the stop is `Failed`).
    pub issued: u64,
    /// The I/O phase (writes, or reads), without the final flush.
    pub io_s: f64,
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
    period: Duration,
    start: Instant,
    next: Instant,
    last: Instant,
    last_bytes: u64,
    last_ops: u64,
}

impl Ticker {
    fn new(start: Instant, period: Duration) -> Self {
        let period = period.max(Duration::from_millis(1));
        Ticker {
            period,
            start,
            next: start + period,
            last: start,
            last_bytes: 0,
            last_ops: 0,
        }
    }

    /// Calls `f` when a period has passed; false when `f` says to stop.
    fn check(
        &mut self,
        now: Instant,
        bytes: u64,
        ops: u64,
        f: &mut dyn FnMut(&Tick) -> bool,
    ) -> bool {
        if now < self.next {
            return true;
        }
        let t = Tick {
            elapsed_s: (now - self.start).as_secs_f64(),
            interval_s: (now - self.last).as_secs_f64(),
            bytes: bytes - self.last_bytes,
            ops: ops - self.last_ops,
            total_bytes: bytes,
        };
        self.last = now;
        self.last_bytes = bytes;
        self.last_ops = ops;
        while self.next <= now {
            self.next += self.period;
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

/// fsync(2) or fdatasync(2); the standard library retries them on EINTR.
fn sync_fd(file: &File, datasync: bool) -> io::Result<()> {
    if datasync {
        file.sync_data()
    } else {
        file.sync_all()
    }
}

/// Records the first error and stops the run.
fn failed(out: &mut Outcome, context: String, e: &io::Error) {
    if out.error.is_none() {
        out.error = Some(format!("{context}: {e}"));
        out.errno = e.raw_os_error();
    }
    out.stop = Stop::Failed;
}

fn new_outcome() -> Outcome {
    Outcome {
        bytes: 0,
        ops: 0,
        issued: 0,
        io_s: 0.0,
        flush_s: 0.0,
        periodic_flush_s: 0.0,
        sync_count: 0,
        hist: new_hist(),
        stop: Stop::Done,
        error: None,
        errno: None,
        fixed_buffers: false,
    }
}

/// Runs the write phase and then the flush.
pub fn run(file: &File, pool: &Pool, plan: &Plan, tick: &mut dyn FnMut(&Tick) -> bool) -> Outcome {
    let mut out = new_outcome();
    // The ring and its registered buffers are set up before the clock starts, as fio does:
    // pinning the pool's pages is not part of writing.
    let whole = pool.as_slice();
    let region = (whole.as_ptr().cast_mut(), whole.len());
    let ring = match plan.engine {
        Engine::IoUring => Some(uring::setup_ring(region, plan, &mut out)),
        Engine::Sync => None,
    };
    let start = Instant::now();
    let deadline = plan.time.map(|t| start + t);
    match ring {
        None => psync::run_sync(file, pool, plan, start, deadline, &mut out, tick),
        Some(ring) => {
            let bufs = uring::Bufs::Data(pool);
            uring::run_ring(ring, file, bufs, plan, (start, deadline), &mut out, tick);
        }
    }
    out.io_s = start.elapsed().as_secs_f64();
    if matches!(out.stop, Stop::Done | Stop::Time) && plan.flush != Flush::None {
        let f0 = Instant::now();
        match sync_fd(file, plan.datasync) {
            Ok(()) => out.sync_count += 1,
            Err(e) => failed(&mut out, "flushing at the end".into(), &e),
        }
        out.flush_s = f0.elapsed().as_secs_f64();
    }
    out
}

/// Runs a read phase: every read lands in `bufs` (one slot per read in flight), is timed and
/// counted; the data is not looked at. `io_s` holds the read phase's time.
pub fn read(
    file: &File,
    bufs: &mut Pool,
    plan: &Plan,
    tick: &mut dyn FnMut(&Tick) -> bool,
) -> Outcome {
    let mut out = new_outcome();
    let len = bufs.as_slice().len();
    let base = bufs.base_mut();
    let ring = match plan.engine {
        Engine::IoUring => Some(uring::setup_ring((base, len), plan, &mut out)),
        Engine::Sync => None,
    };
    let start = Instant::now();
    let deadline = plan.time.map(|t| start + t);
    match ring {
        None => psync::read_sync(
            file,
            bufs.slot_mut(0),
            plan,
            start,
            deadline,
            &mut out,
            tick,
        ),
        Some(ring) => {
            let bufs = uring::Bufs::Into {
                base,
                stride: bufs.stride() as usize,
            };
            uring::run_ring(ring, file, bufs, plan, (start, deadline), &mut out, tick);
        }
    }
    out.io_s = start.elapsed().as_secs_f64();
    out
}

/// A flush between writes (--flush every=N); false when it failed.
fn periodic_flush(file: &File, plan: &Plan, out: &mut Outcome) -> bool {
    let f0 = Instant::now();
    let r = sync_fd(file, plan.datasync);
    out.periodic_flush_s += f0.elapsed().as_secs_f64();
    match r {
        Ok(()) => {
            out.sync_count += 1;
            true
        }
        Err(e) => {
            failed(out, format!("flushing after {} writes", out.ops), &e);
            false
        }
    }
}
