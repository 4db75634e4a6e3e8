//! Netcat mode against real nc (netcat-openbsd) and socat, both ways, byte for byte.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

const ODD: usize = 3_000_017;
/// netpipe -l with stdout to a file; returns (payload, records) after `client` sent `data`.
fn np_listen_then(
    client: impl FnOnce(u16, &std::path::Path),
) -> (Vec<u8>, Vec<serde_json::Value>, i32) {
    let d = tmp();
    let out = path(&d, "out");
    let recs = path(&d, "recs.jsonl");
    let input = path(&d, "in");
    let mut l = Spawned::start(
        np().args(["-l", "-p", "0", "-s", "127.0.0.1", "-o"])
            .arg(&recs)
            .stdin(Stdio::null())
            .stdout(file(&out))
            .stderr(Stdio::inherit()),
    );
    let port = listen_port(&recs);
    client(port, &input);
    let st = l.wait(LIMIT);
    (
        std::fs::read(&out).unwrap(),
        read_records(&recs),
        st.code().unwrap_or(-1),
    )
}

#[test]
fn nc_sends_to_netpipe_listener() {
    if !need_tool("nc") {
        return;
    }
    let mut want = Vec::new();
    let (got, recs, code) = np_listen_then(|port, input| {
        want = random_file(input, ODD);
        let st = std::process::Command::new("nc")
            .args(["-N", "127.0.0.1", &port.to_string()])
            .stdin(open(input))
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    });
    assert_eq!(code, 0);
    assert!(
        got == want,
        "payload differs: {} vs {} bytes",
        got.len(),
        want.len()
    );
    let s = summary(&recs);
    assert_eq!(s["status"], "ok");
    assert_eq!(num(s, "received_bytes"), ODD as f64);
    assert!(num(s, "throughput_bits_per_s") > 0.0);
    assert_eq!(of_type(&recs, "sample").len(), 1);
}

#[test]
fn socat_sends_to_netpipe_listener() {
    if !need_tool("socat") {
        return;
    }
    let mut want = Vec::new();
    let (got, recs, code) = np_listen_then(|port, input| {
        want = random_file(input, ODD);
        let st = std::process::Command::new("socat")
            .arg("-u")
            .arg(format!("OPEN:{}", input.display()))
            .arg(format!("TCP:127.0.0.1:{port}"))
            .status()
            .unwrap();
        assert!(st.success());
    });
    assert_eq!(code, 0);
    assert!(
        got == want,
        "payload differs: {} vs {} bytes",
        got.len(),
        want.len()
    );
    assert_eq!(num(summary(&recs), "received_bytes"), ODD as f64);
}

/// netpipe HOST PORT with stdin from a file or a pipe, into a real listener.
fn np_client_into(
    listener: &mut std::process::Command,
    port: u16,
    out: &std::path::Path,
    input: &std::path::Path,
    piped: bool,
) -> (i32, String) {
    let mut l = Spawned::start(listener.stdin(Stdio::null()).stdout(file(out)));
    l.wait_listening(port, Duration::from_secs(10));
    let mut c = np();
    c.args(["127.0.0.1", &port.to_string()]);
    let (st, _o, e) = if piped {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!(r#"cat "$IN" | "$BIN" 127.0.0.1 {port}"#))
            .env("IN", input)
            .env("BIN", bin());
        run(&mut cmd, LIMIT)
    } else {
        run(c.stdin(open(input)), LIMIT)
    };
    let lst = l.wait(LIMIT);
    assert!(lst.success(), "listener failed: {lst:?}");
    (st.code().unwrap_or(-1), e)
}

#[test]
fn netpipe_sends_to_nc_listener_from_file_and_pipe() {
    if !need_tool("nc") {
        return;
    }
    for piped in [false, true] {
        let d = tmp();
        let input = path(&d, "in");
        let out = path(&d, "out");
        let want = random_file(&input, ODD);
        let port = free_port();
        let (code, err) = np_client_into(
            std::process::Command::new("nc").args(["-l", "127.0.0.1", &port.to_string()]),
            port,
            &out,
            &input,
            piped,
        );
        assert_eq!(code, 0, "{err}");
        let got = std::fs::read(&out).unwrap();
        assert!(
            got == want,
            "piped={piped}: {} vs {} bytes",
            got.len(),
            want.len()
        );
        let recs = records(&err);
        let s = summary(&recs);
        assert_eq!(num(s, "sent_bytes"), ODD as f64);
        assert_eq!(s["info"]["direction"], "sent");
    }
}

#[test]
fn netpipe_sends_to_socat_listener() {
    if !need_tool("socat") {
        return;
    }
    let d = tmp();
    let input = path(&d, "in");
    let out = path(&d, "out");
    let want = random_file(&input, ODD);
    let port = free_port();
    let (code, err) = np_client_into(
        std::process::Command::new("socat").args([
            "-u",
            &format!("TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr"),
            "STDOUT",
        ]),
        port,
        &out,
        &input,
        true,
    );
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&out).unwrap() == want);
}

#[test]
fn netpipe_to_netpipe_empty_and_into_a_pipe() {
    // 0 bytes: both ends agree and nothing is written.
    let (got, recs, code) = np_listen_then(|port, input| {
        std::fs::write(input, b"").unwrap();
        let (st, _, e) = run(
            np().args(["127.0.0.1", &port.to_string()])
                .stdin(open(input)),
            LIMIT,
        );
        assert!(st.success(), "{e}");
        assert_eq!(num(summary(&records(&e)), "sent_bytes"), 0.0);
    });
    assert_eq!(code, 0);
    assert!(got.is_empty());
    assert_eq!(num(summary(&recs), "received_bytes"), 0.0);

    // Listener stdout into a pipe (splice straight into it), checked by its length.
    let d = tmp();
    let input = path(&d, "in");
    let recs = path(&d, "r.jsonl");
    let want = random_file(&input, ODD);
    let mut cmd = std::process::Command::new("sh");
    cmd.args([
        "-c",
        r#""$BIN" -l 127.0.0.1 0 -o "$REC" < /dev/null | wc -c"#,
    ])
    .env("BIN", bin())
    .env("REC", &recs);
    let l = Captured::start(&mut cmd);
    let port = listen_port(&recs);
    let (st, _, e) = run(
        np().args(["127.0.0.1", &port.to_string()])
            .stdin(open(&input)),
        LIMIT,
    );
    assert!(st.success(), "{e}");
    let (lst, out, _) = l.wait_output(LIMIT);
    assert!(lst.success());
    assert_eq!(out.trim(), want.len().to_string());
}

#[test]
fn listener_serves_stdin_to_nc() {
    if !need_tool("nc") {
        return;
    }
    // `netpipe -l PORT < file` then `nc -N host PORT > out`: the listener sends its stdin
    // and half-closes after it, so nc ends with the whole file.
    let d = tmp();
    let out = path(&d, "out");
    let (mut l, port, want, recs) = stdin_listener(&d, ODD);
    let st = std::process::Command::new("nc")
        .args(["127.0.0.1", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(file(&out))
        .status()
        .unwrap();
    assert!(st.success());
    assert!(l.wait(LIMIT).success());
    assert!(std::fs::read(&out).unwrap() == want);
    let r = read_records(&recs);
    assert_eq!(num(summary(&r), "sent_bytes"), ODD as f64);
}

#[test]
fn keep_open_takes_connection_after_connection() {
    let d = tmp();
    let out = path(&d, "out");
    let recs = path(&d, "r.jsonl");
    let mut l = Spawned::start(
        np().args(["-l", "-k", "-s", "127.0.0.1", "-p", "0", "-o"])
            .arg(&recs)
            .stdin(Stdio::null())
            .stdout(file(&out)),
    );
    let port = listen_port(&recs);
    for part in [b"first\n".as_slice(), b"second\n".as_slice()] {
        let input = path(&d, "in");
        std::fs::write(&input, part).unwrap();
        let (st, _, e) = run(
            np().args(["127.0.0.1", &port.to_string()])
                .stdin(open(&input)),
            LIMIT,
        );
        assert!(st.success(), "{e}");
    }
    l.signal(libc::SIGINT);
    let st = l.wait(LIMIT);
    assert_eq!(st.code(), Some(130));
    assert_eq!(std::fs::read(&out).unwrap(), b"first\nsecond\n");
    let r = read_records(&recs);
    assert_eq!(of_type(&r, "sample").len(), 2);
    assert_eq!(num(summary(&r), "connection_count"), 2.0);
}

#[test]
fn refused_connect_is_a_clear_failure() {
    let port = free_port();
    let (st, out, err) = run(
        np().args(["127.0.0.1", &port.to_string()])
            .stdin(Stdio::null()),
        LIMIT,
    );
    assert_eq!(st.code(), Some(1));
    assert!(out.is_empty(), "stdout carries payload only");
    assert!(err.contains("refused"), "{err}");
    let r = records(&err);
    assert_eq!(summary(&r)["status"], "failed");
}

#[test]
fn silent_peer_hits_the_idle_timeout() {
    // A client that connects and says nothing: the listener gives up after -w.
    let d = tmp();
    let recs = path(&d, "r.jsonl");
    let l = Captured::start(
        np().args(["-l", "127.0.0.1", "0", "-w", "0.5", "-o"])
            .arg(&recs)
            .stdin(Stdio::null()),
    );
    let port = listen_port(&recs);
    let _silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (st, _, err) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1));
    assert!(err.contains("idle"), "{err}");
    let r = read_records(&recs);
    assert_ne!(summary(&r)["status"], "ok");
}

#[test]
fn dev_null_output_is_discarded_in_the_kernel_and_counted() {
    let d = tmp();
    let input = path(&d, "in");
    let recs = path(&d, "r.jsonl");
    random_file(&input, ODD);
    let mut l = Spawned::start(
        np().args(["-l", "127.0.0.1", "0", "-o"])
            .arg(&recs)
            .stdin(Stdio::null())
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/null")
                    .unwrap(),
            ),
    );
    let port = listen_port(&recs);
    let (st, _, e) = run(
        np().args(["127.0.0.1", &port.to_string()])
            .stdin(open(&input)),
        LIMIT,
    );
    assert!(st.success(), "{e}");
    let lst = l.wait(LIMIT);
    assert!(lst.success());
    assert_eq!(
        num(summary(&read_records(&recs)), "received_bytes"),
        ODD as f64
    );
}

#[test]
fn listener_serves_stdin_to_socat() {
    if !need_tool("socat") {
        return;
    }
    let d = tmp();
    let out = path(&d, "out");
    let (mut l, port, want, _) = stdin_listener(&d, ODD);
    let st = std::process::Command::new("socat")
        .args([
            "-u",
            &format!("TCP:127.0.0.1:{port}"),
            &format!("CREATE:{}", out.display()),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    assert!(l.wait(LIMIT).success());
    assert!(std::fs::read(&out).unwrap() == want);
}

#[test]
fn no_stdin_only_receives() {
    // -d: the client reads no stdin, so it sends nothing and waits for the listener's data.
    let d = tmp();
    let input = path(&d, "in");
    let (mut l, port, want, _) = stdin_listener(&d, 100_003);
    let out = path(&d, "out");
    let st = np()
        .args(["-d", "127.0.0.1", &port.to_string()])
        .stdin(open(&input))
        .stdout(file(&out))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    assert!(l.wait(LIMIT).success());
    assert!(std::fs::read(&out).unwrap() == want);
}
