//! A second host: two network namespaces joined by a veth pair, shaped with tc tbf, so the
//! reported throughput can be checked against a known link speed and against iperf3.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use testkit::{B_ADDR, NetPair};

/// Two namespaces on a veth pair shaped to `rate` (testkit's NetPair); deleted on drop.
fn link(rate: &str) -> NetPair {
    let net = NetPair::new().unwrap();
    net.shape(rate).unwrap();
    net
}

fn usable() -> bool {
    need_root("network namespaces") && need_tool("ip") && need_tool("tc")
}

/// netpipe from a to b over the shaped link; returns the receiver's summary.
fn netpipe_rate(link: &NetPair, secs: &str) -> Value {
    let d = tmp();
    let recs = path(&d, "b.jsonl");
    let r = Captured::start(
        NetPair::exec(&link.b, bin())
            .args([
                "recv",
                "--listen",
                &format!("{B_ADDR}:0"),
                "--omit",
                "1",
                "-o",
            ])
            .arg(&recs),
    );
    let port = listen_port(&recs);
    let (st, out, err) = run(
        NetPair::exec(&link.a, bin()).args([
            "send",
            "--connect",
            &format!("{B_ADDR}:{port}"),
            "--time",
            secs,
            "--omit",
            "1",
        ]),
        LIMIT,
    );
    assert!(st.success(), "{err}");
    let (rst, _, rerr) = r.wait_output(LIMIT);
    assert!(rst.success(), "{rerr}");
    let recs = read_records(&recs);
    let s = summary(&recs).clone();
    eprintln!(
        "netpipe: receiver {:.1} Mb/s, sender {:.1} Mb/s",
        num(&s, "throughput_bits_per_s") / 1e6,
        num(summary(&records(&out)), "throughput_bits_per_s") / 1e6
    );
    s
}

/// iperf3 over the same link, the receiver's figure.
fn iperf3_rate(link: &NetPair, secs: &str) -> Option<f64> {
    if !need_tool("iperf3") {
        return None;
    }
    let mut srv = Spawned::start(
        NetPair::exec(&link.b, "iperf3")
            .args(["-s", "-1", "-B", B_ADDR, "-p", "5201"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    srv.wait_listening(5201, Duration::from_secs(10));
    let (st, out, err) = run(
        NetPair::exec(&link.a, "iperf3")
            .args(["-c", B_ADDR, "-p", "5201", "-t", secs, "-O", "1", "-J"]),
        LIMIT,
    );
    assert!(st.success(), "iperf3 over the link failed: {err} {out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["end"]["sum_received"]["bits_per_second"].as_f64()
}

#[test]
fn shaped_link_throughput_matches_the_link_and_iperf3() {
    if !usable() {
        return;
    }
    for (rate, mbit) in [("100mbit", 100.0), ("200mbit", 200.0)] {
        let link = link(rate);
        let s = netpipe_rate(&link, "3");
        assert_eq!(s["status"], "ok");
        let got = num(&s, "throughput_bits_per_s") / 1e6;
        // TCP payload over Ethernet framing is about 95% of the shaped rate.
        assert!(
            got > mbit * 0.80 && got < mbit * 1.05,
            "{got:.1} Mb/s through a {rate} link"
        );
        if let Some(ip) = iperf3_rate(&link, "3") {
            let ip = ip / 1e6;
            let diff = (got - ip).abs() / ip;
            eprintln!(
                "{rate}: netpipe {got:.2} Mb/s, iperf3 {ip:.2} Mb/s, difference {:.2}%",
                diff * 100.0
            );
            assert!(diff < 0.10, "netpipe {got:.1} vs iperf3 {ip:.1} Mb/s");
        }
    }
}

#[test]
fn link_going_down_ends_both_sides_with_a_timeout() {
    if !usable() {
        return;
    }
    let link = link("100mbit");
    let d = tmp();
    let recs = path(&d, "b.jsonl");
    let r = Captured::start(
        NetPair::exec(&link.b, bin())
            .args([
                "recv",
                "--listen",
                &format!("{B_ADDR}:0"),
                "--idle-timeout",
                "1",
                "-o",
            ])
            .arg(&recs),
    );
    let port = listen_port(&recs);
    let s = Captured::start(NetPair::exec(&link.a, bin()).args([
        "send",
        "--connect",
        &format!("{B_ADDR}:{port}"),
        "--idle-timeout",
        "1",
    ]));
    std::thread::sleep(Duration::from_millis(700));
    // The peer vanishes: the cable is pulled.
    testkit::cmd("ip", &["-n", &link.a, "link", "set", &link.a_if, "down"]).unwrap();
    let (rst, _, rerr) = r.wait_output(LIMIT);
    assert_eq!(rst.code(), Some(1), "{rerr}");
    assert!(rerr.contains("idle"), "{rerr}");
    let rr = read_records(&recs);
    let rs = summary(&rr);
    assert_eq!(rs["status"], "partial");
    assert!(num(rs, "received_bytes") > 0.0);
    let (sst, sout, serr) = s.wait_output(LIMIT);
    assert_eq!(sst.code(), Some(1), "{serr}");
    assert_eq!(summary(&records(&sout))["status"], "partial");
}
