//! Before blkread's first record: the target opened read-only (blkwrite's target code, every
//! fact and the O_DIRECT check), the plan worked out (sizes and alignment), and holes refused.

use super::cli::Opts;
use crate::blk::engine::{Dir, Engine, Flush, Plan};
use crate::blk::lines::compact_size;
use crate::blk::pattern::Order;
use crate::blk::target::{self, Kind, OpenSpec, Target};
use measure::{Exit, Failure};
use std::io;
use std::os::unix::fs::FileTypeExt;

/// Opens the target read-only; a missing target or one that is not a file or a block device
/// is refused with the way on.
pub(crate) fn open(o: &Opts) -> Result<Target, Failure> {
    let shown = o.target.display();
    match std::fs::metadata(&o.target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Failure::usage(format!(
                "{shown} does not exist: name a file or a block device to read, or give \
                 --create SIZE to make a scratch file there"
            )));
        }
        Err(e) => return Err(Failure::new(Exit::Cannot, shown, e)),
        Ok(m) if !m.is_file() && !m.file_type().is_block_device() => {
            return Err(Failure::usage(format!(
                "{shown} is not a file or a block device: name a file or a block device to read"
            )));
        }
        Ok(_) => {}
    }
    target::open(&OpenSpec {
        path: o.target.clone(),
        direct: o.direct,
        dsync: false,
        force: false,
        force_device: false,
        keep: true,
        read_only: true,
    })
}

/// The plan: the range (--size, else all of the target), the block size and order, the
/// engine; every size and alignment check.
pub(crate) fn plan(o: &Opts, t: &Target, seed: u64) -> Result<Plan, Failure> {
    let shown = o.target.display();
    let have = match t.device_size {
        Some(d) => d,
        None => t
            .file
            .metadata()
            .map_err(|e| Failure::new(Exit::Cannot, &shown, e))?
            .len(),
    };
    if have == 0 {
        return Err(Failure::usage(format!(
            "{shown} is empty: nothing to read (--create SIZE makes a scratch file to read)"
        )));
    }
    let mut size = match o.size {
        Some(s) if s > have => {
            return Err(Failure::usage(format!(
                "-s {} is more than {shown} holds ({have} bytes, {}): give a smaller -s, or leave it out to read all of it",
                compact_size(s),
                compact_size(have)
            )));
        }
        Some(s) => s,
        None => have,
    };
    if t.direct_effective {
        check_direct_fit(o, t)?;
        // The whole target of an odd length: O_DIRECT reads end at the last aligned byte.
        if o.size.is_none() {
            size -= size % t.align.offset;
        } else if !size.is_multiple_of(t.align.offset) {
            return Err(Failure::usage(format!(
                "-s {size} does not fit O_DIRECT on {shown}: reads there must end on a multiple of {} bytes; \
                 give a multiple of it, or drop --direct",
                t.align.offset
            )));
        }
    }
    // Random reads take whole blocks only.
    let blocks = if o.random {
        size / o.bs
    } else {
        size.div_ceil(o.bs)
    };
    if blocks == 0 {
        return Err(Failure::usage(format!(
            "--bs {} is more than the {size} bytes to read on {shown}: give a smaller --bs",
            compact_size(o.bs)
        )));
    }
    if o.random {
        size = blocks * o.bs;
    }
    Ok(Plan {
        start: 0,
        size,
        bs: o.bs,
        blocks,
        order: Order::chosen(o.random, blocks, seed),
        iodepth: o.iodepth,
        flush: Flush::None,
        datasync: false,
        time: o.time,
        engine: Engine::for_depth(o.iodepth),
        dir: Dir::Read,
        wrap: o.time.is_some() && !one_pass(o, t),
        interval: o.interval,
    })
}

/// Whether a time-limited read stops at the end of its first pass: buffered reads after
/// --drop-cache, whose second pass would read the page cache that the first one filled
/// (memory, not the device the user asked to measure).
pub(crate) fn one_pass(o: &Opts, t: &Target) -> bool {
    o.time.is_some() && o.drop_cache && !t.direct_effective
}

/// Refuses a --bs that O_DIRECT on this target would reject, naming the fix.
fn check_direct_fit(o: &Opts, t: &Target) -> Result<(), Failure> {
    let a = &t.align;
    if !o.bs.is_multiple_of(a.offset) || (a.mem > 4096 && !o.bs.is_multiple_of(a.mem)) {
        let unit = a.offset.max(if a.mem > 4096 { a.mem } else { 1 });
        return Err(Failure::usage(format!(
            "--bs {} does not fit O_DIRECT on {}: reads there must be a multiple of {unit} bytes ({}); \
             use --bs {} or another multiple of {unit}, or drop --direct",
            o.bs,
            o.target.display(),
            a.source,
            compact_size(o.bs.div_ceil(unit) * unit),
        )));
    }
    Ok(())
}

/// Refuses a file whose range `0..size` has a hole (sparse, or allocated and never written):
/// those bytes read back as zeros without touching the device.
pub(crate) fn refuse_holes(o: &Opts, t: &Target, size: u64) -> Result<(), Failure> {
    if t.kind == Kind::BlockDevice {
        return Ok(());
    }
    let Some((start, end)) = first_hole(&t.file, size) else {
        return Ok(());
    };
    let shown = o.target.display();
    Err(Failure::usage(format!(
        "{shown} has a hole at bytes {start}..{end} ({} never written, SEEK_HOLE): a hole reads \
         back zeros without touching the device, so the figures would be memory speed. Read a \
         copy with every block written, which keeps the data (cp --sparse=never {shown} \
         {shown}.full; blkread {shown}.full), or let blkread make a scratch file it then \
         reads: blkread --create SIZE NEWFILE",
        compact_size(end - start),
    )))
}

/// The first hole in `0..size`, as (start, end) clipped to `size`: lseek SEEK_HOLE, then
/// SEEK_DATA for where it ends. A file system without them reports none (all data).
fn first_hole(f: &std::fs::File, size: u64) -> Option<(u64, u64)> {
    use rustix::fs::{SeekFrom, seek};
    let hole = seek(f, SeekFrom::Hole(0)).ok()?;
    if hole >= size {
        return None;
    }
    let end = seek(f, SeekFrom::Data(hole)).unwrap_or(size).min(size);
    Some((hole, end))
}
