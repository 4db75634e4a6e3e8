//! O_DIRECT on a file, a step of `target::open`: the alignment it needs there (statx, else
//! the device beneath), and whether it is honoured at all (tmpfs and checksummed btrfs buffer
//! it anyway).

use crate::blk::opened::{Align, Direct, OpenSpec, Target, fail, open_with};
use crate::blk::sysblock::loop_cache_note;
use measure::Exit;
use measure::Failure;
use measure::envfacts::PathFacts;
use rustix::fs::{AtFlags, IFlags, StatxFlags};
use std::fs::File;

/// Why O_DIRECT on a file may still be cached, from the block stack beneath it: a loop
/// device whose backing file is read through the page cache.
pub(crate) fn cached_loop(place: Option<&PathFacts>) -> Option<String> {
    place.and_then(|f| loop_cache_note(&f.stack))
}

/// Sets up O_DIRECT on a file target opened plainly: its alignment, and the descriptor
/// opened again with O_DIRECT where it is honoured; refused where it is not and --direct
/// (not --direct=try) asked for it. `cached_loop` is the note for a file on a cached loop
/// device.
pub(crate) fn set_up(
    target: &mut Target,
    spec: &OpenSpec,
    flags: i32,
    fs_lbs: Option<u64>,
    cached_loop: Option<String>,
) -> Result<(), Failure> {
    let dio = statx_dio(&target.file);
    target.align = file_align(dio, fs_lbs);
    let not_honoured = reopen_direct(target, spec, flags, dio)?;
    if let Some(why) = &not_honoured
        && spec.direct == Direct::On
    {
        return Err(fail(format!(
            "--direct on {}: {why}, so the figures would be page-cache speed: drop --direct, \
             or give --direct=try to run anyway and report direct_effective: false",
            spec.path.display()
        )));
    }
    target.direct_note = match not_honoured {
        Some(why) => Some(why),
        None if target.direct_effective => cached_loop,
        None => None,
    };
    Ok(())
}

/// The alignment O_DIRECT needs on a file: statx's when it reports one, else the logical
/// block size of the device beneath, else 512.
fn file_align(dio: Option<(u32, u32)>, fs_lbs: Option<u64>) -> Align {
    match dio {
        Some((mem, off)) if off > 0 => Align {
            offset: u64::from(off),
            mem: u64::from(mem),
            source: "statx",
        },
        _ => Align {
            offset: fs_lbs.unwrap_or(512),
            mem: 512,
            source: if fs_lbs.is_some() {
                "block-device"
            } else {
                "assumed"
            },
        },
    }
}

/// Opens the file again with O_DIRECT and keeps that descriptor when O_DIRECT is honoured;
/// returns why it is not, if it is not.
fn reopen_direct(
    target: &mut Target,
    spec: &OpenSpec,
    flags: i32,
    dio: Option<(u32, u32)>,
) -> Result<Option<String>, Failure> {
    let mut not_honoured = direct_not_honoured(&target.file, spec.read_only);
    if not_honoured.is_none() && dio == Some((0, 0)) {
        not_honoured = Some("the file system reports no direct-I/O support for it (statx)".into());
    }
    match open_with(&spec.path, spec.read_only, flags | libc::O_DIRECT) {
        Ok(f) if not_honoured.is_none() => {
            target.file = f;
            target.direct_effective = true;
        }
        // Not honoured: the plain descriptor stays, so the run is plainly buffered.
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            not_honoured = Some("the file system refuses O_DIRECT (EINVAL)".into());
        }
        Err(e) => {
            let shown = spec.path.display();
            return Err(Failure::new(
                Exit::Cannot,
                format!("opening {shown} O_DIRECT"),
                e,
            ));
        }
    }
    Ok(not_honoured)
}

// The f_type (statfs(2)) of tmpfs, ramfs and btrfs.
const TMPFS_MAGIC: u32 = 0x0102_1994;
const RAMFS_MAGIC: u32 = 0x8584_58f6;
const BTRFS_SUPER_MAGIC: u32 = 0x9123_683e;

/// Why O_DIRECT on this open file would not reach the device, if it would not; `read_only`
/// asks for reads alone (btrfs reads checksummed files directly, and only buffers writes).
// f_type's type differs between architectures; the magic numbers are 32 bits wide.
#[allow(clippy::unnecessary_cast)]
fn direct_not_honoured(f: &File, read_only: bool) -> Option<String> {
    let sfs = rustix::fs::fstatfs(f).ok()?;
    let t = sfs.f_type as u32;
    if t == TMPFS_MAGIC || t == RAMFS_MAGIC {
        return Some(
            "tmpfs/ramfs keeps the data in memory, so O_DIRECT has no device to reach".into(),
        );
    }
    if !read_only
        && t == BTRFS_SUPER_MAGIC
        && rustix::fs::ioctl_getflags(f).is_ok_and(|fl| !fl.contains(IFlags::NOCOW))
    {
        return Some(
            "btrfs writes checksummed files through the page cache even with O_DIRECT \
             (chattr +C on a new empty file, or a nodatacow mount, gives direct I/O)"
                .into(),
        );
    }
    None
}

/// statx's direct-I/O alignment: (memory, offset), or None when the kernel or file system
/// does not report it.
pub(crate) fn statx_dio(f: &File) -> Option<(u32, u32)> {
    let sx = rustix::fs::statx(f, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN).ok()?;
    if sx.stx_mask & StatxFlags::DIOALIGN.bits() == 0 {
        return None;
    }
    Some((sx.stx_dio_mem_align, sx.stx_dio_offset_align))
}
