//! Change points of a series by e-divisive means (Matteson and James 2014, as Hunter and
//! Apache Otava use it): split where the energy distance between the two sides is largest,
//! keep the split when a permutation test says so, and go on in both sides.
//!
//! The energy distance makes no assumption of normality (it compares whole distributions by
//! their mean pairwise distances, alpha = 1), the permutation test gives its p-value from the
//! series itself, and the recursion finds several changes. In one dimension with alpha = 1 the
//! sums of |x_i - x_j| within each side follow from Fenwick trees over the values' ranks, so
//! the statistic at every split of a segment of n costs O(n log n), and so does each
//! permutation.
//!
//! The p-value is exact for a segment of at most [`exact::EXACT_MAX`] points (every order
//! counted, [`exact`]); a longer one draws permutations from a fixed seed until the p-value's
//! 99% interval lies wholly on one side of alpha (a sequential Monte Carlo test), or until
//! [`Params::permutations`] draws.

mod exact;

pub use exact::EXACT_MAX;

use crate::bootstrap::Rng;

/// How the changes are looked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// A split is kept when its permutation p-value is below this.
    pub alpha: f64,
    /// The fewest points a segment keeps on each side of a split.
    pub min_size: usize,
    /// The seed of the permutations (the same input gives the same changes).
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: DEFAULT_ALPHA,
            min_size: DEFAULT_MIN_SIZE,
            seed: 0x6564_6976_6973_6976,
        }
    }
}

/// The significance level a split must beat by default.
pub const DEFAULT_ALPHA: f64 = 0.01;
/// The fewest runs on each side of a change by default.
pub const DEFAULT_MIN_SIZE: usize = 3;
/// The fewest permutations a sequential test may draw before it must decide.
pub const MIN_PERMUTATIONS: usize = 1999;

/// The normal quantile of the sequential test's two-sided 99% interval of the p-value.
const Z: f64 = 2.576;

impl Params {
    /// The most permutations a sequential test draws (50 / alpha): where the p-value's
    /// interval still holds alpha after them, the p-value itself decides.
    pub fn permutations(&self) -> usize {
        let need = (50.0 / self.alpha).ceil() as usize;
        need.saturating_sub(1).clamp(MIN_PERMUTATIONS, 100_000)
    }
}

/// A change: the series' level shifts between point `index - 1` and point `index`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The first point of the new level (0-based).
    pub index: usize,
    /// The permutation p-value of the split.
    pub p: f64,
    /// The energy statistic at the split.
    pub q: f64,
}

/// The change points of `x`, in order of index.
pub fn e_divisive(x: &[f64], p: &Params) -> Vec<Change> {
    let mut out = Vec::new();
    let mut todo = vec![(0usize, x.len())];
    while let Some((lo, hi)) = todo.pop() {
        let seg = &x[lo..hi];
        let Some((tau, q)) = best_split(seg, p.min_size) else {
            continue;
        };
        let seed = p.seed ^ ((lo as u64) << 32) ^ hi as u64;
        let pv = permutation_p(seg, p, q, seed);
        if pv < p.alpha {
            out.push(Change {
                index: lo + tau,
                p: pv,
                q,
            });
            todo.push((lo, lo + tau));
            todo.push((lo + tau, hi));
        }
    }
    out.sort_by_key(|c| c.index);
    out
}

/// The split of `seg` (the first point of its second part) where the energy statistic is
/// largest, with that statistic; `None` when no split leaves `min` points on each side.
pub fn best_split(seg: &[f64], min: usize) -> Option<(usize, f64)> {
    let min = min.max(1);
    if seg.len() < 2 * min {
        return None;
    }
    let ranks = ranks(seg);
    let pairs: Vec<(f64, usize)> = seg.iter().copied().zip(ranks).collect();
    let mut scratch = Scratch::new(seg.len());
    Some(scratch.best(&pairs, min))
}

/// The p-value of `observed`, the largest statistic of `seg`: the share of the orders of
/// `seg` whose largest statistic reaches it. Exact up to [`EXACT_MAX`] points; above, from
/// permutations drawn until the p-value's 99% interval excludes alpha (most series without
/// a change stop within a few draws, a clear change after about 660), reported as
/// (1 + hits) / (1 + draws).
fn permutation_p(seg: &[f64], p: &Params, observed: f64, seed: u64) -> f64 {
    let min = p.min_size.max(1);
    // The observed statistic, within rounding (sums in another order differ in the last bits).
    let reach = observed - 1e-9 * observed.abs();
    if seg.len() <= EXACT_MAX {
        return exact::p_value(seg, min, reach);
    }
    let total = p.permutations();
    let mut rng = Rng(seed);
    let mut pairs: Vec<(f64, usize)> = seg.iter().copied().zip(ranks(seg)).collect();
    let mut scratch = Scratch::new(seg.len());
    let mut hits = 0usize;
    for done in 1..=total {
        for i in (1..pairs.len()).rev() {
            pairs.swap(i, rng.below(i + 1));
        }
        if scratch.best(&pairs, min).1 >= reach {
            hits += 1;
        }
        let (lo, hi) = wilson(hits, done);
        if hi < p.alpha || lo > p.alpha {
            return (1 + hits) as f64 / (1 + done) as f64;
        }
    }
    (1 + hits) as f64 / (1 + total) as f64
}

/// The Wilson score interval (99%) of a share from `hits` of `draws`.
fn wilson(hits: usize, draws: usize) -> (f64, f64) {
    let (h, d) = (hits as f64, draws as f64);
    let share = h / d;
    let z2 = Z * Z;
    let centre = share + z2 / (2.0 * d);
    let margin = Z * (share * (1.0 - share) / d + z2 / (4.0 * d * d)).sqrt();
    let scale = 1.0 + z2 / d;
    ((centre - margin) / scale, (centre + margin) / scale)
}

/// Each value's rank, 0-based, ties by position (every rank distinct).
fn ranks(seg: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..seg.len()).collect();
    order.sort_by(|&a, &b| seg[a].total_cmp(&seg[b]).then(a.cmp(&b)));
    let mut r = vec![0; seg.len()];
    for (rank, &i) in order.iter().enumerate() {
        r[i] = rank;
    }
    r
}

/// The buffers one segment's statistic needs, kept across permutations.
struct Scratch {
    count: Fenwick,
    sum: Fenwick,
    /// Sum of |x_i - x_j| over the pairs of the first `t` points, for t = 0..=n.
    left: Vec<f64>,
    /// The same over the points from `t` on.
    right: Vec<f64>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            count: Fenwick::new(n),
            sum: Fenwick::new(n),
            left: vec![0.0; n + 1],
            right: vec![0.0; n + 1],
        }
    }

    /// The split (first point of the second part, `min..=n-min`) with the largest
    /// statistic, and that statistic, of `pairs` (value, rank) in their order.
    fn best(&mut self, pairs: &[(f64, usize)], min: usize) -> (usize, f64) {
        let n = pairs.len();
        self.within(pairs.iter().copied(), true);
        self.within(pairs.iter().rev().copied(), false);
        let total = self.left[n];
        let mut best = (min, f64::NEG_INFINITY);
        for t in min..=n - min {
            let (a, b) = (t as f64, (n - t) as f64);
            let cross = total - self.left[t] - self.right[t];
            let pairs_of = |k: f64| if k > 1.0 { k * (k - 1.0) / 2.0 } else { 1.0 };
            let e =
                2.0 * cross / (a * b) - self.left[t] / pairs_of(a) - self.right[t] / pairs_of(b);
            let q = a * b / (a + b) * e;
            if q > best.1 {
                best = (t, q);
            }
        }
        best
    }

    /// Fills `left` (or `right`, from the end) with the running sums of pairwise distances:
    /// each new point adds its distance to every point before it, from the counts and sums
    /// of the values ranked below and above it.
    fn within(&mut self, points: impl Iterator<Item = (f64, usize)>, left: bool) {
        self.count.clear();
        self.sum.clear();
        let n = self.left.len() - 1;
        let (mut acc, mut seen, mut seen_sum) = (0.0, 0.0, 0.0);
        let out = if left {
            &mut self.left
        } else {
            &mut self.right
        };
        out[if left { 0 } else { n }] = 0.0;
        for (k, (x, r)) in points.enumerate() {
            let (c_lo, s_lo) = (self.count.prefix(r), self.sum.prefix(r));
            let (c_hi, s_hi) = (seen - c_lo, seen_sum - s_lo);
            acc += x * c_lo - s_lo + s_hi - x * c_hi;
            self.count.add(r, 1.0);
            self.sum.add(r, x);
            seen += 1.0;
            seen_sum += x;
            out[if left { k + 1 } else { n - k - 1 }] = acc;
        }
    }
}

/// A Fenwick (binary indexed) tree of sums over ranks 0..n.
struct Fenwick(Vec<f64>);

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick(vec![0.0; n + 1])
    }

    fn clear(&mut self) {
        self.0.iter_mut().for_each(|v| *v = 0.0);
    }

    fn add(&mut self, rank: usize, v: f64) {
        let mut i = rank + 1;
        while i < self.0.len() {
            self.0[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum over the ranks below `rank`.
    fn prefix(&self, rank: usize) -> f64 {
        let (mut i, mut s) = (rank, 0.0);
        while i > 0 {
            s += self.0[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Noise in -1..1 from a fixed seed.
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut r = Rng(seed);
        (0..n)
            .map(|_| r.below(1_000_001) as f64 / 500_000.0 - 1.0)
            .collect()
    }

    /// The statistic at split `t` by its definition, every pair summed.
    fn q_brute(x: &[f64], t: usize) -> f64 {
        let (a, b) = (&x[..t], &x[t..]);
        let d = |u: &[f64], v: &[f64]| -> f64 {
            u.iter()
                .map(|p| v.iter().map(|q| (p - q).abs()).sum::<f64>())
                .sum()
        };
        let within = |u: &[f64]| d(u, u) / 2.0;
        let (m, k) = (a.len() as f64, b.len() as f64);
        let e = 2.0 * d(a, b) / (m * k)
            - within(a) / (m * (m - 1.0) / 2.0)
            - within(b) / (k * (k - 1.0) / 2.0);
        m * k / (m + k) * e
    }

    #[test]
    fn the_fast_statistic_is_the_brute_force_one() {
        let x: Vec<f64> = noise(7, 40)
            .iter()
            .enumerate()
            .map(|(i, v)| v + if i > 17 { 0.8 } else { 0.0 })
            .collect();
        let (t, q) = best_split(&x, 3).expect("a split");
        let (bt, bq) = (3..=37)
            .map(|t| (t, q_brute(&x, t)))
            .fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
        assert_eq!(t, bt);
        assert!((q - bq).abs() < 1e-9 * bq.abs(), "{q} vs {bq}");
        // With ties too.
        let y = [1.0, 1.0, 2.0, 2.0, 1.0, 5.0, 5.0, 5.0, 6.0, 5.0];
        let (t, q) = best_split(&y, 2).expect("a split");
        assert_eq!(t, 5);
        assert!((q - q_brute(&y, 5)).abs() < 1e-9);
    }

    #[test]
    fn one_step_is_found_where_it_is() {
        let x: Vec<f64> = noise(1, 40)
            .iter()
            .enumerate()
            .map(|(i, v)| 100.0 + 3.0 * v + if i >= 24 { 15.0 } else { 0.0 })
            .collect();
        let c = e_divisive(&x, &Params::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 24);
        assert!(c[0].p < 0.01);
    }

    #[test]
    fn two_steps_are_both_found() {
        let x: Vec<f64> = noise(2, 90)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v + match i {
                    0..30 => 0.0,
                    30..60 => 5.0,
                    _ => 2.0,
                }
            })
            .collect();
        let idx: Vec<usize> = e_divisive(&x, &Params::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(idx, vec![30, 60]);
    }

    #[test]
    fn noise_alone_rarely_changes() {
        let mut false_changes = 0;
        for seed in 0..100 {
            if !e_divisive(&noise(1000 + seed, 40), &Params::default()).is_empty() {
                false_changes += 1;
            }
        }
        assert!(false_changes <= 5, "{false_changes} of 100");
    }

    #[test]
    fn a_flat_short_or_repeated_series_has_no_change_and_the_same_input_the_same_answer() {
        assert!(e_divisive(&[3.0; 30], &Params::default()).is_empty());
        assert!(e_divisive(&[1.0, 9.0, 1.0, 9.0, 1.0], &Params::default()).is_empty());
        assert!(e_divisive(&[], &Params::default()).is_empty());
        let x: Vec<f64> = (0..60).map(|i| if i < 30 { 0.0 } else { 1.0 }).collect();
        let a = e_divisive(&x, &Params::default());
        assert_eq!(a, e_divisive(&x, &Params::default()));
        assert_eq!(a.len(), 1);
        // A step of 2 points is below the smallest segment.
        let mut y = vec![0.0; 20];
        y[18] = 10.0;
        y[19] = 10.0;
        assert!(e_divisive(&y, &Params::default()).is_empty());
    }

    #[test]
    fn a_heavy_tailed_series_without_a_shift_has_no_change() {
        // Cauchy-like noise (no mean, no variance): the test needs no normality.
        let x: Vec<f64> = noise(5, 60)
            .iter()
            .map(|u| (std::f64::consts::PI * u * 0.49).tan())
            .collect();
        assert!(e_divisive(&x, &Params::default()).is_empty());
    }

    #[test]
    fn permutations_reach_below_alpha() {
        let p = Params::default();
        assert_eq!(p.permutations(), 4999);
        let strict = Params {
            alpha: 0.001,
            ..Params::default()
        };
        assert!(1.0 / (strict.permutations() + 1) as f64 <= strict.alpha / 20.0);
        // The interval excludes alpha after 660 draws without a hit, and at once after one
        // draw that hits.
        assert!(wilson(0, 660).1 < 0.01 && wilson(0, 650).1 > 0.01);
        assert!(wilson(1, 1).0 > 0.01);
    }

    #[test]
    fn a_clean_step_of_five_and_five_is_found_with_its_exact_p() {
        // Five runs near 100, five near 150, 3% noise.
        let x: Vec<f64> = noise(3, 10)
            .iter()
            .enumerate()
            .map(|(i, v)| (if i < 5 { 100.0 } else { 150.0 }) * (1.0 + 0.03 * v))
            .collect();
        let c = e_divisive(&x, &Params::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 5);
        // The orders that keep the levels apart at the split of 5 (2 * 5! 5! of 10!), and a
        // few more that reach as far at another split.
        assert!(c[0].p >= 2.0 / 252.0 && c[0].p < 0.01, "{}", c[0].p);
    }

    #[test]
    fn no_series_of_9_can_pass_alpha_and_one_of_10_can() {
        let step = |n: usize| -> Vec<f64> { (0..n).map(|i| (i >= n / 2) as u8 as f64).collect() };
        let best = |n: usize| {
            e_divisive(
                &step(n),
                &Params {
                    alpha: 1.0,
                    ..Params::default()
                },
            )
        };
        assert!(best(9)[0].p > 0.01, "{:?}", best(9));
        assert!(best(10)[0].p < 0.01, "{:?}", best(10));
    }

    #[test]
    fn short_series_without_a_change_rarely_show_one() {
        let mut false_changes = 0;
        for seed in 0..100 {
            for n in [10, 12, 13, 20] {
                if !e_divisive(&noise(2000 + seed, n), &Params::default()).is_empty() {
                    false_changes += 1;
                }
            }
        }
        assert!(false_changes <= 8, "{false_changes} of 400");
    }
}
