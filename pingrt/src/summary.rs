//! The end of a run: unanswered probes, the summary record, the ping summary and the exit code.

use crate::clock::now_ns;
use crate::human::Tally;
use crate::records::Records;
use crate::session::{End, Prober, out_err};
use crate::stats;
use measure::parts::{Summary, Values};
use measure::{Exit, Failure, Status};
use serde_json::{Map, Value, json};

impl<'s, 'r: 's> Prober<'s, 'r> {
    /// Writes the samples of unanswered probes and the summary; turns the end into an exit code.
    pub(crate) fn finish(mut self, result: Result<End, Failure>) -> Result<Exit, Failure> {
        let st = stats::rtt_stats(&self.rtts);
        let end = match result {
            Ok(end) => end,
            Err(f) => return Err(self.failed(f, st.as_ref())),
        };
        self.end_ns = Some(now_ns());
        if end != End::Done {
            // Probes still out when the deadline or Ctrl-C came count as lost, as in ping.
            let now = now_ns();
            self.tracker.cap_deadlines(now);
            let reason = end.as_str();
            for p in self.tracker.expire(now) {
                self.timeout_sample(&p, reason)?;
            }
        }
        let (values, mut i) = self.summary_values(st.as_ref());
        i.insert("end".into(), json!(end.as_str()));
        let c = self.tracker.counts;
        let unlimited = self.cfg.count == 0 && self.cfg.deadline.is_none();
        let abnormal = end == End::Interrupted && !unlimited;
        let (status, error) = self.status(abnormal);
        let tally = Tally {
            sent: c.sent,
            received: c.received,
            duplicates: c.duplicates,
            errors: c.errors,
            elapsed_s: self.elapsed_s(),
            rtt: st.map(|s| (s.min, s.mean, s.max, s.mdev)),
        };
        self.human.summary(&self.cfg.host, &tally);
        let (rep, written) = match self.records.take().and_then(Records::finish) {
            Some(r) => r,
            None => {
                return Err(Failure::new(
                    Exit::Cannot,
                    "writing records",
                    "the record writer failed",
                ));
            }
        };
        written.map_err(|e| out_err(&e))?;
        rep.summary(Summary {
            status,
            error,
            headline: Some("rtt_mean_s".into()),
            headlines: Vec::new(),
            values,
            info: i,
        })
        .map_err(|e| out_err(&e))?;
        if abnormal {
            return Ok(Exit::Interrupted);
        }
        Ok(if c.received > 0 {
            Exit::Ok
        } else {
            Exit::MeasuredFailure
        })
    }

    /// The summary's status and error: failed without a reply, partial when interrupted
    /// before the last probe (`abnormal`), else ok.
    fn status(&self, abnormal: bool) -> (Status, Option<String>) {
        let c = self.tracker.counts;
        if c.received == 0 {
            (
                Status::Failed,
                Some(format!(
                    "no reply from {} ({} sent)",
                    self.cfg.target.ip(),
                    c.sent
                )),
            )
        } else if abnormal {
            (
                Status::Partial,
                Some("interrupted before the last probe".to_string()),
            )
        } else {
            (Status::Ok, None)
        }
    }

    /// Writes the summary of a run that stopped on the failure `f` (partial when replies
    /// came, else failed) and gives `f` back.
    fn failed(mut self, f: Failure, st: Option<&stats::RttStats>) -> Failure {
        self.end_ns = Some(now_ns());
        let rep = match self.records.take().and_then(Records::finish) {
            Some((rep, _)) => rep,
            None => return f,
        };
        let msg = f.message.clone().unwrap_or_else(|| "failed".into());
        let (mut values, mut i) = self.summary_values(st);
        i.insert("end".into(), json!("error"));
        if self.tracker.counts.received == 0 {
            values = Values::new();
        }
        let _ = rep.summary(Summary {
            status: if self.tracker.counts.received > 0 {
                Status::Partial
            } else {
                Status::Failed
            },
            error: Some(msg),
            headline: None,
            headlines: Vec::new(),
            values,
            info: i,
        });
        f
    }

    fn summary_values(&mut self, st: Option<&stats::RttStats>) -> (Values, Map<String, Value>) {
        let c = self.tracker.counts;
        let elapsed = self.elapsed_s();
        let mut v = Values::new()
            .with_count("sent_count", c.sent)
            .with_count("received_count", c.received)
            .with_count("duplicate_count", c.duplicates)
            .with_count("late_count", c.late)
            .with_count("out_of_order_count", c.out_of_order)
            .with_count("error_count", c.errors)
            .with_count("timeout_count", c.timeouts)
            .with_count("corrupt_count", c.corrupt)
            .with_count("foreign_count", c.foreign);
        if c.sent > 0 {
            v.set(
                "loss_ratio",
                c.sent.saturating_sub(c.received) as f64 / c.sent as f64,
            );
        }
        if let Some(s) = st {
            v.set("rtt_min_s", s.min);
            v.set("rtt_mean_s", s.mean);
            v.set("rtt_max_s", s.max);
            v.set("rtt_mdev_s", s.mdev);
            v.set("rtt_stddev_s", s.stddev);
            v.set("rtt_p50_s", s.p50);
            v.set("rtt_p90_s", s.p90);
            v.set("rtt_p99_s", s.p99);
        }
        v.set("elapsed_s", elapsed);
        if elapsed > 0.0 {
            v.set("probe_rate_per_s", c.sent as f64 / elapsed);
        }
        let mut i = self.base_info.clone();
        i.insert("seq_wraps".into(), json!(c.sent / 65_536));
        i.insert("kernel_tx_stamps".into(), json!(c.kernel_tx));
        i.insert("driver_tx_stamps".into(), json!(c.driver_tx));
        (v, i)
    }

    fn elapsed_s(&self) -> f64 {
        (self.end_ns.unwrap_or_else(now_ns) - self.start) as f64 / 1e9
    }
}
