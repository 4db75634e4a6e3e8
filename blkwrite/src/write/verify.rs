//! Reading back what was written and checking it block by block against the pool.

use crate::blk::engine::Plan;
use crate::blk::pattern::Pool;
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// What the read-back found.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    pub bytes: u64,
    pub blocks: u64,
    pub bad_blocks: u64,
    pub first_bad_offset: Option<u64>,
    /// The target's length, when it ends before the end of a block to check: only the bytes
    /// it has are checked, and the rest are missing.
    pub short_of: Option<u64>,
    pub secs: f64,
    /// Where the data was read from: `device` (O_DIRECT, or the cache dropped after a
    /// flush) or `page-cache` (buffered and unflushed: the cache may answer).
    pub source: &'static str,
}

fn read_full(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads back the first `written` blocks of `plan`'s order and compares them with `pool`.
/// Everything written is read when `written == plan.blocks`, in large sequential reads.
pub fn check(
    path: &Path,
    direct: bool,
    flushed: bool,
    pool: &Pool,
    plan: &Plan,
    written: u64,
) -> io::Result<Checked> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)?;
    let meta = f.metadata()?;
    // A block device's length is not in its metadata; the plan never exceeds it.
    let have = if meta.is_file() { meta.len() } else { u64::MAX };
    let mut source = "device";
    if !direct {
        // Advice (its result does not matter): drop the clean cached pages, so that the
        // read-back comes from the device.
        let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
        if !flushed {
            source = "page-cache";
        }
    }
    let t0 = Instant::now();
    let bs = plan.bs;
    let per_read = if written == plan.blocks {
        ((8u64 << 20) / bs).max(1)
    } else {
        1
    };
    let mut buf = MmapMut::map_anon((per_read * bs) as usize)?;
    let mut c = Checked {
        source,
        ..Checked::default()
    };
    let mut i = 0;
    while i < written {
        if measure::signal::interrupted() {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let (first, n) = if per_read > 1 {
            (i, per_read.min(written - i))
        } else {
            (plan.order.block(i), 1)
        };
        let off = first * bs;
        let want = (n * bs).min(plan.size - off) as usize;
        let off = plan.start + off;
        // An O_DIRECT read wants whole blocks; the expected bytes are compared up to `want`.
        let rl = (want.div_ceil(512) * 512).min(buf.len());
        let got = read_full(&f, &mut buf[..rl], off)?;
        for k in 0..n {
            let b = first + k;
            let (boff, full) = plan.extent(b);
            let len = full.min(have.saturating_sub(boff));
            if len < full {
                c.short_of = Some(have);
            }
            if len == 0 {
                continue;
            }
            let lo = ((b - first) * bs) as usize;
            let hi = lo + len as usize;
            let ok = hi <= got && buf[lo..hi] == pool.block(b)[..len as usize];
            if !ok {
                c.bad_blocks += 1;
                c.first_bad_offset = Some(c.first_bad_offset.map_or(boff, |o| o.min(boff)));
            }
            c.blocks += 1;
            c.bytes += len;
        }
        i += n;
    }
    c.secs = t0.elapsed().as_secs_f64();
    Ok(c)
}
