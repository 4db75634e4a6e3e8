//! How busy the machine was in each run, from the load facts its begin and summary carry
//! (measure's `envfacts::LoadNow`): at begin `load_1m`, `procs_running_count` and
//! `cpu_count`; at the summary `load_1m_end`, `procs_running_end_count` and `steal_ratio`.
//!
//! A run is busy when more work wanted the CPUs than there were CPUs, or when the hypervisor
//! gave a share of them to others: the 1-minute load average at begin or at the end above
//! the CPU count, the tasks runnable besides the tool itself (`procs_running` − 1) at begin
//! or at the end above the CPU count, or the steal time above [`STEAL_MAX`] of all CPUs'
//! time over the run. A cell with values of a busy run is marked [`MARK`], and the facts
//! block gets a `load` line when a shown column had a busy run. Records without these facts
//! (older tools, converted results) are never busy.

use serde_json::{Map, Value};

/// The steal share of the CPUs' time above which a run is busy.
pub const STEAL_MAX: f64 = 0.05;

/// The sign after a cell with values of a busy run.
pub const MARK: &str = "†";

/// The load a run's records give: each figure the highest of begin's and the summary's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    /// The 1-minute load average.
    pub load: Option<f64>,
    /// Tasks runnable besides the tool (`procs_running` − 1).
    pub runnable: Option<f64>,
    /// The CPUs online (begin's `cpu_count`).
    pub cpus: Option<f64>,
    /// The steal share of all CPUs' time over the run (the summary's).
    pub steal: Option<f64>,
}

/// The highest of two figures either may lack.
fn max(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        _ => a.or(b),
    }
}

impl Load {
    /// The load facts of a begin's or a summary's `info` (none: an empty load).
    pub fn of(info: &Map<String, Value>) -> Load {
        let num = |k: &str| {
            info.get(k)
                .and_then(Value::as_f64)
                .filter(|x| x.is_finite())
        };
        let runnable = |k: &str| num(k).map(|n| (n - 1.0).max(0.0));
        Load {
            load: max(num("load_1m"), num("load_1m_end")),
            runnable: max(
                runnable("procs_running_count"),
                runnable("procs_running_end_count"),
            ),
            cpus: num("cpu_count").filter(|&c| c >= 1.0),
            steal: num("steal_ratio"),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Load::default()
    }

    /// Adds what another record of the run says.
    pub fn merge(&mut self, o: &Load) {
        self.load = max(self.load, o.load);
        self.runnable = max(self.runnable, o.runnable);
        self.cpus = self.cpus.or(o.cpus);
        self.steal = max(self.steal, o.steal);
    }

    /// Whether the run was busy (see the module doc).
    pub fn busy(&self) -> bool {
        !self.reasons().is_empty()
    }

    /// What made the run busy, one phrase each; none when it was not.
    pub fn reasons(&self) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(c) = self.cpus {
            if let Some(l) = self.load.filter(|&l| l > c) {
                why.push(format!("load {l:.2} on {c} CPUs"));
            }
            if let Some(r) = self.runnable.filter(|&r| r > c) {
                why.push(format!("{r} tasks runnable besides the tool on {c} CPUs"));
            }
        }
        if let Some(s) = self.steal.filter(|&s| s > STEAL_MAX) {
            why.push(format!("steal {:.1}% of the CPUs' time", s * 100.0));
        }
        why
    }
}

/// The load of a column's runs, for the facts block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnLoad {
    /// Runs with load facts, and how many of them were busy.
    pub runs: usize,
    pub busy: usize,
    /// The highest of each figure over those runs.
    pub most: Load,
}

impl ColumnLoad {
    pub fn add(&mut self, l: &Load) {
        if l.is_empty() {
            return;
        }
        self.runs += 1;
        self.busy += usize::from(l.busy());
        self.most.merge(l);
    }

    /// `busy: 2 CPUs, load 6.5, 7 runnable, steal 0%, 1 of 2 runs`, or `quiet: ...` (the
    /// highest of each figure; the essentials first, for the text matrix cuts a long fact);
    /// `None` for a column none of whose runs says.
    pub fn text(&self) -> Option<String> {
        if self.runs == 0 {
            return None;
        }
        let m = &self.most;
        let mut parts = Vec::new();
        if let Some(c) = m.cpus {
            parts.push(format!("{c} CPUs"));
        }
        if let Some(l) = m.load {
            parts.push(format!("load {l:.1}"));
        }
        if let Some(r) = m.runnable {
            parts.push(format!("{r} runnable"));
        }
        if let Some(s) = m.steal {
            parts.push(format!("steal {:.0}%", s * 100.0));
        }
        if self.busy > 0 && self.busy < self.runs {
            parts.push(format!("{} of {} runs", self.busy, self.runs));
        }
        let head = if self.busy > 0 { "busy" } else { "quiet" };
        Some(format!("{head}: {}", parts.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(v: Value) -> Load {
        Load::of(v.as_object().expect("an object"))
    }

    #[test]
    fn a_load_above_the_cpu_count_is_busy_and_one_below_is_not() {
        let mut l = load(json!({"cpu_count": 2, "load_1m": 2.5, "procs_running_count": 2}));
        assert!(l.busy());
        assert_eq!(l.reasons(), vec!["load 2.50 on 2 CPUs".to_string()]);
        l = load(json!({"cpu_count": 2, "load_1m": 1.9, "procs_running_count": 3}));
        assert!(
            !l.busy(),
            "{l:?}: 2 runnable besides the tool is not above 2 CPUs"
        );
        // The end of the run counts as much as its begin.
        l.merge(&load(json!({"load_1m_end": 2.1})));
        assert!(l.busy());
    }

    #[test]
    fn runnable_tasks_besides_the_tool_above_the_cpu_count_are_busy() {
        let l = load(json!({"cpu_count": 2, "load_1m": 0.3, "procs_running_count": 7}));
        assert_eq!(l.runnable, Some(6.0));
        assert!(l.busy());
        let l = load(json!({"cpu_count": 4, "procs_running_end_count": 5}));
        assert!(!l.busy());
    }

    #[test]
    fn steal_above_the_threshold_is_busy() {
        let l = load(json!({"steal_ratio": 0.08}));
        assert_eq!(
            l.reasons(),
            vec!["steal 8.0% of the CPUs' time".to_string()]
        );
        assert!(!load(json!({"steal_ratio": 0.04})).busy());
        assert!(!load(json!({"steal_ratio": STEAL_MAX})).busy());
    }

    #[test]
    fn records_without_load_facts_are_never_busy() {
        let l = load(json!({"cpu_count": 1, "kernel": "6.1"}));
        assert!(!l.busy());
        // A load without a CPU count to compare it with marks nothing.
        assert!(!load(json!({"load_1m": 40.0})).busy());
        let mut c = ColumnLoad::default();
        c.add(&Load::default());
        assert_eq!(c.text(), None);
    }

    #[test]
    fn a_column_says_how_many_of_its_runs_were_busy() {
        let mut c = ColumnLoad::default();
        c.add(&load(
            json!({"cpu_count": 2, "load_1m": 0.5, "procs_running_count": 1, "steal_ratio": 0.0}),
        ));
        assert_eq!(
            c.text().as_deref(),
            Some("quiet: 2 CPUs, load 0.5, 0 runnable, steal 0%")
        );
        c.add(&load(
            json!({"cpu_count": 2, "load_1m": 6.25, "procs_running_count": 8}),
        ));
        assert_eq!(
            c.text().as_deref(),
            Some("busy: 2 CPUs, load 6.2, 7 runnable, steal 0%, 1 of 2 runs")
        );
    }
}
