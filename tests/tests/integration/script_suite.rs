//! The `./benchmatrix` suite script run for real: twice on loopback as two machines whose
//! results collate into two columns, against a peer in a network namespace (IPv4 and IPv6),
//! and with a failing step whose neighbours' results are kept.

use benchmatrix_tests::suite::{
    OTHER_HOST, folders, listening, loopback_run, peer_tag, script, script_env, script_path, step,
};
use benchmatrix_tests::wiki::{parse_wiki, split_title};
use benchmatrix_tests::{
    cpumem_rows, decode, empty_dir, explain, file_names, need_root, need_tool, ok, path_str as s,
    run,
};
use measure::{Kind, Record};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
use testkit::{B_ADDR, B_ADDR6, Captured, NetPair, free_port};

const LABEL_A: &str = "para/lvm/san";
const LABEL_B: &str = "para/xfs/disc";

/// The rows of a full run of the script on loopback: (tool, name, samples with --runs 2).
const SCRIPT_ROWS: &[(&str, &str, usize)] = &[
    ("netpipe", "network throughput this->loopback", 2),
    ("netpipe", "network throughput loopback->this", 2),
    ("pingrt", "latency for icmp this<->loopback", 20),
    ("timecmd", "time tar xjf tree.tar.bz2", 2),
    ("timecmd", "time make", 2),
    ("blkwrite", "disk write (buffered+fsync)", 2),
    ("blkwrite", "disk write (O_DIRECT)", 2),
    ("blkread", "disk random read, one at a time (O_DIRECT)", 2),
    ("blkread", "disk random read, many in flight (O_DIRECT)", 2),
    ("blkread", "disk sequential read (O_DIRECT)", 2),
    // One fsmeta run: three rows, its samples 16 per phase.
    ("fsmeta", "file metadata", 48),
];

/// The rows of one random read run: NAME: ROLE for each of its headlines.
const READ_ROLES: [&str; 4] = [
    "reads per second",
    "latency p50",
    "latency p99",
    "latency p99.9",
];

/// The rows of the one fsmeta run.
const FILE_ROWS: [&str; 3] = [
    "file metadata: create",
    "file metadata: stat",
    "file metadata: unlink",
];

/// Every row of a full run, in the matrix's order (the cpu step's after make's): a random
/// read run makes four rows, fsmeta's three.
fn all_rows() -> Vec<String> {
    let mut rows: Vec<String> = SCRIPT_ROWS[..5].iter().map(|r| r.1.to_string()).collect();
    rows.extend(cpumem_rows());
    rows.extend(SCRIPT_ROWS[5..7].iter().map(|r| r.1.to_string()));
    for (_, name, _) in &SCRIPT_ROWS[7..9] {
        rows.extend(READ_ROLES.iter().map(|role| format!("{name}: {role}")));
    }
    rows.push(SCRIPT_ROWS[9].1.to_string());
    rows.extend(FILE_ROWS.iter().map(|r| r.to_string()));
    rows
}

/// Checks the cpu step's records: one cpumem run, ok, ten samples in each of its rows.
fn check_cpu_step(recs: &[Record], ran: bool) {
    let cpumem: Vec<&Record> = recs.iter().filter(|r| r.tool == "cpumem").collect();
    if !ran {
        assert!(cpumem.is_empty(), "the cpu step ran");
        return;
    }
    let sums: Vec<&&Record> = cpumem.iter().filter(|r| r.kind == Kind::Summary).collect();
    assert_eq!(sums.len(), 1, "one cpumem run");
    assert_eq!(
        sums[0].status,
        Some(measure::Status::Ok),
        "{}",
        sums[0].to_line()
    );
    // The cpu step is cpumem with its defaults: 10 batches a probe, a row each.
    for p in cpumem::probe::PROBES {
        let n = cpumem
            .iter()
            .filter(|r| r.kind == Kind::Sample && r.values.contains_key(p.key))
            .count();
        assert_eq!(n, 10, "{}: samples", p.role);
    }
    assert_eq!(
        sums[0].headlines.len(),
        cpumem::probe::PROBES.len(),
        "a row per probe"
    );
}

/// Checks one results file of a loopback run: every step's records, strictly decoded.
fn check_script_results(file: &Path, label: &str, host: Option<&str>, skipped: &[&str]) {
    let recs = decode(&std::fs::read_to_string(file).expect("the results file"));
    for r in &recs {
        assert_eq!(r.label, label, "{}", r.to_line());
        if let Some(h) = host {
            assert_eq!(r.host, h, "{}", r.to_line());
        }
    }
    check_cpu_step(&recs, !skipped.contains(&"cpu"));
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
    let direct = step(&recs, "blkwrite", "disk write (O_DIRECT)");
    assert_eq!(direct[0].value("written_bytes"), Some(16.0 * 1048576.0));
    let seq = step(&recs, "blkread", "disk sequential read (O_DIRECT)");
    assert_eq!(seq[0].value("read_bytes"), Some(16.0 * 1048576.0));
    // The parameters are tags, so that rows line up across machines whatever the size.
    for r in recs.iter().filter(|r| r.name.starts_with("disk ")) {
        assert_eq!(
            r.tags.get("size").map(String::as_str),
            Some("16M"),
            "{}",
            r.to_line()
        );
    }
    // One random read run: its rate and latency percentiles, each a row.
    let read = recs.iter().find(|r| {
        r.kind == measure::Kind::Summary && r.name == "disk random read, one at a time (O_DIRECT)"
    });
    let keys: Vec<&str> = read.map_or(Vec::new(), |r| {
        r.headlines.iter().map(|h| h.key.as_str()).collect()
    });
    assert_eq!(
        keys,
        [
            "reads_per_s",
            "latency_p50_s",
            "latency_p99_s",
            "latency_p99_9_s"
        ]
    );
    let files = step(&recs, "fsmeta", "file metadata");
    for key in ["creates_per_s", "stats_per_s", "unlinks_per_s"] {
        assert_eq!(
            files.iter().filter(|r| r.values.contains_key(key)).count(),
            16,
            "{key}"
        );
    }
    let meta = recs
        .iter()
        .find(|r| r.kind == Kind::Summary && r.tool == "fsmeta")
        .expect("fsmeta's summary");
    assert_eq!(meta.value("files_count"), Some(16384.0));
}

/// Whether a C compiler for the script's make step is installed.
fn has_c_compiler() -> bool {
    ["cc", "gcc", "clang"].iter().any(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The text matrix of the first run: one row per step.
fn check_text_matrix(matrix: &str) {
    for name in all_rows() {
        assert_eq!(
            matrix
                .lines()
                .filter(|l| l.starts_with(&format!("{name} (")))
                .count(),
            1,
            "row {name:?} in the matrix:\n{matrix}"
        );
    }
}

/// The DokuWiki matrix of both runs: the labels' levels stacked, the two machines' rows
/// lined up (one row per step, a cell per column), make measured in the first column only.
fn check_two_column_wiki(text: &str) {
    // The facts that differ (the other host's name) are header rows of their own: the
    // levels and the measurement rows are the rest.
    let measured: String = text
        .lines()
        .filter(|l| !l.starts_with("^fact: "))
        .map(|l| format!("{l}\n"))
        .collect();
    let wiki = parse_wiki(&measured);
    assert_eq!(
        wiki.levels,
        [vec!["para", ""], vec!["lvm", "xfs"], vec!["san", "disc"]],
        "{text}"
    );
    let names: Vec<&str> = wiki.rows.iter().map(|(t, _)| split_title(t).0).collect();
    let cpu_rows = cpumem_rows();
    assert_eq!(names, all_rows(), "{text}");
    let number = |c: &str| {
        c.split_whitespace()
            .next()
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    for (title, cells) in &wiki.rows {
        assert_eq!(cells.len(), 2, "{title}: two columns\n{text}");
        assert!(number(&cells[0]), "{title}: {cells:?}");
        if title.starts_with("time make (") || cpu_rows.iter().any(|c| c == split_title(title).0) {
            assert_eq!(
                cells[1], "-",
                "make and cpu did not run in the second column"
            );
        } else {
            assert!(number(&cells[1]), "{title}: {cells:?}");
        }
    }
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
    if !has_c_compiler() {
        testkit::skip("no C compiler for the script's make step");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, disk, res] = folders(tmp.path(), ["work", "tmp", "disk", "results"]);
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
    check_text_matrix(&String::from_utf8_lossy(&first.stdout));
    for d in [&work, &scratch, &disk] {
        empty_dir(d);
    }

    // A second machine (a host name of its own; no make and cpu steps, to keep the test short), the
    // block file in the default scratch directory under the working one, the DokuWiki matrix.
    let only = ["--label", LABEL_B, "--only", "net,icmp,tar,disk"];
    let second = script(
        &work,
        &scratch,
        OTHER_HOST,
        &[&common[..], &only, &["-f", "dokuwiki"]].concat(),
    );
    ok(&second, "second run");
    check_script_results(
        &res.join("para_xfs_disc.jsonl"),
        LABEL_B,
        Some("bm-other-host"),
        &["time make", "cpu"],
    );
    check_two_column_wiki(&String::from_utf8_lossy(&second.stdout));
    for d in [&work, &scratch, &disk] {
        empty_dir(d);
    }
    assert_eq!(
        file_names(&res),
        ["para_lvm_san.jsonl", "para_xfs_disc.jsonl"]
    );
}

/// The rows a --peer run records.
const PEER_ROWS: [&str; 3] = [
    "network throughput this->peer",
    "network throughput peer->this",
    "latency for icmp this<->peer",
];

/// Checks the records of a --peer run against the peer at `addr`.
fn check_peer_results(file: &Path, addr: &str) {
    let recs = decode(&std::fs::read_to_string(file).expect("the results file"));
    let sent = step(&recs, "netpipe", PEER_ROWS[0]);
    assert!(sent[0].value("sent_bytes").expect("sent_bytes") > 0.0);
    let received = step(&recs, "netpipe", PEER_ROWS[1]);
    assert!(received[0].value("received_bytes").expect("received_bytes") > 0.0);
    assert_eq!(step(&recs, "pingrt", PEER_ROWS[2]).len(), 20);
    for name in PEER_ROWS {
        peer_tag(&recs, name, addr);
    }
}

/// What the script tells the user to run on the peer, `./benchmatrix --serve --port 6200`,
/// started in namespace `ns` in `cwd`, its output kept in files.
fn start_peer(ns: &str, cwd: &Path, tmpdir: &Path) -> Captured {
    let mut c = NetPair::exec(ns, "sh");
    c.arg(script_path())
        .args(["--serve", "--port", "6200", "--token", PEER_TOKEN]);
    let serve = Captured::start(script_env(&mut c, cwd, tmpdir));
    for port in [6200, 6201] {
        let ok = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(25));
            listening(ns).contains(&port)
        });
        assert!(ok, "--serve does not listen on {port} in {ns}");
    }
    serve
}

/// The token the peer serves and the measuring side gives.
const PEER_TOKEN: &str = "suite-peer-1-0123456789";

#[test]
fn script_measures_against_a_namespace_peer() {
    if !need_root("the script's --peer mode (namespaces)") || !need_tool("ip") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let peer_dir = tmp.path().join("peer");
    std::fs::create_dir(&peer_dir).unwrap();
    let net = NetPair::new().expect("namespaces and veth");
    let serve = start_peer(&net.b, &peer_dir, &scratch);

    // The script run from host a against the peer at `addr`, with `extra` arguments.
    let peer_run = |addr: &str, label: &str, extra: &[&str]| -> Output {
        let mut args = vec!["--peer", addr, "--port", "6200", "--only", "net,icmp"];
        args.extend(["--token", PEER_TOKEN]);
        args.extend(["--net-time", "1s", "--runs", "2", "--results", s(&res)]);
        args.extend(["--label", label]);
        args.extend_from_slice(extra);
        let out = script(&work, &scratch, &["ip", "netns", "exec", &net.a], &args);
        ok(&out, &format!("--peer {addr}"));
        out
    };
    let out = peer_run(B_ADDR, "domu/peer", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("serving on ports 6200 and 6201"), "{err}");
    check_peer_results(&res.join("domu_peer.jsonl"), B_ADDR);
    let matrix = String::from_utf8_lossy(&out.stdout);
    for name in PEER_ROWS {
        assert!(
            matrix.lines().any(|l| l.starts_with(&format!("{name} ("))),
            "row {name:?} in the matrix:\n{matrix}"
        );
    }
    // An IPv6 peer: HOST:PORT needs brackets, ICMPv6 for the latency.
    let out6 = peer_run(B_ADDR6, "domu/peer6", &["--no-matrix"]);
    assert!(out6.stdout.is_empty(), "--no-matrix");
    check_peer_results(&res.join("domu_peer6.jsonl"), B_ADDR6);
    // The peer serves until SIGTERM, then ends with no process and no port left behind, and
    // its records are nowhere: no results folder of its own, none in the measuring side's.
    assert!(serve.signal(libc::SIGTERM), "SIGTERM to --serve");
    let (st, _, err) = serve.wait_output(Duration::from_secs(20));
    assert_eq!(st.code(), Some(143), "{err}");
    assert!(
        err.contains("serving: netpipe recv on port 6200 and netpipe send on port 6201"),
        "{err}"
    );
    assert!(err.contains("stopped serving: no listener left"), "{err}");
    assert_eq!(listening(&net.b), [0u16; 0], "ports left in {}", net.b);
    let left = run(Command::new("ip").args(["netns", "pids", &net.b]));
    assert!(
        left.stdout.is_empty(),
        "processes left in {}: {}",
        net.b,
        explain(&left)
    );
    empty_dir(&peer_dir);
    assert_eq!(file_names(&res), ["domu_peer.jsonl", "domu_peer6.jsonl"]);
    empty_dir(&work);
    empty_dir(&scratch);
}

#[test]
fn script_keeps_the_results_when_a_step_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The network step works on loopback as any user; blkwrite refuses the size.
    let ([work, scratch, res], out) = loopback_run(
        tmp.path(),
        "net,disk",
        "broken/disk",
        &["--disk-size", "16Q"],
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

/// The README's example matrix is a real run's: its rows are the suite's (checked against the
/// script above), in the matrix's order.
#[test]
fn the_readme_example_matrix_has_the_suites_rows() {
    let readme = std::fs::read_to_string(benchmatrix_tests::workspace_root().join("README.md"))
        .expect("README.md");
    let (_, reading) = readme
        .split_once("## Reading the matrix")
        .expect("README.md: a section \"Reading the matrix\"");
    let block = reading.split("```").nth(1).expect("its example matrix");
    let names: Vec<&str> = block
        .lines()
        .filter_map(|l| {
            let i = l.find(['↑', '↓'])?;
            Some(split_title(&l[..i + '↑'.len_utf8()]).0)
        })
        .collect();
    assert_eq!(names, all_rows(), "README.md's example matrix:\n{block}");
}
