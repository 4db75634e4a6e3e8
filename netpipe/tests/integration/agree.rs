//! Both ends agree on what was sent (netpipe/1 between two netpipes), and rows line up:
//! mismatched -P, a peer that never reads, a sender killed mid-transfer, netcat mode into a
//! reader that goes away, and runs on different ports giving the same rows.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The (type, name) of every record, and the port begin's info names.
fn rows(recs: &[Value]) -> (Vec<(String, String)>, u64) {
    let rows = recs
        .iter()
        .map(|r| (r["type"].to_string(), r["name"].to_string()))
        .collect();
    let port = of_type(recs, "begin")[0]["info"]["port"].as_u64().unwrap();
    (rows, port)
}

#[test]
fn two_runs_on_different_ports_give_the_same_rows() {
    let mut seen = Vec::new();
    for _ in 0..2 {
        let d = tmp();
        let recs = path(&d, "l.jsonl");
        let (l, port) = listener("recv", &recs, &[]);
        let (st, out, err) = sender(port, &["--bytes", "1M"]).wait_output(LIMIT);
        assert!(st.success(), "{err}");
        assert!(l.wait_output(LIMIT).0.success());
        let (lrows, lport) = rows(&read_records(&recs));
        let (crows, cport) = rows(&records(&out));
        assert_eq!((lport, cport), (u64::from(port), u64::from(port)));
        seen.push((port, lrows, crows));
    }
    assert_ne!(seen[0].0, seen[1].0, "two ports");
    assert_eq!(seen[0].1, seen[1].1, "the receiver's rows");
    assert_eq!(seen[0].2, seen[1].2, "the sender's rows");
    let name = &seen[0].1[0].1;
    assert!(!name.contains(&seen[0].0.to_string()), "{name}");
    // A wildcard listener's row names no address at all.
    let d = tmp();
    let recs = path(&d, "w.jsonl");
    let g = Captured::start(
        np().args(["recv", "--listen", "0", "-o"])
            .arg(&recs)
            .stdin(Stdio::null()),
    );
    let port = listen_port(&recs);
    assert!(
        sender(port, &["--bytes", "1k"])
            .wait_output(LIMIT)
            .0
            .success()
    );
    assert!(g.wait_output(LIMIT).0.success());
    assert_eq!(summary(&read_records(&recs))["name"], "tcp recv listening");
}

#[test]
fn a_receiver_taking_fewer_streams_than_sent_is_partial_on_both_sides() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["-P", "2"]);
    let (st, out, err) = sender(port, &["-P", "3", "--bytes", "10M"]).wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    let s = records(&out);
    let sm = summary(&s);
    assert_eq!(sm["status"], "partial", "{sm}");
    // The stream nobody took was closed at once: a reset, not an idle timeout.
    assert!(
        err.contains("did not take") || err.contains("reset") || err.contains("closed"),
        "{err}"
    );
    let (lst, _, lerr) = l.wait_output(LIMIT);
    assert_eq!(lst.code(), Some(1), "{lerr}");
    let r = read_records(&recs);
    let rm = summary(&r);
    assert_eq!(rm["status"], "partial", "{rm}");
    assert!(lerr.contains("opened 3 streams"), "{lerr}");
    // What the receiver counts is what the sender's streams that it took carried.
    let sent_taken: f64 = of_type(&s, "sample")
        .iter()
        .filter_map(|x| x["values"]["peer_received_bytes"].as_f64())
        .sum();
    assert_eq!(num(rm, "received_bytes"), sent_taken);
}

#[test]
fn a_peer_that_never_reads_does_not_stretch_the_senders_time() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // Accepts and holds the connection without reading, until the test ends.
    let holder = std::thread::spawn(move || {
        let (c, _) = l.accept().unwrap();
        std::thread::sleep(Duration::from_secs(12));
        drop(c);
    });
    // The release build (once per test process) happens before the clock starts.
    let _ = bin();
    let t0 = Instant::now();
    let (st, out, err) = sender(port, &["--time", "2"]).wait_output(LIMIT);
    let took = t0.elapsed();
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(took < Duration::from_secs(8), "--time 2 took {took:?}");
    let r = records(&out);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial", "{sm}");
    assert!(err.contains("stopped reading"), "{err}");
    assert_eq!(of_type(&r, "sample")[0]["info"]["end"], "peer-stalled");
    drop(holder);
}

#[test]
fn a_sender_killed_mid_transfer_leaves_the_receiver_partial() {
    // Neither side has a limit: the receiver's only clue is the missing end mark.
    let r = receiver_of_a_killed_sender(&[], Duration::from_millis(800));
    assert_eq!(of_type(&r, "sample")[0]["info"]["peer_speaks"], "netpipe/1");
}

#[test]
fn both_netpipes_count_the_same_bytes_and_say_so() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let (st, out, err) = sender(port, &["--bytes", "3000017", "-P", "2"]).wait_output(LIMIT);
    assert!(st.success(), "{err}");
    assert!(l.wait_output(LIMIT).0.success());
    let r = read_records(&recs);
    let s = records(&out);
    for (a, b) in of_type(&s, "sample").iter().zip(of_type(&r, "sample")) {
        assert_eq!(num(a, "peer_received_bytes"), num(a, "sent_bytes"));
        assert_eq!(num(b, "peer_sent_bytes"), num(b, "received_bytes"));
    }
    assert_eq!(num(summary(&r), "received_bytes"), 3_000_017.0);
}

#[test]
fn netcat_into_a_reader_that_goes_away_counts_only_what_it_read() {
    if !need_tool("head") {
        return;
    }
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let input = path(&d, "in");
    random_file(&input, 20 << 20);
    let got = path(&d, "got");
    let shell = r#""$BIN" -l 127.0.0.1 0 -o "$REC" | head -c 10 > "$GOT""#;
    let g = Captured::start(
        std::process::Command::new("sh")
            .args(["-c", shell])
            .env("BIN", bin())
            .env("REC", &recs)
            .env("GOT", &got),
    );
    let port = listen_port(&recs);
    let _ = run(
        np().args(["127.0.0.1", &port.to_string()])
            .stdin(open(&input))
            .stderr(Stdio::null()),
        LIMIT,
    );
    let _ = g.wait_output(LIMIT);
    assert_eq!(std::fs::metadata(&got).unwrap().len(), 10);
    let r = read_records(&recs);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial", "{sm}");
    assert!(sm["error"].as_str().unwrap().contains("stdout was closed"));
    // head takes one read's worth at most; what stayed in the pipe is not counted.
    let rx = num(sm, "received_bytes");
    assert!((10.0..=131_072.0).contains(&rx), "received_bytes {rx}");
}
