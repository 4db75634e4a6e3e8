//! UDP (`--udp`): either side listens, exact counts on loopback, an exact loss ratio from
//! iptables' every-Nth drops between two namespaces, loss on a link slower than the rate,
//! and the rate against iperf3 -u's at the same setting.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use testkit::{B_ADDR, NetPair};

/// A UDP receiver listening on `addr` (in namespace `ns` when given); its records in `recs`.
fn udp_receiver(ns: Option<&str>, addr: &str, recs: &std::path::Path) -> (Captured, u16) {
    let mut c = match ns {
        Some(ns) => NetPair::exec(ns, bin()),
        None => np(),
    };
    c.args(["recv", "--udp", "--listen", addr, "-o"])
        .arg(recs)
        .stdin(Stdio::null());
    let g = Captured::start(&mut c);
    let port = listen_port(recs);
    (g, port)
}

fn send_udp(ns: Option<&str>, target: &str, extra: &[&str]) -> Vec<Value> {
    let mut c = match ns {
        Some(ns) => NetPair::exec(ns, bin()),
        None => np(),
    };
    c.args(["send", "--udp", "--connect", target]).args(extra);
    let (st, out, err) = run(&mut c, LIMIT);
    assert!(st.success(), "{err}");
    records(&out)
}

#[test]
fn loopback_counts_exactly_either_side_listening() {
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let (r, port) = udp_receiver(None, "127.0.0.1:0", &recs);
    // 1000 datagrams of 1460 bytes.
    let s = send_udp(
        None,
        &format!("127.0.0.1:{port}"),
        &["--rate", "50M", "--bytes", "1460000"],
    );
    assert_eq!(num(summary(&s), "datagrams_count"), 1000.0);
    let (st, _, err) = r.wait_output(LIMIT);
    assert!(st.success(), "{err}");
    let rr = read_records(&recs);
    let sm = summary(&rr);
    assert_eq!(sm["status"], "ok");
    assert_eq!(num(sm, "datagrams_count"), 1000.0);
    assert_eq!(num(sm, "received_bytes"), 1_460_000.0);
    assert_eq!(num(sm, "loss_ratio"), 0.0);
    assert_eq!(num(sm, "duplicate_count"), 0.0);
    assert!(num(sm, "jitter_s") >= 0.0);
    assert_eq!(sm["name"], "udp recv listening on 127.0.0.1");
    // The sender listens, the receiver connects and says hello.
    let recs = path(&d, "s.jsonl");
    let g = Captured::start(
        np().args(["send", "--udp", "--listen", "127.0.0.1:0", "--rate", "20M"])
            .args(["--time", "0.5", "-o"])
            .arg(&recs)
            .stdin(Stdio::null()),
    );
    let port = listen_port(&recs);
    let (st, out, err) = run(
        np().args(["recv", "--udp", "--connect", &format!("127.0.0.1:{port}")]),
        LIMIT,
    );
    assert!(st.success(), "{err}");
    assert!(g.wait_output(LIMIT).0.success());
    let got = num(summary(&records(&out)), "datagrams_count");
    assert_eq!(got, num(summary(&read_records(&recs)), "datagrams_count"));
    assert!(got > 100.0, "{got}");
}

#[test]
fn flags_for_tcp_only_are_refused_with_udp() {
    for extra in [&["-P", "2"][..], &["--omit", "1"], &["-C", "cubic"]] {
        let (st, _, err) = run(
            np().args(["send", "--udp", "--connect", "127.0.0.1:9"])
                .args(extra),
            LIMIT,
        );
        assert_eq!(st.code(), Some(2), "{extra:?}");
        assert!(err.contains("--udp"), "{err}");
    }
    let (st, _, err) = run(
        np().args(["send", "--connect", "127.0.0.1:9", "--rate", "1M"]),
        LIMIT,
    );
    assert_eq!(st.code(), Some(2), "--rate without --udp: {err}");
}

/// Sends UDP with `extra` from namespace a to a receiver in b; the receiver's summary once
/// both have ended (each must exit 0).
fn across(net: &NetPair, extra: &[&str]) -> Value {
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let (r, port) = udp_receiver(Some(&net.b), &format!("{B_ADDR}:0"), &recs);
    send_udp(Some(&net.a), &format!("{B_ADDR}:{port}"), extra);
    let (st, _, err) = r.wait_output(LIMIT);
    assert!(st.success(), "{err}");
    summary(&read_records(&recs)).clone()
}

fn usable() -> bool {
    need_root("network namespaces") && need_tool("ip") && need_tool("tc")
}

#[test]
fn every_tenth_datagram_dropped_is_a_loss_ratio_of_exactly_a_tenth() {
    if !usable() || !need_tool("iptables") {
        return;
    }
    let net = NetPair::new().unwrap();
    // Data datagrams only (1488-byte packets): the small end datagrams pass.
    let st = NetPair::exec(&net.b, "iptables")
        .args([
            "-A",
            "INPUT",
            "-p",
            "udp",
            "-m",
            "length",
            "--length",
            "1000:65535",
        ])
        .args([
            "-m",
            "statistic",
            "--mode",
            "nth",
            "--every",
            "10",
            "--packet",
            "0",
        ])
        .args(["-j", "DROP"])
        .status()
        .unwrap();
    if !st.success() {
        testkit::skip("iptables cannot add a rule in the namespace");
        return;
    }
    let sm = across(&net, &["--rate", "20M", "--bytes", "1460000"]);
    assert_eq!(num(&sm, "lost_count"), 100.0, "{sm}");
    assert_eq!(num(&sm, "loss_ratio"), 0.1);
    assert_eq!(num(&sm, "datagrams_count"), 900.0);
}

#[test]
fn a_link_slower_than_the_rate_shows_as_loss() {
    if !usable() {
        return;
    }
    let net = NetPair::new().unwrap();
    net.shape("10mbit").unwrap();
    let sm = across(&net, &["--rate", "40M", "--time", "1"]);
    // 40 Mb/s into 10: about three quarters lost, and what arrives is the link's rate.
    assert!(num(&sm, "loss_ratio") > 0.5, "{sm}");
    assert!(num(&sm, "throughput_bits_per_s") < 14e6, "{sm}");
}

#[test]
fn the_rate_matches_iperf3_udp_at_the_same_setting() {
    if !need_tool("iperf3") {
        return;
    }
    let port = free_port();
    let mut srv = Spawned::start(
        std::process::Command::new("iperf3")
            .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    srv.wait_listening(port, Duration::from_secs(10));
    let (st, out, err) = run(
        std::process::Command::new("iperf3").args([
            "-u",
            "-c",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-b",
            "50M",
            "-t",
            "2",
            "-J",
        ]),
        LIMIT,
    );
    assert!(st.success(), "iperf3 -u failed: {err} {out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let theirs = v["end"]["sum"]["bits_per_second"].as_f64().unwrap();
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let (r, port) = udp_receiver(None, "127.0.0.1:0", &recs);
    send_udp(
        None,
        &format!("127.0.0.1:{port}"),
        &["--rate", "50M", "--time", "2"],
    );
    assert!(r.wait_output(LIMIT).0.success());
    let ours = num(summary(&read_records(&recs)), "throughput_bits_per_s");
    eprintln!(
        "udp at 50M: netpipe {:.2} Mb/s, iperf3 {:.2} Mb/s",
        ours / 1e6,
        theirs / 1e6
    );
    // Both pace to the setting: within a tenth of each other and of 50 Mb/s.
    assert!((ours / theirs - 1.0).abs() < 0.1, "{ours} vs {theirs}");
    assert!((ours / 50e6 - 1.0).abs() < 0.1, "{ours}");
}

/// The sender's summary of `--udp --rate 1` (one datagram per 3.2 hours) with `extra`,
/// against a receiver on loopback; `stop` may signal it. Both ends' summaries.
fn slow_pace(extra: &[&str], stop: impl FnOnce(&Captured)) -> (ExitStatus, Value, Value) {
    let d = tmp();
    let recs = d.path().join("recv.jsonl");
    let (recv, port) = udp_receiver(None, "127.0.0.1:0", &recs);
    let to = format!("127.0.0.1:{port}");
    let sent = d.path().join("send.jsonl");
    let mut c = np();
    c.args(["send", "--udp", "--connect", &to, "--rate", "1", "-o"])
        .arg(&sent)
        .args(extra);
    let sender = Captured::start(&mut c);
    stop(&sender);
    let (st, _, err) = sender.wait_output(LIMIT);
    let (_, _, _) = recv.wait_output(LIMIT);
    let summary = |p: &std::path::Path| {
        let text = std::fs::read_to_string(p).unwrap();
        let r = records(&text);
        r.into_iter()
            .find(|v| v["type"] == "summary")
            .unwrap_or_else(|| panic!("{err}"))
    };
    (st, summary(&sent), summary(&recs))
}

#[test]
fn a_slow_pace_ends_at_the_time_limit_and_one_datagram_is_no_figure() {
    // Within LIMIT: the pace used to sleep 3.2 hours before looking at -t again.
    let (st, sent, recv) = slow_pace(&["-t", "1"], |_| {});
    assert_eq!(st.code(), Some(1), "{sent}");
    assert_eq!(sent["status"], "partial", "{sent}");
    assert!(
        sent["error"].as_str().unwrap().contains("one datagram"),
        "{sent}"
    );
    // Its time is where it stopped, not the pace's 11680 s for one datagram.
    assert!(
        sent["values"]["duration_s"].as_f64().unwrap() < 60.0,
        "{sent}"
    );
    assert_ne!(recv["status"], "ok", "both ends agree: {recv}");
}

#[test]
fn a_slow_pace_answers_ctrl_c_at_once() {
    let (st, sent, _) = slow_pace(&[], |s| {
        std::thread::sleep(Duration::from_millis(300));
        assert!(s.signal(libc::SIGINT));
    });
    assert_eq!(st.code(), Some(130), "{sent}");
    assert_eq!(sent["status"], "partial", "{sent}");
}

#[test]
fn a_stray_datagram_first_does_not_take_the_receivers_place() {
    let d = tmp();
    let recs = d.path().join("recv.jsonl");
    let (recv, port) = udp_receiver(None, "127.0.0.1:0", &recs);
    // Another program's datagrams, before the sender and from another port: not netpipe's.
    let stray = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..3 {
        stray
            .send_to(b"hello from elsewhere", ("127.0.0.1", port))
            .unwrap();
    }
    let sent = send_udp(
        None,
        &format!("127.0.0.1:{port}"),
        &["--rate", "20M", "--bytes", "146000"],
    );
    let (st, _, err) = recv.wait_output(LIMIT);
    assert!(st.success(), "{err}");
    let got = records(&std::fs::read_to_string(&recs).unwrap());
    let sm = got.iter().find(|v| v["type"] == "summary").unwrap();
    assert_eq!(sm["status"], "ok", "{sm}");
    assert_eq!(sm["values"]["received_bytes"], 146000, "{sm}");
    assert_eq!(sm["values"]["stray_count"], 3, "{sm}");
    let s = sent.iter().find(|v| v["type"] == "summary").unwrap();
    assert_eq!(s["status"], "ok", "{s}");
}

/// A datagram with netpipe's header (a data one, sequence 0), as a stranger can forge it.
fn forged(kind: u32) -> Vec<u8> {
    let mut b = b"NPU1".to_vec();
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&[0u8; 16]);
    b.extend_from_slice(&[0u8; 100]);
    b
}

/// A UDP receiver with `extra` (and NETPIPE_TOKEN `token`) on loopback: the forged datagrams
/// `kinds` reach it first, then a sender with `sender_token` sends 100 datagrams. The
/// receiver's and the sender's summaries.
fn after_forgeries(
    extra: &[&str],
    token: Option<&str>,
    kinds: &[u32],
    sender_token: Option<&str>,
) -> (Value, Value) {
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let mut c = np();
    c.args(["recv", "--udp", "--listen", "127.0.0.1:0", "-o"])
        .arg(&recs)
        .args(extra)
        .env_remove("NETPIPE_TOKEN")
        .stdin(Stdio::null());
    if let Some(t) = token {
        c.env("NETPIPE_TOKEN", t);
    }
    let r = Captured::start(&mut c);
    let port = listen_port(&recs);
    let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for k in kinds {
        stranger.send_to(&forged(*k), ("127.0.0.1", port)).unwrap();
    }
    let mut s = np();
    s.args(["send", "--udp", "--connect", &format!("127.0.0.1:{port}")])
        .args(["--rate", "20M", "--bytes", "146000"])
        .env_remove("NETPIPE_TOKEN");
    if let Some(t) = sender_token {
        s.env("NETPIPE_TOKEN", t);
    }
    let (_, out, err) = run(&mut s, LIMIT);
    let sent = summary(&records(&out)).clone();
    let (_, _, rerr) = r.wait_output(LIMIT);
    let got = summary(&read_records(&recs)).clone();
    eprintln!("{err}\n{rerr}");
    (got, sent)
}

#[test]
fn a_forged_first_datagram_takes_no_receiver() {
    // A data datagram with netpipe's 4-byte magic, before the sender.
    let (got, sent) = after_forgeries(&[], None, &[0], None);
    assert_eq!(sent["status"], "ok", "{sent}");
    assert_eq!(got["status"], "ok", "{got}");
    assert_eq!(got["values"]["received_bytes"], 146000, "{got}");
    assert_eq!(got["values"]["stray_count"], 1, "{got}");
}

#[test]
fn with_a_token_only_a_sender_that_proves_it_is_taken() {
    const T: &str = "udp-token-0123456789";
    // A forged data datagram and a forged start without the token: both strays.
    let (got, sent) = after_forgeries(&[], Some(T), &[0, 3], Some(T));
    assert_eq!(sent["status"], "ok", "{sent}");
    assert_eq!(got["status"], "ok", "{got}");
    assert_eq!(got["values"]["received_bytes"], 146000, "{got}");
    assert_eq!(got["values"]["stray_count"], 2, "{got}");
    // A sender with another token is taken for a stranger: nothing is received.
    let (got, _) = after_forgeries(
        &["--idle-timeout", "2s"],
        Some(T),
        &[],
        Some("another-token-0123456789"),
    );
    assert_eq!(got["status"], "failed", "{got}");
    let e = got["error"].as_str().unwrap();
    assert!(
        e.contains("no sender proved itself") && e.contains("--token"),
        "{e}"
    );
    assert_eq!(
        got["values"]["stray_count"], 106,
        "3 starts, 100 data, 3 ends: {got}"
    );
}
