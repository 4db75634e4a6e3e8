//! Memory for the probe tables backed before probing starts, so that filling them does not
//! stop the probe loop with page faults.

/// Backs the spare capacity of `v` with memory now, in one call (MADV_POPULATE_WRITE, Linux
/// 5.14), rather than a page fault at a time as it fills: a flood's tables then fill without
/// stopping the probe loop. Where the kernel does not know the advice, nothing happens.
pub fn populate<T>(v: &mut Vec<T>) {
    // SAFETY: sysconf takes no pointers.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let spare = v.spare_capacity_mut();
    let start = spare.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(spare);
    let (from, to) = (start.next_multiple_of(page), end / page * page);
    if to > from {
        // SAFETY: [from, to) lies inside the vector's own allocation (its unused capacity);
        // MADV_POPULATE_WRITE only maps pages in, it neither reads nor changes their contents.
        unsafe {
            libc::madvise(
                from as *mut libc::c_void,
                to - from,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn populate_keeps_what_is_there() {
        let mut v: Vec<u64> = (0..1000).collect();
        v.reserve_exact(1 << 20);
        populate(&mut v);
        assert!(v.iter().copied().eq(0..1000));
        v.extend(1000..(1 << 20));
        assert_eq!(v[(1 << 20) - 1], (1 << 20) - 1);
        populate(&mut Vec::<u8>::new());
    }
}
