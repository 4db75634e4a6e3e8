//! End to end: the classic wiki table reproduced for real (two "hosts" as network namespaces
//! on a tbf-shaped veth link, two labels, every kind of row, `collate --format dokuwiki`
//! checked cell by cell against the records), and the `./benchmatrix` suite script run on
//! loopback, against a namespace peer, and with bad options.

use benchmatrix_tests::{bin, bin_dir, decode, median, need_root, need_tool, run, workspace_root};
use measure::{Kind, Record, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use testkit::{A_ADDR, B_ADDR, B_ADDR6, LoopDev, NetPair, Spawned, free_port};

const NET_UP: &str = "network throughput domU->dom0";
const NET_DOWN: &str = "network throughput dom0->domU";
const ICMP: &str = "latency for icmp domU<->dom0";
const TAR: &str = "time tar xjf src.tar.bz2";
const DISK: &str = "time to write a 16M blockfile";

/// The rows of the table: name, the per-sample metric that collate shows for the tool's
/// headline, and how many samples one column holds.
const ROWS: &[(&str, &str, usize)] = &[
    (NET_UP, "throughput_bits_per_s", 1),
    (NET_DOWN, "throughput_bits_per_s", 1),
    (ICMP, "rtt_s", 10),
    (TAR, "wall_s", 3),
    (DISK, "throughput_bytes_per_s", 1),
];

const LABEL_A: &str = "para/lvm/san";
const LABEL_B: &str = "para/xfs/disc";

/// Panics with the command's output unless it exited 0.
fn ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", explain(out));
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// One column of the table: the "domU" namespace measures against its "dom0" peer.
struct Column<'a> {
    label: &'a str,
    ns: &'a str,
    peer_ns: &'a str,
    peer_addr: &'a str,
    results: PathBuf,
}

/// Runs every row of the classic table for one column, appending its records to
/// `col.results` (the side that measures writes them; the other side's go nowhere).
fn measure_column(col: &Column, tmp: &Path, archive: &Path, index: usize) {
    let file = s(&col.results);
    let record = ["--label", col.label, "-o", file];

    // domU -> dom0: dom0 listens and receives; its clock (first byte to EOF) is the figure.
    let up = format!("{}:5201", col.peer_addr);
    let mut rx = Spawned::start(
        NetPair::exec(col.peer_ns, bin("netpipe"))
            .args(["recv", "--listen", &up, "--name", NET_UP])
            .args(record)
            .stdout(Stdio::null()),
    );
    rx.wait_listening(5201, Duration::from_secs(10));
    let send = run(NetPair::exec(col.ns, bin("netpipe")).args([
        "send",
        "--connect",
        &up,
        "--time",
        "1s",
        "--connect-timeout",
        "5s",
    ]));
    ok(&send, "netpipe send --connect");
    assert!(rx.wait(Duration::from_secs(20)).success(), "recv --listen");
    // Every byte the sender counted arrived: the two ends' records agree.
    let sent = decode(&String::from_utf8_lossy(&send.stdout));
    let got = decode(&std::fs::read_to_string(&col.results).expect("results"));
    let bytes = |recs: &[Record], key: &str| {
        recs.iter()
            .filter(|r| r.kind == Kind::Sample)
            .filter_map(|r| r.value(key))
            .sum::<f64>()
    };
    assert!(bytes(&sent, "sent_bytes") > 0.0);
    assert_eq!(bytes(&sent, "sent_bytes"), bytes(&got, "received_bytes"));

    // dom0 -> domU without swapping who listens: dom0 serves, domU receives and measures.
    let down = format!("{}:5202", col.peer_addr);
    let mut tx = Spawned::start(
        NetPair::exec(col.peer_ns, bin("netpipe"))
            .args(["send", "--listen", &down])
            .stdout(Stdio::null()),
    );
    tx.wait_listening(5202, Duration::from_secs(10));
    let recv = run(NetPair::exec(col.ns, bin("netpipe"))
        .args([
            "recv",
            "--connect",
            &down,
            "--time",
            "1s",
            "--name",
            NET_DOWN,
        ])
        .args(["--connect-timeout", "5s"])
        .args(record));
    ok(&recv, "netpipe recv --connect");
    tx.wait(Duration::from_secs(20));

    let ping = run(NetPair::exec(col.ns, bin("pingrt"))
        .args(["-c", "10", "-i", "0.05", "-W", "2", "-q", "--name", ICMP])
        .args(record)
        .arg(col.peer_addr));
    ok(&ping, "pingrt");

    let x = tmp.join(format!("x{index}"));
    let prepare = format!("rm -rf '{0}' && mkdir '{0}'", s(&x));
    let time = run(NetPair::exec(col.ns, bin("timecmd"))
        .args(["-r", "3", "-q", "--prepare", &prepare, "--name", TAR])
        .args(record)
        .args(["--", "tar", "xjf", s(archive), "-C", s(&x)]));
    ok(&time, "timecmd tar xjf");
    let _ = std::fs::remove_dir_all(&x);

    let disk = LoopDev::new(tmp, 32 << 20).expect("loop device");
    let write = run(NetPair::exec(col.ns, bin("blkwrite"))
        .args([
            "--force-device",
            "-s",
            "16M",
            "-b",
            "1M",
            "-q",
            "--name",
            DISK,
        ])
        .args(record)
        .arg(&disk.dev));
    ok(&write, "blkwrite --force-device");
}

/// A source-like tree and its .tar.bz2 in `tmp`.
fn make_archive(tmp: &Path) -> PathBuf {
    let src = tmp.join("src");
    std::fs::create_dir(&src).expect("mkdir src");
    for f in 0..8 {
        let text: String = (0..3000)
            .map(|l| {
                format!(
                    "static int f{f}_{l}(int x) {{ return x * {} + {}; }}\n",
                    l * 7 % 997,
                    l ^ f
                )
            })
            .collect();
        std::fs::write(src.join(format!("file{f}.c")), text).expect("write a source file");
    }
    let archive = tmp.join("src.tar.bz2");
    ok(
        &run(Command::new("tar")
            .arg("cjf")
            .arg(&archive)
            .arg("-C")
            .arg(tmp)
            .arg("src")),
        "tar cjf",
    );
    std::fs::remove_dir_all(&src).expect("rm src");
    archive
}

/// A DokuWiki table as collate writes it: header levels (cells after the corner) and rows
/// (title, cells).
struct Wiki {
    levels: Vec<Vec<String>>,
    header_lines: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
}

fn fields(line: &str, sep: char) -> Vec<String> {
    let f: Vec<&str> = line.split(sep).collect();
    assert!(
        f.len() >= 3 && f[0].is_empty() && f[f.len() - 1].is_empty(),
        "not a table line: {line:?}"
    );
    f[1..f.len() - 1]
        .iter()
        .map(|c| c.trim().to_string())
        .collect()
}

fn parse_wiki(text: &str) -> Wiki {
    let mut w = Wiki {
        levels: Vec::new(),
        header_lines: Vec::new(),
        rows: Vec::new(),
    };
    for line in text.lines() {
        if line.starts_with('^') {
            assert!(w.rows.is_empty(), "a header line after the rows: {line}");
            let f = fields(line, '^');
            assert_eq!(f[0], "", "the corner cell is empty: {line}");
            w.levels.push(f[1..].to_vec());
            w.header_lines.push(line.to_string());
        } else if line.starts_with('|') {
            let f = fields(line, '|');
            w.rows.push((f[0].clone(), f[1..].to_vec()));
        }
    }
    w
}

/// "network throughput domU->dom0 (Mb/s)" -> ("network throughput domU->dom0", "Mb/s").
fn split_title(title: &str) -> (&str, &str) {
    let (name, unit) = title
        .rsplit_once(" (")
        .unwrap_or_else(|| panic!("no unit in the row title {title:?}"));
    (name, unit.strip_suffix(')').expect("unit in parentheses"))
}

/// The factor of a display unit, checked against the metric's unit suffix.
fn unit_factor(unit: &str, metric: &str) -> f64 {
    let (suffix, factor) = match unit {
        "b/s" => ("_bits_per_s", 1.0),
        "Kb/s" => ("_bits_per_s", 1e3),
        "Mb/s" => ("_bits_per_s", 1e6),
        "Gb/s" => ("_bits_per_s", 1e9),
        "B/s" => ("_bytes_per_s", 1.0),
        "kB/s" => ("_bytes_per_s", 1e3),
        "MB/s" => ("_bytes_per_s", 1e6),
        "GB/s" => ("_bytes_per_s", 1e9),
        "ns" => ("_s", 1e-9),
        "us" => ("_s", 1e-6),
        "ms" => ("_s", 1e-3),
        "s" => ("_s", 1.0),
        other => panic!("unexpected unit {other} for {metric}"),
    };
    let fits = if suffix == "_s" {
        metric.ends_with("_s") && !metric.ends_with("_per_s")
    } else {
        metric.ends_with(suffix)
    };
    assert!(fits, "unit {unit} does not show {metric}");
    factor
}

/// Checks that a cell's text shows `value` (in base units) in `unit`, rounded to the digits
/// it shows; returns the shown number.
fn check_cell(cell: &str, value: f64, unit: &str, metric: &str, at: &str) -> f64 {
    let text = cell
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("{at}: empty cell"));
    let shown: f64 = text
        .parse()
        .unwrap_or_else(|e| panic!("{at}: cell {cell:?} is not a number: {e}"));
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let want = value / unit_factor(unit, metric);
    let half = 0.5 * 10f64.powi(-decimals);
    assert!(
        (shown - want).abs() <= half * (1.0 + 1e-9) + want.abs() * 1e-12,
        "{at}: cell {cell:?} shows {shown}, the records' median is {want} {unit}"
    );
    shown
}

/// The values of `metric` in the samples of one cell.
fn samples(recs: &[Record], name: &str, label: &str, metric: &str) -> Vec<f64> {
    recs.iter()
        .filter(|r| r.kind == Kind::Sample && r.name == name && r.label == label)
        .filter_map(|r| r.value(metric))
        .collect()
}

#[test]
fn classic_table_from_two_namespace_hosts() {
    if !need_root("the two-host table (namespaces, veth, tc, loop devices)") {
        return;
    }
    for t in ["ip", "tc", "losetup", "tar", "bzip2"] {
        if !need_tool(t) {
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = make_archive(tmp.path());
    let net = NetPair::new().expect("namespaces and veth");
    net.shape("100mbit").expect("tc tbf on the veth");
    let columns = [
        Column {
            label: LABEL_A,
            ns: &net.a,
            peer_ns: &net.b,
            peer_addr: B_ADDR,
            results: tmp.path().join("para_lvm_san.jsonl"),
        },
        Column {
            label: LABEL_B,
            ns: &net.b,
            peer_ns: &net.a,
            peer_addr: A_ADDR,
            results: tmp.path().join("para_xfs_disc.jsonl"),
        },
    ];
    let mut all = Vec::new();
    for (i, col) in columns.iter().enumerate() {
        measure_column(col, tmp.path(), &archive, i);
        let recs = decode(&std::fs::read_to_string(&col.results).unwrap());
        for r in &recs {
            assert_eq!(r.label, col.label, "{}", r.to_line());
        }
        for (name, _, _) in ROWS {
            let runs: Vec<&Record> = recs
                .iter()
                .filter(|r| r.kind == Kind::Summary && r.name == *name)
                .collect();
            assert_eq!(runs.len(), 1, "{name}: one run per column");
            assert_eq!(runs[0].status, Some(Status::Ok), "{}", runs[0].to_line());
            let begins = recs
                .iter()
                .filter(|r| r.kind == Kind::Begin && r.run == runs[0].run)
                .count();
            assert_eq!(begins, 1, "{name}: a begin record");
        }
        all.extend(recs);
    }

    let out = run(Command::new(bin("collate"))
        .args(["--format", "dokuwiki"])
        .arg(&columns[0].results)
        .arg(&columns[1].results));
    ok(&out, "collate --format dokuwiki");
    let text = String::from_utf8(out.stdout).unwrap();
    eprintln!("{text}");
    let wiki = parse_wiki(&text);

    // The label's three levels stacked; "para" spans both columns (an empty cell merges
    // into the one on its left: `^^`).
    assert_eq!(wiki.levels.len(), 3, "three header rows:\n{text}");
    assert_eq!(wiki.levels[0], ["para", ""], "merged top level:\n{text}");
    assert!(wiki.header_lines[0].ends_with("^^"), "{text}");
    assert_eq!(wiki.levels[1], ["lvm", "xfs"], "{text}");
    assert_eq!(wiki.levels[2], ["san", "disc"], "{text}");

    // One row per measurement, named as the classic table names them, in the order run.
    let names: Vec<&str> = wiki.rows.iter().map(|(t, _)| split_title(t).0).collect();
    let want: Vec<&str> = ROWS.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(names, want, "rows:\n{text}");

    for ((title, cells), (name, metric, count)) in wiki.rows.iter().zip(ROWS) {
        let (_, unit) = split_title(title);
        assert_eq!(cells.len(), 2, "{title}: two cells");
        for (cell, label) in cells.iter().zip([LABEL_A, LABEL_B]) {
            let values = samples(&all, name, label, metric);
            assert_eq!(values.len(), *count, "{name} in {label}: samples");
            let m = median(&values);
            check_cell(cell, m, unit, metric, &format!("{name} / {label}"));
            if metric.ends_with("_bits_per_s") {
                // tbf rate 100mbit on the link: TCP over it gets a little less.
                assert!(
                    (40e6..=110e6).contains(&m),
                    "{name} in {label}: {m} b/s on a 100mbit link"
                );
            }
        }
    }
}

// ------------------------------------------------------------------ the ./benchmatrix script

/// `sh ./benchmatrix ARGS` in `cwd`, scratch under `tmpdir`, with prebuilt tools; `wrap` is
/// a command prefix (`ip netns exec NS`, `unshare --uts ...`) or empty.
fn script(cwd: &Path, tmpdir: &Path, wrap: &[&str], args: &[&str]) -> Output {
    let path = workspace_root().join("benchmatrix");
    let mut c = match wrap.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg("sh");
            c
        }
        None => Command::new("sh"),
    };
    run(c
        .arg(path)
        .args(args)
        .current_dir(cwd)
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmpdir)
        .env_remove("BENCH_LABEL")
        .stdin(Stdio::null()))
}

/// A prefix that runs the script as another machine: its own UTS namespace and host name.
const OTHER_HOST: &[&str] = &[
    "unshare",
    "--uts",
    "--",
    "sh",
    "-c",
    "hostname \"$0\" && exec \"$@\"",
    "bm-other-host",
];

fn explain(out: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn empty_dir(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        dir.display()
    );
}

/// The summaries named `name` of `tool` (one per invocation: a keep-open listener serves
/// several transfers in one, a connecting side runs once per transfer), each checked ok and
/// with its begin record; the samples of all of them.
fn step<'a>(recs: &'a [Record], tool: &str, name: &str) -> Vec<&'a Record> {
    let sums: Vec<&Record> = recs
        .iter()
        .filter(|r| r.kind == Kind::Summary && r.tool == tool && r.name == name)
        .collect();
    assert!(!sums.is_empty(), "{name}: a {tool} run");
    for sum in &sums {
        assert_eq!(sum.status, Some(Status::Ok), "{name}: {}", sum.to_line());
        assert!(
            recs.iter()
                .any(|r| r.kind == Kind::Begin && r.run == sum.run),
            "{name}: a begin record"
        );
    }
    let samples: Vec<&Record> = recs
        .iter()
        .filter(|r| r.kind == Kind::Sample && sums.iter().any(|s| s.run == r.run))
        .collect();
    assert!(!samples.is_empty(), "{name}: samples");
    samples
}

/// The peer tag of every record of the run named `name`.
fn peer_tag(recs: &[Record], name: &str, peer: &str) {
    for r in recs.iter().filter(|r| r.name == name) {
        assert_eq!(
            r.tags.get("peer").map(String::as_str),
            Some(peer),
            "{}",
            r.to_line()
        );
    }
}

/// The rows of a full run of the script on loopback: (tool, name, samples with --runs 2).
const SCRIPT_ROWS: &[(&str, &str, usize)] = &[
    ("netpipe", "network throughput this->loopback", 2),
    ("netpipe", "network throughput loopback->this", 2),
    ("pingrt", "latency for icmp this<->loopback", 20),
    ("timecmd", "time tar xjf tree.tar.bz2", 2),
    ("timecmd", "time make -j2", 2),
    (
        "blkwrite",
        "time to write a 16M block file (buffered+fsync)",
        1,
    ),
    ("blkwrite", "time to write a 16M block file (O_DIRECT)", 1),
];

/// Checks one results file of a loopback run: every step's records, strictly decoded.
fn check_script_results(file: &Path, label: &str, host: Option<&str>, skipped: &[&str]) {
    let recs = decode(&std::fs::read_to_string(file).expect("the results file"));
    for r in &recs {
        assert_eq!(r.label, label, "{}", r.to_line());
        if let Some(h) = host {
            assert_eq!(r.host, h, "{}", r.to_line());
        }
    }
    for (tool, name, count) in SCRIPT_ROWS {
        if skipped.contains(name) {
            assert!(recs.iter().all(|r| r.name != *name), "{name} ran");
            continue;
        }
        assert_eq!(step(&recs, tool, name).len(), *count, "{name}: samples");
    }
    for name in &SCRIPT_ROWS[..3] {
        peer_tag(&recs, name.1, "127.0.0.1");
    }
    let direct = step(&recs, "blkwrite", SCRIPT_ROWS[6].1);
    assert_eq!(direct[0].value("written_bytes"), Some(16.0 * 1048576.0));
}

#[test]
fn script_runs_the_suite_twice_and_collates_two_columns() {
    if !need_root("the suite script (pingrt at 50 ms intervals, a second host name)") {
        return;
    }
    if !["tar", "bzip2", "make", "unshare", "hostname"]
        .iter()
        .all(|t| need_tool(t))
    {
        return;
    }
    if !["cc", "gcc", "clang"].iter().any(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) {
        eprintln!("skipped: no C compiler for the script's make step");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, disk, res] = ["work", "tmp", "disk", "results"].map(|d| {
        let p = tmp.path().join(d);
        std::fs::create_dir(&p).unwrap();
        p
    });
    let port = free_port().to_string();
    let common = [
        "--disk-size",
        "16M",
        "--runs",
        "2",
        "--jobs",
        "2",
        "--net-time",
        "1s",
        "--results",
        s(&res),
        "--port",
        &port,
    ];

    let first = script(
        &work,
        &scratch,
        &[],
        &[&common[..], &["--label", LABEL_A, "--dir", s(&disk)]].concat(),
    );
    ok(&first, "first run");
    check_script_results(&res.join("para_lvm_san.jsonl"), LABEL_A, None, &[]);
    let matrix = String::from_utf8_lossy(&first.stdout);
    for (_, name, _) in SCRIPT_ROWS {
        assert_eq!(
            matrix
                .lines()
                .filter(|l| l.starts_with(&format!("{name} (")))
                .count(),
            1,
            "row {name:?} in the matrix:\n{matrix}"
        );
    }
    for d in [&work, &scratch, &disk] {
        empty_dir(d);
    }

    // A second machine (a host name of its own; no make step, to keep the test short), the
    // block file in the default scratch directory under the working one, the DokuWiki matrix.
    let second = script(
        &work,
        &scratch,
        OTHER_HOST,
        &[
            &common[..],
            &[
                "--label",
                LABEL_B,
                "--only",
                "net,icmp,tar,disk",
                "-f",
                "dokuwiki",
            ],
        ]
        .concat(),
    );
    ok(&second, "second run");
    check_script_results(
        &res.join("para_xfs_disc.jsonl"),
        LABEL_B,
        Some("bm-other-host"),
        &["time make -j2"],
    );
    let text = String::from_utf8_lossy(&second.stdout);
    let wiki = parse_wiki(&text);
    assert_eq!(
        wiki.levels,
        [vec!["para", ""], vec!["lvm", "xfs"], vec!["san", "disc"]],
        "{text}"
    );
    // The two machines' rows line up: one row per step, a cell per column.
    let names: Vec<&str> = wiki.rows.iter().map(|(t, _)| split_title(t).0).collect();
    let want: Vec<&str> = SCRIPT_ROWS.iter().map(|r| r.1).collect();
    assert_eq!(names, want, "{text}");
    let number = |c: &str| {
        c.split_whitespace()
            .next()
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    for (title, cells) in &wiki.rows {
        assert_eq!(cells.len(), 2, "{title}: two columns\n{text}");
        assert!(number(&cells[0]), "{title}: {cells:?}");
        if title.starts_with("time make -j") {
            assert_eq!(cells[1], "-", "make did not run in the second column");
        } else {
            assert!(number(&cells[1]), "{title}: {cells:?}");
        }
    }
    for d in [&work, &scratch, &disk] {
        empty_dir(d);
    }
    let mut files: Vec<_> = std::fs::read_dir(&res)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["para_lvm_san.jsonl", "para_xfs_disc.jsonl"]);
}

#[test]
fn script_measures_against_a_namespace_peer() {
    if !need_root("the script's --peer mode (namespaces)") || !need_tool("ip") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = ["work", "tmp", "results"].map(|d| {
        let p = tmp.path().join(d);
        std::fs::create_dir(&p).unwrap();
        p
    });
    let peer_log = tmp.path().join("peer.jsonl");
    let net = NetPair::new().expect("namespaces and veth");
    // What the script tells the user to run on the peer.
    let mut sink = Spawned::start(
        NetPair::exec(&net.b, bin("netpipe"))
            .args(["recv", "--listen", "6200", "--keep-open", "--label", "peer"])
            .args(["-o", s(&peer_log)])
            .stdout(Stdio::null()),
    );
    let mut source = Spawned::start(
        NetPair::exec(&net.b, bin("netpipe"))
            .args(["send", "--listen", "6201", "--keep-open", "--label", "peer"])
            .stdout(Stdio::null()),
    );
    sink.wait_listening(6200, Duration::from_secs(10));
    source.wait_listening(6201, Duration::from_secs(10));

    // The script run from host a against the peer at `addr`, with `extra` arguments.
    let peer_run = |addr: &str, label: &str, extra: &[&str]| {
        let mut args = vec![
            "--peer",
            addr,
            "--port",
            "6200",
            "--only",
            "net,icmp",
            "--net-time",
            "1s",
            "--runs",
            "2",
            "--results",
            s(&res),
            "--label",
            label,
        ];
        args.extend_from_slice(extra);
        let out = script(&work, &scratch, &["ip", "netns", "exec", &net.a], &args);
        ok(&out, &format!("--peer {addr}"));
        out
    };
    let out = peer_run(B_ADDR, "domu/peer", &[]);

    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("netpipe recv --listen 6200 --keep-open"),
        "{err}"
    );
    assert!(
        err.contains("netpipe send --listen 6201 --keep-open"),
        "{err}"
    );
    let recs = decode(&std::fs::read_to_string(res.join("domu_peer.jsonl")).unwrap());
    let names = [
        "network throughput this->peer",
        "network throughput peer->this",
        "latency for icmp this<->peer",
    ];
    let sent = step(&recs, "netpipe", names[0]);
    assert!(sent[0].value("sent_bytes").unwrap() > 0.0);
    let received = step(&recs, "netpipe", names[1]);
    assert!(received[0].value("received_bytes").unwrap() > 0.0);
    assert_eq!(step(&recs, "pingrt", names[2]).len(), 20);
    for name in names {
        peer_tag(&recs, name, B_ADDR);
    }
    let matrix = String::from_utf8_lossy(&out.stdout);
    for name in names {
        assert!(
            matrix.lines().any(|l| l.starts_with(&format!("{name} ("))),
            "row {name:?} in the matrix:\n{matrix}"
        );
    }
    // An IPv6 peer: HOST:PORT needs brackets, ICMPv6 for the latency.
    let out6 = peer_run(B_ADDR6, "domu/peer6", &["--no-matrix"]);
    assert!(out6.stdout.is_empty(), "--no-matrix");
    let recs6 = decode(&std::fs::read_to_string(res.join("domu_peer6.jsonl")).unwrap());
    step(&recs6, "netpipe", names[0]);
    step(&recs6, "netpipe", names[1]);
    assert_eq!(step(&recs6, "pingrt", names[2]).len(), 20);
    for name in names {
        peer_tag(&recs6, name, B_ADDR6);
    }
    // The peer's sink saw the script's connections.
    let peer = decode(&std::fs::read_to_string(&peer_log).unwrap());
    assert!(
        peer.iter()
            .any(|r| r.kind == Kind::Sample && r.value("received_bytes").is_some_and(|b| b > 0.0)),
        "the peer's records: {peer:?}"
    );
    empty_dir(&work);
    empty_dir(&scratch);
    drop(source);
    drop(sink);
}

#[test]
fn script_rejects_bad_options_before_doing_anything() {
    if !need_tool("sh") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dir");
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "unknown option --bogus"),
        (&["--label"], "--label needs a value"),
        (&["--runs", "0"], "--runs 0: give a whole number"),
        (&["--jobs", "many"], "--jobs many: give a whole number"),
        (
            &["--port", "70000"],
            "--port 70000: give a port from 1 to 65534",
        ),
        (&["--only", "net,disks"], "--only: unknown step disks"),
        (
            &["--format", "pdf"],
            "--format pdf: give one of text, dokuwiki",
        ),
        (&["--dir", s(&missing)], "is not a directory"),
    ];
    for (args, message) in cases {
        let out = run(Command::new("sh")
            .arg(workspace_root().join("benchmatrix"))
            .args(*args)
            .current_dir(tmp.path())
            .env("BENCHMATRIX_BIN", "/nonexistent")
            .stdin(Stdio::null()));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        assert!(
            err.starts_with("benchmatrix: ") && err.contains(message),
            "{args:?}: want {message:?} in stderr: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        empty_dir(tmp.path());
    }
    let help = run(Command::new("sh")
        .arg(workspace_root().join("benchmatrix"))
        .arg("--help"));
    ok(&help, "--help");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("BENCHMATRIX_BIN"), "{text}");
    assert!(text.contains("--peer HOST"), "{text}");
}

#[test]
fn script_keeps_the_results_when_a_step_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = ["work", "tmp", "results"].map(|d| {
        let p = tmp.path().join(d);
        std::fs::create_dir(&p).expect("mkdir");
        p
    });
    let port = free_port().to_string();
    // The network step works on loopback as any user; blkwrite refuses the size.
    let out = script(
        &work,
        &scratch,
        &[],
        &[
            "--only",
            "net,disk",
            "--disk-size",
            "16Q",
            "--net-time",
            "1s",
            "--runs",
            "2",
            "--port",
            &port,
            "--results",
            s(&res),
            "--label",
            "broken/disk",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step failed: disk buffered"), "{err}");
    assert!(
        err.contains("failed steps: disk buffered disk direct"),
        "{err}"
    );
    let recs = decode(&std::fs::read_to_string(res.join("broken_disk.jsonl")).expect("results"));
    step(&recs, "netpipe", SCRIPT_ROWS[0].1);
    step(&recs, "netpipe", SCRIPT_ROWS[1].1);
    let matrix = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        matrix
            .lines()
            .filter(|l| l.starts_with("network throughput "))
            .count(),
        2,
        "the matrix of what was measured: {matrix}"
    );
    empty_dir(&work);
    empty_dir(&scratch);
}
