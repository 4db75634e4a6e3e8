//! The probe loop: probes sent on schedule (or, flooding, as soon as the reply came), the
//! socket waited on, timeouts expired, and every sample handed to the records.

use crate::clock::now_ns;
use crate::config::FLOOD_GAP;
use crate::session::{DRAIN_BATCH, End, Prober, ns, out_err};
use crate::socket;
use crate::tracker::{Probe, wire_seq};
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};
use std::io;

impl<'s, 'r: 's> Prober<'s, 'r> {
    pub(crate) fn probe_loop(&mut self) -> Result<End, Failure> {
        let start = now_ns();
        self.start = start;
        let deadline_at = self.cfg.deadline.map(|d| start.saturating_add(ns(d)));
        let interval = ns(self.cfg.interval);
        let flood_gap = if self.cfg.interval.is_zero() {
            ns(FLOOD_GAP)
        } else {
            interval
        };
        let count = self.cfg.count;
        let deadline_mode = self.cfg.deadline.is_some();
        let mut next_send = start;
        let mut lingering = false;
        // A flood probe answered at once leaves its send time as the loop's "now": the clock
        // is read once per probe (the send stamp), microseconds before the next one goes.
        let mut fresh: Option<i64> = None;
        // Whether a probe went out since the socket was last read: at a short interval the
        // loop goes from send to send, and what came meanwhile is read first (as ping does),
        // before the receive buffer fills and the kernel drops replies that did arrive.
        let mut unread = false;
        loop {
            if measure::signal::interrupted() {
                return Ok(End::Interrupted);
            }
            let now = fresh.take().unwrap_or_else(now_ns);
            self.expire(now)?;
            if deadline_at.is_some_and(|d| now >= d) {
                return Ok(End::Deadline);
            }
            let c = self.tracker.counts;
            if deadline_mode && count > 0 && c.received >= count {
                return Ok(End::Done);
            }
            let done_sending = !deadline_mode && count > 0 && c.sent >= count;
            // Held back while the probe that last used the next sequence number is out.
            let may_send = self.tracker.may_send();
            if done_sending {
                if self.tracker.waiting() == 0 {
                    return Ok(End::Done);
                }
                if !lingering {
                    lingering = true;
                    if self.linger(now) {
                        continue;
                    }
                }
            } else if may_send
                && (now >= next_send || (self.cfg.flood && self.tracker.waiting() == 0))
            {
                if unread {
                    self.wait_and_read(Some(0))?;
                }
                let (after, answered) = self.send_and_peek()?;
                unread = !answered;
                if answered {
                    fresh = Some(after);
                }
                next_send = if self.cfg.flood {
                    after + flood_gap
                } else {
                    (next_send + interval).max(after - interval)
                };
                continue;
            }
            let mut wake = self.tracker.next_deadline().unwrap_or(i64::MAX);
            if !done_sending && may_send {
                wake = wake.min(next_send);
            }
            if let Some(d) = deadline_at {
                wake = wake.min(d);
            }
            self.wait_and_read((wake != i64::MAX).then(|| wake - now))?;
            unread = false;
        }
    }

    /// Once everything is sent, as ping: wait about two of the longest round trips (at
    /// least a second) rather than the full timeout, unless -W was given or nothing came
    /// back. Whether the deadlines were brought forward.
    fn linger(&mut self, now: i64) -> bool {
        if self.cfg.timeout_given || self.tracker.counts.received == 0 {
            return false;
        }
        let max = self.rtts.iter().copied().fold(0.0f64, f64::max);
        let linger = ((2.0 * max * 1e9) as i64).max(1_000_000_000);
        self.tracker.cap_deadlines(now.saturating_add(linger));
        true
    }

    /// Sends the next probe; in flood mode reads the reply at once while that pays (on a
    /// fast path such as loopback it is queued before sendto returns). Returns the time
    /// right after sendto and whether the reply was read.
    fn send_and_peek(&mut self) -> Result<(i64, bool), Failure> {
        let after = self.send_probe()?;
        if !(self.cfg.flood && (self.eager_read || self.tracker.next_number().is_multiple_of(256)))
        {
            return Ok((after, false));
        }
        let before = self.tracker.waiting();
        self.drain()?;
        let hit = self.tracker.waiting() < before;
        self.eager_read = hit;
        Ok((after, hit))
    }

    /// Waits up to `timeout_ns` (`None`: without limit) for the socket, then reads what
    /// came: the error queue first, then replies.
    fn wait_and_read(&mut self, timeout_ns: Option<i64>) -> Result<(), Failure> {
        if let Some(r) = self.records.as_mut() {
            r.tick().map_err(|e| out_err(&e))?;
        }
        match socket::wait(&self.sock, timeout_ns) {
            Ok((readable, errq)) => {
                if errq {
                    self.drain_errqueue(DRAIN_BATCH)?;
                }
                if readable {
                    self.drain()?;
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(Failure::new(Exit::Cannot, "poll", e)),
        }
    }

    /// Sends the next probe; returns the time right after sendto.
    fn send_probe(&mut self) -> Result<i64, Failure> {
        let number = self.tracker.next_number();
        if self.cfg.outstanding
            && let Some(last) = number.checked_sub(1)
            && self.tracker.still_waiting(last)
        {
            self.human.outstanding(wire_seq(last));
        }
        let pkt = self.requests.probe(wire_seq(number), number);
        let before = now_ns();
        let res = self.sock.send_to(pkt, &self.target_addr);
        // The end of the sendto call bounds the kernel's stamp; without those stamps it is
        // not needed and the clock is not read again.
        let after = if self.sock.tx_stamps {
            now_ns()
        } else {
            before
        };
        let (probe, evicted) = self.tracker.sent(before, after);
        if self.human.on() {
            let c = self.tracker.counts;
            self.human.flood_dots(c.sent - c.received, false);
        }
        if let Some(old) = evicted {
            self.timeout_sample(&old, "timeout")?;
        }
        match res {
            Ok(()) => {
                if self.sock.tx_stamps {
                    // The stamps (the scheduler's and the driver's) are usually queued before
                    // sendto returns: read just them.
                    self.drain_errqueue(2)?;
                }
                Ok(after)
            }
            Err(e) => {
                let fatal = matches!(
                    e.raw_os_error(),
                    Some(libc::EMSGSIZE)
                        | Some(libc::EINVAL)
                        | Some(libc::EAFNOSUPPORT)
                        | Some(libc::EACCES)
                        | Some(libc::EDESTADDRREQ)
                );
                if fatal {
                    let hint = match e.raw_os_error() {
                        Some(libc::EMSGSIZE) => " (lower -s)",
                        Some(libc::EACCES) => {
                            " (a broadcast address? pingrt does not probe broadcast)"
                        }
                        _ => "",
                    };
                    return Err(Failure::new(
                        Exit::Cannot,
                        format!("sendto {}", self.cfg.target.ip()),
                        format!("{e}{hint}"),
                    ));
                }
                let _ = self.tracker.error(probe.seq);
                let mut i = self.probe_info(&probe);
                i.insert("errno".into(), json!(e.raw_os_error()));
                i.insert("detail".into(), json!(e.to_string()));
                let text = format!("sendto: {e}");
                self.human.error(&self.target_text, probe.seq, &text);
                self.failed_sample("send_error", i).map(|()| after)
            }
        }
    }

    pub(crate) fn probe_info(&self, p: &Probe) -> Map<String, Value> {
        let mut i = Map::new();
        i.insert("icmp_seq".into(), Value::from(p.seq));
        i.insert("probe".into(), Value::from(p.number));
        i
    }

    pub(crate) fn timeout_sample(&mut self, p: &Probe, reason: &str) -> Result<(), Failure> {
        let mut i = self.probe_info(p);
        i.insert("reason".into(), json!(reason));
        let waited = (now_ns() - p.sent_ns()) as f64 / 1e9;
        i.insert("waited_s".into(), json!(waited));
        if reason == "timeout" {
            self.human.timeout(p.seq);
        }
        let err = if reason == "timeout" {
            "timeout"
        } else {
            "unanswered"
        };
        self.failed_sample(err, i)
    }

    fn expire(&mut self, now: i64) -> Result<(), Failure> {
        for p in self.tracker.expire(now) {
            self.timeout_sample(&p, "timeout")?;
        }
        Ok(())
    }

    pub(crate) fn failed_sample(
        &mut self,
        err: &str,
        info: Map<String, Value>,
    ) -> Result<(), Failure> {
        match self.records.as_mut() {
            Some(r) => r.failed(err, info).map_err(|e| out_err(&e)),
            None => Ok(()),
        }
    }
}
