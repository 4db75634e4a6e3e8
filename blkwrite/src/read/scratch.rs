//! `--create SIZE`: the scratch file blkread makes before reading it: random data (blkwrite's
//! pool), fsynced, its pages dropped from the cache, removed at the end unless --keep (also
//! after an error or Ctrl-C, as the guard is dropped).

use super::cli::Opts;
use crate::blk::opened::Cleanup;
use crate::blk::pattern::{Pattern, Pool};
use measure::envfacts::Probe;
use measure::{Exit, Failure};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

/// Bytes per write while filling the scratch file.
const CHUNK: u64 = 1 << 20;

/// Why making the scratch file did not finish.
pub(crate) enum NotMade {
    Interrupted,
    Failed(Failure),
}

/// Makes the scratch file: refused where TARGET exists or is under /dev; the guard removes it
/// (unless --keep) when dropped; returns the guard and the seconds it took.
pub(crate) fn create(o: &Opts, size: u64, seed: u64) -> Result<(Cleanup, f64), NotMade> {
    let p = &o.target;
    let shown = p.display();
    if p.symlink_metadata().is_ok() {
        return Err(NotMade::Failed(Failure::usage(format!(
            "{shown} exists, and --create makes a new scratch file (it never overwrites one): \
             name a new path, or drop --create to read {shown} as it is"
        ))));
    }
    if Probe::system()
        .path_facts(p)
        .is_some_and(|f| f.fs_type == "devtmpfs")
    {
        return Err(NotMade::Failed(Failure::usage(format!(
            "--create {shown}: blkread does not create a file under /dev; name a path on the file system to measure"
        ))));
    }
    if !o.force {
        crate::blk::space::check(
            p,
            size,
            &format!("--create {}", crate::blk::lines::compact_size(size)),
        )
        .map_err(NotMade::Failed)?;
    }
    let t0 = Instant::now();
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(p)
        .map_err(|e| NotMade::Failed(Failure::new(Exit::Cannot, format!("creating {shown}"), e)))?;
    let guard = Cleanup::made("blkread", p, o.keep);
    let fail = |e: io::Error| {
        let hint = if e.raw_os_error() == Some(libc::ENOSPC) {
            " (the file system is full: give a smaller --create)"
        } else {
            ""
        };
        NotMade::Failed(Failure::new(
            Exit::Cannot,
            format!("filling {shown}"),
            format!("{e}{hint}"),
        ))
    };
    let blocks = size.div_ceil(CHUNK);
    let pool = Pool::new(CHUNK, blocks, Pattern::Random, seed).map_err(fail)?;
    for b in 0..blocks {
        if measure::signal::interrupted() {
            return Err(NotMade::Interrupted);
        }
        let off = b * CHUNK;
        let len = CHUNK.min(size - off) as usize;
        file.write_all_at(&pool.block(b)[..len], off)
            .map_err(fail)?;
    }
    file.sync_all().map_err(fail)?;
    // Clean now, so the advice drops every page: the reads start from the device.
    let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed);
    Ok((guard, t0.elapsed().as_secs_f64()))
}
