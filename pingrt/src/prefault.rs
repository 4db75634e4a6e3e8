//! Memory for the probe tables backed before probing starts, so that filling them does not
//! stop the probe loop with page faults.

use std::mem::MaybeUninit;

/// The smallest page size Linux uses: one write every this many bytes reaches every page.
const PAGE: usize = 4096;

/// Backs the spare capacity of `v` with memory now, by writing into each of its pages,
/// rather than a page fault at a time as it fills: a flood's tables then fill without
/// stopping the probe loop. What `v` holds is left as it is.
pub fn populate<T>(v: &mut Vec<T>) {
    let step = (PAGE / std::mem::size_of::<T>().max(1)).max(1);
    let spare = v.spare_capacity_mut();
    for slot in spare.iter_mut().step_by(step) {
        *slot = MaybeUninit::zeroed();
    }
    // The writes must happen although nothing reads the spare capacity yet.
    std::hint::black_box(spare);
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
