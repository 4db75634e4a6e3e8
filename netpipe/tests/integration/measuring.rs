//! Measuring mode on loopback: exact byte counts (odd, zero, over 4 GiB), both directions,
//! parallel streams, intervals and warm-up, keep-open, and real nc/socat as the peer.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

/// Longer than common's LIMIT: these runs move gigabytes.
const LIMIT: Duration = Duration::from_secs(120);
const LISTEN: Duration = Duration::from_secs(10);

/// Runs `netpipe <role> --connect 127.0.0.1:PORT <extra>`; returns exit code and records.
fn connect(role: &str, port: u16, extra: &[&str]) -> (i32, Vec<Value>, String) {
    let (st, out, err) = run(
        np().args([role, "--connect", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdin(Stdio::null()),
        LIMIT,
    );
    (st.code().unwrap_or(-1), records(&out), err)
}

fn pair(
    lrole: &str,
    lextra: &[&str],
    crole: &str,
    cextra: &[&str],
) -> (i32, Vec<Value>, i32, Vec<Value>) {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener(lrole, &recs, lextra);
    let (ccode, crecs, cerr) = connect(crole, port, cextra);
    let (lst, _, lerr) = l.wait_output(LIMIT);
    eprintln!("listener stderr: {lerr}\nconnector stderr: {cerr}");
    (lst.code().unwrap_or(-1), read_records(&recs), ccode, crecs)
}

#[test]
fn odd_byte_count_is_exact_on_both_sides() {
    for method in ["sendfile", "splice", "copy"] {
        let n = 10_000_019u64;
        let (lc, lr, cc, cr) = pair(
            "recv",
            &[],
            "send",
            &[
                "--bytes",
                &n.to_string(),
                "--send-method",
                method,
                "--pattern",
                "random",
            ],
        );
        assert_eq!((lc, cc), (0, 0), "{lr:#?} {cr:#?}");
        let (ls, cs) = (summary(&lr), summary(&cr));
        assert_eq!(ls["status"], "ok");
        assert_eq!(cs["status"], "ok");
        assert_eq!(ls["headline"], "throughput_bits_per_s");
        assert_eq!(num(ls, "received_bytes"), n as f64);
        assert_eq!(
            num(ls, "measured_bytes"),
            n as f64,
            "nothing omitted without --omit"
        );
        assert_eq!(num(cs, "sent_bytes"), n as f64);
        assert_eq!(ls["info"]["measured_by"], "receiver");
        assert_eq!(cs["info"]["measured_by"], "sender");
        assert!(num(ls, "throughput_bits_per_s") > 0.0);
        assert!(num(ls, "cpu_seconds_per_s") >= 0.0);
        // The sender's sample carries TCP_INFO.
        let s = of_type(&cr, "sample");
        assert_eq!(s.len(), 1);
        for k in ["retransmits_count", "rtt_s", "cwnd_bytes"] {
            assert!(s[0]["values"][k].is_number(), "{k} in {}", s[0]);
        }
        assert_eq!(s[0]["info"]["peer_closed"], true);
        assert_eq!(s[0]["info"]["send_method"], method);
        let b = of_type(&cr, "begin");
        assert_eq!(b[0]["info"]["send_method"], method);
    }
}

#[test]
fn every_send_method_sends_its_random_pattern_whole() {
    // What each method puts on the wire, caught by netpipe's netcat mode into a file: the
    // exact count, random (not zeros), and the pattern repeating at the buffer's length
    // (64k for copy and sendfile; splice cycles 8 pipes of 64k), so no part of it is
    // skipped or sent twice.
    let block = 64 << 10;
    let n = 3 * 8 * block + 12_345;
    for method in ["sendfile", "splice", "copy"] {
        let d = tmp();
        let out = path(&d, "out");
        let recs = path(&d, "nc.jsonl");
        let mut l = Spawned::start(
            np().args(["-l", "-p", "0", "-s", "127.0.0.1", "-o"])
                .arg(&recs)
                .stdin(Stdio::null())
                .stdout(file(&out)),
        );
        let port = listen_port(&recs);
        let (c, r, e) = connect(
            "send",
            port,
            &[
                "--bytes",
                &n.to_string(),
                "--send-method",
                method,
                "--pattern",
                "random",
                "--block-size",
                "64k",
            ],
        );
        assert_eq!(c, 0, "{method}: {e}");
        assert!(l.wait(LIMIT).success());
        assert_eq!(of_type(&r, "sample")[0]["info"]["send_method"], method);
        let got = std::fs::read(&out).unwrap();
        assert_eq!(got.len(), n, "{method}");
        let zeros = got.iter().filter(|&&b| b == 0).count();
        assert!(zeros < n / 100, "{method}: {zeros} zero bytes of {n}");
        let period = if method == "splice" { 8 * block } else { block };
        assert!(
            (0..n - period).all(|i| got[i] == got[i + period]),
            "{method}: the pattern does not repeat every {period} bytes"
        );
        if method == "splice" {
            assert!(
                got[..block] != got[block..2 * block],
                "splice: its pipes hold different parts of the pattern"
            );
        }
    }
}

#[test]
fn the_last_interval_ends_with_the_last_byte() {
    // Each side's last interval ends where its sample does, also for the listener, whose
    // session waits on the listening socket rather than for its stream to end.
    let n = (1u64 << 30) + 1;
    let (lc, lr, cc, cr) = pair(
        "recv",
        &["-i", "0.1"],
        "send",
        &["--bytes", &n.to_string(), "-i", "0.1"],
    );
    assert_eq!((lc, cc), (0, 0));
    for recs in [&lr, &cr] {
        let iv = of_type(recs, "interval");
        let last = iv.last().unwrap();
        let s = of_type(recs, "sample")[0];
        assert_eq!(
            last["info"]["end_s"], s["values"]["duration_s"],
            "{last} vs {s}"
        );
        assert_eq!(interval_bytes(recs), n as f64);
    }
}

#[test]
fn a_receiver_limit_counts_its_intervals_within_the_limit() {
    // The receiver's intervals count what the kernel holds for it unread as arrived, but
    // never beyond its own --bytes: they add up to exactly what it took.
    let n = 2_000_000_007u64;
    let (lc, lr, _, _) = pair(
        "recv",
        &["--bytes", &n.to_string(), "-i", "0.02"],
        "send",
        &[],
    );
    assert_eq!(lc, 0, "{lr:#?}");
    assert_eq!(num(summary(&lr), "received_bytes"), n as f64);
    assert_eq!(interval_bytes(&lr), n as f64);
}

#[test]
fn a_small_locked_window_still_moves_every_byte() {
    // The receiver raises its wake-up mark (SO_RCVLOWAT) with the rate, but never past a
    // quarter of the receive buffer, so a small fixed window (--window) cannot strand bytes.
    let n = 50_000_021u64;
    let (lc, lr, cc, cr) = pair(
        "recv",
        &["--window", "64k"],
        "send",
        &["--bytes", &n.to_string(), "--window", "64k"],
    );
    assert_eq!((lc, cc), (0, 0), "{lr:#?}");
    assert_eq!(num(summary(&lr), "received_bytes"), n as f64);
    assert_eq!(num(summary(&cr), "sent_bytes"), n as f64);
}

#[test]
fn zero_bytes_agree_and_fail_the_measurement() {
    // Asking for nothing is a usage error on either side, before any connection.
    for role in ["send", "recv"] {
        let (code, recs, err) = connect(role, 9, &["--bytes", "0"]);
        assert_eq!(code, 2, "{role}: {err}");
        assert!(
            err.contains("--bytes 0") && err.contains("--bytes 1G"),
            "{err}"
        );
        assert!(recs.iter().all(|r| r["status"] != "ok"), "{recs:?}");
    }
    // A peer that connects and sends nothing: the receiver measured nothing, a failure.
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    drop(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
    let (st, _, err) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    let lr = read_records(&recs);
    let s = summary(&lr);
    assert_eq!(num(s, "received_bytes"), 0.0);
    assert_eq!(s["status"], "failed");
    assert!(
        s["error"]
            .as_str()
            .unwrap()
            .contains("nothing was received"),
        "{s}"
    );
}

#[test]
fn one_byte_moves_and_is_partial_on_both_sides() {
    // One byte is delivered (exit 0, as nc's), but a rate over a microsecond is no figure:
    // both summaries are partial and say why, so the matrix leaves the run out.
    let (lc, lr, cc, cr) = pair("recv", &[], "send", &["--bytes", "1"]);
    assert_eq!((lc, cc), (0, 0));
    for (side, recs) in [("receiver", &lr), ("sender", &cr)] {
        let s = summary(recs);
        assert_eq!(s["status"], "partial", "{side}: {s}");
        let e = s["error"].as_str().unwrap();
        assert!(
            e.starts_with("1 bytes in ") && e.contains("too little to time"),
            "{side}: {e}"
        );
    }
    assert_eq!(summary(&lr)["values"]["received_bytes"].as_u64(), Some(1));
}

#[test]
fn more_than_4_gib_counts_exactly() {
    let n: u64 = (4u64 << 30) + 3;
    let (lc, lr, cc, cr) = pair("recv", &[], "send", &["--bytes", &n.to_string()]);
    assert_eq!((lc, cc), (0, 0));
    assert_eq!(summary(&lr)["values"]["received_bytes"].as_u64(), Some(n));
    assert_eq!(summary(&cr)["values"]["sent_bytes"].as_u64(), Some(n));
}

#[test]
fn reverse_direction_send_listens_recv_connects() {
    let n = 7_000_001u64;
    let (lc, lr, cc, cr) = pair("send", &["--bytes", &n.to_string()], "recv", &[]);
    assert_eq!((lc, cc), (0, 0));
    assert_eq!(num(summary(&lr), "sent_bytes"), n as f64);
    assert_eq!(num(summary(&cr), "received_bytes"), n as f64);
    assert_eq!(summary(&cr)["info"]["measured_by"], "receiver");
    // Time-limited the other way round: both sides count the same bytes.
    let (lc, lr, cc, cr) = pair("send", &["--time", "0.5"], "recv", &[]);
    assert_eq!((lc, cc), (0, 0));
    assert_eq!(
        summary(&lr)["values"]["sent_bytes"],
        summary(&cr)["values"]["received_bytes"]
    );
}

#[test]
fn the_receiver_ends_an_unlimited_listening_sender() {
    // iperf3 -R style: the sender serves, the connecting receiver decides how long.
    let (lc, lr, cc, cr) = pair("send", &[], "recv", &["--time", "0.5"]);
    assert_eq!((lc, cc), (0, 0), "{lr:#?}");
    assert_eq!(summary(&lr)["status"], "ok");
    assert_eq!(summary(&cr)["status"], "ok");
    assert_eq!(of_type(&lr, "sample")[0]["info"]["ended_by"], "receiver");
    assert!(num(summary(&cr), "received_bytes") > 0.0);
}

#[test]
fn parallel_streams_share_the_byte_budget() {
    let n = 30_000_001u64;
    let (lc, lr, cc, cr) = pair("recv", &[], "send", &["-P", "3", "--bytes", &n.to_string()]);
    assert_eq!((lc, cc), (0, 0));
    let ls = of_type(&lr, "sample");
    assert_eq!(ls.len(), 3, "{lr:#?}");
    let sum: f64 = ls.iter().map(|s| num(s, "received_bytes")).sum();
    assert_eq!(sum, n as f64);
    assert_eq!(num(summary(&lr), "stream_count"), 3.0);
    assert_eq!(num(summary(&cr), "sent_bytes"), n as f64);
}

#[test]
fn intervals_and_omit() {
    let (lc, lr, cc, cr) = pair(
        "recv",
        &["-i", "0.25", "--omit", "0.5"],
        "send",
        &["--time", "1", "--omit", "0.5", "-i", "250ms"],
    );
    assert_eq!((lc, cc), (0, 0));
    for recs in [&lr, &cr] {
        let iv = of_type(recs, "interval");
        assert!(iv.len() >= 4, "{} intervals", iv.len());
        let s = summary(recs);
        assert!(num(s, "measured_bytes") < num(s, "measured_bytes").max(1.0) + 1.0);
        let total = moved_bytes(s);
        assert!(
            num(s, "measured_bytes") < total,
            "omit left nothing out: {s}"
        );
        assert!(iv.iter().any(|i| i["info"]["omitted"] == true));
        assert_eq!(interval_bytes(recs), total, "intervals add up to the total");
    }
    // The sender's intervals carry TCP_INFO.
    assert!(of_type(&cr, "interval")[0]["values"]["retransmits_count"].is_number());
}

#[test]
fn keep_open_serves_sessions_until_ctrl_c() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open"]);
    for n in ["1000", "2001"] {
        let (c, _, e) = connect("send", port, &["--bytes", n]);
        assert_eq!(c, 0, "{e}");
    }
    l.signal(libc::SIGINT);
    let (st, _, _) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(130));
    let r = read_records(&recs);
    let s = summary(&r);
    assert_eq!(s["status"], "ok");
    assert_eq!(num(s, "session_count"), 2.0);
    assert_eq!(num(s, "received_bytes"), 3001.0);
}

#[test]
fn nc_and_socat_as_the_peer() {
    let d = tmp();
    let input = path(&d, "in");
    random_file(&input, 5_000_011);
    if need_tool("nc") {
        // nc sends a file into `recv --listen`.
        let recs = path(&d, "a.jsonl");
        let (l, port) = listener("recv", &recs, &[]);
        let st = std::process::Command::new("nc")
            .args(["-N", "127.0.0.1", &port.to_string()])
            .stdin(open(&input))
            // What nc reads back (the listener's 64-byte hello) is not the test's output.
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let (lst, _, _) = l.wait_output(LIMIT);
        assert!(lst.success());
        assert_eq!(
            num(summary(&read_records(&recs)), "received_bytes"),
            5_000_011.0
        );
        // `send --connect` into `nc -l > out`.
        let port = free_port();
        let out = path(&d, "out");
        let mut nc = Spawned::start(
            std::process::Command::new("nc")
                .args(["-l", "127.0.0.1", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(file(&out)),
        );
        nc.wait_listening(port, LISTEN);
        let (c, r, e) = connect("send", port, &["--bytes", "3000017"]);
        assert_eq!(c, 0, "{e}");
        assert!(nc.wait(LIMIT).success());
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 3_000_017);
        assert!(std::fs::read(&out).unwrap().iter().all(|&b| b == 0));
        assert_eq!(num(summary(&r), "sent_bytes"), 3_000_017.0);
        // `nc -N -l < file` serves, `recv --connect` pulls.
        let port = free_port();
        let mut nc = Spawned::start(
            std::process::Command::new("nc")
                .args(["-N", "-l", "127.0.0.1", &port.to_string()])
                .stdin(open(&input))
                .stdout(Stdio::null()),
        );
        nc.wait_listening(port, LISTEN);
        let (c, r, e) = connect("recv", port, &[]);
        assert_eq!(c, 0, "{e}");
        assert!(nc.wait(LIMIT).success());
        assert_eq!(num(summary(&r), "received_bytes"), 5_000_011.0);
    }
    if need_tool("socat") {
        let port = free_port();
        let out = path(&d, "out2");
        let mut so = Spawned::start(
            std::process::Command::new("socat")
                .args([
                    "-u",
                    &format!("TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr"),
                    &format!("CREATE:{}", out.display()),
                ])
                .stdin(Stdio::null()),
        );
        so.wait_listening(port, LISTEN);
        let (c, _, e) = connect("send", port, &["--bytes", "4000037", "--pattern", "random"]);
        assert_eq!(c, 0, "{e}");
        assert!(so.wait(LIMIT).success());
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 4_000_037);
    }
}

#[test]
fn ipv6_loopback_when_available() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        testkit::skip("no IPv6 loopback");
        return;
    }
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let mut l = Spawned::start(
        np().args(["recv", "-6", "--listen", "[::1]:0", "-o"])
            .arg(&recs)
            .stdout(Stdio::null()),
    );
    let port = listen_port(&recs);
    let (st, out, e) = run(
        np().args([
            "send",
            "-6",
            "--connect",
            &format!("[::1]:{port}"),
            "--bytes",
            "12345",
        ]),
        LIMIT,
    );
    assert!(st.success(), "{e}");
    assert_eq!(num(summary(&records(&out)), "sent_bytes"), 12345.0);
    let lst = l.wait(LIMIT);
    assert!(lst.success());
}

#[test]
fn congestion_control_and_mss() {
    let (lc, _lr, cc, cr) = pair(
        "recv",
        &[],
        "send",
        &[
            "--bytes",
            "2000003",
            "--congestion",
            "reno",
            "--mss",
            "1200",
        ],
    );
    assert_eq!((lc, cc), (0, 0));
    assert_eq!(of_type(&cr, "begin")[0]["info"]["congestion"], "reno");
    let mss = of_type(&cr, "sample")[0]["info"]["mss_bytes"]
        .as_u64()
        .unwrap();
    assert!(mss <= 1200, "mss {mss}");
    let (st, _, err) = run(
        np().args([
            "send",
            "--connect",
            "127.0.0.1:9",
            "--congestion",
            "no-such-algo",
        ]),
        LIMIT,
    );
    assert_eq!(st.code(), Some(2));
    assert!(err.contains("--congestion no-such-algo"), "{err}");
}

/// The seed's network command with the receiving side replaced: a plain `dd | nc` into a
/// measuring `recv --listen` hears nothing back (nc's stdout stays empty: the listener's
/// hello is said only to a client that stays silent), and every byte is counted; a netpipe
/// sender to the same listener still agrees with it (the end mark is read).
#[test]
fn a_plain_dd_nc_sender_hears_nothing_from_a_measuring_listener() {
    if !need_tool("nc") || !need_tool("dd") {
        return;
    }
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let mut dd = std::process::Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=20", "status=none"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let nc = std::process::Command::new("nc")
        .args(["-N", "127.0.0.1", &port.to_string()])
        .stdin(Stdio::from(dd.stdout.take().unwrap()))
        .output()
        .unwrap();
    assert!(dd.wait().unwrap().success());
    assert!(
        nc.status.success(),
        "{}",
        String::from_utf8_lossy(&nc.stderr)
    );
    assert_eq!(
        nc.stdout.len(),
        0,
        "nc got {:?} back from a measuring listener",
        String::from_utf8_lossy(&nc.stdout)
    );
    let (lst, _, err) = l.wait_output(LIMIT);
    assert!(lst.success(), "{err}");
    let r = read_records(&recs);
    assert_eq!(num(summary(&r), "received_bytes"), 20.0 * 1048576.0);
    let text = std::fs::read_to_string(&recs).unwrap();
    assert!(text.contains("\"peer_speaks\":\"raw\""), "{text}");
    // A netpipe sender is still greeted, and the two agree on what was sent.
    let recs = path(&d, "m.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let (sst, _, serr) = sender(port, &["--bytes", "3M"]).wait_output(LIMIT);
    assert!(sst.success(), "{serr}");
    let (lst, _, err) = l.wait_output(LIMIT);
    assert!(lst.success(), "{err}");
    let text = std::fs::read_to_string(&recs).unwrap();
    assert!(text.contains("\"peer_speaks\":\"netpipe/1\""), "{text}");
}
