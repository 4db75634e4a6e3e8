//! The probe table: send times kept locally by sequence number, and every reply classified
//! (valid, duplicate, late, out of order, corrupt, foreign) before it counts.

use crate::packet;
use std::collections::VecDeque;

/// Where a probe stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Waiting,
    Answered,
    /// Given up: timed out, or an ICMP error came back for it.
    Failed,
}

/// Which of the kernel's transmit stamps a probe's send time is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStamp {
    /// `SCM_TSTAMP_SCHED`: taken as the packet enters the device's queueing layer, before
    /// the queue discipline and before the kernel's own work for the stamp (cloning it to
    /// the error queue), which then delay the packet: only a fallback.
    Sched,
    /// `SCM_TSTAMP_SND`: taken in the driver as it hands the packet to the device (for a veth,
    /// to the peer), the point nearest the wire, as the receive stamp is on the way back.
    Driver,
}

/// `SCM_TSTAMP_SND` and `SCM_TSTAMP_SCHED` of linux/net_tstamp.h, which the libc crate
/// does not define: a transmit stamp's `ee_info`.
const SCM_TSTAMP_SND: u32 = 0;
const SCM_TSTAMP_SCHED: u32 = 1;

impl TxStamp {
    /// The kind of a timestamping error-queue message from its `ee_info` (`SCM_TSTAMP_*`).
    pub fn from_ee_info(info: u32) -> Option<TxStamp> {
        match info {
            SCM_TSTAMP_SND => Some(TxStamp::Driver),
            SCM_TSTAMP_SCHED => Some(TxStamp::Sched),
            _ => None,
        }
    }
}

/// One echo request sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// 0-based probe number within the run (never wraps).
    pub number: u64,
    /// The 16-bit sequence number on the wire: (number + 1) mod 65536, as ping starts at 1.
    pub seq: u16,
    /// CLOCK_REALTIME ns taken right before sendto.
    pub user_before_ns: i64,
    /// CLOCK_REALTIME ns taken right after sendto returned.
    pub user_after_ns: i64,
    /// The kernel's transmit stamp, when one came and it falls inside the sendto call.
    pub kernel_tx_ns: Option<i64>,
    /// Which stamp `kernel_tx_ns` is.
    pub kernel_tx: Option<TxStamp>,
    /// When the probe times out.
    pub deadline_ns: i64,
    pub state: State,
}

impl Probe {
    /// The send time: the kernel's stamp when there is one, else the time before sendto.
    pub fn sent_ns(&self) -> i64 {
        self.kernel_tx_ns.unwrap_or(self.user_before_ns)
    }
}

/// The wire sequence number of probe `number`.
pub fn wire_seq(number: u64) -> u16 {
    (number.wrapping_add(1) & 0xffff) as u16
}

/// What a reply turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A valid first reply to a waiting probe.
    Reply {
        probe: Probe,
        rtt_s: f64,
        out_of_order: bool,
    },
    /// A second (or later) reply to a probe already answered.
    Duplicate { probe: Probe, rtt_s: f64 },
    /// A reply to a probe already given up (timed out or failed), or to an older probe that
    /// used the same 16-bit sequence number before it wrapped.
    Late {
        number: u64,
        seq: u16,
        rtt_s: Option<f64>,
    },
    /// A reply with a bad checksum or payload that differs from what was sent.
    Corrupt { seq: u16, why: &'static str },
    /// Not a reply to this run (another process's identifier or cookie, unknown sequence).
    Foreign,
    /// An ICMP error for a waiting probe.
    Error { probe: Probe },
    /// An ICMP error for a probe already settled.
    Ignored,
}

/// Counts of everything the tracker saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub sent: u64,
    pub received: u64,
    pub duplicates: u64,
    pub late: u64,
    pub out_of_order: u64,
    pub corrupt: u64,
    pub foreign: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub kernel_tx: u64,
    /// Of those, the probes whose stamp is the driver's (the rest kept the scheduler's).
    pub driver_tx: u64,
}

/// The latest probe of each 16-bit sequence number, indexed directly (grows as the
/// sequence numbers are used, up to 65536 entries).
#[derive(Debug, Default)]
struct Slots(Vec<Option<Probe>>);

impl Slots {
    fn get(&self, seq: &u16) -> Option<&Probe> {
        self.0.get(usize::from(*seq)).and_then(Option::as_ref)
    }

    fn get_mut(&mut self, seq: &u16) -> Option<&mut Probe> {
        self.0.get_mut(usize::from(*seq)).and_then(Option::as_mut)
    }

    fn insert(&mut self, seq: u16, p: Probe) -> Option<Probe> {
        let i = usize::from(seq);
        if i >= self.0.len() {
            self.0.resize(i + 1, None);
        }
        self.0[i].replace(p)
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Probe> {
        self.0.iter_mut().flatten()
    }
}

/// The probes of one run.
#[derive(Debug)]
pub struct Tracker {
    cookie: u64,
    /// The payload of probe 0: a reply's payload differs from it only in the probe number.
    pattern: Vec<u8>,
    timeout_ns: i64,
    slots: Slots,
    /// Sequence numbers in send order; settled ones are dropped lazily.
    order: VecDeque<(u64, u16)>,
    waiting: u64,
    highest_answered: Option<u64>,
    pub counts: Counts,
}

impl Tracker {
    /// A tracker for payloads of `size` bytes carrying `cookie`; `timeout_ns` per probe
    /// (0 or less: never).
    pub fn new(cookie: u64, size: usize, timeout_ns: i64) -> Self {
        Tracker {
            cookie,
            pattern: packet::payload(cookie, 0, size),
            timeout_ns,
            slots: Slots::default(),
            order: VecDeque::new(),
            waiting: 0,
            highest_answered: None,
            counts: Counts::default(),
        }
    }

    /// Makes room for `probes` probes (0: as many as the sequence numbers allow) up front and
    /// backs it with memory, so the table is neither copied nor faulted in page by page while
    /// probes go out.
    pub fn reserve(&mut self, probes: u64) {
        let n = if probes == 0 {
            1 << 16
        } else {
            probes.min(1 << 16)
        };
        self.slots.0.reserve_exact(n as usize + 1);
        crate::prefault::populate(&mut self.slots.0);
    }

    /// Number of probes sent and not settled.
    pub fn waiting(&self) -> u64 {
        self.waiting
    }

    /// The next probe number.
    pub fn next_number(&self) -> u64 {
        self.counts.sent
    }

    /// Whether probe `number` went out and still waits for its reply.
    pub fn still_waiting(&self, number: u64) -> bool {
        self.slots
            .get(&wire_seq(number))
            .is_some_and(|p| p.number == number && p.state == State::Waiting)
    }

    /// Whether the next probe may go out: the probe that last used its 16-bit sequence number
    /// (65536 probes ago, or earlier) is settled. So no two probes with one sequence number are
    /// ever out at once, and a reply matches the one probe with its sequence number that is
    /// still outstanding; at most 65536 probes are outstanding.
    pub fn may_send(&self) -> bool {
        self.slots
            .get(&wire_seq(self.counts.sent))
            .is_none_or(|p| p.state != State::Waiting)
    }

    /// Records probe `number` as sent between `before` and `after`. The probe loop sends only
    /// when [`Tracker::may_send`]; should a probe still wait in the same 16-bit slot, it times
    /// out first and is returned.
    pub fn sent(&mut self, before: i64, after: i64) -> (Probe, Option<Probe>) {
        let number = self.counts.sent;
        let seq = wire_seq(number);
        let deadline_ns = if self.timeout_ns > 0 {
            before.saturating_add(self.timeout_ns)
        } else {
            i64::MAX
        };
        let p = Probe {
            number,
            seq,
            user_before_ns: before,
            user_after_ns: after,
            kernel_tx_ns: None,
            kernel_tx: None,
            deadline_ns,
            state: State::Waiting,
        };
        let evicted = match self.slots.insert(seq, p) {
            Some(mut old) if old.state == State::Waiting => {
                old.state = State::Failed;
                self.waiting -= 1;
                self.counts.timeouts += 1;
                Some(old)
            }
            _ => None,
        };
        self.counts.sent += 1;
        self.waiting += 1;
        self.order.push_back((number, seq));
        (p, evicted)
    }

    /// A kernel transmit stamp of kind `kind`: it belongs to the waiting probe whose sendto
    /// call it falls inside, else to none (then that probe keeps the time taken before
    /// sendto). The driver's stamp replaces the scheduler's, never the other way round.
    pub fn tx_stamp(&mut self, ts: i64, kind: TxStamp) -> bool {
        for &(number, seq) in self.order.iter().rev() {
            if let Some(p) = self.slots.get_mut(&seq)
                && p.number == number
                && (p.kernel_tx.is_none()
                    || (p.kernel_tx, kind) == (Some(TxStamp::Sched), TxStamp::Driver))
                && ts >= p.user_before_ns
                && ts <= p.user_after_ns
            {
                if p.kernel_tx.is_none() {
                    self.counts.kernel_tx += 1;
                }
                if kind == TxStamp::Driver {
                    self.counts.driver_tx += 1;
                }
                p.kernel_tx_ns = Some(ts);
                p.kernel_tx = Some(kind);
                return true;
            }
        }
        false
    }

    /// Classifies an echo reply with wire sequence `seq` received at `rx_ns`.
    pub fn reply(&mut self, seq: u16, payload: &[u8], checksum_ok: bool, rx_ns: i64) -> Outcome {
        let slot = match self.check(seq, payload, checksum_ok) {
            Ok(slot) => slot,
            Err(o) => return o,
        };
        let rtt_s = (rx_ns - slot.sent_ns()) as f64 / 1e9;
        if rtt_s < 0.0 {
            // Received before this probe was sent: a reply to an earlier user of the slot.
            self.counts.late += 1;
            return Outcome::Late {
                number: slot.number,
                seq,
                rtt_s: None,
            };
        }
        match slot.state {
            State::Waiting => {
                let mut p = slot;
                p.state = State::Answered;
                if let Some(s) = self.slots.get_mut(&seq) {
                    s.state = State::Answered;
                }
                self.waiting -= 1;
                self.counts.received += 1;
                let out_of_order = self.highest_answered.is_some_and(|h| h > p.number);
                if out_of_order {
                    self.counts.out_of_order += 1;
                }
                self.highest_answered =
                    Some(self.highest_answered.map_or(p.number, |h| h.max(p.number)));
                Outcome::Reply {
                    probe: p,
                    rtt_s,
                    out_of_order,
                }
            }
            State::Answered => {
                self.counts.duplicates += 1;
                Outcome::Duplicate { probe: slot, rtt_s }
            }
            State::Failed => {
                self.counts.late += 1;
                Outcome::Late {
                    number: slot.number,
                    seq,
                    rtt_s: Some(rtt_s),
                }
            }
        }
    }

    /// The probe a reply with wire sequence `seq` answers, when it is ours and intact:
    /// else the outcome (foreign, corrupt, or late for an older probe of the same slot).
    fn check(&mut self, seq: u16, payload: &[u8], checksum_ok: bool) -> Result<Probe, Outcome> {
        if payload.len() >= 8 && payload[..8] != self.cookie.to_be_bytes() {
            self.counts.foreign += 1;
            return Err(Outcome::Foreign);
        }
        let Some(slot) = self.slots.get(&seq).copied() else {
            self.counts.foreign += 1;
            return Err(Outcome::Foreign);
        };
        if !checksum_ok {
            self.counts.corrupt += 1;
            return Err(Outcome::Corrupt {
                seq,
                why: "bad ICMP checksum",
            });
        }
        // The probe number the payload names, when it is long enough to carry one.
        let named = payload
            .get(8..16)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes);
        if let Some(n) = named
            && n != slot.number
        {
            if n < slot.number && wire_seq(n) == seq {
                self.counts.late += 1;
                return Err(Outcome::Late {
                    number: n,
                    seq,
                    rtt_s: None,
                });
            }
            // Our cookie, but a probe number that does not fit the sequence number.
            self.counts.corrupt += 1;
            return Err(Outcome::Corrupt {
                seq,
                why: "payload names another probe",
            });
        }
        if !packet::payload_matches_pattern(&self.pattern, slot.number, payload) {
            self.counts.corrupt += 1;
            return Err(Outcome::Corrupt {
                seq,
                why: "payload differs from what was sent",
            });
        }
        Ok(slot)
    }

    /// An ICMP error quoting our request with wire sequence `seq`.
    pub fn error(&mut self, seq: u16) -> Outcome {
        match self.slots.get(&seq).copied() {
            Some(mut p) if p.state == State::Waiting => {
                p.state = State::Failed;
                self.slots.insert(seq, p);
                self.waiting -= 1;
                self.counts.errors += 1;
                Outcome::Error { probe: p }
            }
            Some(_) => Outcome::Ignored,
            None => {
                self.counts.foreign += 1;
                Outcome::Foreign
            }
        }
    }

    /// Drops settled probes from the front of the send order.
    fn trim(&mut self) {
        while let Some(&(number, seq)) = self.order.front() {
            match self.slots.get(&seq) {
                Some(p) if p.number == number && p.state == State::Waiting => break,
                _ => {
                    self.order.pop_front();
                }
            }
        }
    }

    /// The earliest deadline of a waiting probe. Deadlines follow the send order (the same
    /// timeout after each send time, or capped to one limit), so it is the first one's.
    pub fn next_deadline(&mut self) -> Option<i64> {
        self.trim();
        let &(_, seq) = self.order.front()?;
        self.slots.get(&seq).map(|p| p.deadline_ns)
    }

    /// Probes whose deadline is at or before `now`: they time out and are returned in order.
    pub fn expire(&mut self, now: i64) -> Vec<Probe> {
        let mut out = Vec::new();
        loop {
            self.trim();
            let Some(&(_, seq)) = self.order.front() else {
                break;
            };
            match self.slots.get_mut(&seq) {
                Some(p) if p.deadline_ns <= now => {
                    p.state = State::Failed;
                    out.push(*p);
                    self.order.pop_front();
                }
                _ => break,
            }
        }
        self.waiting -= out.len() as u64;
        self.counts.timeouts += out.len() as u64;
        out
    }

    /// Brings every waiting probe's deadline forward to at most `limit` (the end of a run).
    pub fn cap_deadlines(&mut self, limit: i64) {
        for p in self.slots.values_mut() {
            if p.state == State::Waiting && p.deadline_ns > limit {
                p.deadline_ns = limit;
            }
        }
    }
}

#[cfg(test)]
mod tests;
