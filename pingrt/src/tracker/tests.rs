//! The tracker's tests: matching replies to probes, duplicates, late and corrupt replies,
//! the sequence wrap, and which transmit stamp a probe keeps.

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
    assert!(!t.tx_stamp(2_000, TxStamp::Driver));
    assert!(t.tx_stamp(1_003, TxStamp::Sched));
    // The driver's stamp replaces the scheduler's; nothing replaces the driver's.
    assert!(t.tx_stamp(1_005, TxStamp::Driver));
    assert!(!t.tx_stamp(1_006, TxStamp::Driver));
    assert!(!t.tx_stamp(1_004, TxStamp::Sched));
    assert_eq!((t.counts.kernel_tx, t.counts.driver_tx), (1, 1));
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
