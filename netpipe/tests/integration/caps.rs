//! A receiving listener's caps (--bytes, as a --serve's --session-bytes) end a session at the
//! cap: a sender that asked for more is cut there (the socket closed, not drained), and its
//! summary says so.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::time::Duration;

const CAP: u64 = 10 << 20;

#[test]
fn a_byte_cap_on_a_keep_open_listener_cuts_a_sender_that_asks_for_more() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open", "--bytes", "10M"]);
    let mut c = np();
    c.args([
        "send",
        "--connect",
        &format!("127.0.0.1:{port}"),
        "--bytes",
        "2G",
    ]);
    let (st, out, err) = run(&mut c, LIMIT);
    let s = records(&out);
    let sm = summary(&s);
    assert_eq!(st.code(), Some(1), "{err}");
    assert_eq!(sm["status"], "partial", "{sm}");
    let e = sm["error"].as_str().unwrap();
    assert!(
        e.contains("cut: the receiver ended the session at its --bytes of 10"),
        "{e}"
    );
    // What left this side: the cap and what the two socket buffers held when the receiver
    // closed, far from the 2 GiB asked for.
    let sent = num(sm, "sent_bytes");
    assert!(
        sent >= CAP as f64 && sent < (CAP + (256 << 20)) as f64,
        "{sm}"
    );
    l.signal(libc::SIGTERM);
    let (_, _, lerr) = l.wait_output(Duration::from_secs(30));
    let lr = read_records(&recs);
    let ls = summary(&lr);
    assert_eq!(num(ls, "received_bytes"), CAP as f64, "{ls}\n{lerr}");
}

#[test]
fn a_sender_within_the_cap_is_not_cut() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open", "--bytes", "10M"]);
    for bytes in ["4M", "10M"] {
        let mut c = np();
        c.args([
            "send",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--bytes",
            bytes,
        ]);
        let (st, out, err) = run(&mut c, LIMIT);
        assert_eq!(st.code(), Some(0), "{bytes}: {err}");
        assert_eq!(summary(&records(&out))["status"], "ok", "{bytes}");
    }
    l.signal(libc::SIGTERM);
    let _ = l.wait_output(Duration::from_secs(30));
}
