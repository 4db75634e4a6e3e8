//! Depth 1: one pwrite(2) or pread(2) at a time, each timed on its own (fio's psync engine).

use super::{Flush, Outcome, Plan, Stop, Tick, Ticker, failed, periodic_flush, record};
use crate::pattern::Pool;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// pwrite(2) of all of `buf` at `off`, carried on after EINTR and short writes.
fn pwrite_all(file: &File, mut buf: &[u8], mut off: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = match file.write_at(buf, off) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
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
    let mut ticker = Ticker::new(start, plan.interval);
    for i in 0..plan.blocks {
        if measure::signal::interrupted() {
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
        if let Err(e) = pwrite_all(file, &pool.block(b)[..len as usize], off) {
            failed(out, format!("write of {len} bytes at offset {off}"), &e);
            return;
        }
        let t1 = Instant::now();
        record(&mut out.hist, t1 - t0);
        out.bytes += len;
        out.ops += 1;
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

/// pread(2) into all of `buf` from `off`, carried on after EINTR and short reads; the end of
/// the target before the buffer is full is an error (the target shrank under the run).
fn pread_all(file: &File, mut buf: &mut [u8], mut off: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = match file.read_at(buf, off) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the target ends at offset {off}, before the planned size"),
            ));
        }
        buf = &mut buf[n..];
        off += n as u64;
    }
    Ok(())
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
    let mut ticker = Ticker::new(start, plan.interval);
    let mut i = 0;
    while !plan.done_at(i) {
        if measure::signal::interrupted() {
            out.stop = Stop::Interrupted;
            return;
        }
        let (off, len) = plan.extent(plan.block_at(i));
        let t0 = Instant::now();
        if deadline.is_some_and(|d| t0 >= d) {
            out.stop = Stop::Time;
            return;
        }
        out.issued += 1;
        if let Err(e) = pread_all(file, &mut buf[..len as usize], off) {
            failed(out, format!("read of {len} bytes at offset {off}"), &e);
            return;
        }
        let t1 = Instant::now();
        record(&mut out.hist, t1 - t0);
        out.bytes += len;
        out.ops += 1;
        i += 1;
        if !ticker.check(t1, out.bytes, out.ops, tick) {
            out.stop = Stop::OutputGone;
            return;
        }
    }
}
