//! Resampling with a fixed seed: the generator every bootstrap of collate's uses, and the
//! interval of a mean (a cell whose headline names the mean).

/// splitmix64: small, fast, and the same everywhere.
pub struct Rng(pub u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Bootstrap replicates of a mean's interval.
const MEAN_REPLICATES: usize = 2000;

/// The fewest values a mean's interval is given for (as a median's, from order statistics).
pub const MEAN_CI_MIN: usize = 6;

/// The `confidence` interval of the mean of `v`: the percentile bootstrap (the values
/// resampled with replacement, a seed fixed by the values' count, so the same input gives the
/// same interval); `None` under [`MEAN_CI_MIN`] values.
pub fn mean_ci(v: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let n = v.len();
    if n < MEAN_CI_MIN {
        return None;
    }
    let mut rng = Rng(0x6d65_616e_5f63_6921 ^ n as u64);
    let mut means: Vec<f64> = (0..MEAN_REPLICATES)
        .map(|_| (0..n).map(|_| v[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| means[((means.len() - 1) as f64 * q).round() as usize];
    Some((at(tail), at(1.0 - tail)))
}
