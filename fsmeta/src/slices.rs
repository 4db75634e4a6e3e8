//! A phase cut into equal-time slices after it ran: the count of operations is noted at
//! about a thousand points along the phase, and each slice's count is read off that curve
//! (linear between points). A slice's rate is work over an equal share of the phase's time,
//! so the slices' mean is the phase's own rate and their median the rate of a typical
//! stretch of time, not of a typical batch of files (a slow batch takes more time, and so
//! more slices).

/// Points noted per phase, at most: the slice boundaries fall within 1/1000 of the
/// operations of their true place.
const POINTS: u32 = 1024;

/// The phase's progress: (operations done, seconds since the phase began) at every
/// `step`-th operation.
pub struct Progress {
    step: u32,
    points: Vec<(u32, f64)>,
}

/// One equal-time slice: where it starts, how long it is, the operations in it (a fraction
/// where a boundary falls inside one) and their rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    pub start_s: f64,
    pub secs: f64,
    pub ops: f64,
    pub rate: f64,
}

impl Progress {
    /// For a phase of `n` operations.
    pub fn new(n: u32) -> Progress {
        Progress {
            step: n.div_ceil(POINTS).max(1),
            points: vec![(0, 0.0)],
        }
    }

    /// Notes that `done` operations had ended `secs` after the phase began.
    pub fn note(&mut self, done: u32, secs: f64) {
        if done.is_multiple_of(self.step) {
            self.points.push((done, secs));
        }
    }

    /// The phase cut into `k` slices of equal time, ending with `done` operations at `secs`;
    /// fewer slices where fewer operations ran (none for none).
    pub fn slices(mut self, k: u32, done: u32, secs: f64) -> Vec<Slice> {
        if done == 0 || secs <= 0.0 {
            return Vec::new();
        }
        if self.points.last().is_some_and(|&(n, _)| n != done) {
            self.points.push((done, secs));
        }
        let k = k.min(done).max(1);
        let width = secs / f64::from(k);
        let mut at = 0.0;
        (0..k)
            .map(|i| {
                let (t0, t1) = (width * f64::from(i), width * f64::from(i + 1));
                let end = if i + 1 == k {
                    f64::from(done)
                } else {
                    self.count_at(t1)
                };
                let ops = end - at;
                at = end;
                Slice {
                    start_s: t0,
                    secs: t1 - t0,
                    ops,
                    rate: ops / (t1 - t0),
                }
            })
            .collect()
    }

    /// Operations done at `t` seconds, linear between the noted points.
    fn count_at(&self, t: f64) -> f64 {
        let i = self.points.partition_point(|&(_, s)| s <= t);
        if i == 0 {
            return 0.0;
        }
        let (n0, s0) = self.points[i - 1];
        match self.points.get(i) {
            Some(&(n1, s1)) if s1 > s0 => f64::from(n0) + f64::from(n1 - n0) * (t - s0) / (s1 - s0),
            _ => f64::from(n0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase of `n` operations, each taking `cost(i)` seconds.
    fn phase(n: u32, cost: impl Fn(u32) -> f64) -> (Progress, f64) {
        let mut p = Progress::new(n);
        let mut t = 0.0;
        for i in 0..n {
            t += cost(i);
            p.note(i + 1, t);
        }
        (p, t)
    }

    #[test]
    fn equal_slices_whose_mean_is_the_phase_rate() {
        // The first half of the files at 1000/s, the second at 100/s: the phase's rate is
        // 2000 / 11 s, and the slow half fills ten of eleven parts of the time.
        let (p, t) = phase(2000, |i| if i < 1000 { 1e-3 } else { 1e-2 });
        let s = p.slices(16, 2000, t);
        assert_eq!(s.len(), 16);
        let mean = s.iter().map(|x| x.rate).sum::<f64>() / 16.0;
        assert!((mean - 2000.0 / t).abs() < 1e-6 * mean, "{mean}");
        assert!(s.iter().all(|x| (x.secs - t / 16.0).abs() < 1e-12));
        let total: f64 = s.iter().map(|x| x.ops).sum();
        assert!((total - 2000.0).abs() < 1e-9);
        // Most slices see the slow rate: their median is 100/s, where a median of 16
        // equal-count batches would be halfway between 1000/s and 100/s.
        let mut r: Vec<f64> = s.iter().map(|x| x.rate).collect();
        r.sort_by(f64::total_cmp);
        assert!((r[8] - 100.0).abs() < 1.0, "{r:?}");
        assert!(
            (r[0] - 1000.0).abs() > 800.0 && (r[15] - 1000.0).abs() < 1.0,
            "{r:?}"
        );
    }

    #[test]
    fn an_unfinished_phase_and_a_tiny_one() {
        // Interrupted after 37 of 100: the slices cover what ran.
        let (p, _) = phase(100, |_| 0.5);
        let s = p.slices(16, 37, 37.0 * 0.5 + 0.2);
        assert!((s.iter().map(|x| x.ops).sum::<f64>() - 37.0).abs() < 1e-9);
        // Three operations make at most three slices; none make none.
        let (p, t) = phase(3, |_| 1.0);
        assert_eq!(p.slices(16, 3, t).len(), 3);
        assert!(Progress::new(5).slices(16, 0, 1.0).is_empty());
    }
}
