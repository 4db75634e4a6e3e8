//! ingest on real output made in the test by Debian's iperf3 (loopback), fio (a temporary
//! file), hyperfine, ping and fping (127.0.0.1): records that the reader accepts, the source
//! tool's, with the source's figures to the last digit and its times as `at`.

use crate::common;

use crate::common::{converted, ingest};
use measure::Kind;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::{Spawned, free_port, need_tool};

/// One iperf3 client run against a one-off server on 127.0.0.1, its -J output.
fn iperf3(extra: &[&str]) -> String {
    let port = free_port().to_string();
    let mut server = Spawned::start(
        Command::new("iperf3")
            .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    server.wait_listening(port.parse().expect("port"), Duration::from_secs(10));
    let out = Command::new("timeout")
        .args([
            "30",
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-J",
        ])
        .args(extra)
        .output()
        .expect("iperf3 runs");
    server.wait(Duration::from_secs(10));
    String::from_utf8(out.stdout).expect("iperf3 writes text")
}

#[test]
fn iperf3_runs_carry_the_receivers_figure_exactly() {
    if !need_tool("iperf3") || !need_tool("timeout") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (case, extra) in [
        ("tcp", &[][..]),
        ("udp", &["-u", "-b", "20M"][..]),
        ("parallel", &["-P", "2"][..]),
        ("reverse", &["-R"][..]),
        ("bidir", &["--bidir"][..]),
    ] {
        let json = iperf3(extra);
        let src: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{case}: {e}"));
        let path = dir.path().join(format!("{case}.json"));
        std::fs::write(&path, &json).expect("written");
        let run = ingest(&[path.to_str().expect("path")]);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        converted(&run, "iperf3");
        let (key, v) = run.headline();
        assert_eq!(key, "throughput_bits_per_s", "{case}");
        let want = src["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .expect("source figure");
        assert_eq!(v, want, "{case}: the headline is the receiver's figure");
        let samples = run.of(Kind::Sample);
        assert_eq!(samples.len(), 1, "{case}: one sample a run");
        assert_eq!(samples[0].value("throughput_bits_per_s"), Some(want));
        let intervals = run.of(Kind::Interval);
        let n = src["intervals"].as_array().map_or(0, Vec::len);
        let per = if case == "bidir" { 2 } else { 1 };
        assert_eq!(
            intervals.len(),
            n * per,
            "{case}: an interval record per interval"
        );
        // The source's start time is begin's at.
        let t0 = src["start"]["timestamp"]["timesecs"]
            .as_u64()
            .expect("timesecs");
        let begin_at = humantime::parse_rfc3339(&run.records[0].at).expect("rfc3339");
        assert_eq!(
            begin_at
                .duration_since(std::time::UNIX_EPOCH)
                .expect("after 1970")
                .as_secs(),
            t0,
            "{case}"
        );
        let s = run.summary();
        match case {
            "udp" => {
                assert!(
                    s.value("jitter_s").is_some() && s.value("loss_ratio").is_some(),
                    "{}",
                    s.to_line()
                );
                let jitter = src["end"]["sum_received"]["jitter_ms"]
                    .as_f64()
                    .expect("jitter");
                assert!(
                    (s.value("jitter_s").expect("jitter") - jitter / 1e3).abs() <= jitter * 1e-15
                );
            }
            "bidir" => {
                let rev = src["end"]["sum_received_bidir_reverse"]["bits_per_second"].as_f64();
                assert_eq!(s.value("reverse_throughput_bits_per_s"), rev);
            }
            "tcp" | "parallel" | "reverse" => {
                let rtx = src["end"]["sum_sent"]["retransmits"].as_f64();
                assert_eq!(s.value("retransmits_count"), rtx, "{case}");
            }
            _ => {}
        }
        assert!(s.name.starts_with("iperf3 "), "{}", s.name);
    }
}

#[test]
fn an_interrupted_iperf3_gives_what_it_read_and_a_partial_summary() {
    if !need_tool("iperf3") || !need_tool("timeout") {
        return;
    }
    let json = iperf3(&["-i", "0.2"]);
    // Cut inside the top-level "end" object (the intervals have "end" numbers).
    let cut = &json[..json.find("\"end\":\t{").expect("an end object") + 20];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cut.json");
    std::fs::write(&path, cut).expect("written");
    let run = ingest(&[path.to_str().expect("path")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    converted(&run, "iperf3");
    assert!(!run.of(Kind::Interval).is_empty());
    assert!(run.of(Kind::Sample).is_empty());
    let s = run.summary();
    assert_eq!(s.status, Some(measure::Status::Partial));
    let line = 1 + cut.matches('\n').count();
    let err = s.error.clone().unwrap_or_default();
    assert!(err.contains(&format!("cut.json:{line}:")), "{err}");
    assert!(run.stderr.contains("ends early"), "{}", run.stderr);
}

#[test]
fn fio_json_and_json_plus_carry_iops_exactly() {
    if !need_tool("fio") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (fmt, rw) in [("json", "read"), ("json+", "randrw")] {
        // A new file each time: fio prints "Laying out IO file" before its JSON.
        let target = dir.path().join(format!("fio-{rw}.dat"));
        let out = Command::new("fio")
            .args(["--name=job1", "--size=2M", "--bs=4k", "--ioengine=psync"])
            .arg(format!("--filename={}", target.display()))
            .arg(format!("--rw={rw}"))
            .arg(format!("--output-format={fmt}"))
            .output()
            .expect("fio runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("text");
        let src: Value = serde_json::from_str(&text[text.find("\n{").map_or(0, |i| i + 1)..])
            .or_else(|_| serde_json::from_str(&text))
            .expect("fio's JSON");
        let path = dir.path().join(format!("fio-{rw}.json"));
        std::fs::write(&path, &text).expect("written");
        let run = ingest(&[path.to_str().expect("path")]);
        assert_eq!(run.code, 0, "{fmt}: {}", run.stderr);
        converted(&run, "fio");
        let job = &src["jobs"][0];
        let samples = run.of(Kind::Sample);
        let read = samples
            .iter()
            .find(|r| r.info["direction"] == "read")
            .expect("a read sample");
        assert_eq!(
            read.value("reads_per_s"),
            job["read"]["iops"].as_f64(),
            "{fmt}"
        );
        assert_eq!(
            read.value("throughput_bytes_per_s"),
            job["read"]["bw_bytes"].as_f64()
        );
        assert!(
            read.value("latency_p99_s")
                .is_some_and(|p| p > 0.0 && p < 10.0)
        );
        if rw == "randrw" {
            assert_eq!(samples.len(), 2, "a sample per direction");
            let names: Vec<&str> = samples.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["fio job1 read", "fio job1 write"]);
        } else {
            assert_eq!(
                run.headline(),
                (
                    "reads_per_s".into(),
                    job["read"]["iops"].as_f64().expect("iops")
                )
            );
        }
    }
}

#[test]
fn hyperfine_runs_become_samples() {
    if !need_tool("hyperfine") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hf.json");
    let st = Command::new("hyperfine")
        .args(["-N", "--runs", "3", "--style", "none", "--export-json"])
        .arg(&path)
        .arg("true")
        .stdout(Stdio::null())
        .status()
        .expect("hyperfine runs");
    assert!(st.success());
    let src: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let run = ingest(&["hyperfine", path.to_str().expect("path")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "hyperfine");
    let walls: Vec<f64> = run
        .of(Kind::Sample)
        .iter()
        .filter_map(|r| r.value("wall_s"))
        .collect();
    let want: Vec<f64> = src["results"][0]["times"]
        .as_array()
        .expect("times")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(walls, want);
    assert_eq!(
        run.headline(),
        (
            "wall_median_s".into(),
            src["results"][0]["median"].as_f64().expect("median")
        )
    );
    assert_eq!(run.summary().name, "true");
}

/// Whether this process may send ICMP echo (root, or ping's group range).
fn can_ping() -> bool {
    Command::new("ping")
        .args(["-c", "1", "-W", "2", "127.0.0.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn ping_replies_become_rtt_samples_with_their_time_stamps() {
    if !need_tool("ping") {
        return;
    }
    if !can_ping() {
        testkit::skip("ping 127.0.0.1 needs root or ping's capability");
        return;
    }
    let out = Command::new("ping")
        .args(["-D", "-n", "-c", "3", "-i", "0.2", "127.0.0.1"])
        .output()
        .expect("ping runs");
    let text = String::from_utf8(out.stdout).expect("text");
    let run = common::ingest_stdin(&["-"], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "ping");
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 3);
    let first = text.lines().find(|l| l.contains("time=")).expect("a reply");
    let stamp = &first[1..first.find(']').expect("-D stamp")];
    let at = humantime::parse_rfc3339(&samples[0].at).expect("rfc3339");
    let secs = at
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    assert_eq!(
        format!("{}.{:06}", secs.as_secs(), secs.subsec_micros()),
        format!("{stamp:0<17}")
    );
    let s = run.summary();
    assert_eq!(s.value("sent_count"), Some(3.0));
    assert_eq!(s.value("loss_ratio"), Some(0.0));
    assert_eq!(s.name, "ping 127.0.0.1");
    assert_eq!(run.headline().0, "rtt_mean_s");
}

#[test]
fn fping_counts_and_alive_lines_become_samples() {
    if !need_tool("fping") {
        return;
    }
    if !can_ping() {
        testkit::skip("fping 127.0.0.1 needs root or the ICMP capability");
        return;
    }
    // -C: the per-reply lines on stdout, the counts on stderr; both in one file.
    let out = Command::new("sh")
        .args(["-c", "fping -C 3 -p 100 127.0.0.1 2>&1"])
        .output()
        .expect("fping runs");
    let run = common::ingest_stdin(&[], &out.stdout);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "fping");
    assert_eq!(run.of(Kind::Sample).len(), 3);
    assert_eq!(run.summary().value("sent_count"), Some(3.0));
    let out = Command::new("fping")
        .args(["-e", "127.0.0.1"])
        .output()
        .expect("fping runs");
    let run = common::ingest_stdin(&["fping"], &out.stdout);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.of(Kind::Sample).len(), 1);
    assert_eq!(run.summary().name, "ping 127.0.0.1");
}
