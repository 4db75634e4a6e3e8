//! ping's -D (a time before each probe's line) and -O (a line for a probe still unanswered
//! when the next goes out) against iputils ping itself: the same probes under both print
//! lines of the same shape, on loopback, and in a namespace of the test's own whose
//! loopback drops every echo reply (nftables) for -O.

use crate::common::*;
use std::ffi::OsStr;
use testkit::shape;

/// The lines of `text` about single probes, each as its shape.
fn probe_lines(text: &str, what: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(what))
        .map(shape::of)
        .collect()
}

/// The seconds of a `[seconds.micros] ...` line.
fn stamp(line: &str) -> Option<f64> {
    line.strip_prefix('[')?.split(']').next()?.parse().ok()
}

#[test]
fn d_stamps_each_line_as_ping_does() {
    if !can_run("ping -D beside pingrt", &["ping", "script"]) {
        return;
    }
    let ping = testkit::cmd("ping", &["-D", "-c", "3", "-i", "0.2", "127.0.0.1"])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_else(|e| panic!("{e}"));
    let bin = [("BIN", OsStr::new(bin()))];
    let (code, ours) = testkit::on_terminal(r#""$BIN" -D -c 3 -i 0.2 127.0.0.1"#, &bin)
        .expect("script(1) is installed");
    assert_eq!(code, 0, "{ours}");
    let (a, b) = (
        probe_lines(&ours, "bytes from"),
        probe_lines(&ping, "bytes from"),
    );
    assert_eq!(a.len(), 3, "{ours}");
    assert_eq!(a, b, "{ours}\nagainst ping's\n{ping}");
    assert!(a[0].starts_with("[#] # bytes from"), "{ours}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64();
    for l in ours.lines().filter(|l| l.contains("bytes from")) {
        let t = stamp(l).unwrap_or_else(|| panic!("no stamp: {l}"));
        assert!((now - t).abs() < 120.0, "{l}: not the time now ({now})");
    }
    // Without -D, no stamp.
    let (_, plain) =
        testkit::on_terminal(r#""$BIN" -c 1 127.0.0.1"#, &bin).expect("script(1) is installed");
    assert!(
        plain.lines().any(|l| l.starts_with("64 bytes from")),
        "{plain}"
    );
}

/// A namespace whose loopback drops every echo reply; removed when dropped.
struct Silent(String);

impl Silent {
    fn new() -> Silent {
        let ns = testkit::unique("bmdropO");
        testkit::cmd("ip", &["netns", "add", &ns]).unwrap_or_else(|e| panic!("{e}"));
        let s = Silent(ns);
        in_ns(&s.0, "ip link set lo up");
        in_ns(&s.0, "nft add table inet t");
        in_ns(
            &s.0,
            "nft add chain inet t in \"{ type filter hook input priority 0; }\"",
        );
        in_ns(&s.0, "nft add rule inet t in icmp type echo-reply drop");
        s
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        let _ = testkit::cmd("ip", &["netns", "del", &self.0]);
    }
}

#[test]
fn o_reports_each_probe_still_unanswered_as_ping_does() {
    if !can_run("ping -O beside pingrt", &["ping", "script", "nft", "ip"]) {
        return;
    }
    let ns = Silent::new();
    let args = "-O -D -c 3 -i 0.2 -W 1 127.0.0.1";
    let ping = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.0, "ping"])
        .args(args.split(' '))
        .output()
        .expect("ping runs");
    let ping = String::from_utf8_lossy(&ping.stdout).into_owned();
    let env = [("NS", OsStr::new(&ns.0)), ("BIN", OsStr::new(bin()))];
    let line = format!(r#"ip netns exec "$NS" "$BIN" {args}"#);
    let (code, ours) = testkit::on_terminal(&line, &env).expect("script(1) is installed");
    assert_eq!(code, 1, "no reply: exit 1, as ping: {ours}");
    let (a, b) = (
        probe_lines(&ours, "no answer yet"),
        probe_lines(&ping, "no answer yet"),
    );
    assert_eq!(a, ["[#] no answer yet for icmp_seq=#"; 2], "{ours}");
    assert_eq!(a, b, "{ours}\nagainst ping's\n{ping}");
    for (i, l) in ours
        .lines()
        .filter(|l| l.contains("no answer yet"))
        .enumerate()
    {
        assert!(l.ends_with(&format!("icmp_seq={}", i + 1)), "{l}");
    }
    // Without -O, no such line.
    let line = r#"ip netns exec "$NS" "$BIN" -c 2 -i 0.2 -W 0.5 127.0.0.1"#;
    let (_, quiet) = testkit::on_terminal(line, &env).expect("script(1) is installed");
    assert!(!quiet.contains("no answer yet"), "{quiet}");
}
