//! Faults: refused and timed-out connects, resets, a peer that vanishes, a silent client,
//! Ctrl-C. Each ends with a message, a summary that keeps the bytes that arrived, and a
//! non-zero exit.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn refused_connect() {
    let port = free_port();
    let (st, out, err) = run(
        np().args([
            "send",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--bytes",
            "1M",
        ]),
        LIMIT,
    );
    assert_eq!(st.code(), Some(1));
    assert!(err.contains("refused"), "{err}");
    let r = records(&out);
    let s = summary(&r);
    assert_eq!(s["status"], "failed");
    assert!(s["error"].as_str().unwrap().contains("refused"));
}

#[test]
fn reset_by_the_receiver() {
    // The receiver stops after 1 MB and closes with data unread: the kernel resets.
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--bytes", "1M"]);
    let s = sender(port, &["--send-method", "copy", "--time", "30"]);
    let (st, out, err) = s.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(
        err.contains("reset") || err.contains("closed"),
        "clear message expected: {err}"
    );
    let r = records(&out);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial");
    assert!(moved_bytes(sm) >= 1_048_576.0);
    let (lst, _, lerr) = l.wait_output(LIMIT);
    assert!(lst.success(), "{lerr}");
    assert_eq!(
        num(summary(&read_records(&recs)), "received_bytes"),
        1_048_576.0
    );
}

#[test]
fn sender_vanishes_mid_transfer() {
    receiver_of_a_killed_sender(&["--bytes", "1T"], Duration::from_millis(400));
}

#[test]
fn receiver_vanishes_mid_transfer() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    // With a limit, the receiver going away before it is reached is a fault.
    let s = sender(port, &["--time", "30"]);
    std::thread::sleep(Duration::from_millis(400));
    l.signal(libc::SIGKILL);
    drop(l);
    let (st, out, err) = s.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("reset") || err.contains("closed"), "{err}");
    let r = records(&out);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial");
    assert!(num(sm, "sent_bytes") > 0.0);
}

#[test]
fn silent_client_hits_the_idle_timeout() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--idle-timeout", "0.4"]);
    let _silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (st, _, err) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1));
    assert!(
        err.contains("idle-timeout") || err.contains("idle"),
        "{err}"
    );
    let r = read_records(&recs);
    assert_eq!(summary(&r)["status"], "failed");
    let s = of_type(&r, "sample");
    assert_eq!(s.len(), 1);
    assert!(s[0]["error"].is_string());
}

#[test]
fn keep_open_survives_a_bad_client() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open", "--idle-timeout", "0.3"]);
    {
        let _silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        std::thread::sleep(Duration::from_millis(600));
    }
    let (st, _, err) = sender(port, &["--bytes", "777777"]).wait_output(LIMIT);
    assert!(st.success(), "{err}");
    l.signal(libc::SIGINT);
    assert_eq!(l.wait_output(LIMIT).0.code(), Some(130));
    let r = read_records(&recs);
    let s = summary(&r);
    assert_eq!(num(s, "session_count"), 2.0);
    assert_eq!(num(s, "failed_stream_count"), 1.0);
    assert_eq!(num(s, "received_bytes"), 777_777.0);
    assert_eq!(s["status"], "partial");
}

#[test]
fn ctrl_c_on_the_receiver_keeps_what_arrived() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let s = sender(port, &[]);
    std::thread::sleep(Duration::from_millis(400));
    l.signal(libc::SIGINT);
    assert_eq!(l.wait_output(LIMIT).0.code(), Some(130));
    let r = read_records(&recs);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial");
    assert!(sm["error"].as_str().unwrap().contains("interrupted"));
    assert!(num(sm, "received_bytes") > 0.0);
    // An unlimited sender takes the receiver's close as its end.
    let (st, out, err) = s.wait_output(LIMIT);
    assert_eq!(st.code(), Some(0), "{err}");
    assert_eq!(summary(&records(&out))["status"], "ok");
}

#[test]
fn ctrl_c_ends_an_unlimited_sender_cleanly() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let s = sender(port, &["-i", "0.1"]);
    std::thread::sleep(Duration::from_millis(400));
    s.signal(libc::SIGINT);
    let (st, out, _) = s.wait_output(LIMIT);
    assert_eq!(st.code(), Some(130));
    let r = records(&out);
    assert_eq!(summary(&r)["status"], "ok");
    let (lst, _, _) = l.wait_output(LIMIT);
    assert!(lst.success());
    let lr = read_records(&recs);
    assert_eq!(
        summary(&lr)["values"]["received_bytes"],
        summary(&r)["values"]["sent_bytes"]
    );
}

#[test]
fn connect_timeout_into_a_black_hole() {
    if !need_root("a network namespace") || !need_tool("ip") {
        return;
    }
    // Inside namespace a, B_ADDR's neighbour .3 is on the veth link where nobody answers ARP.
    let net = testkit::NetPair::new().unwrap();
    let hole = format!("{}.3:5001", testkit::B_ADDR.rsplit_once('.').unwrap().0);
    let (st, out, err) = run(
        testkit::NetPair::exec(&net.a, bin()).args([
            "send",
            "--connect",
            &hole,
            "--connect-timeout",
            "0.5",
        ]),
        LIMIT,
    );
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("no answer within"), "{err}");
    assert_eq!(summary(&records(&out))["status"], "failed");
}

#[test]
fn a_port_in_use_is_named_with_what_to_do() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let at = format!("127.0.0.1:{port}");
    let (st, out, err) = run(
        np().args(["recv", "--listen", &at]).stdin(Stdio::null()),
        LIMIT,
    );
    assert_eq!(st.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot listen on {at}")), "{err}");
    assert!(
        err.contains("in use") && err.contains("another port with --listen"),
        "{err}"
    );
    let r = records(&out);
    assert!(summary(&r)["error"].as_str().unwrap().contains(&at));
    // Netcat mode names the port and its own flag.
    let (st, _, err) = run(
        np().args(["-l", "-s", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null()),
        LIMIT,
    );
    assert_eq!(st.code(), Some(2), "{err}");
    assert!(
        err.contains(&at) && err.contains("another port with -l"),
        "{err}"
    );
    drop(taken);
}
