//! What a session watches while its streams run: the end of the warm-up (--omit), the
//! interval records (-i), each with a line for a person as iperf3 prints it, and without -i a
//! progress line on a terminal.

use crate::ctl::Ctl;
use crate::live::{Live, last_byte, moved, tcp_now};
use crate::plan::{Plan, Role};
use crate::sock::TICK;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Values, info};
use measure::units::{format_bits_per_s, format_bytes};
use serde_json::json;
use std::io::IsTerminal;

/// How often the progress line changes.
const PROGRESS_NS: u64 = 1_000_000_000;

/// The warm-up and interval state of one session.
#[derive(Debug)]
pub struct Watch {
    omit_ns: u64,
    iv_ns: Option<u64>,
    session: u64,
    /// (time, per-stream bytes) when the warm-up ended.
    pub omit_snap: Option<(u64, Vec<u64>)>,
    /// The end of the last interval: (ns, bytes, retransmits).
    last: Option<(u64, u64, u64)>,
    next: u64,
    /// When the progress line next changes; `None` without one (-i given, or no terminal).
    progress: Option<u64>,
}

impl Watch {
    /// The watch of session number `session` (0-based).
    pub fn new(plan: &Plan, session: u64, out: &mut Session) -> Watch {
        let progress =
            plan.interval.is_none() && out.human().on() && std::io::stderr().is_terminal();
        Watch {
            omit_ns: plan.omit.as_nanos() as u64,
            iv_ns: plan
                .interval
                .map(|d| d.as_nanos() as u64)
                .filter(|&n| n > 0),
            session,
            omit_snap: None,
            last: None,
            next: 0,
            progress: progress.then_some(0),
        }
    }

    /// Ends the warm-up and writes the interval that is due by `now`; returns when to look
    /// again (a tick at most).
    pub fn tick(
        &mut self,
        plan: &Plan,
        ctl: &Ctl,
        live: &[Live],
        out: &mut Session,
        now: u64,
    ) -> Result<u64, Failure> {
        let mut wake = now + TICK.as_nanos() as u64;
        let Some(f) = ctl.first_ns() else {
            return Ok(wake);
        };
        if self.omit_snap.is_none() && now >= f + self.omit_ns {
            // Without --omit nothing is left out; else what moved until now is.
            let snap: Vec<u64> = if self.omit_ns == 0 {
                Vec::new()
            } else {
                let queued = !ctl.past_deadline(now);
                live.iter().map(|l| moved(plan, l, queued)).collect()
            };
            self.omit_snap = Some((if self.omit_ns == 0 { f } else { now }, snap));
        }
        if self.omit_snap.is_none() {
            wake = wake.min(f + self.omit_ns);
        }
        if let Some(iv) = self.iv_ns {
            if self.last.is_none() {
                self.last = Some((f, 0, 0));
                self.next = f + iv;
            }
            if now >= self.next {
                // Streams that have all ended meanwhile end the interval at their last byte.
                let upto = last_byte(live).map_or(now, |e| e.min(now));
                if self.last.is_some_and(|(l_ns, _, _)| upto > l_ns) {
                    let queued = !ctl.past_deadline(now);
                    self.emit(plan, out, live, upto, f, queued)?;
                }
                while self.next <= now {
                    self.next += iv;
                }
            }
            wake = wake.min(self.next);
        }
        if let Some(at) = self.progress {
            // The first line a second after the first byte, then one a second.
            let mut at = at.max(f + PROGRESS_NS);
            if now >= at {
                self.show_progress(plan, ctl, live, out, now, f);
                at = now + PROGRESS_NS;
            }
            self.progress = Some(at);
            wake = wake.min(at);
        }
        Ok(wake)
    }

    /// The progress line: how long, how much and how fast since the first byte.
    fn show_progress(
        &self,
        plan: &Plan,
        ctl: &Ctl,
        live: &[Live],
        out: &mut Session,
        now: u64,
        first: u64,
    ) {
        let queued = !ctl.past_deadline(now);
        let bytes: u64 = live.iter().map(|l| moved(plan, l, queued)).sum();
        let secs = now.saturating_sub(first) as f64 / 1e9;
        let rate = if secs > 0.0 {
            format_bits_per_s(bytes as f64 * 8.0 / secs)
        } else {
            "-".into()
        };
        out.human().progress(&format!(
            "{secs:>7.1} s  {:>10}  {rate:>12}  over {} stream(s)",
            format_bytes(bytes as f64),
            live.len()
        ));
    }

    /// Writes the last, shorter interval once the streams have ended. It ends with the last
    /// byte (as the samples do), not when the supervisor woke to see it: a listener waits on
    /// the listening socket, a tick at most.
    pub fn finish(
        &mut self,
        plan: &Plan,
        ctl: &Ctl,
        live: &[Live],
        out: &mut Session,
        end_ns: u64,
    ) -> Result<(), Failure> {
        let last_byte_ns = last_byte(live).unwrap_or(end_ns);
        let (Some(_), Some(f)) = (self.iv_ns, ctl.first_ns()) else {
            return Ok(());
        };
        // A transfer that ended before the supervisor looked still gets its (one) interval.
        let (last_ns, last_bytes, _) = *self.last.get_or_insert((f, 0, 0));
        let total: u64 = live.iter().map(|l| l.prog.bytes()).sum();
        // A sender's end is the peer's close after its half-close: an interval that a tick
        // ended while the last bytes were being delivered is followed by one, without new
        // bytes, up to that end.
        let delivering = plan.role == Role::Send;
        if (total > last_bytes || delivering) && last_byte_ns > last_ns {
            self.emit(plan, out, live, last_byte_ns, f, false)?;
        }
        Ok(())
    }

    /// Writes the interval from the last one's end to `now` (nanoseconds after the session's
    /// base; `first` is its first byte).
    fn emit(
        &mut self,
        plan: &Plan,
        out: &mut Session,
        live: &[Live],
        now: u64,
        first: u64,
        queued: bool,
    ) -> Result<(), Failure> {
        let Some((l_ns, l_bytes, l_retr)) = self.last else {
            return Ok(());
        };
        let mut bytes: u64 = live.iter().map(|l| moved(plan, l, queued)).sum();
        if plan.role == Role::Recv
            && let Some(b) = plan.bytes
        {
            // What waits beyond the session's --bytes is never read.
            bytes = bytes.min(b);
        }
        // Never back: a count that lost a race with a read is made up by the next interval.
        let bytes = bytes.max(l_bytes);
        let secs = (now.saturating_sub(l_ns)) as f64 / 1e9;
        let mut v = Values::new();
        let d = bytes.saturating_sub(l_bytes);
        v.set_count(plan.role.bytes_key(), d);
        v.set("duration_s", secs);
        if secs > 0.0 {
            v.set("throughput_bits_per_s", d as f64 * 8.0 / secs);
        }
        let mut retr_now = l_retr;
        let mut tcp_text = String::new();
        if plan.role == Role::Send {
            let (retr, rtt, cwnd) = tcp_now(live);
            retr_now = retr;
            v.set_count("retransmits_count", retr.saturating_sub(l_retr));
            if let Some(r) = rtt {
                v.set("rtt_s", r);
            }
            v.set_count("cwnd_bytes", cwnd);
            tcp_text = format!(
                "  {:>5} retr  cwnd {}",
                retr.saturating_sub(l_retr),
                format_bytes(cwnd as f64)
            );
        }
        let (start_s, end_s) = ((l_ns - first) as f64 / 1e9, (now - first) as f64 / 1e9);
        let omitted = l_ns < first + self.omit_ns;
        let i = info(json!({
            "session": self.session,
            "start_s": start_s,
            "end_s": end_s,
            "streams": live.len(),
            "omitted": omitted,
            "measured_by": plan.role.word(),
        }));
        out.interval(v, i)?;
        if secs > 0.0 {
            // As iperf3 prints an interval: [session] start-end, bytes, rate, TCP.
            out.human().line(&format!(
                "[{}] {:>13} s  {:>10}  {:>12}{tcp_text}{}",
                self.session,
                format!("{start_s:.2}-{end_s:.2}"),
                format_bytes(d as f64),
                format_bits_per_s(d as f64 * 8.0 / secs),
                if omitted { "  (omitted)" } else { "" }
            ));
        }
        self.last = Some((now, bytes, retr_now));
        Ok(())
    }
}
