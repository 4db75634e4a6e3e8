//! Depth 1: one pwrite(2) or pread(2) at a time, each timed on its own (fio's psync engine).

use super::{Flush, Outcome, Plan, Stop, Tick, Ticker, failed, periodic_flush, record};
use crate::blk::pattern::Pool;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// Runs `op(done, at)`, one pwrite or pread of the bytes from `done` on at offset `at`, until
/// `len` bytes from `off` are moved, carried on after EINTR and short transfers; `none(at)` is
/// the error when a call moves nothing.
fn all_of(
    len: usize,
    off: u64,
    mut op: impl FnMut(usize, u64) -> io::Result<usize>,
    none: impl Fn(u64) -> io::Error,
) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let at = off + done as u64;
        let n = match op(done, at) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(none(at));
        }
        done += n;
    }
    Ok(())
}

/// pwrite(2) of all of `buf` at `off`, carried on after EINTR and short writes.
fn pwrite_all(file: &File, buf: &[u8], off: u64) -> io::Result<()> {
    all_of(
        buf.len(),
        off,
        |done, at| file.write_at(&buf[done..], at),
        |_| io::Error::from_raw_os_error(libc::ENOSPC),
    )
}

/// pread(2) into all of `buf` from `off`, carried on after EINTR and short reads; the end of
/// the target before the buffer is full is an error (the target shrank under the run).
fn pread_all(file: &File, buf: &mut [u8], off: u64) -> io::Result<()> {
    all_of(
        buf.len(),
        off,
        |done, at| file.read_at(&mut buf[done..], at),
        |at| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the target ends at offset {at}, before the planned size"),
            )
        },
    )
}

/// The operations of the plan in its order, one at a time through `io(block, off, len)`,
/// each timed and counted, until done (or, wrapping, the deadline), Ctrl-C or an error;
/// `what` names the operation in an error. A --flush every=N flush follows every N-th.
fn one_at_a_time(
    file: &File,
    plan: &Plan,
    (start, deadline): (Instant, Option<Instant>),
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
    what: &str,
    mut io: impl FnMut(u64, u64, u64) -> io::Result<()>,
) {
    let mut ticker = Ticker::new(start, plan.interval);
    let mut i = 0;
    while !plan.done_at(i) {
        if measure::signal::interrupted() {
            out.stop = Stop::Interrupted;
            return;
        }
        let b = plan.block_at(i);
        let (off, len) = plan.extent(b);
        let t0 = Instant::now();
        if deadline.is_some_and(|d| t0 >= d) {
            out.stop = Stop::Time;
            return;
        }
        out.issued += 1;
        if let Err(e) = io(b, off, len) {
            failed(out, format!("{what} of {len} bytes at offset {off}"), &e);
            return;
        }
        let t1 = Instant::now();
        record(&mut out.hist, t1 - t0);
        out.bytes += len;
        out.ops += 1;
        i += 1;
        if let Flush::Every(n) = plan.flush
            && out.ops.is_multiple_of(n)
            && out.ops < plan.blocks
            && !periodic_flush(file, plan, out)
        {
            return;
        }
        if !ticker.check(t1, out.bytes, out.ops, tick) {
            out.stop = Stop::OutputGone;
            return;
        }
    }
}

/// Writes the plan's blocks in order, one at a time, until done, the deadline, Ctrl-C or an
/// error.
pub(super) fn run_sync(
    file: &File,
    pool: &Pool,
    plan: &Plan,
    start: Instant,
    deadline: Option<Instant>,
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
) {
    let clock = (start, deadline);
    one_at_a_time(file, plan, clock, out, tick, "write", |b, off, len| {
        pwrite_all(file, &pool.block(b)[..len as usize], off)
    });
}

/// Reads the plan's blocks in its order, one at a time into `buf`, until done (or, wrapping,
/// the deadline), Ctrl-C or an error.
pub(super) fn read_sync(
    file: &File,
    buf: &mut [u8],
    plan: &Plan,
    start: Instant,
    deadline: Option<Instant>,
    out: &mut Outcome,
    tick: &mut dyn FnMut(&Tick) -> bool,
) {
    let clock = (start, deadline);
    one_at_a_time(file, plan, clock, out, tick, "read", |_, off, len| {
        pread_all(file, &mut buf[..len as usize], off)
    });
}
