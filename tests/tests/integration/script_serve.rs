//! `./benchmatrix --serve` and rows that line up: a run against a peer that does not serve
//! fails before any step, --serve ends after --serve-time (or on a taken port) with nothing
//! left behind, serves only the run's token on the address it is told and logs strangers, and make's row names no job count, so machines of 2 and 4 CPUs share it.

use benchmatrix_tests::suite::{folders, listening, script, script_env, script_path, step};
use benchmatrix_tests::{bin, decode, explain, need_root, need_tool, ok, path_str as s, run};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use testkit::captured::Captured;
use testkit::netns::{A_ADDR, B_ADDR};
use testkit::{NetPair, Spawned, free_port};

#[test]
fn a_run_against_a_peer_that_does_not_serve_fails_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch] = folders(tmp.path(), ["work", "tmp"]);
    let res = tmp.path().join("results");
    let port = free_port().to_string();
    let peer = ["--peer", "127.0.0.1", "--port", &port, "--results", s(&res)];
    // Without the token the peer printed, it says so before it tries the peer.
    let out = script(&work, &scratch, &[], &peer);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--peer 127.0.0.1: give the token that ./benchmatrix --serve printed on 127.0.0.1 (--token TOKEN, or BENCHMATRIX_TOKEN)"),
        "{err}"
    );
    let out = script(
        &work,
        &scratch,
        &[],
        &[&peer[..], &["--token", "t0ken-0123456789ab"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "--peer 127.0.0.1: nothing serves on port {port} there: run ./benchmatrix --serve --port {port} on 127.0.0.1 first"
    );
    assert!(err.contains(&want), "{err}");
    assert!(out.stdout.is_empty(), "no matrix: {}", explain(&out));
    assert!(!res.exists(), "no step ran, no results folder");
}

/// `sh ./benchmatrix --serve ARGS` inside namespace `ns`, to its end.
fn serve_in(ns: &str, cwd: &Path, args: &[&str]) -> Output {
    let mut c = NetPair::exec(ns, "sh");
    c.arg(script_path()).arg("--serve").args(args);
    run(script_env(&mut c, cwd, cwd))
}

use testkit::netns::pids_in;

#[test]
fn serve_stops_after_serve_time_and_refuses_a_taken_port_leaving_nothing() {
    if !need_root("--serve in a namespace of its own") || !need_tool("ip") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let net = NetPair::new().expect("namespaces");
    let out = serve_in(
        &net.a,
        tmp.path(),
        &["--serve-time", "1s", "--port", "6300"],
    );
    ok(&out, "--serve --serve-time 1s");
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [
        "serving: netpipe recv on port 6300 and netpipe send on port 6301, all addresses",
        "serving for 1s; on the measuring machine: BENCHMATRIX_TOKEN=(the token in ",
        "/token here: mode 0600, removed when serving ends) ./benchmatrix --peer ",
        "served for 1s",
        "stopped serving: no listener left",
    ] {
        assert!(err.contains(line), "{line:?} in {err}");
    }
    assert_eq!(listening(&net.a), [0u16; 0], "ports left");
    assert_eq!(pids_in(&net.a), [0u32; 0], "processes left");

    // Another program holds the second port: --serve says so, stops its own listener and
    // leaves the other program alone.
    let mut other = Spawned::start(
        NetPair::exec(&net.a, bin("netpipe"))
            .args(["recv", "--listen", "6301", "--keep-open", "-q"])
            .stdout(Stdio::null()),
    );
    other.wait_listening(6301, Duration::from_secs(10));
    let out = serve_in(&net.a, tmp.path(), &["--port", "6300"]);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--serve: cannot listen on ports 6300 and 6301 (is one taken? try --port)"),
        "{err}"
    );
    assert_eq!(listening(&net.a), [6301], "only the other program listens");
    assert_eq!(
        pids_in(&net.a),
        [other.pid()],
        "only the other program runs"
    );
    drop(other);
}

/// Waits (at most 10 s) until namespace `ns` listens on exactly `ports`.
fn wait_ports(ns: &str, ports: &[u16]) {
    for _ in 0..200 {
        if listening(ns) == ports {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{ns} listens on {:?}, not {ports:?}", listening(ns));
}

const TOKEN: &str = "run-7f3a9c01-5e2d8b46";

/// `./benchmatrix --serve` in namespace `ns` on A_ADDR only, ports 6400 and 6401, with
/// [`TOKEN`], once both listen there and nowhere else.
fn serve_bound(ns: &str, cwd: &Path) -> Captured {
    let mut c = NetPair::exec(ns, "sh");
    c.arg(script_path())
        .args(["--serve", "--serve-time", "90s", "--port", "6400"]);
    c.args(["--bind", A_ADDR, "--token", TOKEN]);
    let serving = Captured::start(script_env(&mut c, cwd, cwd));
    wait_ports(ns, &[6400, 6401]);
    let ss = run(NetPair::exec(ns, "ss").args(["-Hltn"]));
    let ss = String::from_utf8_lossy(&ss.stdout);
    for port in [6400, 6401] {
        assert!(ss.contains(&format!("{A_ADDR}:{port}")), "{ss}");
    }
    assert!(
        !ss.contains("0.0.0.0:640") && !ss.contains("*:640"),
        "bound to {A_ADDR} only: {ss}"
    );
    serving
}

/// The rows a --peer run in `res` wrote, one of each direction.
fn peer_rows(res: &Path, out: &Output) {
    let file = std::fs::read_dir(res)
        .expect("results")
        .next()
        .expect("a file")
        .expect("entry");
    let recs = decode(&std::fs::read_to_string(file.path()).expect("records"));
    for name in [
        "network throughput this->peer",
        "network throughput peer->this",
    ] {
        assert_eq!(
            step(&recs, "netpipe", name).len(),
            1,
            "{name}: {}",
            explain(out)
        );
    }
}

#[test]
fn serve_serves_only_the_token_on_the_address_it_is_told_and_logs_strangers() {
    if !need_root("--serve in a namespace of its own") || !need_tool("ip") || !need_tool("nc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch] = folders(tmp.path(), ["work", "tmp"]);
    let res = tmp.path().join("results");
    let net = NetPair::new().expect("namespaces");
    let serving = serve_bound(&net.a, tmp.path());

    // A stranger pulling from the sender's port gets the refusal mark, never a stream.
    let pulled = run(NetPair::exec(&net.b, "nc").args(["-w", "3", A_ADDR, "6401"]));
    assert!(
        pulled.stdout.len() <= 32,
        "a stranger pulled {} bytes",
        pulled.stdout.len()
    );
    assert!(
        pulled.stdout.starts_with(b"NETPIPE1DENY"),
        "{:?}",
        pulled.stdout
    );

    let ns_b = ["ip", "netns", "exec", net.b.as_str()];
    let peer = ["--peer", A_ADDR, "--port", "6400", "--results", s(&res)];
    let peer = [&peer[..], &["--only", "net", "--runs", "1", "--no-matrix"]].concat();
    let out = script(
        &work,
        &scratch,
        &ns_b,
        &[&peer[..], &["--token", "not-it-0123456789abc"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // The refusal names the listener that refused (its pid there), so that a stale --serve
    // holding the port is told from a mistyped token.
    for want in [
        format!("--peer {A_ADDR}: the listener on port 6400 there (netpipe pid "),
        " on that machine, listening for ".to_string(),
        ") refused the token: it is a --serve started with another token, or one left from an earlier run that still holds the port".to_string(),
    ] {
        assert!(err.contains(&want), "{want:?} in {err}");
    }
    assert!(!res.exists(), "no step ran");

    let out = script(
        &work,
        &scratch,
        &ns_b,
        &[&peer[..], &["--token", TOKEN]].concat(),
    );
    ok(&out, "--peer with the token");
    peer_rows(&res, &out);

    serving.signal(libc::SIGTERM);
    let (_, _, err) = serving.wait_output(Duration::from_secs(30));
    for line in [
        format!(
            "serving: netpipe recv on port 6400 and netpipe send on port 6401, address {A_ADDR} only; sessions end after 10m or 1T"
        ),
        format!(
            "BENCHMATRIX_TOKEN=(the token this --serve was given) ./benchmatrix --peer {A_ADDR} --port 6400"
        ),
        format!("netpipe: refused a connection from {B_ADDR}:"),
        "stopped serving: no listener left".to_string(),
    ] {
        assert!(err.contains(&line), "{line:?} in {err}");
    }
    // Its log (stderr, not a terminal) never holds the token.
    assert!(!err.contains(TOKEN), "the token in --serve's log: {err}");
    // nc and the wrong token's probe: two refusals, each logged once.
    assert_eq!(
        err.matches("netpipe: refused a connection").count(),
        2,
        "{err}"
    );
    assert_eq!(listening(&net.a), [0u16; 0], "ports left");
}

/// Whether a C compiler and make, which the make step needs, are installed.
fn can_make() -> bool {
    let cc = ["cc", "gcc", "clang"].iter().any(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !cc {
        testkit::skip("no C compiler for the script's make step");
    }
    cc && need_tool("make")
}

#[test]
fn make_rows_of_two_and_four_jobs_line_up() {
    if !can_make() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let mut files = Vec::new();
    for (label, jobs) in [("cpus/two", "2"), ("cpus/four", "4")] {
        let args = [
            "--only",
            "make",
            "--runs",
            "1",
            "--jobs",
            jobs,
            "--no-matrix",
        ];
        let out = script(
            &work,
            &scratch,
            &[],
            &[&args[..], &["--label", label, "--results", s(&res)]].concat(),
        );
        ok(&out, &format!("--jobs {jobs}"));
        let file = res.join(format!("{}.jsonl", label.replace('/', "_")));
        let recs = decode(&std::fs::read_to_string(&file).expect("results"));
        assert_eq!(
            step(&recs, "timecmd", "time make").len(),
            1,
            "--jobs {jobs}"
        );
        for r in &recs {
            assert_eq!(r.name, "time make", "{}", r.to_line());
            assert_eq!(
                r.tags.get("jobs").map(String::as_str),
                Some(jobs),
                "{}",
                r.to_line()
            );
        }
        files.push(file);
    }
    let out = run(Command::new(bin("collate")).args(&files));
    ok(&out, "collate");
    let matrix = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = matrix
        .lines()
        .filter(|l| l.starts_with("time make"))
        .collect();
    assert_eq!(rows.len(), 1, "one row for both:\n{matrix}");
    let numbers = rows[0]
        .split_whitespace()
        .filter(|w| w.parse::<f64>().is_ok())
        .count();
    assert_eq!(numbers, 2, "a cell in each column:\n{matrix}");
}

/// The files of `dir` whose path ends in `benchmatrix-serve.*/token`.
fn token_files(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("benchmatrix-serve.")
                })
                .map(|e| e.path().join("token"))
                .filter(|p| p.exists())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn serve_makes_a_128_bit_token_and_logs_only_where_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let port = free_port().to_string();
    let mut c = Command::new("sh");
    c.arg(script_path()).args([
        "--serve",
        "--bind",
        "127.0.0.1",
        "--port",
        &port,
        "--serve-time",
        "3s",
    ]);
    // stderr is a pipe, as a log is: the token is not printed there.
    let serving = Captured::start(script_env(&mut c, tmp.path(), tmp.path()));
    let mut found = Vec::new();
    for _ in 0..200 {
        found = token_files(tmp.path());
        if !found.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        found.len(),
        1,
        "one token file under {}",
        tmp.path().display()
    );
    let meta = std::fs::metadata(&found[0]).expect("the token file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "its mode");
    let token = std::fs::read_to_string(&found[0]).expect("the token");
    let token = token.trim_end();
    // 128 bits: 32 hex digits.
    assert_eq!(token.len(), 32, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    let (st, _, err) = serving.wait_output(Duration::from_secs(60));
    assert!(st.success(), "{err}");
    assert!(!err.contains(token), "the token in --serve's log: {err}");
    let named = format!("the token in {} here: mode 0600", found[0].display());
    assert!(err.contains(&named), "{named:?} in {err}");
    assert!(!found[0].exists(), "the token file outlived the serving");
}
