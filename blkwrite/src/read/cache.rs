//! The page cache and the target: how much of the range is resident (mincore over a
//! read-only map of it, a window at a time), and evicting the target's own pages
//! (posix_fadvise DONTNEED; never the machine-wide drop_caches).

use std::fs::File;
use std::io;

/// How much of a range is mapped and asked about at once (a vector of 256 Ki page flags).
const WINDOW: u64 = 1 << 30;

/// Evicts the cached pages of `0..size` of the file: written out first (fdatasync), since
/// POSIX_FADV_DONTNEED drops only clean pages and a file just written is all dirty.
pub(crate) fn drop_pages(f: &File, size: u64) -> io::Result<()> {
    rustix::fs::fdatasync(f)?;
    rustix::fs::fadvise(
        f,
        0,
        std::num::NonZeroU64::new(size),
        rustix::fs::Advice::DontNeed,
    )?;
    Ok(())
}

/// The bytes of `0..size` in the page cache.
pub(crate) fn resident(f: &File, size: u64) -> io::Result<u64> {
    let page = rustix::param::page_size() as u64;
    let mut pages = 0u64;
    let mut off = 0;
    while off < size {
        let len = WINDOW.min(size - off);
        // SAFETY: a read-only shared map, of which no byte is read: only mincore looks at it,
        // so a change of the file under it cannot be observed.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(off)
                .len(len as usize)
                .map(f)?
        };
        let mut flags = vec![0u8; len.div_ceil(page) as usize];
        // SAFETY: `map` covers `len` bytes from a page-aligned address (a window starts at a
        // multiple of WINDOW), and `flags` has one byte for each of its pages.
        let r = unsafe {
            libc::mincore(
                map.as_ptr() as *mut libc::c_void,
                len as usize,
                flags.as_mut_ptr(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        pages += flags.iter().filter(|&&b| b & 1 == 1).count() as u64;
        off += len;
    }
    Ok((pages * page).min(size))
}
