//! The Kruskal-Wallis H test: do k groups of values come from one distribution? collate uses
//! it between the runs that a cell pools, so that a drifting machine (one run near 1 s, one
//! near 0.5 s) does not pass for a wide spread. H is corrected for ties and its p-value is
//! the chi-square tail with k - 1 degrees of freedom, as scipy.stats.kruskal computes it.

/// H and its p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KwTest {
    pub h: f64,
    pub p: f64,
}

/// The test over `groups` (each at least one value); `None` for fewer than two groups, or
/// when every value is the same (no ranks to compare).
pub fn kruskal_wallis(groups: &[&[f64]]) -> Option<KwTest> {
    if groups.len() < 2 || groups.iter().any(|g| g.is_empty()) {
        return None;
    }
    let mut all: Vec<(f64, usize)> = groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.iter().map(move |&x| (x, i)))
        .collect();
    all.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len() as f64;
    let mut rank_sum = vec![0.0f64; groups.len()];
    let mut ties = 0.0f64;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1..=j+1 share their mean.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for a in &all[i..=j] {
            rank_sum[a.1] += rank;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let correction = 1.0 - ties / (n * n * n - n);
    if correction <= 0.0 {
        return None;
    }
    let h: f64 = groups
        .iter()
        .zip(&rank_sum)
        .map(|(g, r)| r * r / g.len() as f64)
        .sum::<f64>()
        * 12.0
        / (n * (n + 1.0))
        - 3.0 * (n + 1.0);
    let h = (h / correction).max(0.0);
    let df = (groups.len() - 1) as f64;
    Some(KwTest {
        h,
        p: gamma_q(df / 2.0, h / 2.0),
    })
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized upper incomplete gamma function Q(a, x): the chi-square tail P(X > 2x)
/// for 2a degrees of freedom. A series below a + 1, a continued fraction above (both
/// bounded to 500 terms; they converge in far fewer for the arguments a test gives).
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let lead = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..500 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (1.0 - sum * lead).clamp(0.0, 1.0)
    } else {
        // Lentz's method for the continued fraction.
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (lead * h).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_tails() {
        // 2 degrees of freedom: Q(1, x) = e^-x exactly.
        for x in [0.1, 1.0, 3.0, 10.0] {
            assert!((gamma_q(1.0, x) - (-x).exp()).abs() < 1e-13, "{x}");
        }
        // 1 degree of freedom: P(chi2 > 3.841458820694124) = 0.05.
        assert!((gamma_q(0.5, 3.841_458_820_694_124 / 2.0) - 0.05).abs() < 1e-12);
        // 4 degrees of freedom: Q(2, x) = e^-x (1 + x).
        assert!((gamma_q(2.0, 2.5) - (-2.5f64).exp() * 3.5).abs() < 1e-13);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-13);
    }

    #[test]
    fn h_by_hand() {
        // Three groups without ties: ranks {1,2,3}, {4,5,6}, {7,8,9}: rank sums 6, 15, 24,
        // H = 12/(9*10) * (36+225+576)/3 - 30 = 7.2, p = e^-3.6 (2 degrees of freedom).
        let t = kruskal_wallis(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], &[7.0, 8.0, 9.0]]).unwrap();
        assert!((t.h - 7.2).abs() < 1e-12, "{t:?}");
        assert!((t.p - (-3.6f64).exp()).abs() < 1e-12, "{t:?}");
        // With ties: {1,1,2} and {2,3,3}: ranks 1.5 1.5 3.5 | 3.5 5.5 5.5, sums 6.5 and 14.5;
        // H0 = 12/42 * (42.25+210.25)/3 - 21 = 3.047619..., ties 3 pairs: 1 - 18/210,
        // H = 3.3333..., p = P(chi2_1 > 3.3333) = 0.067889154861829.
        let t = kruskal_wallis(&[&[1.0, 1.0, 2.0], &[2.0, 3.0, 3.0]]).unwrap();
        assert!((t.h - 10.0 / 3.0).abs() < 1e-12, "{t:?}");
        assert!((t.p - 0.067_889_154_861_829).abs() < 1e-9, "{t:?}");
        assert!(kruskal_wallis(&[&[1.0, 1.0], &[1.0]]).is_none());
        assert!(kruskal_wallis(&[&[1.0, 2.0]]).is_none());
    }
}
