//! Every tool, every subcommand and every format word, run for real on the release binary (the
//! build users get): a mode that works only with debug assertions fails here. The table of
//! cases is checked against each tool's clap tree, so a new subcommand needs a case.

use benchmatrix_tests::{TOOLS, bin, decode, explain, path_str, workspace_root};
use measure::{Kind, Record};
use std::collections::BTreeSet;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use testkit::{Spawned, free_port};

/// The subcommand paths of a command ("netpipe send"), without clap's own `help`.
fn modes(cmd: &clap::Command, prefix: &str, out: &mut BTreeSet<String>) {
    out.insert(prefix.to_string());
    for sub in cmd.get_subcommands() {
        if sub.get_name() != "help" {
            modes(sub, &format!("{prefix} {}", sub.get_name()), out);
        }
    }
}

/// The modes this file runs: every tool, and each subcommand of those that have them.
const COVERED: &[&str] = &[
    "blkread",
    "blkwrite",
    "collate",
    "cpumem",
    "fsmeta",
    "ingest",
    "ingest iperf3",
    "ingest fio",
    "ingest hyperfine",
    "ingest ping",
    "ingest fping",
    "ingest figures",
    "netpipe",
    "netpipe send",
    "netpipe recv",
    "pingrt",
    "timecmd",
];

#[test]
fn the_cases_cover_every_subcommand_of_every_tool() {
    let mut all = BTreeSet::new();
    for (tool, command) in TOOLS {
        modes(&command(), tool, &mut all);
    }
    let covered: BTreeSet<String> = COVERED.iter().map(|s| s.to_string()).collect();
    assert_eq!(all, covered, "add a case to this file for each new mode");
}

/// The binaries are the release ones, in the directory ./benchmatrix runs them from.
#[test]
fn the_binaries_under_test_are_the_release_builds() {
    for (tool, _) in TOOLS {
        let path = bin(tool);
        let dir = path.parent().and_then(Path::file_name);
        assert_eq!(
            dir.and_then(|d| d.to_str()),
            Some("release"),
            "{}",
            path.display()
        );
    }
}

/// A run's records (from stdout), decoded strictly, after checking the exit code.
fn records(out: &Output, code: i32, what: &str) -> Vec<Record> {
    assert_eq!(out.status.code(), Some(code), "{what}: {}", explain(out));
    decode(&String::from_utf8_lossy(&out.stdout))
}

/// The summary of `recs`, which must be last, with its tool checked.
fn summary<'a>(recs: &'a [Record], tool: &str, what: &str) -> &'a Record {
    let s = recs.last().unwrap_or_else(|| panic!("{what}: no records"));
    assert_eq!(s.kind, Kind::Summary, "{what}: {}", s.to_line());
    assert_eq!(s.tool, tool, "{what}: {}", s.to_line());
    s
}

fn run(tool: &str, args: &[&str]) -> Output {
    Command::new(bin(tool))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
}

fn run_stdin(tool: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(bin(tool))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    if let Some(mut i) = child.stdin.take()
        && let Err(e) = i.write_all(input)
    {
        // A tool may end before it reads its input (a line it refuses): not the test's failure.
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "input written: {e}"
        );
    }
    child.wait_with_output().expect("the tool ends")
}

#[test]
fn blkwrite_and_blkread_write_and_read_a_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("f");
    let out = run("blkwrite", &["--keep", "-s", "1M", path_str(&f)]);
    let recs = records(&out, 0, "blkwrite -s 1M");
    summary(&recs, "blkwrite", "blkwrite");
    let out = run("blkread", &["-s", "1M", path_str(&f)]);
    let recs = records(&out, 0, "blkread -s 1M");
    summary(&recs, "blkread", "blkread");
}

#[test]
fn fsmeta_cpumem_timecmd_and_collate_run() {
    let d = tempfile::tempdir().expect("tempdir");
    let out = run("fsmeta", &["-n", "50", path_str(d.path())]);
    summary(&records(&out, 0, "fsmeta"), "fsmeta", "fsmeta");
    let out = run("cpumem", &["--only", "syscall", "-t", "20ms", "-c", "2"]);
    let recs = records(&out, 0, "cpumem");
    summary(&recs, "cpumem", "cpumem");
    // timecmd's stdout is the command's: its records go to -o.
    let file = d.path().join("t.jsonl");
    let out = run("timecmd", &["-r", "2", "-o", path_str(&file), "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "timecmd: {}", explain(&out));
    let text = std::fs::read_to_string(&file).expect("timecmd's records");
    summary(&decode(&text), "timecmd", "timecmd");
    // collate reads what the others wrote, from a file and from stdin.
    let out = run("collate", &["-f", "csv", path_str(&file)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "collate FILE: {}",
        explain(&out)
    );
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.contains("true"), "{csv}");
    let out = run_stdin("collate", &["-f", "csv"], text.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "collate stdin: {}",
        explain(&out)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), csv);
}

#[test]
fn collate_history_shows_timecmd_runs_in_every_format_that_can() {
    let d = tempfile::tempdir().expect("tempdir");
    let file = d.path().join("t.jsonl");
    for _ in 0..4 {
        let out = run("timecmd", &["-r", "6", "-o", path_str(&file), "--", "true"]);
        assert_eq!(out.status.code(), Some(0), "timecmd: {}", explain(&out));
    }
    for f in ["text", "html", "svg", "json", "csv"] {
        let out = run("collate", &["--history", "-f", f, path_str(&file)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "collate --history -f {f}: {}",
            explain(&out)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("true"), "-f {f}: {text}");
    }
    let out = run(
        "collate",
        &[
            "--history",
            "--change-alpha",
            "0.05",
            "--change-min-runs",
            "2",
            path_str(&file),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("4 runs"));
    for f in ["markdown", "dokuwiki"] {
        let out = run("collate", &["--history", "-f", f, path_str(&file)]);
        assert_eq!(out.status.code(), Some(2), "-f {f}: {}", explain(&out));
    }
}

#[test]
fn pingrt_pings_loopback() {
    let out = run("pingrt", &["-c", "2", "-i", "50ms", "127.0.0.1"]);
    if out.status.code() == Some(2) && !testkit::is_root() {
        testkit::skip("pingrt: no ICMP socket for this user (net.ipv4.ping_group_range)");
        return;
    }
    let recs = records(&out, 0, "pingrt");
    let s = summary(&recs, "pingrt", "pingrt");
    assert_eq!(s.value("sent_count"), Some(2.0), "{}", s.to_line());
}

#[test]
fn netpipe_send_and_recv_measure_a_transfer() {
    let port = free_port().to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("recv.jsonl");
    let file = std::fs::File::create(&rec).expect("records file");
    let mut recv = Spawned::start(
        Command::new(bin("netpipe"))
            .args(["recv", "--listen", &format!("127.0.0.1:{port}")])
            .stdout(file)
            .stderr(Stdio::null()),
    );
    recv.wait_listening(port.parse().expect("port"), Duration::from_secs(10));
    let out = run(
        "netpipe",
        &[
            "send",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--bytes",
            "4M",
        ],
    );
    let sent = records(&out, 0, "netpipe send");
    assert_eq!(
        summary(&sent, "netpipe", "send").value("sent_bytes"),
        Some(4194304.0)
    );
    recv.wait(Duration::from_secs(20));
    let got = decode(&std::fs::read_to_string(&rec).expect("recv's records"));
    let s = summary(&got, "netpipe", "recv");
    assert_eq!(
        s.value("received_bytes"),
        Some(4194304.0),
        "{}",
        s.to_line()
    );
}

#[test]
fn netpipe_netcat_mode_moves_the_bytes() {
    // A port that was free a moment ago, then the listener in netcat mode writing to a file.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let dir = tempfile::tempdir().expect("tempdir");
    let got = dir.path().join("got");
    let mut listener = Spawned::start(
        Command::new(bin("netpipe"))
            .args(["-l", "-p", &port.to_string()])
            .stdout(std::fs::File::create(&got).expect("payload file"))
            .stderr(Stdio::null()),
    );
    listener.wait_listening(port, Duration::from_secs(10));
    let payload: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let out = run_stdin("netpipe", &["127.0.0.1", &port.to_string()], &payload);
    assert_eq!(
        out.status.code(),
        Some(0),
        "netpipe HOST PORT: {}",
        explain(&out)
    );
    // Records go to stderr in netcat mode.
    let recs = decode(&String::from_utf8_lossy(&out.stderr));
    summary(&recs, "netpipe", "netcat send");
    listener.wait(Duration::from_secs(20));
    assert_eq!(std::fs::read(&got).expect("payload"), payload);
}

/// ingest's stored examples, one per format, with the tool their records are from.
fn examples() -> Vec<(&'static str, &'static str, PathBuf)> {
    let data = workspace_root().join("ingest/tests/data");
    [
        ("iperf3", "iperf3", "iperf3-3.1-udp.json"),
        ("iperf3", "iperf3", "iperf3-3.17-stream.jsonl"),
        ("fio", "fio", "fio-2.2.json"),
        ("hyperfine", "hyperfine", "hyperfine-1.11.json"),
        ("ping", "ping", "ping-bsd.txt"),
        ("fping", "fping", "fping-c.txt"),
    ]
    .into_iter()
    .map(|(word, tool, file)| (word, tool, data.join(file)))
    .collect()
}

#[test]
fn ingest_reads_every_format_named_and_detected_from_a_file_and_stdin() {
    for (word, tool, path) in examples() {
        let file = path_str(&path);
        let text = std::fs::read(&path).expect("example");
        let cases: [(String, Output); 4] = [
            (format!("ingest {word} FILE"), run("ingest", &[word, file])),
            (format!("ingest FILE ({word})"), run("ingest", &[file])),
            (
                format!("ingest {word} < FILE"),
                run_stdin("ingest", &[word], &text),
            ),
            (
                format!("ingest < FILE ({word})"),
                run_stdin("ingest", &[], &text),
            ),
        ];
        let mut lines = Vec::new();
        for (what, out) in cases {
            let recs = records(&out, 0, &what);
            let s = summary(&recs, tool, &what);
            assert!(s.headline.is_some(), "{what}: {}", s.to_line());
            lines.push(recs.len());
        }
        assert!(lines.windows(2).all(|w| w[0] == w[1]), "{file}: {lines:?}");
    }
}

#[test]
fn ingest_reads_the_format_its_word_names() {
    // Each example under every other word is refused, naming the word's format: the word is
    // what decides, never the first one clap knows nor the content.
    let all = examples();
    for (word, _, _) in &all {
        for (other, _, path) in &all {
            if word == other {
                continue;
            }
            let out = run("ingest", &[word, path_str(path)]);
            let what = format!("ingest {word} {}", path.display());
            assert_eq!(out.status.code(), Some(2), "{what}: {}", explain(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(word), "{what}: {err}");
            // The refusal wrote no begin record.
            let recs = decode(&String::from_utf8_lossy(&out.stdout));
            assert!(recs.iter().all(|r| r.kind != Kind::Begin), "{what}");
        }
    }
}

#[test]
fn ingest_figures_reads_key_value_lines_from_a_file_and_stdin_and_refuses_other_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("figures.txt");
    let text = b"# sleep 0.5, timed by hand\nwall_s=0.5\nwall_s=0.7 user_s=0\n";
    std::fs::write(&file, text).expect("figures written");
    let args = ["figures", "--tool", "sleep", "--tool-version", "9.1"];
    let with_file: Vec<&str> = args.iter().copied().chain([path_str(&file)]).collect();
    for (what, out) in [
        (
            "ingest figures --tool sleep FILE",
            run("ingest", &with_file),
        ),
        (
            "ingest figures --tool sleep < FILE",
            run_stdin("ingest", &args, text),
        ),
    ] {
        let recs = records(&out, 0, what);
        let s = summary(&recs, "sleep", what);
        assert_eq!(
            s.headline.as_deref(),
            Some("wall_s"),
            "{what}: {}",
            s.to_line()
        );
        assert_eq!(s.version, "9.1", "{what}");
        assert_eq!(
            recs.iter().filter(|r| r.kind == Kind::Sample).count(),
            2,
            "{what}"
        );
    }
    // Another tool's output is no figures: refused with its place, exit 2.
    for (_, _, path) in examples() {
        let out = run("ingest", &["figures", "--tool", "x", path_str(&path)]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            path.display(),
            explain(&out)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(":1:") || err.contains(":2:"),
            "{}: {err}",
            path.display()
        );
    }
}

#[test]
fn ingest_takes_the_shared_flags_with_and_without_a_word() {
    let (_, _, ping) = examples().remove(4);
    for args in [
        &["--label", "a/b", path_str(&ping)][..],
        &["ping", "--label", "a/b", path_str(&ping)],
    ] {
        let recs = records(&run("ingest", args), 0, &format!("ingest {args:?}"));
        assert!(recs.iter().all(|r| r.label == "a/b"), "{args:?}");
        assert_eq!(summary(&recs, "ping", "ping").tool, "ping");
    }
}
