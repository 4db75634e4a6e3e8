//! How busy the machine was over a run: the 1-minute load average (/proc/loadavg), the
//! runnable tasks (`procs_running` of /proc/stat) and the CPUs usable by the process at
//! begin; at the summary the same load figures again, the steal time of all CPUs over the
//! run (/proc/stat's `steal` column, begin to end) and the tool's own involuntary context
//! switches (getrusage). A figure measured beside other work (a busy host, a neighbour VM
//! that the hypervisor runs instead) says so in its records, and collate marks it.

use super::Probe;
use serde_json::{Map, Value, json};

/// What the kernel says of the load at one moment (begin, or the summary).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadNow {
    /// The 1-minute load average.
    pub load_1m: Option<f64>,
    /// Tasks running or runnable right now, the reader itself among them.
    pub procs_running: Option<u64>,
    /// All CPUs' time so far, in clock ticks: (steal, total of every state).
    pub ticks: Option<(u64, u64)>,
    /// This process's involuntary context switches so far.
    pub involuntary: Option<u64>,
}

impl Probe {
    /// The load figures now; the process's own counters only on the live system.
    pub fn load_now(&self) -> LoadNow {
        let stat = self.read("proc/stat").unwrap_or_default();
        LoadNow {
            load_1m: self
                .read("proc/loadavg")
                .and_then(|l| l.split_whitespace().next()?.parse().ok()),
            procs_running: stat.lines().find_map(|l| {
                l.strip_prefix("procs_running ")
                    .and_then(|n| n.trim().parse().ok())
            }),
            ticks: stat.lines().next().and_then(cpu_ticks),
            involuntary: if self.live() {
                crate::sysfacts::involuntary_switches()
            } else {
                None
            },
        }
    }

    /// The CPUs this process may run on (its affinity mask), on the live system.
    pub fn cpu_usable_count(&self) -> Option<u64> {
        if !self.live() {
            return None;
        }
        crate::sysfacts::usable_cpus()
    }
}

/// (steal, total) from /proc/stat's aggregate `cpu` line: user nice system idle iowait irq
/// softirq steal [guest guest_nice]. Guest time is already counted in user and nice, so the
/// total is the sum of the first eight columns.
fn cpu_ticks(line: &str) -> Option<(u64, u64)> {
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let cols: Vec<u64> = f.take(8).map(|n| n.parse().ok()).collect::<Option<_>>()?;
    let steal = *cols.get(7)?;
    Some((steal, cols.iter().sum()))
}

impl LoadNow {
    /// A begin's load facts: `load_1m` and `procs_running_count`.
    pub fn begin_facts(&self) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(l) = self.load_1m {
            m.insert("load_1m".into(), json!(l));
        }
        if let Some(n) = self.procs_running {
            m.insert("procs_running_count".into(), json!(n));
        }
        m
    }

    /// A summary's load facts over the run from `start` (begin's) to `self` (now):
    /// `load_1m_end`, `procs_running_end_count`, `steal_ratio` (the steal ticks of all CPUs
    /// over all their ticks, i.e. over wall time × online CPUs; left out when the run was
    /// too short for the kernel to count a tick) and `tool_involuntary_switches_count`.
    pub fn end_facts(&self, start: &LoadNow) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(l) = self.load_1m {
            m.insert("load_1m_end".into(), json!(l));
        }
        if let Some(n) = self.procs_running {
            m.insert("procs_running_end_count".into(), json!(n));
        }
        if let (Some((s0, t0)), Some((s1, t1))) = (start.ticks, self.ticks)
            && t1 > t0
        {
            let steal = s1.saturating_sub(s0) as f64 / (t1 - t0) as f64;
            m.insert("steal_ratio".into(), json!(steal.min(1.0)));
        }
        if let (Some(a), Some(b)) = (start.involuntary, self.involuntary) {
            m.insert(
                "tool_involuntary_switches_count".into(),
                json!(b.saturating_sub(a)),
            );
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_gives_steal_and_the_total_without_guest_time() {
        let line = "cpu  10 1 5 100 2 0 1 7 40 0";
        assert_eq!(cpu_ticks(line), Some((7, 126)));
        assert_eq!(cpu_ticks("cpu0 1 1 1 1 1 1 1 1"), None);
        assert_eq!(cpu_ticks("cpu 1 2"), None);
    }

    #[test]
    fn a_fixture_tree_gives_its_load_and_the_run_its_steal() {
        let d = tempfile::tempdir().expect("a temp dir");
        let write = |stat: &str, load: &str| {
            std::fs::create_dir_all(d.path().join("proc")).expect("proc/");
            std::fs::write(d.path().join("proc/stat"), stat).expect("stat");
            std::fs::write(d.path().join("proc/loadavg"), load).expect("loadavg");
        };
        let p = Probe::at(d.path());
        write(
            "cpu  100 0 0 800 0 0 0 100 0 0\nprocs_running 7\n",
            "6.52 2.10 1.00 7/300 42\n",
        );
        let start = p.load_now();
        assert_eq!(start.load_1m, Some(6.52));
        assert_eq!(start.procs_running, Some(7));
        assert_eq!(start.involuntary, None, "a fixture has no process counters");
        let b = start.begin_facts();
        assert_eq!(b["load_1m"], json!(6.52));
        assert_eq!(b["procs_running_count"], json!(7));
        write(
            "cpu  150 0 0 1200 0 0 0 150 0 0\nprocs_running 2\n",
            "0.50 2.10 1.00 2/300 42\n",
        );
        let e = p.load_now().end_facts(&start);
        assert_eq!(e["load_1m_end"], json!(0.5));
        assert_eq!(e["procs_running_end_count"], json!(2));
        // 50 of the 500 ticks over the run were stolen.
        assert_eq!(e["steal_ratio"], json!(0.1));
        // No tick counted: no ratio.
        assert!(!start.end_facts(&start).contains_key("steal_ratio"));
    }

    #[test]
    fn the_live_system_counts_this_process_among_the_runnable() {
        let now = Probe::system().load_now();
        assert!(now.procs_running.is_some_and(|n| n >= 1));
        assert!(now.load_1m.is_some_and(|l| l >= 0.0));
        assert!(now.involuntary.is_some());
        let usable = Probe::system()
            .cpu_usable_count()
            .expect("an affinity mask");
        assert!(usable >= 1 && usable <= Probe::system().cpu_count() as u64);
    }
}
