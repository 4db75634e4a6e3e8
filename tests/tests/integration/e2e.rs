//! End to end: the classic wiki table reproduced for real (two "hosts" as network namespaces
//! on a tbf-shaped veth link, two labels, every kind of row, `collate --format dokuwiki`
//! checked cell by cell against the records). The `./benchmatrix` script's own runs are in
//! script_suite.rs.

use benchmatrix_tests::wiki::{parse_wiki, split_title};
use benchmatrix_tests::{bin, decode, median, need_root, need_tool, ok, path_str as s, run};
use measure::{Kind, Record, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::{A_ADDR, B_ADDR, LoopDev, NetPair, Spawned};

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

/// One column of the table: the "domU" namespace measures against its "dom0" peer.
struct Column<'a> {
    label: &'a str,
    ns: &'a str,
    peer_ns: &'a str,
    peer_addr: &'a str,
    results: PathBuf,
}

/// The two network rows of one column, both ways between the column's namespace and its
/// peer, each recorded (`record`: the label and the results file) by its receiving side.
fn measure_network(col: &Column, record: [&str; 4]) {
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
}

/// Runs every row of the classic table for one column, appending its records to
/// `col.results` (the side that measures writes them; the other side's go nowhere).
fn measure_column(col: &Column, tmp: &Path, archive: &Path, index: usize) {
    let file = s(&col.results);
    let record = ["--label", col.label, "-o", file];
    measure_network(col, record);

    let ping = run(NetPair::exec(col.ns, bin("pingrt"))
        .args(["-c", "10", "-i", "0.05", "-W", "2", "-q", "--name", ICMP])
        .args(record)
        .arg(col.peer_addr));
    ok(&ping, "pingrt");

    let x = tmp.join(format!("x{index}"));
    let prepare = r#"rm -rf "$X" && mkdir "$X""#;
    let time = run(NetPair::exec(col.ns, bin("timecmd"))
        .env("X", &x)
        .args(["-r", "3", "-q", "--prepare", prepare, "--name", TAR])
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
        all.extend(column_records(col));
    }

    let out = run(Command::new(bin("collate"))
        .args(["--format", "dokuwiki"])
        .arg(&columns[0].results)
        .arg(&columns[1].results));
    ok(&out, "collate --format dokuwiki");
    let text = String::from_utf8(out.stdout).unwrap();
    eprintln!("{text}");
    check_table(&text, &all);
}

/// The records of one measured column: every one with the column's label, and each row one
/// run with an ok summary and its begin record.
fn column_records(col: &Column) -> Vec<Record> {
    let recs = decode(&std::fs::read_to_string(&col.results).expect("the column's results"));
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
    recs
}

/// Checks collate's DokuWiki `text` against the records of both columns, cell by cell.
fn check_table(text: &str, all: &[Record]) {
    let wiki = parse_wiki(text);

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
            let values = samples(all, name, label, metric);
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
