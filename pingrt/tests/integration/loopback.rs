//! pingrt on loopback (127.0.0.1, ::1): records, flags, usage errors, Ctrl-C, flood, wrap.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn ipv4_loopback_writes_begin_samples_summary() {
    if !can_run("ipv4_loopback", &[]) {
        return;
    }
    let r = pingrt(
        None,
        &[
            "-c",
            "3",
            "-i",
            "0.05",
            "127.0.0.1",
            "--label",
            "a/b",
            "--tag",
            "k=v",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.records.len(), 5, "{}", r.explain());
    assert_eq!(r.records[0].kind, measure::Kind::Begin);
    let b = r.begin();
    assert_eq!(b.info["socket"], "raw");
    assert_eq!(b.info["address"], "127.0.0.1");
    assert!(b.info.contains_key("kernel"), "machine facts in begin");
    for (i, s) in r.samples().iter().enumerate() {
        let rtt = s.value("rtt_s").unwrap();
        assert!(rtt > 0.0 && rtt < 1.0, "{rtt}");
        assert_eq!(s.info["icmp_seq"], i as u64 + 1);
        assert_eq!(s.info["bytes"], 64);
        assert_eq!(s.info["ttl"], 64);
        assert_eq!(s.info["from"], "127.0.0.1");
        // Probe 1 too: pingrt waits for the kernel to turn receive stamping on.
        assert_eq!(s.info["rx_stamp"], "kernel");
        assert_eq!(s.label, "a/b");
        assert_eq!(s.tags["k"], "v");
    }
    let sm = r.summary();
    assert_eq!(sm.status, Some(measure::Status::Ok));
    assert_eq!(sm.headline.as_deref(), Some("rtt_mean_s"));
    assert_eq!(r.v("sent_count"), 3.0);
    assert_eq!(r.v("received_count"), 3.0);
    assert_eq!(r.v("loss_ratio"), 0.0);
    assert_eq!(r.v("duplicate_count"), 0.0);
    for k in [
        "rtt_min_s",
        "rtt_mean_s",
        "rtt_max_s",
        "rtt_mdev_s",
        "rtt_stddev_s",
        "rtt_p50_s",
        "rtt_p90_s",
        "rtt_p99_s",
    ] {
        assert!(r.v(k) >= 0.0, "{k}");
    }
    assert!(r.v("rtt_min_s") <= r.v("rtt_mean_s") && r.v("rtt_mean_s") <= r.v("rtt_max_s"));
    // Human lines only on a terminal: stderr is a pipe here.
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn ipv6_loopback_raw_and_user_stamps() {
    if !can_run("ipv6_loopback", &[]) {
        return;
    }
    if !std::path::Path::new("/proc/net/if_inet6").exists() {
        testkit::skip("no IPv6 on this host");
        return;
    }
    let r = pingrt(
        None,
        &["-6", "-c", "3", "-i", "0.05", "--tx-stamp", "user", "::1"],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.begin().info["family"], "ipv6");
    assert_eq!(r.samples().len(), 3);
    for s in r.samples() {
        assert_eq!(s.info["tx_stamp"], "user");
        assert_eq!(s.info["from"], "::1");
        assert_eq!(s.info["ttl"], 64, "hop limit from IPV6_HOPLIMIT");
    }
    assert_eq!(r.v("received_count"), 3.0);
}

#[test]
fn kernel_tx_stamps_are_used_on_loopback() {
    if !can_run("kernel_tx_stamps", &[]) {
        return;
    }
    let r = pingrt(None, &["-c", "5", "-i", "0.02", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let kernel = r
        .samples()
        .iter()
        .filter(|s| s.info["tx_stamp"] == "kernel")
        .count();
    assert!(
        kernel >= 4,
        "kernel TX stamps on {kernel} of 5 probes: {}",
        r.explain()
    );
    assert_eq!(r.info("kernel_tx_stamps"), kernel as u64);
}

#[test]
fn usage_errors_exit_2_with_a_fix() {
    let cases: &[(&[&str], &str)] = &[
        (&["-c", "x", "127.0.0.1"], "count"),
        (&["-4", "::1"], "-4"),
        (&["-6", "127.0.0.1"], "-6"),
        (&["-s", "70000", "127.0.0.1"], "at most"),
        (&["-i", "2parsecs", "127.0.0.1"], "unit"),
        (&["-t", "0", "127.0.0.1"], "ttl"),
        (&["--socket", "udp", "127.0.0.1"], "socket"),
        (&["-w", "0", "127.0.0.1"], "deadline"),
        (&["-I", "nosuchif0", "-6", "::1"], "nosuchif0"),
        (&["no.such.host.invalid"], "cannot resolve"),
        (&[], "HOST"),
    ];
    for (args, needle) in cases {
        let r = pingrt(None, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.explain());
        assert!(
            r.stderr.to_lowercase().contains(&needle.to_lowercase()),
            "{args:?} should mention {needle}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty() || r.summary().status == Some(measure::Status::Failed));
    }
    let r = pingrt(None, &["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("EXAMPLES"));
}

#[test]
fn fast_interval_and_flood_need_root() {
    if !can_run("dropping to nobody with setpriv", &["setpriv"]) {
        return;
    }
    for args in [&["-i", "0.1", "127.0.0.1"][..], &["-f", "127.0.0.1"][..]] {
        let o = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()])
            .args(args)
            .output()
            .unwrap();
        let r = Run::from_output(o);
        assert_eq!(r.code, 2, "{args:?}: {}", r.explain());
        assert!(r.stderr.contains("only root"), "{}", r.stderr);
    }
}

#[test]
fn output_file_is_appended() {
    if !can_run("output_file", &[]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("pingrt-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("r.jsonl");
    std::fs::write(&f, "earlier line\n").unwrap();
    let r = pingrt(None, &["-c", "1", "127.0.0.1", "-o", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert!(r.stdout.is_empty());
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(text.starts_with("earlier line\n"));
    assert_eq!(text.lines().count(), 4);
}

#[test]
fn deadline_stops_probing_and_counts_what_was_out() {
    if !can_run("deadline", &[]) {
        return;
    }
    let r = pingrt(None, &["-w", "1", "-i", "0.2", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.info("end"), "deadline");
    let sent = r.v("sent_count");
    assert!((4.0..=6.0).contains(&sent), "sent {sent}");
    assert_eq!(r.samples().len() as f64, sent, "one sample per probe");
    // -w with -c: stop once that many replies came.
    let r = pingrt(None, &["-w", "5", "-c", "2", "-i", "0.05", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.v("received_count"), 2.0);
    assert_eq!(r.info("end"), "done");
}

#[test]
fn ctrl_c_still_writes_the_summary() {
    if !can_run("ctrl_c", &[]) {
        return;
    }
    let child = Command::new(bin())
        .args(["-c", "100", "-i", "0.2", "127.0.0.1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    interrupt(&child);
    let r = Run::from_output(child.wait_with_output().unwrap());
    assert_eq!(r.code, 130, "{}", r.explain());
    let s = r.summary();
    assert_eq!(s.status, Some(measure::Status::Partial));
    assert_eq!(r.info("end"), "interrupted");
    assert!(r.v("received_count") >= 2.0);
    assert_eq!(r.samples().len() as f64, r.v("sent_count"));
    // With -c 0, Ctrl-C is the normal end, as for ping.
    let child = Command::new(bin())
        .args(["-c", "0", "-i", "0.2", "127.0.0.1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    interrupt(&child);
    let r = Run::from_output(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.summary().status, Some(measure::Status::Ok));
}

#[test]
fn flood_accounts_for_every_probe() {
    if !can_run("flood", &[]) {
        return;
    }
    let r = pingrt(None, &["-f", "-c", "5000", "-q", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.v("sent_count"), 5000.0);
    assert_eq!(r.v("received_count"), 5000.0);
    assert_eq!(r.v("duplicate_count"), 0.0);
    assert_eq!(r.v("late_count"), 0.0);
    assert_eq!(r.samples().len(), 5000);
    assert!(r.samples().iter().all(|s| s.value("rtt_s").is_some()));
    // Flood takes ping's user send time unless --tx-stamp kernel is given.
    assert!(r.samples().iter().all(|s| s.info["tx_stamp"] == "user"));
    assert!(r.v("probe_rate_per_s") > 0.0);
    let r = pingrt(
        None,
        &["-f", "-c", "500", "--tx-stamp", "kernel", "127.0.0.1"],
    );
    assert_eq!(r.v("received_count"), 500.0, "{}", r.explain());
    assert!(r.samples().iter().any(|s| s.info["tx_stamp"] == "kernel"));
}

/// `-i 0` sends as fast as it can, reading what came back before each probe: every reply
/// that arrived counts, one sample per probe.
fn zero_interval_gets_every_reply(n: u64) {
    let r = pingrt(None, &["-q", "-c", &n.to_string(), "-i", "0", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.v("sent_count"), n as f64);
    assert_eq!(r.v("received_count"), n as f64);
    assert_eq!(r.v("loss_ratio"), 0.0);
    for k in [
        "timeout_count",
        "late_count",
        "duplicate_count",
        "corrupt_count",
    ] {
        assert_eq!(r.v(k), 0.0, "{k}");
    }
    let samples = r.samples();
    assert_eq!(samples.len() as u64, n);
    let mut probes: Vec<u64> = samples
        .iter()
        .filter(|s| s.value("rtt_s").is_some())
        .filter_map(|s| s.info["probe"].as_u64())
        .collect();
    probes.sort_unstable();
    assert!(probes.iter().copied().eq(0..n), "one sample per probe");
    // The kernel's send stamps are still used at this rate.
    assert!(samples.iter().any(|s| s.info["tx_stamp"] == "kernel"));
}

#[test]
fn zero_interval_loses_no_reply() {
    if !can_run("zero_interval", &[]) {
        return;
    }
    zero_interval_gets_every_reply(5000);
}

#[test]
fn other_pingers_floods_do_not_crowd_out_our_replies() {
    if !can_run("beside_floods", &[]) {
        return;
    }
    // A raw socket gets every echo reply on the host: two floods beside a -i 0 run filled
    // its receive buffer with theirs until ours were dropped (1 or 2 of 70000 lost in 3 of
    // 4 tries, before the socket's ident filter). Each flood is bounded by its count.
    let floods: Vec<_> = (0..2)
        .map(|_| {
            Command::new(bin())
                .args(["-q", "-f", "-c", "200000", "-o", "/dev/null", "127.0.0.1"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("a flood")
        })
        .collect();
    zero_interval_gets_every_reply(70_000);
    for mut f in floods {
        let _ = f.wait();
    }
}

#[test]
fn zero_interval_across_the_sequence_wrap() {
    if !can_run("zero_interval_wrap", &[]) {
        return;
    }
    // 70000 probes: the 16-bit sequence number wraps once.
    zero_interval_gets_every_reply(70_000);
}

#[test]
fn sequence_wrap_keeps_every_probe_apart() {
    if !can_run("sequence_wrap", &[]) {
        return;
    }
    // 65536 + 500 probes: the 16-bit sequence number wraps once.
    let n = 66_036;
    let r = pingrt(None, &["-f", "-c", &n.to_string(), "-s", "16", "127.0.0.1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.v("sent_count"), n as f64);
    assert_eq!(r.v("received_count"), n as f64);
    assert_eq!(r.v("duplicate_count"), 0.0);
    assert_eq!(r.v("late_count"), 0.0);
    assert_eq!(r.info("seq_wraps"), 1);
    let samples = r.samples();
    assert_eq!(samples.len(), n);
    let last = samples.iter().find(|s| s.info["probe"] == 65_535).unwrap();
    assert_eq!(last.info["icmp_seq"], 0);
    let after = samples.iter().find(|s| s.info["probe"] == 65_536).unwrap();
    assert_eq!(after.info["icmp_seq"], 1);
}

#[test]
fn ping_like_lines_on_a_terminal() {
    if !can_run("terminal", &["script"]) {
        return;
    }
    // script(1) gives pingrt a pseudo-terminal; records go to /dev/null.
    let cmd = r#""$BIN" -c 2 -i 0.05 127.0.0.1 -o /dev/null"#;
    let o = Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .env("BIN", bin())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data."),
        "{text}"
    );
    assert!(
        text.contains("64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time="),
        "{text}"
    );
    assert!(
        text.contains("--- 127.0.0.1 pingrt statistics ---"),
        "{text}"
    );
    assert!(
        text.contains("2 packets transmitted, 2 received, 0% packet loss"),
        "{text}"
    );
    assert!(text.contains("rtt min/avg/max/mdev = "), "{text}");
    // -q silences them.
    let cmd = r#""$BIN" -q -c 1 127.0.0.1 -o /dev/null"#;
    let o = Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .env("BIN", bin())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).trim().is_empty());
}

#[test]
fn short_payloads_still_match_their_probes() {
    if !can_run("short_payloads", &[]) {
        return;
    }
    for size in ["0", "8", "15"] {
        let r = pingrt(None, &["-c", "2", "-i", "0.02", "-s", size, "127.0.0.1"]);
        assert_eq!(r.code, 0, "-s {size}: {}", r.explain());
        assert_eq!(r.v("received_count"), 2.0, "-s {size}");
        assert_eq!(r.v("corrupt_count"), 0.0, "-s {size}");
        let bytes: u64 = size.parse::<u64>().unwrap() + 8;
        assert!(r.samples().iter().all(|s| s.info["bytes"] == bytes));
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    if !can_run("closed_stdout", &[]) {
        return;
    }
    let mut child = Command::new(bin())
        .args(["-c", "5", "-i", "0.05", "127.0.0.1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
