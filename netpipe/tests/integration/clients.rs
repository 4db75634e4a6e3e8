//! A listener and its clients: several at once with --keep-open (each its own session, a
//! client's -P streams grouped), a client that stays silent or is killed never holds up the
//! next, and a reset connection is partial, never ok.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The samples of `recs` by session: (session, stream count, bytes).
fn sessions(recs: &[Value]) -> Vec<(u64, usize, f64)> {
    let mut v: Vec<(u64, usize, f64)> = Vec::new();
    for s in of_type(recs, "sample") {
        let n = s["info"]["session"].as_u64().unwrap();
        let b = s["values"]["received_bytes"].as_f64().unwrap_or(0.0);
        match v.iter_mut().find(|x| x.0 == n) {
            Some(x) => {
                x.1 += 1;
                x.2 += b;
            }
            None => v.push((n, 1, b)),
        }
    }
    v
}

#[test]
fn keep_open_serves_clients_at_once_each_its_own_session() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open"]);
    // A: two streams for 3 s; B: one stream, 5 MB, while A runs.
    let a = sender(port, &["--time", "3", "-P", "2"]);
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let (bst, _, berr) = sender(port, &["--bytes", "5000011"]).wait_output(LIMIT);
    let b_took = t0.elapsed();
    assert!(bst.success(), "{berr}");
    // B was served while A ran, not after it.
    assert!(b_took < Duration::from_millis(2400), "B took {b_took:?}");
    let (ast, _, aerr) = a.wait_output(LIMIT);
    assert!(ast.success(), "{aerr}");
    l.signal(libc::SIGINT);
    let (lst, _, lerr) = l.wait_output(LIMIT);
    assert_eq!(lst.code(), Some(130), "{lerr}");
    let r = read_records(&recs);
    let mut s = sessions(&r);
    s.sort_by_key(|x| x.1);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        (s[0].1, s[0].2),
        (1, 5_000_011.0),
        "B: one stream, all its bytes"
    );
    assert_eq!(s[1].1, 2, "A: its two streams in one session");
    assert_ne!(s[0].0, s[1].0);
    let sm = summary(&r);
    assert_eq!(sm["status"], "ok", "{sm}");
    assert_eq!(num(sm, "session_count"), 2.0);
}

#[test]
fn silent_and_killed_clients_never_hold_up_the_next() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open"]);
    // Silent after connecting (the idle timeout is the default 30 s).
    let silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let killed = sender(port, &[]);
    std::thread::sleep(Duration::from_millis(600));
    killed.signal(libc::SIGKILL);
    drop(killed);
    let t0 = Instant::now();
    let (st, _, err) = sender(port, &["--bytes", "1M"]).wait_output(LIMIT);
    assert!(st.success(), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    drop(silent);
    l.signal(libc::SIGINT);
    let (lst, _, _) = l.wait_output(LIMIT);
    assert_eq!(lst.code(), Some(130));
    let r = read_records(&recs);
    let sm = summary(&r);
    // The killed client's session is partial (no end mark), so the run is.
    assert_eq!(sm["status"], "partial", "{sm}");
    assert!(sessions(&r).iter().any(|s| s.2 == 1_048_576.0), "{r:?}");
    assert_eq!(num(sm, "session_count"), 3.0);
}

#[test]
fn a_reset_connection_is_partial_never_ok() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&[7u8; 100_000]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // SO_LINGER 0: close sends a reset instead of a FIN.
    socket2::SockRef::from(&c)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(c);
    let (st, _, err) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("reset"), "{err}");
    let sm = summary(&read_records(&recs)).clone();
    assert_eq!(sm["status"], "partial", "{sm}");
    assert_eq!(num(&sm, "received_bytes"), 100_000.0);
}

/// A relay on loopback to `port` for `conns` connections that holds back what the first
/// connection's client says for `hold`: with `--bidir -P 1` the forward stream's hello then
/// reaches the listener after the reverse stream's. Bounded: each copy ends at EOF, an
/// error or a 20 s read timeout.
fn holding_relay(port: u16, conns: usize, hold: Duration) -> u16 {
    use std::net::{TcpListener, TcpStream};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let me = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for i in 0..conns {
            let Ok((c, _)) = l.accept() else { return };
            let Ok(u) = TcpStream::connect(("127.0.0.1", port)) else {
                return;
            };
            for s in [&c, &u] {
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            }
            let pipe = |mut from: TcpStream, mut to: TcpStream, wait: Duration| {
                std::thread::spawn(move || {
                    std::thread::sleep(wait);
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                })
            };
            let wait = if i == 0 { hold } else { Duration::ZERO };
            pipe(c.try_clone().unwrap(), u.try_clone().unwrap(), wait);
            pipe(u, c, Duration::ZERO);
        }
    });
    me
}

/// `--bidir` from the connecting `crole` to a `lrole` listener: both summaries ok, one figure
/// per direction, and the forward bytes agree between the two ends.
fn bidir(lrole: &str, crole: &str) {
    bidir_through(lrole, crole, None);
}

/// [`bidir`], with `-P 2` direct or `-P 1` through a [`holding_relay`] (`hold`).
fn bidir_through(lrole: &str, crole: &str, hold: Option<Duration>) {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener(lrole, &recs, &[]);
    let (port, p) = match hold {
        Some(h) => (holding_relay(port, 2, h), 1),
        None => (port, 2),
    };
    let (st, out, err) = run(
        np().args([crole, "--connect", &format!("127.0.0.1:{port}")])
            .args(["--bidir", "--time", "1", "-P", &p.to_string()])
            .stdin(Stdio::null()),
        LIMIT,
    );
    assert!(st.success(), "{err}");
    let (lst, _, lerr) = l.wait_output(LIMIT);
    assert!(lst.success(), "{lerr}");
    let c = records(&out);
    let r = read_records(&recs);
    let (cs, ls) = (summary(&c), summary(&r));
    for s in [cs, ls] {
        assert_eq!(s["status"], "ok", "{s}");
        assert!(num(s, "throughput_bits_per_s") > 0.0, "{s}");
        assert!(num(s, "reverse_throughput_bits_per_s") > 0.0, "{s}");
        assert_eq!(num(s, "stream_count"), p as f64);
        assert_eq!(num(s, "reverse_stream_count"), p as f64);
    }
    // One run, a row per direction: each end headlines its own direction first.
    for (s, role) in [(cs, crole), (ls, lrole)] {
        let want = if role == "send" {
            ["this->peer", "peer->this"]
        } else {
            ["peer->this", "this->peer"]
        };
        let got: Vec<&str> = s["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["role"].as_str().unwrap())
            .collect();
        assert_eq!(got, want, "{s}");
    }
    // Each end's samples: the streams each way, in both roles.
    for recs in [&c, &r] {
        let roles: Vec<&str> = of_type(recs, "sample")
            .iter()
            .map(|s| s["info"]["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles.iter().filter(|&&x| x == "sender").count(),
            p,
            "{roles:?}"
        );
        assert_eq!(
            roles.iter().filter(|&&x| x == "receiver").count(),
            p,
            "{roles:?}"
        );
    }
    // A connecting sender's direction ends with its end mark: both ends count the same.
    // (A connecting receiver's --time cuts its direction with bytes in flight.)
    if crole == "send" {
        assert_eq!(num(cs, "sent_bytes"), num(ls, "received_bytes"));
    }
}

#[test]
fn bidir_moves_both_directions_at_once_either_side_listening() {
    bidir("recv", "send");
    bidir("send", "recv");
}

#[test]
fn a_listener_takes_the_reverse_direction_greeting_first() {
    // The forward stream's hello comes 150 ms late (the hello wait is 250 ms): the
    // listener starts the reverse session first and still takes the forward one.
    for (l, c) in [("recv", "send"), ("send", "recv")] {
        bidir_through(l, c, Some(Duration::from_millis(150)));
    }
}
