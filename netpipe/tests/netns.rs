//! A second host: two network namespaces joined by a veth pair, shaped with tc tbf, so the
//! reported throughput can be checked against a known link speed and against iperf3.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// Namespaces `<tag>a` (10.99.0.1) and `<tag>b` (10.99.0.2) on a veth pair; deleted on drop.
struct Link {
    a: String,
    b: String,
}

fn sh(cmd: &str) {
    let st = Command::new("sh").args(["-c", cmd]).status().unwrap();
    assert!(st.success(), "{cmd}");
}

impl Link {
    fn new(tag: &str, rate: &str) -> Link {
        let id = std::process::id();
        let link = Link {
            a: format!("np{tag}{id}a"),
            b: format!("np{tag}{id}b"),
        };
        sh(&format!("ip netns add {}", link.a));
        sh(&format!("ip netns add {}", link.b));
        sh(&format!(
            "ip -n {a} link add va type veth peer name vb netns {b} && \
             ip -n {a} link set lo up && ip -n {b} link set lo up && \
             ip -n {a} addr add 10.99.0.1/24 dev va && ip -n {b} addr add 10.99.0.2/24 dev vb && \
             ip -n {a} link set va up && ip -n {b} link set vb up && \
             tc -n {a} qdisc add dev va root tbf rate {rate} burst 64kb latency 50ms",
            a = link.a,
            b = link.b
        ));
        link
    }

    fn in_a(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.a]);
        c
    }

    fn in_b(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.b]);
        c
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        for n in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

fn usable() -> bool {
    if !is_root() {
        eprintln!("skipped: needs root for network namespaces");
        return false;
    }
    have("ip") && have("tc")
}

/// netpipe from a to b over the shaped link; returns the receiver's summary.
fn netpipe_rate(link: &Link, secs: &str) -> Value {
    let d = tmp();
    let recs = path(&d, "b.jsonl");
    let r = Guard::spawn(
        link.in_b()
            .args([
                bin(),
                "recv",
                "--listen",
                "10.99.0.2:0",
                "--omit",
                "1",
                "-o",
            ])
            .arg(&recs)
            .stdout(Stdio::null()),
    );
    let port = listen_port(&recs);
    let (st, out, err) = run(
        link.in_a().args([
            bin(),
            "send",
            "--connect",
            &format!("10.99.0.2:{port}"),
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
fn iperf3_rate(link: &Link, secs: &str) -> Option<f64> {
    if !have("iperf3") {
        return None;
    }
    let _srv = Guard::spawn(
        link.in_b()
            .args(["iperf3", "-s", "-1", "-B", "10.99.0.2", "-p", "5201"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    // Wait (at most 10 s) until the server listens inside namespace b.
    for _ in 0..500 {
        let o = link
            .in_b()
            .args(["ss", "-Hltn", "sport = :5201"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).contains("LISTEN") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (st, out, err) = run(
        link.in_a().args([
            "iperf3",
            "-c",
            "10.99.0.2",
            "-p",
            "5201",
            "-t",
            secs,
            "-O",
            "1",
            "-J",
        ]),
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
        let link = Link::new(&format!("t{}", mbit as u32), rate);
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
    let link = Link::new("dn", "100mbit");
    let d = tmp();
    let recs = path(&d, "b.jsonl");
    let r = Guard::spawn(
        link.in_b()
            .args([
                bin(),
                "recv",
                "--listen",
                "10.99.0.2:0",
                "--idle-timeout",
                "1",
                "-o",
            ])
            .arg(&recs)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let port = listen_port(&recs);
    let s = Guard::spawn(
        link.in_a()
            .args([
                bin(),
                "send",
                "--connect",
                &format!("10.99.0.2:{port}"),
                "--idle-timeout",
                "1",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    std::thread::sleep(Duration::from_millis(700));
    // The peer vanishes: the cable is pulled.
    sh(&format!("ip -n {} link set va down", link.a));
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
