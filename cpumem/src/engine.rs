//! Running one probe: calibration (unrecorded), then its batches, each a sample record, and
//! the statistics of the batches for the summary.

use crate::ops::Op;
use crate::probe::{Figure, Probe, Sizes, Spec};
use measure::lifecycle::Session;
use measure::parts::Values;
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};
use std::io;

/// How one probe ended.
#[derive(Debug)]
pub enum Ended {
    /// Every batch ran: its statistics.
    Done(Stats),
    /// Ctrl-C or SIGTERM: the statistics of the batches so far, if any.
    Interrupted(Option<Stats>),
    /// The probe could not run or a batch failed: why.
    Failed(String),
    /// The probe does not apply to this machine (two CPUs on a machine of one): why.
    Skipped(String),
}

/// One probe's batches, summarized.
#[derive(Debug, Clone)]
pub struct Stats {
    pub spec: &'static Spec,
    pub batches: u64,
    pub ops_per_batch: u64,
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub info: Map<String, Value>,
}

impl Stats {
    fn of(spec: &'static Spec, values: &[f64], ops: u64, info: Map<String, Value>) -> Option<Self> {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |x| measure::stats::quantile_sorted(&v, x);
        (!v.is_empty()).then(|| Stats {
            spec,
            batches: v.len() as u64,
            ops_per_batch: ops,
            median: q(0.5),
            p10: q(0.1),
            p90: q(0.9),
            info,
        })
    }

    /// The summary key of statistic `stat` (`median`, `p10`): before the unit suffix.
    pub fn key(&self, stat: &str) -> String {
        stat_key(self.spec.key, stat)
    }

    /// The summary's values for this probe.
    pub fn put(&self, v: &mut Values) {
        v.set(&self.key("median"), self.median);
        v.set(&self.key("p10"), self.p10);
        v.set(&self.key("p90"), self.p90);
    }
}

/// `syscall_s` + `median` -> `syscall_median_s`; `mem_read_bytes_per_s` + `p10` ->
/// `mem_read_p10_bytes_per_s`.
pub fn stat_key(key: &str, stat: &str) -> String {
    let suffix = measure::record::unit_suffix(key).unwrap_or("");
    let stem = &key[..key.len() - suffix.len()];
    format!("{stem}_{stat}{suffix}")
}

/// What the batches aim at: each probe's time split in batches.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub batch_s: f64,
    pub batches: u64,
}

/// Whether an error is Ctrl-C's (an interrupted call after the signal).
fn interrupted(e: &io::Error) -> bool {
    measure::signal::interrupted() || e.kind() == io::ErrorKind::Interrupted
}

/// The calling thread's CPU time in seconds.
fn thread_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Runs `n` quadrupling until one run takes an eighth of a batch: the operations per batch
/// then follow from that run's rate, by the thread's CPU time where the work is its own
/// (`by_cpu`: a run that a CPU quota throttled would otherwise make the batches short enough
/// to fit between the throttles, and the quota would show in some batches and not others).
/// The runs warm caches and code; none is recorded.
fn calibrate(op: &mut dyn Op, plan: Plan, by_cpu: bool) -> io::Result<u64> {
    let mut n: u64 = 1;
    loop {
        let cpu0 = if by_cpu { thread_cpu_s() } else { 0.0 };
        let t = op.run(n)?;
        let busy = if by_cpu {
            (thread_cpu_s() - cpu0).min(t)
        } else {
            t
        };
        if measure::signal::interrupted() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        if t >= plan.batch_s / 8.0 || n >= 1 << 40 {
            let per_op = busy.max(1e-9) / n as f64;
            return Ok(((plan.batch_s / per_op) as u64).max(1));
        }
        n *= if t < plan.batch_s / 1000.0 { 16 } else { 4 };
    }
}

/// The figure of a batch of `ops` operations that took `t` seconds.
fn figure(spec: &Spec, op: &dyn Op, ops: u64, t: f64) -> f64 {
    match spec.figure {
        Figure::PerOp => (t / ops as f64 - op.overhead_s()).max(0.0),
        Figure::Bandwidth => (op.bytes_per_op() * ops) as f64 / t.max(1e-12),
    }
}

/// Runs probe `p`: writes a sample per batch (or a failed sample) under its row name.
pub fn run_probe(p: Probe, sizes: &Sizes, plan: Plan, s: &mut Session) -> Result<Ended, Failure> {
    let spec = p.spec();
    if let Some(why) = crate::probe::skipped(p, &sizes.cpus) {
        s.human().line(&format!("{}: skipped: {why}", spec.role));
        return Ok(Ended::Skipped(why));
    }
    let mut op = match crate::probe::prepare(p, sizes) {
        Ok(op) => op,
        Err(e) if interrupted(&e) => return Ok(Ended::Interrupted(None)),
        Err(e) => return failed(s, spec, format!("preparing: {e}")),
    };
    let ops = match calibrate(op.as_mut(), plan, spec.own_work) {
        Ok(n) => n,
        Err(e) if interrupted(&e) => return Ok(Ended::Interrupted(None)),
        Err(e) => return failed(s, spec, e.to_string()),
    };
    let mut values = Vec::new();
    for b in 0..plan.batches {
        if measure::signal::interrupted() {
            let st = Stats::of(spec, &values, ops, op.info());
            return Ok(Ended::Interrupted(st));
        }
        let t = match op.run(ops) {
            Ok(t) => t,
            Err(e) if interrupted(&e) => {
                let st = Stats::of(spec, &values, ops, op.info());
                return Ok(Ended::Interrupted(st));
            }
            Err(e) => return failed(s, spec, e.to_string()),
        };
        let x = figure(spec, op.as_ref(), ops, t);
        values.push(x);
        let mut info = measure::parts::info(json!({"batch": b, "ops": ops, "batch_s": t}));
        info.extend(op.batch_info());
        if b == 0 {
            info.extend(op.info());
        }
        s.sample(Values::new().with(spec.key, x), info)?;
        s.human()
            .progress(&format!("{}: batch {}/{}", spec.role, b + 1, plan.batches));
    }
    let info = op.info();
    drop(op);
    match Stats::of(spec, &values, ops, info) {
        Some(st) => {
            s.human().line(&line(&st));
            Ok(Ended::Done(st))
        }
        None => failed(s, spec, "no batch ran".into()),
    }
}

/// A failed sample for the probe, and its human line.
fn failed(s: &mut Session, spec: &Spec, why: String) -> Result<Ended, Failure> {
    let info = measure::parts::info(json!({"probe": spec.only}));
    s.sample_failed(&why, info)?;
    s.human().line(&format!("{}: failed: {why}", spec.role));
    Ok(Ended::Failed(why))
}

/// A person's line for a probe: `system call round trip: 95.1 ns (p10 94.8 ns, p90 97 ns)`.
pub fn line(st: &Stats) -> String {
    let t = |v| measure::human::value_text(st.spec.key, v);
    format!(
        "{}: {} (p10 {}, p90 {}; {} batches of {})",
        st.spec.role,
        t(st.median),
        t(st.p10),
        t(st.p90),
        st.batches,
        st.ops_per_batch
    )
}

/// The exit of a run whose probes ended as `ended`.
pub fn exit_of<'a>(ended: impl Iterator<Item = &'a Ended>) -> Exit {
    let (mut stopped, mut failed) = (false, false);
    for e in ended {
        stopped |= matches!(e, Ended::Interrupted(_));
        failed |= matches!(e, Ended::Failed(_));
    }
    if stopped {
        Exit::Interrupted
    } else if failed {
        Exit::MeasuredFailure
    } else {
        Exit::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistic_keys_keep_the_unit_last() {
        assert_eq!(stat_key("syscall_s", "median"), "syscall_median_s");
        assert_eq!(
            stat_key("mem_read_bytes_per_s", "p10"),
            "mem_read_p10_bytes_per_s"
        );
    }

    #[test]
    fn batches_summarize_as_type_7_quantiles() {
        let spec = Probe::Syscall.spec();
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let st = Stats::of(spec, &v, 5, Map::new()).unwrap();
        assert_eq!(st.median, 5.5);
        assert!((st.p10 - 1.9).abs() < 1e-12 && (st.p90 - 9.1).abs() < 1e-12);
        assert!(Stats::of(spec, &[], 5, Map::new()).is_none());
    }
}
