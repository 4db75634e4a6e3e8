//! Statistics of a cell: the centre (median, mean, min, max, a percentile), the confidence
//! interval of a quantile from order statistics (as benchstat does it), and the Mann-Whitney U
//! test that tells a difference between two cells from noise.

/// What a cell shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    Median,
    Mean,
    Min,
    Max,
    /// A quantile in (0, 1), from `pNN` (`p90` is 0.90, `p99.9` is 0.999).
    Quantile(f64),
}

impl Stat {
    /// Parses `median`, `mean`, `min`, `max` or `pNN` (`p90`, `p99`, `p99.9`, `p50`).
    pub fn parse(s: &str) -> Result<Stat, String> {
        match s {
            "median" | "p50" => return Ok(Stat::Median),
            "mean" | "avg" => return Ok(Stat::Mean),
            "min" | "p0" => return Ok(Stat::Min),
            "max" | "p100" => return Ok(Stat::Max),
            _ => {}
        }
        let bad = || {
            format!("--stat {s}: use median, mean, min, max or a percentile such as p90 or p99.9")
        };
        let num = s.strip_prefix('p').ok_or_else(bad)?;
        if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(bad());
        }
        let pct: f64 = num.parse().map_err(|_| bad())?;
        if !(pct > 0.0 && pct < 100.0) {
            return Err(format!("--stat {s}: a percentile lies between p0 and p100"));
        }
        Ok(Stat::Quantile(pct / 100.0))
    }

    /// The name as the user wrote it, for headers and JSON.
    pub fn name(self) -> String {
        match self {
            Stat::Median => "median".into(),
            Stat::Mean => "mean".into(),
            Stat::Min => "min".into(),
            Stat::Max => "max".into(),
            Stat::Quantile(q) => format!("p{}", trim_float(q * 100.0)),
        }
    }

    /// The quantile this statistic is, if it is one (so that it has an order-statistic CI).
    pub fn quantile(self) -> Option<f64> {
        match self {
            Stat::Median => Some(0.5),
            Stat::Quantile(q) => Some(q),
            _ => None,
        }
    }

    /// The statistic of `sorted` (ascending, not empty).
    pub fn of_sorted(self, sorted: &[f64]) -> f64 {
        match self {
            Stat::Median => quantile_sorted(sorted, 0.5),
            Stat::Quantile(q) => quantile_sorted(sorted, q),
            Stat::Mean => sorted.iter().sum::<f64>() / sorted.len() as f64,
            Stat::Min => sorted[0],
            Stat::Max => sorted[sorted.len() - 1],
        }
    }
}

/// `12.5` for 12.5, `90` for 90.0 (no float noise such as 90.00000000000001).
fn trim_float(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub use measure::stats::quantile_sorted;

/// The confidence interval of a quantile as two 1-based order statistics; an order of 0 or
/// `n + 1` means the interval is unbounded on that side (the sample is too small).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantileCi {
    pub lo_order: usize,
    pub hi_order: usize,
    /// The confidence actually reached (at least the one asked for, when bounded).
    pub confidence: f64,
}

impl QuantileCi {
    /// The interval in terms of a sorted sample of the size it was computed for.
    pub fn bounds(&self, sorted: &[f64]) -> (f64, f64) {
        let lo = if self.lo_order < 1 {
            f64::NEG_INFINITY
        } else {
            sorted[self.lo_order - 1]
        };
        let hi = if self.hi_order > sorted.len() {
            f64::INFINITY
        } else {
            sorted[self.hi_order - 1]
        };
        (lo, hi)
    }

    /// Whether both ends are within the sample.
    pub fn bounded(&self, n: usize) -> bool {
        self.lo_order >= 1 && self.hi_order <= n
    }
}

/// ln(k!) for k = 0..=n.
fn ln_factorials(n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n + 1);
    let mut acc = 0.0;
    out.push(0.0);
    for k in 1..=n {
        acc += (k as f64).ln();
        out.push(acc);
    }
    out
}

/// The confidence interval of the `q` quantile of a sample of `n`, from the binomial
/// distribution of how many samples fall below the true quantile (benchstat's method, from
/// go-moremath's `QuantileCI`): start at the mode of Binomial(n, q) and add the larger
/// neighbouring probability until the mass reaches `confidence`; where the two neighbours are
/// equally probable (to 1e-9, as the median's always are, by symmetry), both at once, so that
/// the median's interval is symmetric in order statistics (X(k)..X(n+1-k)), as the classic
/// tables give it, whatever rounding makes of the two equal terms. The
/// interval between the k-th and (k+1)-th order statistics has probability PMF(k), so mass
/// over k in [l, r) gives the order statistics l and r. Exact for every n (the PMF is
/// computed in log space), where go-moremath switches to a normal approximation above 30.
pub fn quantile_ci(n: usize, q: f64, confidence: f64) -> QuantileCi {
    if confidence >= 1.0 || n == 0 {
        return QuantileCi {
            lo_order: 0,
            hi_order: n + 1,
            confidence: 1.0,
        };
    }
    let lf = ln_factorials(n);
    let pmf = |k: isize| -> f64 {
        if k < 0 || k as usize > n {
            return 0.0;
        }
        let k = k as usize;
        let ln_choose = lf[n] - lf[k] - lf[n - k];
        let term = |p: f64, e: usize| {
            if e == 0 {
                0.0
            } else if p <= 0.0 {
                f64::NEG_INFINITY
            } else {
                e as f64 * p.ln()
            }
        };
        (ln_choose + term(q, k) + term(1.0 - q, n - k)).exp()
    };
    let mut x = ((n + 1) as f64 * q).ceil() as isize - 1;
    if q <= 0.0 {
        x = 0;
    }
    let mut accum = pmf(x);
    let (mut l, mut r) = (x, x + 1);
    let (mut lp, mut rp) = (pmf(l - 1), pmf(r));
    while accum < confidence && (lp > 0.0 || rp > 0.0) {
        let tie = (lp - rp).abs() <= 1e-9 * lp.max(rp);
        if tie {
            accum += lp + rp;
            l -= 1;
            r += 1;
            lp = pmf(l - 1);
            rp = pmf(r);
        } else if lp > rp {
            accum += lp;
            l -= 1;
            lp = pmf(l - 1);
        } else {
            accum += rp;
            r += 1;
            rp = pmf(r);
        }
    }
    QuantileCi {
        lo_order: l.max(0) as usize,
        hi_order: (r as usize).min(n + 1),
        confidence: accum.min(1.0),
    }
}

/// The smallest sample for which the 95% (or `confidence`) CI of quantile `q` is bounded.
pub fn ci_min_samples(q: f64, confidence: f64) -> usize {
    (2..=200)
        .find(|&n| quantile_ci(n, q, confidence).bounded(n))
        .unwrap_or(201)
}

/// The result of a two-sided Mann-Whitney U test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UTest {
    /// The smaller of U1 and U2 (ties count one half).
    pub u: f64,
    /// The two-sided p-value.
    pub p: f64,
    /// Whether the p-value is exact (permutation distribution) or a normal approximation.
    pub exact: bool,
}

/// Largest sample size per side for which the exact permutation distribution is used.
pub const EXACT_LIMIT: usize = 25;

/// Mann-Whitney U test of "x and y come from the same distribution" against "one tends to be
/// larger", two-sided. Ties get mid-ranks. With both samples of at most [`EXACT_LIMIT`]
/// values the p-value is exact: the conditional permutation distribution of the rank sum
/// given the ties (for untied data the classic exact U distribution, and with ties the
/// exact test that benchstat uses below 10 samples); above, the normal approximation with
/// the tie and continuity corrections (as benchstat and scipy). `None` when a sample is empty.
/// All values equal gives p = 1 (there is nothing to tell apart).
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<UTest> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Merge with labels, then give tied runs their mid-rank (doubled, to stay integral).
    let mut all: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    all.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len();
    let mut ranks2 = vec![0u64; n];
    let mut tie_runs = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1..=j, mid-rank (i+1+j)/2, doubled: i+1+j.
        for r in ranks2.iter_mut().take(j).skip(i) {
            *r = (i + 1 + j) as u64;
        }
        tie_runs.push(j - i);
        i = j;
    }
    let r1_2: u64 = (0..n).filter(|&k| all[k].1).map(|k| ranks2[k]).sum();
    let u1 = r1_2 as f64 / 2.0 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = (n1 * n2) as f64 - u1;
    let u = u1.min(u2);
    if tie_runs.len() == 1 {
        return Some(UTest {
            u,
            p: 1.0,
            exact: true,
        });
    }
    if u1 == u2 {
        return Some(UTest {
            u,
            p: 1.0,
            exact: n1 <= EXACT_LIMIT && n2 <= EXACT_LIMIT,
        });
    }
    if n1 <= EXACT_LIMIT && n2 <= EXACT_LIMIT {
        let p = exact_p(&ranks2, n1, r1_2);
        return Some(UTest {
            u,
            p: p.min(1.0),
            exact: true,
        });
    }
    // Normal approximation with tie and continuity corrections.
    let t: f64 = tie_runs.iter().map(|&t| (t * t * t - t) as f64).sum();
    let nn = n as f64;
    let mu = (n1 * n2) as f64 / 2.0;
    let sigma = ((n1 * n2) as f64 * ((nn + 1.0) - t / (nn * (nn - 1.0))) / 12.0).sqrt();
    if sigma == 0.0 {
        return Some(UTest {
            u,
            p: 1.0,
            exact: false,
        });
    }
    let mut numer = u - mu;
    numer -= numer.signum() * 0.5;
    let z = numer / sigma;
    let p = 2.0 * normal_cdf(z).min(1.0 - normal_cdf(z));
    Some(UTest {
        u,
        p: p.min(1.0),
        exact: false,
    })
}

/// Two-sided exact p-value: the probability, over all ways to pick `n1` of the pooled
/// (doubled) ranks, of a rank sum at least as far from its mean as the observed one.
fn exact_p(ranks2: &[u64], n1: usize, observed: u64) -> f64 {
    let total: u64 = ranks2.iter().sum();
    let max_sum = ranks2.iter().rev().take(n1).sum::<u64>() as usize;
    // ways[k][s]: subsets of size k of the ranks seen so far with doubled sum s (as f64:
    // the counts reach C(50,25) ~ 1.3e14, exact in an f64 mantissa).
    let width = max_sum + 1;
    let mut ways = vec![0f64; (n1 + 1) * width];
    ways[0] = 1.0;
    for (seen, &r) in ranks2.iter().enumerate() {
        let r = r as usize;
        let kmax = n1.min(seen + 1);
        for k in (1..=kmax).rev() {
            let (lower, upper) = ways.split_at_mut(k * width);
            let prev = &lower[(k - 1) * width..];
            let cur = &mut upper[..width];
            for s in (r..width).rev() {
                cur[s] += prev[s - r];
            }
        }
    }
    let row = &ways[n1 * width..];
    let count: f64 = row.iter().sum();
    // Mean of the (doubled) rank sum is n1 * total / n; compare distances times n to stay
    // in integers.
    let n = ranks2.len() as i128;
    let mean_n = n1 as i128 * total as i128;
    let obs_dist = (observed as i128 * n - mean_n).abs();
    let extreme: f64 = row
        .iter()
        .enumerate()
        .filter(|&(s, &c)| c > 0.0 && (s as i128 * n - mean_n).abs() >= obs_dist)
        .map(|(_, &c)| c)
        .sum();
    extreme / count
}

/// The standard normal CDF, from the complementary error function below.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function (the Chebyshev fit of Numerical Recipes' `erfcc`:
/// relative error below 1.2e-7 everywhere, plenty for comparing a p-value with alpha).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn stat_names() {
        assert_eq!(Stat::parse("p90").unwrap(), Stat::Quantile(0.9));
        assert_eq!(Stat::parse("p99.9").unwrap().name(), "p99.9");
        assert_eq!(Stat::parse("median").unwrap(), Stat::Median);
        assert!(Stat::parse("p").is_err());
        assert!(Stat::parse("p101").is_err());
        assert!(Stat::parse("mode").is_err());
    }

    #[test]
    fn quantiles() {
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert_eq!(quantile_sorted(&[5.0], 0.9), 5.0);
        // numpy.percentile([1..10], 90) = 9.1
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!(close(quantile_sorted(&v, 0.9), 9.1, 1e-12));
    }

    // Known values from go-moremath's quantileci_test.go (the method benchstat uses), but
    // for a tie: go-moremath grows to the left, (1, 3) at 0.625 for n = 4 past 0.375, where
    // collate takes both equal neighbours, (1, 4) at 0.875 (the symmetric rule above).
    #[test]
    fn quantile_ci_matches_go_moremath() {
        let c = quantile_ci(4, 0.5, 0.001);
        assert_eq!((c.lo_order, c.hi_order), (2, 3));
        assert!(close(c.confidence, 0.375, 1e-12));
        let c = quantile_ci(4, 0.5, 0.3750001);
        assert_eq!((c.lo_order, c.hi_order), (1, 4));
        assert!(close(c.confidence, 0.875, 1e-12));
        let c = quantile_ci(4, 0.5, 0.99);
        assert_eq!((c.lo_order, c.hi_order), (0, 5));
        let c = quantile_ci(5, 0.5, 0.3125001);
        assert_eq!((c.lo_order, c.hi_order), (2, 4));
        let c = quantile_ci(4, 0.25, 0.001);
        assert_eq!((c.lo_order, c.hi_order), (1, 2));
        assert!(close(c.confidence, 0.421875, 1e-12));
        // go-moremath: (0, 5); the last tie taken whole leaves both sides unbounded.
        let c = quantile_ci(5, 0.5, 0.99 - 0.03125);
        assert_eq!((c.lo_order, c.hi_order), (0, 6));
    }

    // The classic table of the 95% CI of the median by order statistics (e.g. Conover,
    // Practical Nonparametric Statistics, table A3; the binomial sums by hand): n=6 gives
    // X(1)..X(6) at 96.9%; n=10 gives X(2)..X(9) at 97.9%; n=20 gives X(6)..X(15) at 95.9%.
    #[test]
    fn median_ci_table() {
        let c = quantile_ci(6, 0.5, 0.95);
        assert_eq!((c.lo_order, c.hi_order), (1, 6));
        assert!(close(c.confidence, 62.0 / 64.0, 1e-12));
        let c = quantile_ci(10, 0.5, 0.95);
        assert_eq!((c.lo_order, c.hi_order), (2, 9));
        assert!(close(c.confidence, 1002.0 / 1024.0, 1e-12));
        let c = quantile_ci(20, 0.5, 0.95);
        assert_eq!((c.lo_order, c.hi_order), (6, 15));
        assert!(close(c.confidence, 0.958_610_534_667_968_8, 1e-9));
        // Below 6 samples the 95% interval is unbounded: benchstat's "need >= 6 samples".
        assert!(!quantile_ci(5, 0.5, 0.95).bounded(5));
        assert_eq!(ci_min_samples(0.5, 0.95), 6);
        // A large sample stays exact and tight: about n/2 -+ 1.96 sqrt(n)/2.
        let c = quantile_ci(10_000, 0.5, 0.95);
        assert!(c.lo_order > 4890 && c.lo_order < 4910, "{c:?}");
        assert!(c.hi_order > 5090 && c.hi_order < 5110, "{c:?}");
        assert!(c.confidence >= 0.95);
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile_ci(10, 0.5, 0.95).bounds(&v), (2.0, 9.0));
    }

    /// The 95% CI of the median for n = 6..60 against an exact reference: the narrowest
    /// symmetric interval X(k)..X(n+1-k) whose binomial mass (integer sums of C(n, i) over
    /// 2^n) reaches 95%. The tie rule gives it for every n, never one side or the other by
    /// rounding.
    #[test]
    fn median_ci_is_the_narrowest_symmetric_interval_for_n_6_to_60() {
        for n in 6usize..=60 {
            let choose: Vec<u128> = (0..=n)
                .scan(1u128, |c, i| {
                    let v = *c;
                    *c = *c * (n - i) as u128 / (i + 1) as u128;
                    Some(v)
                })
                .collect();
            let total = 1u128 << n;
            let covers = |k: usize| 20 * choose[k..=n - k].iter().sum::<u128>() >= 19 * total;
            let k = (1..=n / 2)
                .rev()
                .find(|&k| covers(k))
                .expect("n >= 6 is bounded");
            let c = quantile_ci(n, 0.5, 0.95);
            assert_eq!((c.lo_order, c.hi_order), (k, n + 1 - k), "n = {n}");
            let mass = choose[k..=n - k].iter().sum::<u128>() as f64 / total as f64;
            assert!(
                close(c.confidence, mass, 1e-9),
                "n = {n}: {} vs {mass}",
                c.confidence
            );
        }
    }

    /// Independent check: the exact two-sided p-value by enumerating every split of the
    /// pooled sample into two groups (feasible for small n).
    fn brute_force_p(x: &[f64], y: &[f64]) -> f64 {
        let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
        let n = pooled.len();
        let n1 = x.len();
        let rank = |v: f64| {
            let below = pooled.iter().filter(|&&w| w < v).count() as f64;
            let equal = pooled.iter().filter(|&&w| w == v).count() as f64;
            below + (equal + 1.0) / 2.0
        };
        let ranks: Vec<f64> = pooled.iter().map(|&v| rank(v)).collect();
        let mean = n1 as f64 * (n as f64 + 1.0) / 2.0;
        let obs: f64 = ranks[..n1].iter().sum::<f64>() - mean;
        let (mut hit, mut all) = (0u64, 0u64);
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != n1 {
                continue;
            }
            let s: f64 = (0..n)
                .filter(|&i| mask & (1 << i) != 0)
                .map(|i| ranks[i])
                .sum();
            all += 1;
            if (s - mean).abs() >= obs.abs() - 1e-9 {
                hit += 1;
            }
        }
        hit as f64 / all as f64
    }

    #[test]
    fn mann_whitney_known_values() {
        // Fully separated samples give the smallest p: 2 / C(2n, n). benchstat's table
        // uTestMinP: n=3 0.1, n=4 0.028571428571428571, n=5 0.007936507936507936.
        let a: Vec<f64> = (1..=5).map(f64::from).collect();
        let b: Vec<f64> = (6..=10).map(f64::from).collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert_eq!(t.u, 0.0);
        assert!(close(t.p, 0.007_936_507_936_507_936, 1e-15), "{t:?}");
        let t = mann_whitney(&a[..3], &b[..3]).unwrap();
        assert!(close(t.p, 0.1, 1e-15));
        let t = mann_whitney(&a[..4], &b[..4]).unwrap();
        assert!(close(t.p, 0.028_571_428_571_428_57, 1e-15));
        // R's ?wilcox.test example (Hollander & Wolfe): wilcox.test(x, y, alternative =
        // "greater") gives W = 35, p-value = 0.1272 (exact); two-sided is twice that.
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let t = mann_whitney(&x, &y).unwrap();
        assert_eq!(t.u, 15.0);
        assert!(close(t.p, 0.2544, 1e-4), "{t:?}");
        assert!(t.exact);
        // Identical samples: nothing to tell apart.
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn mann_whitney_exact_matches_enumeration() {
        let cases: [(&[f64], &[f64]); 5] = [
            (&[1.0, 2.0, 3.5, 7.0], &[2.5, 4.0, 8.0, 9.0, 10.0]),
            (&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0, 5.0]),
            (&[5.0, 5.0, 6.0], &[1.0, 5.0, 5.0, 2.0, 7.0, 8.0]),
            (
                &[10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                &[12.5, 13.5, 17.0, 18.0, 19.0, 20.0, 21.0],
            ),
            (&[1.0, 1.0, 1.0, 2.0], &[2.0, 2.0, 2.0, 1.0]),
        ];
        for (x, y) in cases {
            let t = mann_whitney(x, y).unwrap();
            let want = brute_force_p(x, y);
            assert!(close(t.p, want, 1e-12), "{x:?} {y:?}: {} vs {want}", t.p);
        }
    }

    #[test]
    fn mann_whitney_normal_approximation() {
        // 30 vs 30 values shifted by 5: the approximation is deep in the tail.
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (5..35).map(f64::from).collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert!(!t.exact);
        // By hand: U1 = sum over a of (#b below + half the ties) = sum_{k=0}^{24} (k + 0.5)
        // = 312.5; mu = 450; 25 ties of 2 give sum(t^3 - t) = 150; sigma =
        // sqrt(900 * (61 - 150 / (60 * 59)) / 12) = 67.6152; z = (312.5 - 450 + 0.5) / sigma
        // = -2.02618; p = 2 Phi(z) = 0.04275 (scipy.stats.mannwhitneyu(a, b,
        // method="asymptotic") uses the same tie and continuity corrections).
        assert_eq!(t.u, 312.5);
        assert!(close(t.p, 0.04275, 1e-4), "{t:?}");
        let c: Vec<f64> = (100..130).map(f64::from).collect();
        let t = mann_whitney(&a, &c).unwrap();
        assert!(t.p < 1e-9, "{t:?}");
        assert!(close(normal_cdf(0.0), 0.5, 1e-7));
        assert!(close(normal_cdf(1.959_963_985), 0.975, 1e-6));
    }
}
