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

    /// A kernel transmit stamp: it belongs to the waiting probe whose sendto call it falls
    /// inside, else to none (then that probe keeps the time taken before sendto).
    pub fn tx_stamp(&mut self, ts: i64) -> bool {
        for &(number, seq) in self.order.iter().rev() {
            if let Some(p) = self.slots.get_mut(&seq)
                && p.number == number
                && p.kernel_tx_ns.is_none()
                && ts >= p.user_before_ns
                && ts <= p.user_after_ns
            {
                p.kernel_tx_ns = Some(ts);
                self.counts.kernel_tx += 1;
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
mod tests {
    use super::*;

    const COOKIE: u64 = 0xfeed_f00d_dead_beef;

    fn send(t: &mut Tracker, at: i64) -> Probe {
        t.sent(at, at + 10).0
    }

    fn reply(t: &mut Tracker, p: &Probe, at: i64) -> Outcome {
        t.reply(p.seq, &packet::payload(COOKIE, p.number, 56), true, at)
    }

    #[test]
    fn reply_duplicate_late_and_out_of_order() {
        let mut t = Tracker::new(COOKIE, 56, 1_000);
        let a = send(&mut t, 0);
        let b = send(&mut t, 100);
        assert_eq!((a.seq, b.seq), (1, 2));
        assert!(matches!(
            reply(&mut t, &b, 150),
            Outcome::Reply {
                out_of_order: false,
                ..
            }
        ));
        match reply(&mut t, &a, 160) {
            Outcome::Reply {
                rtt_s,
                out_of_order,
                ..
            } => {
                assert!(out_of_order);
                assert!((rtt_s - 160e-9).abs() < 1e-15);
            }
            o => panic!("{o:?}"),
        }
        assert!(matches!(reply(&mut t, &a, 170), Outcome::Duplicate { .. }));
        let c = send(&mut t, 200);
        assert_eq!(t.expire(1_199), vec![]);
        let expired = t.expire(1_200);
        assert_eq!(expired.len(), 1);
        assert_eq!(expired[0].number, c.number);
        assert!(matches!(
            reply(&mut t, &c, 1_300),
            Outcome::Late { rtt_s: Some(_), .. }
        ));
        let k = t.counts;
        assert_eq!(
            (
                k.sent,
                k.received,
                k.duplicates,
                k.late,
                k.out_of_order,
                k.timeouts
            ),
            (3, 2, 1, 1, 1, 1)
        );
        assert_eq!(t.waiting(), 0);
    }

    #[test]
    fn foreign_corrupt_and_errors() {
        let mut t = Tracker::new(COOKIE, 56, 0);
        let a = send(&mut t, 0);
        assert_eq!(
            t.reply(a.seq, &packet::payload(1, 0, 56), true, 5),
            Outcome::Foreign
        );
        assert_eq!(
            t.reply(999, &packet::payload(COOKIE, 998, 56), true, 5),
            Outcome::Foreign
        );
        assert!(matches!(
            t.reply(a.seq, &packet::payload(COOKIE, 0, 56), false, 5),
            Outcome::Corrupt { .. }
        ));
        let mut bad = packet::payload(COOKIE, 0, 56);
        bad[40] ^= 1;
        assert!(matches!(
            t.reply(a.seq, &bad, true, 5),
            Outcome::Corrupt { .. }
        ));
        assert!(matches!(t.error(a.seq), Outcome::Error { .. }));
        assert_eq!(t.error(a.seq), Outcome::Ignored);
        assert!(matches!(reply(&mut t, &a, 9), Outcome::Late { .. }));
        assert_eq!(t.counts.errors, 1);
        assert_eq!(t.counts.received, 0);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn sequence_wrap_is_not_mistaken_for_a_reply() {
        let mut t = Tracker::new(COOKIE, 56, 0);
        let mut first = None;
        for i in 0..65_537u64 {
            let p = send(&mut t, i as i64 * 100);
            if i == 0 {
                first = Some(p);
            }
        }
        let first = first.unwrap();
        // Probe 65536 reuses wire sequence 1 of probe 0.
        assert_eq!(wire_seq(65_536), first.seq);
        // A reply to probe 0 names probe 0 in its payload: it is late, not a reply to 65536.
        assert!(matches!(
            reply(&mut t, &first, 7_000_000),
            Outcome::Late { number: 0, .. }
        ));
        // Probe 0 was evicted (timed out) when its slot was reused.
        assert_eq!(t.counts.timeouts, 1);
        assert_eq!(t.counts.received, 0);
    }

    #[test]
    fn a_waiting_probe_holds_its_sequence_number_across_the_wrap() {
        let mut t = Tracker::new(COOKIE, 56, 0);
        let first = send(&mut t, 0);
        for i in 1..65_536u64 {
            assert!(t.may_send());
            let p = send(&mut t, i as i64 * 10);
            assert!(matches!(
                reply(&mut t, &p, i as i64 * 10 + 5),
                Outcome::Reply { .. }
            ));
        }
        // Probe 65536 would reuse sequence 1 while probe 0 still waits: it may not go out.
        assert_eq!(wire_seq(t.next_number()), first.seq);
        assert!(!t.may_send());
        assert_eq!(t.waiting(), 1);
        match reply(&mut t, &first, 1_000_000) {
            Outcome::Reply { probe, .. } => assert_eq!(probe.number, 0),
            o => panic!("{o:?}"),
        }
        assert!(t.may_send());
        let (next, evicted) = t.sent(2_000_000, 2_000_010);
        assert_eq!((next.number, next.seq, evicted), (65_536, 1, None));
        // A reply naming probe 0 again is late; probe 65536's own reply counts.
        assert!(matches!(
            reply(&mut t, &first, 2_000_020),
            Outcome::Late { number: 0, .. }
        ));
        match reply(&mut t, &next, 2_000_030) {
            Outcome::Reply { probe, .. } => assert_eq!(probe.number, 65_536),
            o => panic!("{o:?}"),
        }
        let k = t.counts;
        assert_eq!(
            (k.sent, k.received, k.timeouts, k.late),
            (65_537, 65_537, 0, 1)
        );
    }

    #[test]
    fn tx_stamp_inside_the_send_window_only() {
        let mut t = Tracker::new(COOKIE, 56, 0);
        let a = send(&mut t, 1_000);
        assert!(!t.tx_stamp(2_000));
        assert!(t.tx_stamp(1_005));
        assert!(!t.tx_stamp(1_006));
        match reply(&mut t, &a, 1_105) {
            Outcome::Reply { probe, rtt_s, .. } => {
                assert_eq!(probe.sent_ns(), 1_005);
                assert!((rtt_s - 100e-9).abs() < 1e-15);
            }
            o => panic!("{o:?}"),
        }
        // Short payloads carry no probe number but still get matched and checked.
        let mut t = Tracker::new(COOKIE, 4, 0);
        let a = send(&mut t, 0);
        let r = t.reply(a.seq, &packet::payload(COOKIE, 0, 4), true, 100);
        assert!(matches!(r, Outcome::Reply { .. }));
    }

    #[test]
    fn deadlines_cap_and_expire() {
        let mut t = Tracker::new(COOKIE, 56, 10_000);
        send(&mut t, 0);
        send(&mut t, 100);
        assert_eq!(t.next_deadline(), Some(10_000));
        t.cap_deadlines(500);
        assert_eq!(t.next_deadline(), Some(500));
        assert_eq!(t.expire(500).len(), 2);
        assert_eq!(t.waiting(), 0);
    }
}
