//! The random orders of the stat and unlink phases: a Fisher-Yates shuffle driven by
//! splitmix64 from the run's seed, so that `--seed N` gives the same orders again.

/// One step of splitmix64 (Steele, Lea, Flood 2014): fast and well mixed, enough for an order.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform number below `n` (n > 0), by Lemire's multiply-shift with rejection.
fn below(state: &mut u64, n: u64) -> u64 {
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = u128::from(splitmix64(state)) * u128::from(n);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// The file numbers `0..n` in a random order; `stream` tells the phases' orders apart.
pub fn shuffled(n: u32, seed: u64, stream: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).collect();
    let mut state = seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03);
    for i in (1..v.len()).rev() {
        let j = below(&mut state, i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permutation_repeatable_by_seed() {
        let a = shuffled(1000, 7, 1);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>(), "every number once");
        assert_eq!(a, shuffled(1000, 7, 1), "the same seed, the same order");
        assert_ne!(a, shuffled(1000, 8, 1), "another seed, another order");
        assert_ne!(a, shuffled(1000, 7, 2), "another phase, another order");
        assert_ne!(a, sorted, "shuffled");
        assert!(shuffled(0, 1, 1).is_empty());
        assert_eq!(shuffled(1, 1, 1), vec![0]);
    }

    #[test]
    fn below_stays_below() {
        let mut st = 3;
        for n in [1u64, 2, 3, 10, 1 << 40] {
            for _ in 0..100 {
                assert!(below(&mut st, n) < n);
            }
        }
    }
}
