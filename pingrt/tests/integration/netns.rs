//! pingrt across veth pairs between network namespaces the tests create: loss, duplicates,
//! delay against real ping, ICMP errors, IPv6, raw and datagram sockets, a silent host, a
//! reply held across the sequence wrap.

use crate::common::*;
use std::process::Command;
use std::time::Duration;

/// ping's "rtt min/avg/max/mdev = a/b/c/d ms" and "N received".
fn ping_stats(out: &str) -> (u64, Option<f64>) {
    let received = out
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .and_then(|l| l.split(", ").nth(1))
        .and_then(|p| p.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let avg = out
        .lines()
        .find(|l| l.starts_with("rtt ") || l.starts_with("round-trip"))
        .and_then(|l| l.split(" = ").nth(1))
        .and_then(|v| v.split('/').nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map(|ms| ms / 1e3);
    (received, avg)
}

fn ping(ns: &str, args: &[&str]) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "ping"])
        .args(args)
        .output()
        .expect("run in namespace");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_fourth_reply_dropped_is_exactly_25_percent_loss() {
    if !can_run("loss", &["ip", "iptables", "ping"]) {
        return;
    }
    let net = Net::pair();
    net.exec(
        &net.s,
        "iptables -A OUTPUT -p icmp --icmp-type echo-reply -m statistic --mode nth --every 4 --packet 0 -j DROP",
    );
    let r = pingrt(
        Some(&net.c),
        &["-c", "20", "-i", "0.02", "-W", "0.5", net.s4],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.v("sent_count"), 20.0);
    assert_eq!(r.v("received_count"), 15.0);
    assert_eq!(r.v("loss_ratio"), 0.25);
    assert_eq!(r.v("timeout_count"), 5.0);
    let timeouts = r
        .samples()
        .iter()
        .filter(|s| s.error.as_deref() == Some("timeout"))
        .count();
    assert_eq!(timeouts, 5);
    // Real ping on the same path sees the same loss.
    let out = ping(&net.c, &["-c", "20", "-i", "0.02", "-W", "0.5", net.s4]);
    assert_eq!(ping_stats(&out).0, 15, "{out}");
}

#[test]
fn nft_dup_replies_are_duplicates_not_replies() {
    if !can_run("duplicates", &["ip", "nft"]) {
        return;
    }
    let net = Net::pair();
    net.exec(
        &net.s,
        &format!(
            "nft add table ip dupt && nft add chain ip dupt out \"{{ type filter hook output priority 0; }}\" && \
             nft add rule ip dupt out icmp type echo-reply dup to {} device {}",
            net.c4, net.s_if
        ),
    );
    for sock in ["raw", "dgram"] {
        if sock == "dgram" {
            net.exec(
                &net.c,
                "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
            );
        }
        let r = pingrt(
            Some(&net.c),
            &[
                "-c", "5", "-i", "0.05", "-W", "0.5", "--socket", sock, net.s4,
            ],
        );
        assert_eq!(r.code, 0, "{sock}: {}", r.explain());
        assert_eq!(r.v("received_count"), 5.0, "{sock}");
        assert_eq!(r.v("duplicate_count"), 5.0, "{sock}: {}", r.explain());
        assert_eq!(r.v("loss_ratio"), 0.0);
        assert_eq!(r.samples().len(), 5, "duplicates make no samples");
    }
}

#[test]
fn delayed_replies_measure_the_delay_and_agree_with_ping() {
    if !can_run("delay", &["ip", "ping"]) {
        return;
    }
    let net = Net::pair();
    let delay = Duration::from_millis(20);
    let _resp = Responder::start(&net.s, move |_| vec![(delay, Damage::None)]);
    let r = pingrt(Some(&net.c), &["-c", "5", "-i", "0.1", net.s4]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.v("received_count"), 5.0);
    let mean = r.v("rtt_mean_s");
    // Physics: never below the delay; generous slack above it on a shared machine.
    assert!(r.v("rtt_min_s") >= 0.020, "{}", r.explain());
    assert!(mean < 0.020 + 0.030, "mean {mean}");
    let out = ping(&net.c, &["-c", "5", "-i", "0.1", net.s4]);
    let (received, avg) = ping_stats(&out);
    assert_eq!(received, 5, "{out}");
    let avg = avg.unwrap();
    assert!(
        (avg - mean).abs() < 0.010,
        "ping avg {avg} vs pingrt mean {mean}"
    );
}

#[test]
fn out_of_order_late_and_corrupt_replies_are_told_apart() {
    if !can_run("responder", &["ip"]) {
        return;
    }
    let net = Net::pair();
    // seq 1: 150 ms late (after seq 2's reply: out of order); seq 3: 400 ms (after its
    // 300 ms timeout, before the run ends: late); seq 4: bad checksum; seq 5: payload
    // changed; seq 6: twice.
    let _resp = Responder::start(&net.s, |seq| match seq {
        1 => vec![(Duration::from_millis(150), Damage::None)],
        3 => vec![(Duration::from_millis(400), Damage::None)],
        4 => vec![(Duration::ZERO, Damage::BadChecksum)],
        5 => vec![(Duration::ZERO, Damage::BadPayload)],
        6 => vec![
            (Duration::ZERO, Damage::None),
            (Duration::from_millis(5), Damage::None),
        ],
        _ => vec![(Duration::ZERO, Damage::None)],
    });
    let r = pingrt(
        Some(&net.c),
        &["-c", "16", "-i", "0.05", "-W", "0.3", net.s4],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.v("sent_count"), 16.0);
    // Lost: 3 (late), 4 and 5 (corrupt); the other thirteen came back. 16 probes: the run
    // lasts 750 ms, well past seq 3's late reply at about 500 ms.
    assert_eq!(r.v("received_count"), 13.0, "{}", r.explain());
    assert_eq!(r.v("out_of_order_count"), 1.0, "{}", r.explain());
    assert_eq!(r.v("late_count"), 1.0, "{}", r.explain());
    assert_eq!(r.v("corrupt_count"), 2.0, "{}", r.explain());
    assert_eq!(r.v("duplicate_count"), 1.0, "{}", r.explain());
    assert_eq!(r.v("timeout_count"), 3.0, "{}", r.explain());
    let s1 = r
        .samples()
        .into_iter()
        .find(|s| s.info["icmp_seq"] == 1)
        .unwrap();
    assert!(s1.value("rtt_s").unwrap() >= 0.150);
    assert_eq!(s1.info["out_of_order"], true);
}

#[test]
fn ttl_too_small_for_a_routed_hop() {
    if !can_run("ttl", &["ip"]) {
        return;
    }
    let net = Net::routed();
    net.exec(
        &net.c,
        "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
    );
    // The server is reachable with the default TTL...
    let r = pingrt(Some(&net.c), &["-c", "2", "-i", "0.05", net.s4]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.samples()[0].info["ttl"], 63, "one hop");
    // ...but TTL 1 dies at the router, for IPv4 and IPv6, raw and datagram sockets.
    for (addr, sock) in [
        (net.s4, "raw"),
        (net.s4, "dgram"),
        (net.s6, "raw"),
        (net.s6, "dgram"),
    ] {
        // -W 3: the first probe over a fresh veth may wait a second for neighbour discovery.
        let r = pingrt(
            Some(&net.c),
            &[
                "-c", "3", "-i", "0.05", "-W", "3", "-t", "1", "--socket", sock, addr,
            ],
        );
        assert_eq!(r.code, 1, "{addr} {sock}: {}", r.explain());
        assert_eq!(r.v("error_count"), 3.0, "{addr} {sock}: {}", r.explain());
        assert_eq!(r.v("received_count"), 0.0);
        assert_eq!(r.v("loss_ratio"), 1.0);
        for s in r.samples() {
            assert_eq!(
                s.error.as_deref(),
                Some("ttl_exceeded"),
                "{addr} {sock}: {}",
                r.explain()
            );
            let router = if addr.contains(':') { net.r6 } else { net.r4 };
            assert_eq!(s.info["from"], router);
        }
        assert_eq!(r.summary().status, Some(measure::Status::Failed));
    }
}

#[test]
fn unreachable_is_reported_per_probe() {
    if !can_run("unreachable", &["ip"]) {
        return;
    }
    let net = Net::routed();
    let router = net.r.clone().unwrap();
    net.exec(
        &router,
        "ip route add unreachable 10.77.9.0/24 && ip -6 route add unreachable fd00:77:9::/64",
    );
    net.exec(
        &net.c,
        "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
    );
    for (addr, sock) in [
        ("10.77.9.1", "raw"),
        ("10.77.9.2", "dgram"),
        ("fd00:77:9::1", "raw"),
        ("fd00:77:9::2", "dgram"),
    ] {
        let r = pingrt(
            Some(&net.c),
            &["-c", "2", "-i", "0.05", "-W", "3", "--socket", sock, addr],
        );
        assert_eq!(r.code, 1, "{addr} {sock}: {}", r.explain());
        assert_eq!(r.v("error_count"), 2.0, "{addr} {sock}: {}", r.explain());
        for s in r.samples() {
            assert_eq!(s.error.as_deref(), Some("unreachable"), "{}", r.explain());
        }
    }
}

#[test]
fn a_host_that_never_answers_times_out_with_exit_1() {
    if !can_run("silent", &["ip"]) {
        return;
    }
    let net = Net::pair();
    net.exec(&net.s, "sysctl -qw net.ipv4.icmp_echo_ignore_all=1");
    let r = pingrt(
        Some(&net.c),
        &["-c", "3", "-i", "0.05", "-W", "0.2", net.s4],
    );
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.v("timeout_count"), 3.0);
    assert_eq!(r.v("loss_ratio"), 1.0);
    assert!(r.summary().value("rtt_mean_s").is_none());
    let s = r.summary();
    assert_eq!(s.status, Some(measure::Status::Failed));
    assert!(s.error.as_deref().unwrap().contains("no reply"));
}

#[test]
fn ipv6_across_the_veth_raw_and_dgram() {
    if !can_run("ipv6", &["ip"]) {
        return;
    }
    let net = Net::pair();
    net.exec(
        &net.c,
        "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
    );
    for sock in ["raw", "dgram"] {
        let r = pingrt(
            Some(&net.c),
            &[
                "-6", "-c", "3", "-i", "0.05", "-W", "5", "--socket", sock, net.s6,
            ],
        );
        assert_eq!(r.code, 0, "{sock}: {}", r.explain());
        assert_eq!(r.begin().info["socket"], sock);
        assert_eq!(r.v("received_count"), 3.0);
        for s in r.samples() {
            assert_eq!(s.info["from"], net.s6);
            assert_eq!(s.info["ttl"], 64);
        }
    }
}

#[test]
fn source_address_and_interface() {
    if !can_run("interface", &["ip"]) {
        return;
    }
    let net = Net::pair();
    let r = pingrt(
        Some(&net.c),
        &["-c", "2", "-i", "0.05", "-I", net.c4, net.s4],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.begin().info["source"], net.c4);
    let r = pingrt(
        Some(&net.c),
        &["-c", "2", "-i", "0.05", "-I", &net.c_if, net.s4],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.begin().info["interface"], net.c_if.as_str());
    // Bound to lo, the probe cannot reach the peer.
    let r = pingrt(Some(&net.c), &["-c", "1", "-W", "0.3", "-I", "lo", net.s4]);
    assert_eq!(r.code, 1, "{}", r.explain());
    let r = pingrt(Some(&net.c), &["-c", "1", "-I", "10.99.99.99", net.s4]);
    assert_eq!(r.code, 2, "{}", r.explain());
    assert!(r.stderr.contains("source address"), "{}", r.stderr);
}

/// Runs pingrt as the unprivileged user nobody inside `ns`.
fn as_nobody(ns: &str, args: &[&str]) -> Run {
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
        ])
        .args(args)
        .output()
        .expect("run in namespace");
    Run::from_output(o)
}

#[test]
fn unprivileged_datagram_socket_opened_inside_refused_outside() {
    if !can_run("unprivileged", &["ip", "setpriv"]) {
        return;
    }
    let net = Net::pair();
    // A new namespace starts with ping_group_range "1 0": nobody may open neither kind.
    let r = as_nobody(&net.c, &["-c", "1", net.s4]);
    assert_eq!(r.code, 2, "{}", r.explain());
    assert!(r.stderr.contains("CAP_NET_RAW"), "{}", r.stderr);
    assert!(
        r.stderr.contains("net.ipv4.ping_group_range"),
        "{}",
        r.stderr
    );
    assert_eq!(r.summary().status, Some(measure::Status::Failed));
    let r = as_nobody(&net.c, &["-c", "1", "--socket", "raw", net.s4]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("CAP_NET_RAW") && r.stderr.contains("setcap"),
        "{}",
        r.stderr
    );
    let r = as_nobody(&net.c, &["-c", "1", "--socket", "dgram", net.s4]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("sysctl -w net.ipv4.ping_group_range"),
        "{}",
        r.stderr
    );
    // Opened inside the namespace, the datagram socket works, chosen automatically.
    net.exec(
        &net.c,
        "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
    );
    for fam in [net.s4, net.s6] {
        let r = as_nobody(&net.c, &["-c", "3", "-i", "0.2", fam]);
        assert_eq!(r.code, 0, "{fam}: {}", r.explain());
        assert_eq!(r.begin().info["socket"], "dgram");
        assert_eq!(r.v("received_count"), 3.0);
        assert!(r.samples().iter().all(|s| s.info["ttl"] == 64));
    }
}

#[test]
fn raw_and_dgram_agree_on_loss_accounting() {
    if !can_run("raw_vs_dgram", &["ip", "iptables"]) {
        return;
    }
    let net = Net::pair();
    net.exec(
        &net.c,
        "sysctl -qw net.ipv4.ping_group_range=\"0 2147483647\"",
    );
    net.exec(
        &net.s,
        "iptables -A OUTPUT -p icmp --icmp-type echo-reply -m statistic --mode nth --every 4 --packet 0 -j DROP",
    );
    for sock in ["raw", "dgram"] {
        let r = pingrt(
            Some(&net.c),
            &[
                "-c", "8", "-i", "0.02", "-W", "0.3", "--socket", sock, net.s4,
            ],
        );
        assert_eq!(r.code, 0, "{sock}: {}", r.explain());
        assert_eq!(r.begin().info["socket"], sock);
        assert_eq!(r.v("received_count"), 6.0, "{sock}");
        assert_eq!(r.v("loss_ratio"), 0.25, "{sock}");
    }
}

#[test]
fn a_probe_still_out_holds_its_sequence_number_across_the_wrap() {
    if !can_run("wrap_hold", &["ip"]) {
        return;
    }
    let net = Net::pair();
    // Probe 0's reply (sequence 1) comes after 10 s, well after the next 65535 probes at -i 0
    // (about 4 s here): probe 65536 would reuse sequence 1, so it waits for that reply
    // rather than give probe 0 up.
    let delay = Duration::from_secs(10);
    let first = std::sync::atomic::AtomicBool::new(true);
    let _resp = Responder::start(&net.s, move |seq| {
        let held = seq == 1 && first.swap(false, std::sync::atomic::Ordering::SeqCst);
        vec![(if held { delay } else { Duration::ZERO }, Damage::None)]
    });
    let n = 65_600u64;
    let t0 = std::time::Instant::now();
    let r = pingrt(
        Some(&net.c),
        &[
            "-q",
            "-c",
            &n.to_string(),
            "-i",
            "0",
            "-s",
            "16",
            "-W",
            "15",
            net.s4,
        ],
    );
    let took = t0.elapsed();
    let summary = r.summary().values.clone();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.v("sent_count"), n as f64);
    // Probe 0 was answered, not given up when its sequence number came round again.
    let samples = r.samples();
    assert_eq!(samples.len() as u64, n);
    let p0 = samples
        .iter()
        .find(|s| s.info["probe"] == 0)
        .expect("probe 0");
    let rtt = p0.value("rtt_s");
    assert!(
        rtt.is_some_and(|v| v >= delay.as_secs_f64()),
        "probe 0: {:?}; took {took:?}; {summary:?}",
        p0.info
    );
    for k in ["late_count", "duplicate_count"] {
        assert_eq!(r.v(k), 0.0, "{k}: {summary:?}");
    }
    // A request the kernel dropped under load is a timeout; every reply that came counts.
    assert_eq!(r.v("received_count") + r.v("timeout_count"), n as f64);
}
