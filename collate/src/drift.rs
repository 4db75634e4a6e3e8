//! Whether a run's clock drifted, from the ratio of a guest's clock to its host's that its
//! begin carries among the facts a wrapper gives (`given.guest_clock_ratio`: fleet/envs/vm.sh
//! measures the guest's uptime against the host's over a few seconds before the guest's job).
//!
//! Every figure of a run is a count over a time the run's own clock measured: where that
//! clock runs fast or slow against real time, a rate or a time is off by as much. A run is on
//! a drifting clock when the ratio differs from 1 by more than [`DRIFT_MAX`] (the check reads
//! /proc/uptime to 10 ms, its lines at least 2 s apart, so its own error is about 1% at most
//! on a loaded host). A cell with
//! values of such a run is marked [`MARK`], and a note under the matrix says which runs and
//! their ratios. Records without the fact (bare runs, older guests) never drift.

use serde_json::{Map, Value};

/// How far from 1 the guest/host clock ratio may be before a run is on a drifting clock.
pub const DRIFT_MAX: f64 = 0.02;

/// The sign after a cell with values of a run on a drifting clock.
pub const MARK: &str = "‡";

/// The given fact that holds the ratio.
pub const RATIO_FACT: &str = "guest_clock_ratio";

/// What a run's records say of its clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clock {
    /// The guest's clock over the host's over the same span (1: they agree).
    pub ratio: Option<f64>,
}

impl Clock {
    /// The ratio a begin's `info` gives in `given` (a given fact is text, as
    /// `BENCHMATRIX_FACTS` gives it; a number is read too); none where it gives none, or
    /// something that is not a positive finite number.
    pub fn of(info: &Map<String, Value>) -> Clock {
        let ratio = info
            .get("given")
            .and_then(|g| g.get(RATIO_FACT))
            .and_then(|v| match v {
                Value::String(s) => s.trim().parse::<f64>().ok(),
                v => v.as_f64(),
            })
            .filter(|r| r.is_finite() && *r > 0.0);
        Clock { ratio }
    }

    pub fn is_empty(&self) -> bool {
        self.ratio.is_none()
    }

    /// Adds what another record of the run says: the ratio furthest from 1 stands.
    pub fn merge(&mut self, o: &Clock) {
        self.ratio = match (self.ratio, o.ratio) {
            (Some(a), Some(b)) => Some(if (b - 1.0).abs() > (a - 1.0).abs() {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        };
    }

    /// Whether the run was on a drifting clock (see the module doc); a ratio given as
    /// exactly 2% from 1 (1.0200) is not, whatever its binary rounding.
    pub fn drifting(&self) -> bool {
        self.ratio
            .is_some_and(|r| (r - 1.0).abs() > DRIFT_MAX + 1e-9)
    }

    /// `guest/host clock ratio 1.0500` for a drifting run; none for another.
    pub fn reason(&self) -> Option<String> {
        self.ratio
            .filter(|_| self.drifting())
            .map(|r| format!("guest/host clock ratio {r:.4}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn clock(v: Value) -> Clock {
        Clock::of(v.as_object().expect("an object"))
    }

    #[test]
    fn a_ratio_beyond_two_percent_of_one_drifts_and_one_within_does_not() {
        let c = clock(json!({"given": {"guest_clock_ratio": "1.0500"}}));
        assert!(c.drifting());
        assert_eq!(c.reason().as_deref(), Some("guest/host clock ratio 1.0500"));
        assert!(clock(json!({"given": {"guest_clock_ratio": 0.97}})).drifting());
        for quiet in ["1.0100", "0.9900", "1.0200", "1"] {
            let c = clock(json!({"given": {"guest_clock_ratio": quiet}}));
            assert!(!c.drifting(), "{quiet}");
            assert_eq!(c.reason(), None);
        }
    }

    #[test]
    fn records_without_the_fact_or_with_nonsense_never_drift() {
        for info in [
            json!({"kernel": "6.1"}),
            json!({"given": {"disk_bus": "ide"}}),
            json!({"given": {"guest_clock_ratio": "fast"}}),
            json!({"given": {"guest_clock_ratio": "-1.5"}}),
            json!({"guest_clock_ratio": "1.5"}),
        ] {
            let c = clock(info.clone());
            assert!(c.is_empty() && !c.drifting(), "{info}");
        }
    }

    #[test]
    fn the_ratio_furthest_from_one_stands() {
        let mut c = clock(json!({"given": {"guest_clock_ratio": "1.01"}}));
        c.merge(&Clock::default());
        assert_eq!(c.ratio, Some(1.01));
        c.merge(&Clock { ratio: Some(0.95) });
        assert_eq!(c.ratio, Some(0.95));
        c.merge(&Clock { ratio: Some(1.03) });
        assert_eq!(c.ratio, Some(0.95));
        assert!(c.drifting());
    }
}
