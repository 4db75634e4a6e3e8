//! A listener with --token serves only netpipe clients that give it: plain TCP clients (nc),
//! netpipe clients without it or with another are refused, told so, logged and counted, and
//! move no data; the right token (on the command line or in NETPIPE_TOKEN) moves it all. A
//! token under 16 characters is refused with the reason; wrong tokens slow their source
//! (a doubling delay, per source address) and each refusal is counted; a refusal names the
//! listener that refused (its pid there), so that a stale one holding the port is found.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

const TOKEN: &str = "s3cret-0123abcd-4567";
const WRONG: &str = "wrong-wrong-wrong-wrong";

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
            (vec!["--token", WRONG], None),
            (vec![], Some(WRONG)),
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
    let long = "x".repeat(49);
    for (t, why) in [
        ("", ""),
        ("s3cret", "this one has 6): a shorter token can be guessed"),
        ("with space 0123456789", "a space or a control character"),
        (long.as_str(), "this one has 49"),
    ] {
        for env in [false, true] {
            let mut c = np();
            c.args(["send", "--connect", "127.0.0.1:9"])
                .env_remove("NETPIPE_TOKEN");
            if env {
                c.env("NETPIPE_TOKEN", t);
            } else {
                c.args(["--token", t]);
            }
            let (st, _, err) = run(&mut c, Duration::from_secs(10));
            if t.is_empty() {
                // An empty NETPIPE_TOKEN is no token; an empty --token a usage error.
                assert_eq!(st.code(), Some(if env { 1 } else { 2 }), "{err}");
                continue;
            }
            assert_eq!(st.code(), Some(2), "{t}: {err}");
            let from = if env { "NETPIPE_TOKEN" } else { "--token" };
            assert!(
                err.contains(&format!(
                    "{from}: give 16 to 48 printable characters without spaces"
                )) && err.contains(why),
                "{t}: {err}"
            );
        }
    }
}

/// Runs a client with `token` from `bind` against the listener on `port`: its exit code and
/// stderr.
fn from(bind: &str, port: u16, token: &str) -> (i32, String) {
    let (code, _, err) = client("send", port, &["-B", bind, "--token", token], None);
    (code, err)
}

#[test]
fn wrong_tokens_slow_their_source_and_no_other() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open", "--token", TOKEN]);
    // Three wrong tokens from one source, one from another, then the right one from a third.
    for _ in 0..3 {
        let (code, err) = from("127.0.0.1", port, WRONG);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("refused this client"), "{err}");
    }
    let (code, err) = from("127.0.0.2", port, WRONG);
    assert_eq!(code, 1, "{err}");
    let (code, err) = from("127.0.0.3", port, TOKEN);
    assert_eq!(code, 0, "{err}");
    // The right token from the guessing source is still served, after its delay.
    let (code, err) = from("127.0.0.1", port, TOKEN);
    assert_eq!(code, 0, "{err}");
    l.signal(libc::SIGTERM);
    let (_, _, lerr) = l.wait_output(Duration::from_secs(30));
    let s = summary(&read_records(&recs)).clone();
    assert_eq!(num(&s, "refused_count"), 4.0, "{s}\n{lerr}");
    assert_eq!(num(&s, "session_count"), 2.0, "{s}");
    // Each refusal of 127.0.0.1 doubles its delay; 127.0.0.2's first is the first step.
    let delays: Vec<&str> = lerr
        .lines()
        .filter(|l| l.contains("refused a connection"))
        .filter_map(|l| l.split("is heard after ").nth(1))
        .collect();
    let next = |who: &str| -> Vec<String> {
        lerr.lines()
            .filter(|l| l.contains(&format!("the next from {who} ")))
            .map(|l| l.rsplit("is heard after ").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(delays.len(), 4, "{lerr}");
    assert_eq!(
        next("127.0.0.1"),
        ["100 ms)", "200 ms)", "400 ms)"],
        "{lerr}"
    );
    assert_eq!(next("127.0.0.2"), ["100 ms)"], "{lerr}");
}

#[test]
fn a_refusal_names_the_listener_that_holds_the_port() {
    let d = tmp();
    // A listener started with another token: a stale one from an earlier run.
    for lrole in ["recv", "send"] {
        let recs = path(&d, &format!("{lrole}.jsonl"));
        let crole = if lrole == "recv" { "send" } else { "recv" };
        let (l, port) = listener(lrole, &recs, &["--keep-open", "--token", WRONG]);
        let (code, crecs, err) = client(crole, port, &["--token", TOKEN], None);
        assert_eq!(code, 1, "{err}");
        let e = summary(&crecs)["error"].as_str().unwrap().to_string();
        assert!(
            e.contains(&format!("netpipe pid {} on that machine", l.pid())),
            "{lrole}: {e}"
        );
        assert!(e.contains("use another port"), "{e}");
        l.signal(libc::SIGTERM);
        let _ = l.wait_output(Duration::from_secs(30));
    }
}
