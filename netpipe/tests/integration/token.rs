//! A listener with --token serves only netpipe clients that give it: plain TCP clients (nc),
//! netpipe clients without it or with another are refused, told so, logged and counted, and
//! move no data; the right token (on the command line or in NETPIPE_TOKEN) moves it all.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

const TOKEN: &str = "s3cret-0123abcd";

/// `netpipe <role> --connect 127.0.0.1:PORT --bytes 64M <extra>` with `env` set: exit code,
/// records, stderr.
fn client(
    role: &str,
    port: u16,
    extra: &[&str],
    env: Option<&str>,
) -> (i32, Vec<serde_json::Value>, String) {
    let mut c = np();
    c.args([
        role,
        "--connect",
        &format!("127.0.0.1:{port}"),
        "--bytes",
        "64M",
    ])
    .args(extra)
    .env_remove("NETPIPE_TOKEN")
    .stdin(Stdio::null());
    if let Some(t) = env {
        c.env("NETPIPE_TOKEN", t);
    }
    let (st, out, err) = run(&mut c, Duration::from_secs(30));
    (st.code().unwrap_or(-1), records(&out), err)
}

/// A plain TCP client: sends what it can for a moment and reads what comes back.
fn plain(port: u16) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let _ = s.write_all(&[7u8; 65536]);
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

#[test]
fn a_token_listener_serves_only_clients_that_give_it() {
    for lrole in ["recv", "send"] {
        let crole = if lrole == "recv" { "send" } else { "recv" };
        let d = tmp();
        let recs = path(&d, "l.jsonl");
        let (l, port) = listener(lrole, &recs, &["--keep-open", "--token", TOKEN]);
        // nc: a refusal mark at most (after a receiver's hello), never the sender's data.
        let got = plain(port);
        assert!(
            got.len() <= 96,
            "{lrole}: a stranger got {} bytes",
            got.len()
        );
        assert!(
            got.windows(12).any(|w| w == b"NETPIPE1DENY"),
            "{lrole}: {got:?}"
        );
        // netpipe without the token, and with another one: refused, and told why.
        for (extra, env) in [
            (vec![], None),
            (vec!["--token", "wrong"], None),
            (vec![], Some("wrong")),
        ] {
            let (code, crecs, err) = client(crole, port, &extra, env);
            assert_eq!(code, 1, "{lrole} {extra:?} {env:?}: {err}");
            let s = summary(&crecs);
            assert_eq!(s["status"], "failed", "{s}");
            let e = s["error"].as_str().unwrap();
            assert!(e.contains("token"), "{lrole} {extra:?} {env:?}: {e}");
        }
        // The right token, once from --token and once from the environment: all moves.
        let (code, crecs, err) = client(crole, port, &["--token", TOKEN], None);
        assert_eq!(code, 0, "{lrole}: {err}");
        assert_eq!(summary(&crecs)["status"], "ok", "{err}");
        let (code, _, err) = client(crole, port, &[], Some(TOKEN));
        assert_eq!(code, 0, "{lrole} NETPIPE_TOKEN: {err}");
        l.signal(libc::SIGINT);
        let (_, _, lerr) = l.wait_output(Duration::from_secs(30));
        let lr = read_records(&recs);
        let s = summary(&lr);
        assert_eq!(num(s, "refused_count"), 4.0, "{lrole}: {s}\n{lerr}");
        assert_eq!(num(s, "session_count"), 2.0, "{lrole}: {s}");
        assert_eq!(
            lerr.matches("netpipe: refused a connection from 127.0.0.1")
                .count(),
            4,
            "{lrole}: {lerr}"
        );
        assert_eq!(lr[0]["info"]["token_required"], true, "the begin says so");
        assert!(
            !std::fs::read_to_string(&recs).unwrap().contains(TOKEN),
            "the token is in no record"
        );
    }
}

#[test]
fn a_bad_token_is_refused_before_any_connection() {
    for t in ["", "with space", "seventeen-chars-x"] {
        let mut c = np();
        c.args(["send", "--connect", "127.0.0.1:9", "--token", t]);
        let (st, _, err) = run(&mut c, Duration::from_secs(10));
        if t.is_empty() {
            assert_eq!(st.code(), Some(2), "{err}");
            continue;
        }
        assert_eq!(st.code(), Some(2), "{t}: {err}");
        assert!(
            err.contains("--token: give 1 to 16 printable characters"),
            "{t}: {err}"
        );
    }
    let mut c = np();
    c.args(["recv", "--udp", "--listen", "127.0.0.1:0", "--token", "x"]);
    let (st, _, err) = run(&mut c, Duration::from_secs(10));
    assert_eq!(st.code(), Some(2), "{err}");
    assert!(err.contains("--token is for TCP"), "{err}");
}
