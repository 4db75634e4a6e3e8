//! The record writer's tests: numbering, summaries, batching and the clock.

use super::*;
use crate::parts::info;
use crate::record::Record;
use crate::record::parse_line;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);
impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn writes_lines_that_the_reader_accepts() {
    let buf = Shared::default();
    let mut env = Envelope::new("pingrt", "0.1.0", "icmp latency");
    env.tags.insert("peer".into(), "::1".into());
    let mut rep = Reporter::new(env, Box::new(buf.clone()));
    rep.begin(info(serde_json::json!({"count": 2}))).unwrap();
    rep.sample(Values::new().with("rtt_s", 1e-4), Map::new())
        .unwrap();
    rep.sample_failed("timeout", Map::new()).unwrap();
    rep.interval(Values::new().with_count("sent_count", 2), Map::new())
        .unwrap();
    rep.summary(Summary {
        status: Status::Ok,
        error: None,
        headline: Some("rtt_mean_s".into()),
        headlines: Vec::new(),
        values: Values::new()
            .with("rtt_mean_s", 1e-4)
            .with("bad_s", f64::NAN),
        info: Map::new(),
    })
    .unwrap();
    rep.summary(Summary {
        status: Status::Failed,
        error: Some("twice".into()),
        headline: None,
        headlines: Vec::new(),
        values: Values::new(),
        info: Map::new(),
    })
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[1].seq, 0);
    assert_eq!(recs[2].seq, 1);
    assert_eq!(recs[2].error.as_deref(), Some("timeout"));
    assert!(recs[4].values.get("bad_s").is_none());
    assert_eq!(recs[4].tags.get("peer").map(String::as_str), Some("::1"));
    assert!(
        recs.iter()
            .all(|r| r.run == recs[0].run && r.run.len() == 12)
    );
}

#[test]
fn next_run_has_its_own_id_seqs_and_summary() {
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    let ok = || Summary {
        status: Status::Ok,
        error: None,
        headline: Some("x_s".into()),
        headlines: Vec::new(),
        values: Values::new().with("x_s", 1.0),
        info: Map::new(),
    };
    rep.begin(Map::new()).unwrap();
    rep.sample(Values::new().with("x_s", 1.0), Map::new())
        .unwrap();
    rep.summary(ok()).unwrap();
    rep.next_run();
    assert!(!rep.summary_written());
    rep.begin(Map::new()).unwrap();
    rep.sample(Values::new().with("x_s", 2.0), Map::new())
        .unwrap();
    rep.summary(ok()).unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs.len(), 6);
    assert_ne!(recs[0].run, recs[3].run);
    assert!(recs[3..].iter().all(|r| r.run == recs[3].run && r.seq == 0));
}

#[test]
fn summary_without_its_headline_is_partial() {
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    rep.summary(Summary {
        status: Status::Ok,
        error: None,
        headline: Some("missing_s".into()),
        headlines: Vec::new(),
        values: Values::new(),
        info: Map::new(),
    })
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let r = parse_line(text.trim()).unwrap();
    assert_eq!(r.status, Some(Status::Partial));
    assert!(r.error.is_some());
}

#[test]
fn batch_mode_holds_lines_until_their_time_or_the_summary() {
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    rep.batch(std::time::Duration::from_secs(3600));
    rep.sample(Values::new().with("rtt_s", 1e-4), Map::new())
        .unwrap();
    rep.flush_due().unwrap();
    assert!(buf.0.lock().unwrap().is_empty());
    rep.batch(std::time::Duration::ZERO);
    rep.flush_due().unwrap();
    assert_eq!(buf.0.lock().unwrap().split(|&b| b == b'\n').count(), 2);
    rep.batch(std::time::Duration::from_secs(3600));
    rep.sample(Values::new().with("rtt_s", 1e-4), Map::new())
        .unwrap();
    rep.summary(Summary {
        status: Status::Ok,
        error: None,
        headline: Some("rtt_s".into()),
        headlines: Vec::new(),
        values: Values::new().with("rtt_s", 1e-4),
        info: Map::new(),
    })
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[1].seq, 1);
    assert_eq!(rep.written_summary().map(|w| w.status), Some(Status::Ok));
}

#[test]
fn a_discarding_reporter_keeps_the_summary_for_the_human_lines() {
    let mut rep = Reporter::discarding(Envelope::new("t", "0", "n"));
    assert!(!rep.writes());
    rep.summary(Summary {
        status: Status::Failed,
        error: Some("no route".into()),
        headline: None,
        headlines: Vec::new(),
        values: Values::new(),
        info: Map::new(),
    })
    .unwrap();
    assert_eq!(
        rep.written_summary().and_then(|w| w.error.as_deref()),
        Some("no route")
    );
}

#[test]
fn the_clock_writes_rfc3339_micros_and_keeps_up() {
    let mut c = Clock::default();
    for _ in 0..3 {
        let at = c.now().to_string();
        assert_eq!(at.len(), "2026-11-30T13:00:00.123456Z".len(), "{at}");
        let t = humantime::parse_rfc3339(&at).unwrap();
        let off = SystemTime::now().duration_since(t).unwrap();
        assert!(off < Duration::from_secs(5), "{at}");
        std::thread::sleep(Duration::from_millis(600));
    }
}

#[test]
fn borrowed_parts_write_the_same_line_as_maps() {
    #[derive(Serialize)]
    struct V {
        rtt_s: f64,
    }
    #[derive(Serialize)]
    struct I<'a> {
        icmp_seq: u16,
        from: &'a str,
    }
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    rep.sample_ref(
        &V { rtt_s: 1e-4 },
        &I {
            icmp_seq: 7,
            from: "::1",
        },
    )
    .unwrap();
    rep.sample(
        Values::new().with("rtt_s", 1e-4),
        info(serde_json::json!({"icmp_seq": 7, "from": "::1"})),
    )
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs[0].values, recs[1].values);
    assert_eq!(recs[0].info, recs[1].info);
    assert_eq!((recs[0].seq, recs[1].seq), (0, 1));
}

#[test]
fn a_watched_run_has_its_summary_say_the_load_over_it_and_the_next_run_starts_anew() {
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    let ok = || Summary {
        status: Status::Ok,
        error: None,
        headline: Some("x_s".into()),
        headlines: Vec::new(),
        values: Values::new().with("x_s", 1.0),
        info: Map::new(),
    };
    rep.watch_load(crate::envfacts::Probe::system().load_now());
    rep.begin(Map::new()).unwrap();
    rep.summary(ok()).unwrap();
    // A converter's next run (begin as it is, no watch) says nothing of this machine.
    rep.next_run();
    rep.begin(Map::new()).unwrap();
    rep.summary(ok()).unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    let keys = [
        "load_1m_end",
        "procs_running_end_count",
        "tool_involuntary_switches_count",
    ];
    for k in keys {
        assert!(
            recs[1].info.get(k).is_some_and(|v| v.as_f64().is_some()),
            "{k}: {:?}",
            recs[1].info
        );
        assert!(!recs[3].info.contains_key(k), "{k}: {:?}", recs[3].info);
    }
}
