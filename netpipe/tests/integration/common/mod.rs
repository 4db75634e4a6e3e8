//! Shared helpers for netpipe's integration tests: the binary, records, listeners. Skips,
//! child processes, signals, free ports and namespaces are testkit's.
#![allow(dead_code, unused_imports, clippy::unwrap_used)]

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
pub use testkit::{Captured, Spawned, free_port, need_root, need_tool};

/// How long one netpipe run in a test may take (a file whose runs take longer has its own).
pub const LIMIT: Duration = Duration::from_secs(60);

pub fn bin() -> &'static str {
    testkit::tool("netpipe")
}

pub fn np() -> Command {
    Command::new(bin())
}

/// A scratch directory that goes away.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Random bytes of `n` length written to `path`.
pub fn random_file(path: &Path, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    let mut x: u64 = 0x1234_5678_9abc_def1 ^ (n as u64);
    for b in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    std::fs::write(path, &v).unwrap();
    v
}

/// Parses JSON lines, skipping lines that are not JSON objects; each record line is also
/// checked by measure's strict reader.
pub fn records(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            measure::parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e}"));
            serde_json::from_str::<Value>(l).unwrap()
        })
        .collect()
}

pub fn read_records(path: &Path) -> Vec<Value> {
    records(&std::fs::read_to_string(path).unwrap_or_default())
}

pub fn of_type<'a>(recs: &'a [Value], t: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["type"] == t).collect()
}

pub fn summary(recs: &[Value]) -> &Value {
    let s = of_type(recs, "summary");
    assert_eq!(s.len(), 1, "one summary expected in {recs:#?}");
    s[0]
}

pub fn num(v: &Value, key: &str) -> f64 {
    v["values"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("no values.{key} in {v}"))
}

/// The bytes a record says moved: `received_bytes` on a receiver, `sent_bytes` on a sender.
pub fn moved_bytes(v: &Value) -> f64 {
    v["values"]["received_bytes"]
        .as_f64()
        .or(v["values"]["sent_bytes"].as_f64())
        .unwrap_or_else(|| panic!("no values.received_bytes or sent_bytes in {v}"))
}

/// The bytes of all the interval records of `recs`, added up.
pub fn interval_bytes(recs: &[Value]) -> f64 {
    of_type(recs, "interval").into_iter().map(moved_bytes).sum()
}

/// Waits (at most 10 s) for the begin record in `path` and returns the port it listens on.
pub fn listen_port(path: &Path) -> u16 {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        for r in read_records(path) {
            if r["type"] == "begin"
                && let Some(l) = r["info"]["listen"].as_str()
            {
                return l.rsplit(':').next().unwrap().parse().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "no begin record with a listen address in {}",
        path.display()
    );
}

/// Runs `cmd` to its end (at most `limit`), returning status, stdout and stderr.
pub fn run(cmd: &mut Command, limit: Duration) -> (ExitStatus, String, String) {
    Captured::start(cmd).wait_output(limit)
}

pub fn file(p: &Path) -> std::fs::File {
    std::fs::File::create(p).unwrap()
}

pub fn open(p: &Path) -> std::fs::File {
    std::fs::File::open(p).unwrap()
}

pub fn path(d: &tempfile::TempDir, name: &str) -> PathBuf {
    d.path().join(name)
}

/// Writes `data` to a child's stdin from a thread.
pub fn feed(child: &mut Child, data: Vec<u8>) -> std::thread::JoinHandle<()> {
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    })
}

/// Starts `netpipe send --connect 127.0.0.1:<port> <extra>`, records on its stdout.
pub fn sender(port: u16, extra: &[&str]) -> Captured {
    Captured::start(
        np().args(["send", "--connect", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdin(Stdio::null()),
    )
}

/// Starts `netpipe <role> --listen 127.0.0.1:0 <extra>` with records into `recs`.
pub fn listener(role: &str, recs: &Path, extra: &[&str]) -> (Captured, u16) {
    let g = Captured::start(
        np().args([role, "--listen", "127.0.0.1:0", "-o"])
            .arg(recs)
            .args(extra)
            .stdin(Stdio::null()),
    );
    let port = listen_port(recs);
    (g, port)
}

/// A receiving listener (with `extra`) whose sender is killed with -9 after `after`: the
/// listener must exit 1 naming the missing end mark and leave a partial summary with the
/// bytes it did receive. Returns its records.
pub fn receiver_of_a_killed_sender(extra: &[&str], after: Duration) -> Vec<Value> {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, extra);
    let s = sender(port, &[]);
    std::thread::sleep(after);
    s.signal(libc::SIGKILL);
    drop(s);
    let (st, _, err) = l.wait_output(LIMIT);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("end mark"), "{err}");
    let r = read_records(&recs);
    let sm = summary(&r);
    assert_eq!(sm["status"], "partial");
    assert!(num(sm, "received_bytes") > 0.0);
    r
}

/// A netcat-mode listener (`-l 127.0.0.1 0`) with `n` random bytes from a file in `d` on its
/// stdin and its records in `d`/r.jsonl: the listener, its port, the bytes and the records.
pub fn stdin_listener(d: &tempfile::TempDir, n: usize) -> (Spawned, u16, Vec<u8>, PathBuf) {
    let input = path(d, "in");
    let recs = path(d, "r.jsonl");
    let want = random_file(&input, n);
    let g = Spawned::start(
        np().args(["-l", "127.0.0.1", "0", "-o"])
            .arg(&recs)
            .stdin(open(&input))
            .stdout(Stdio::null()),
    );
    let port = listen_port(&recs);
    (g, port, want, recs)
}
