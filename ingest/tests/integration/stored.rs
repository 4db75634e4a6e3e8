//! ingest on small stored examples of other versions' formats (written for these tests,
//! under tests/data): older iperf3 UDP, iperf3 3.17's --json-stream, fio 2.x, hyperfine
//! without exit codes, BSD's and busybox's ping, fping 3.x's -C; and on input it must refuse,
//! naming FILE:LINE and what was expected.

use crate::common::{converted, data, ingest, ingest_stdin};
use measure::{Kind, Status};

#[test]
fn old_iperf3_udp_has_only_end_sum() {
    let run = ingest(&[&data("iperf3-3.1-udp.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "iperf3");
    assert_eq!(run.records[0].version, "3.1.3");
    assert_eq!(run.records[0].at, "2016-06-14T09:00:00.000000Z");
    assert_eq!(
        run.headline(),
        ("throughput_bits_per_s".into(), 1048507.3217869985)
    );
    let s = run.summary();
    assert_eq!(s.value("jitter_s"), Some(0.000021));
    assert_eq!(s.value("lost_count"), Some(1.0));
    assert_eq!(s.value("loss_ratio"), Some(1.0 / 32.0));
    assert_eq!(s.at, "2016-06-14T09:00:02.000131Z");
    assert_eq!(s.name, "iperf3 UDP to 10.0.0.1");
    let iv = run.of(Kind::Interval);
    assert_eq!(iv.len(), 2);
    assert_eq!(iv[1].at, "2016-06-14T09:00:02.000131Z");
}

#[test]
fn iperf3_json_stream_is_told_by_its_events() {
    let run = ingest(&[&data("iperf3-3.17-stream.jsonl")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "iperf3");
    assert_eq!(run.records[0].version, "3.17.1");
    assert_eq!(run.headline().1, 39772675576.34937);
    assert_eq!(run.of(Kind::Interval).len(), 2);
    // Cut in its last line: the intervals read, and a partial summary naming that line.
    let run = ingest(&["iperf3", &data("iperf3-3.17-stream-cut.jsonl")]);
    assert_eq!(run.code, 1);
    assert_eq!(run.of(Kind::Interval).len(), 2);
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Partial));
    assert!(
        s.error
            .as_deref()
            .unwrap_or("")
            .contains("iperf3-3.17-stream-cut.jsonl:4:"),
        "{:?}",
        s.error
    );
}

#[test]
fn iperf3_that_could_not_connect_is_a_failed_summary() {
    let run = ingest(&[&data("iperf3-refused.json")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Failed));
    assert!(
        s.error
            .as_deref()
            .unwrap_or("")
            .contains("Connection refused")
    );
    assert!(run.of(Kind::Sample).is_empty());
}

#[test]
fn fio_2_reports_microseconds_and_kib() {
    let run = ingest(&[&data("fio-2.2.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "fio");
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 1, "only the direction that did I/O");
    let w = samples[0];
    assert_eq!(w.name, "fio seqwrite write");
    assert_eq!(w.value("writes_per_s"), Some(8192.0));
    assert_eq!(w.value("throughput_bytes_per_s"), Some(32768.0 * 1024.0));
    // fio 2.x's "io_bytes" is KiB: 65536 of them, 16384 writes of 4 KiB.
    assert_eq!(w.value("io_bytes"), Some(65536.0 * 1024.0));
    assert_eq!(w.value("latency_p99_9_s"), Some(0.00102));
    assert_eq!(w.value("latency_mean_s"), Some(0.00011537));
    assert_eq!(w.at, "2015-12-13T09:46:40.000000Z");
    assert_eq!(run.headline(), ("writes_per_s".into(), 8192.0));
}

#[test]
fn fio_percentile_padding_is_no_percentile() {
    // fio 2.x to 3.1 pad each percentile list to 20 entries with "0.00": 0.
    let run = ingest(&[&data("fio-3.1-padded.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "fio");
    let r = run.of(Kind::Sample)[0];
    assert_eq!(r.value("latency_p1_s"), Some(0.000033536));
    assert_eq!(r.value("latency_p99_99_s"), Some(0.001286144));
    let pcts = r
        .values
        .keys()
        .filter(|k| k.starts_with("latency_p"))
        .count();
    assert_eq!(pcts, 17, "{:?}", r.values);
    assert_eq!(r.value("latency_p0_s"), None);
    assert_eq!(r.value("throughput_bytes_per_s"), Some(98304.0 * 1024.0));
    let json = std::fs::read_to_string(data("fio-2.2.json")).expect("example");
    let padded = json.replace(
        "\"99.990000\" : 2096",
        "\"99.990000\" : 2096, \"0.00\" : 0, \"0.00\" : 0",
    );
    assert_ne!(padded, json);
    let run = ingest_stdin(&["fio"], padded.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.of(Kind::Sample)[0];
    assert_eq!(r.value("latency_p0_s"), None, "{:?}", r.values);
    assert_eq!(r.value("latency_p99_99_s"), Some(0.002096));
}

#[test]
fn fio_text_before_its_json_is_skipped_and_text_after_it_named() {
    let json = std::fs::read_to_string(data("fio-2.2.json")).expect("example");
    let text = format!(
        "fio: terminating on signal 2\nseqwrite: Laying out IO file (1 file / 64KiB)\n{json}fio: a late message\n"
    );
    let run = ingest_stdin(&["fio", "-"], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.headline(), ("writes_per_s".into(), 8192.0));
    let lines = text.lines().count();
    let warning = run.summary().info["warning"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(warning.starts_with(&format!("stdin:{lines}:")), "{warning}");
}

#[test]
fn hyperfine_commands_are_rows_of_their_own() {
    let run = ingest(&[&data("hyperfine-1.11.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "hyperfine");
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 8);
    assert_eq!(samples[0].name, "sleep 0.1");
    assert_eq!(samples[7].name, "sleep 0.2");
    assert_eq!(samples[0].value("wall_s"), Some(0.10158413752));
    // --name with several commands: the name, then the command.
    let run = ingest(&["--name", "sleeps", &data("hyperfine-1.11.json")]);
    let samples = run.of(Kind::Sample);
    assert_eq!(samples[0].name, "sleeps sleep 0.1");
    assert_eq!(run.summary().name, "sleeps sleep 0.2");
}

#[test]
fn bsd_and_busybox_ping() {
    let run = ingest(&[&data("ping-bsd.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "ping");
    assert_eq!(run.of(Kind::Sample).len(), 3);
    let failed: Vec<_> = run
        .of(Kind::Sample)
        .into_iter()
        .filter(|r| r.error.is_some())
        .collect();
    assert_eq!(failed.len(), 1);
    let s = run.summary();
    assert_eq!(s.value("loss_ratio"), Some(0.333), "33.3% packet loss");
    assert_eq!(s.value("rtt_stddev_s"), Some(0.000028));
    assert_eq!(run.headline(), ("rtt_mean_s".into(), 0.000077));
    let run = ingest(&["ping", &data("ping-busybox.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.of(Kind::Sample)[1].value("rtt_s"), Some(0.00012));
    assert_eq!(run.headline().1, 0.000102);
}

#[test]
fn ping_without_a_reply_or_without_its_statistics() {
    let run = ingest(&[&data("ping-unreachable.txt")]);
    assert_eq!(run.code, 1);
    assert_eq!(run.summary().status, Some(Status::Failed));
    assert_eq!(run.summary().value("errors_count"), Some(2.0));
    let run = ingest(&[&data("ping-cut.txt")]);
    assert_eq!(run.code, 1);
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Partial));
    assert!(
        s.error.as_deref().unwrap_or("").contains("ping-cut.txt:3:"),
        "{:?}",
        s.error
    );
    assert_eq!(run.of(Kind::Sample)[1].at, "2016-06-14T09:00:01.000200Z");
    assert_eq!(
        run.records[0].at, "2016-06-14T09:00:00.000100Z",
        "begin takes the first time"
    );
}

#[test]
fn fping_counts_only_and_per_reply_lines() {
    // 10.0.0.2 never answered: its run fails, and ingest exits 1 as fping does.
    let run = ingest(&[&data("fping-3.10-C.txt")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    converted(&run, "fping");
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 8);
    assert_eq!(samples.iter().filter(|r| r.error.is_some()).count(), 5);
    assert_eq!(samples[0].name, "ping 10.0.0.1");
    assert_eq!(samples[7].name, "ping 10.0.0.2");
    let first = run.of(Kind::Summary)[0];
    assert_eq!(first.name, "ping 10.0.0.1");
    assert_eq!(first.value("sent_count"), Some(4.0));
    assert_eq!(first.value("loss_ratio"), Some(0.25));
    let s = run.summary();
    assert_eq!(s.name, "ping 10.0.0.2");
    assert_eq!(s.value("loss_ratio"), Some(1.0));
    let run = ingest(&[&data("fping-c.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.of(Kind::Sample).len(), 3);
    assert_eq!(run.summary().value("received_count"), Some(2.0));
}

/// ingest refuses `input`, exit 2, with a message naming `place` and what was expected.
fn refused(args: &[&str], input: &str, place: &str, expected: &str) {
    let run = ingest_stdin(args, input.as_bytes());
    assert_eq!(run.code, 2, "{args:?} {input:?}: {}", run.stderr);
    assert!(run.stderr.contains(place), "{args:?}: {}", run.stderr);
    assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Failed));
    assert_eq!(s.tool, "ingest", "nothing of the source's is written");
    assert!(run.of(Kind::Sample).is_empty());
}

#[test]
fn unreadable_input_names_file_and_line() {
    refused(&[], "hello\nworld\n", "stdin:1:", "cannot tell which tool");
    refused(
        &["ping"],
        "PING h (1.2.3.4) 56(84) bytes of data.\n64 bytes from 1.2.3.4: icmp_seq=1 ttl=64 time=0.1 ms\nbogus\n",
        "stdin:3:",
        "expected ping output",
    );
    refused(
        &["ping"],
        "PING h (1.2.3.4) 56(84) bytes of data.\n64 bytes from 1.2.3.4: icmp_seq=x ttl=64 time=0.1 ms\n",
        "stdin:2:",
        "expected ping output",
    );
    refused(
        &["iperf3"],
        "{\n\"start\": {},\n\"intervals\": [1,,2]\n}\n",
        "stdin:3:",
        "expected iperf3 -J output",
    );
    refused(
        &["iperf3"],
        "[1, 2]\n",
        "stdin:1:",
        "expected iperf3 -J output",
    );
    refused(
        &["fio"],
        "fio: something\n{\n\"fio version\": \"fio-3.33\"\n}\n",
        "stdin:2:",
        "no \"jobs\" array",
    );
    refused(
        &["hyperfine"],
        "{\"results\": [{\"command\": \"x\", \"times\": [0.1, \"a\"]}]}",
        "stdin:1:",
        "not a number of seconds",
    );
    refused(
        &["fping"],
        "127.0.0.1 : [0], 64 bytes, 0.04 ms (0.04 avg, 0% loss)\n127.0.0.1 : [1], 64 bytes, fast\n",
        "stdin:2:",
        "expected fping output",
    );
    refused(
        &["iperf3"],
        "{\"event\":\"start\",\"data\":{}}\nnot json\n{\"event\":\"end\",\"data\":{}}\n",
        "stdin:2:",
        "--json-stream event line",
    );
    let run = ingest_stdin(&[], b"PING h\n\xff\xfe\n");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("stdin:2: not text"), "{}", run.stderr);
    let run = ingest(&["/nonexistent/iperf3.json"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("/nonexistent/iperf3.json"),
        "{}",
        run.stderr
    );
}

#[test]
fn label_tags_and_name_as_everywhere() {
    let run = ingest(&[
        "--label",
        "para/lvm",
        "--tag",
        "k=v",
        "--name",
        "lat",
        &data("ping-bsd.txt"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for r in &run.records {
        assert_eq!(r.label, "para/lvm");
        assert_eq!(r.name, "lat");
        assert_eq!(r.tags.get("k").map(String::as_str), Some("v"));
    }
}

#[test]
fn iperf3_after_an_echoed_ctrl_c_is_told_as_iperf3() {
    let json = std::fs::read(data("iperf3-3.1-udp.json")).expect("example");
    let plain = ingest_stdin(&[], &json);
    for noise in [
        &b"^C"[..],
        b"^C\r\n\x1b[?2004l\r",
        b"\r\n\x1b[?2004l\r\n^C",
        b"\xEF\xBB\xBF^C\x1b[?1034h",
    ] {
        let text = [noise, &json[..]].concat();
        for args in [&[][..], &["iperf3"]] {
            let run = ingest_stdin(args, &text);
            assert_eq!(run.code, 0, "{noise:?} {args:?}: {}", run.stderr);
            assert_eq!(run.headline(), plain.headline(), "{noise:?} {args:?}");
        }
    }
}

#[test]
fn iperf3_after_terminal_escapes_or_a_byte_order_mark_is_still_read() {
    let json = std::fs::read(data("iperf3-3.1-udp.json")).expect("example");
    let plain = ingest_stdin(&[], &json);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    for noise in [
        &b"\x1b[?1034h"[..],
        b"\xEF\xBB\xBF",
        b"\x1b]0;title\x07\x1b[?1034h",
    ] {
        let text = [noise, &json[..]].concat();
        for args in [&[][..], &["iperf3"]] {
            let run = ingest_stdin(args, &text);
            assert_eq!(run.code, 0, "{noise:?} {args:?}: {}", run.stderr);
            assert_eq!(run.headline(), plain.headline(), "{noise:?} {args:?}");
        }
    }
}

#[test]
fn iperf3_with_an_empty_end_and_no_error_is_a_partial_run() {
    let text = std::fs::read_to_string(data("iperf3-3.1-udp.json")).expect("example");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v["end"] = serde_json::json!({});
    let run = ingest_stdin(&["iperf3"], v.to_string().as_bytes());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Partial));
    assert!(
        s.error
            .as_deref()
            .unwrap_or("")
            .contains("\"end\" is empty"),
        "{:?}",
        s.error
    );
}

#[test]
fn an_iperf3_start_time_that_is_no_unix_time_is_said_not_replaced_silently() {
    let text = std::fs::read_to_string(data("iperf3-3.1-udp.json")).expect("example");
    for bad in ["-1e12", "1180591620717411303424", "1.5", "\"soon\""] {
        let v = text.replacen("1465894800", bad, 1);
        let run = ingest_stdin(&["iperf3"], v.as_bytes());
        assert_eq!(run.code, 0, "{bad}: {}", run.stderr);
        let want =
            ", not a Unix time from 1970 to 9999: the records are dated when ingest read them";
        assert!(
            run.stderr.contains("warning: start.timestamp.timesecs is ")
                && run.stderr.contains(want),
            "{bad}: {}",
            run.stderr
        );
        let w = run.summary().info["warnings"].to_string();
        assert!(w.contains("start.timestamp.timesecs is "), "{bad}: {w}");
    }
    // A good one dates the records and warns of nothing.
    let run = ingest_stdin(&["iperf3"], text.as_bytes());
    assert!(!run.stderr.contains("timesecs"), "{}", run.stderr);
    assert!(
        run.summary().at.starts_with("2016-06-14T"),
        "{}",
        run.summary().at
    );
}

#[test]
fn a_percent_or_ms_is_scaled_once_from_the_digits_the_source_wrote() {
    // iperf3 prints doubles with 17 significant digits; their f64 prints shorter, and scaling
    // that shorter text would round twice.
    let text = std::fs::read_to_string(data("iperf3-3.1-udp.json")).expect("example");
    let cpu = "3.6047458169646678";
    let jitter = "0.020999999999999998";
    let text = text
        .replace(
            "\"host_total\":\t0.8421",
            &format!("\"host_total\":\t{cpu}"),
        )
        .replacen(
            "\"jitter_ms\":\t0.021",
            &format!("\"jitter_ms\":\t{jitter}"),
            2,
        );
    assert!(
        text.contains(cpu) && text.contains(jitter),
        "the example's fields moved"
    );
    let run = ingest_stdin(&["iperf3"], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let once = |t: &str, e: i32| format!("{t}e{e}").parse::<f64>().expect("f64");
    let s = run.summary();
    assert_eq!(s.value("host_cpu_seconds_per_s"), Some(once(cpu, -2)));
    assert_eq!(
        s.value("host_cpu_seconds_per_s"),
        Some(0.036047458169646676)
    );
    assert_eq!(s.value("jitter_s"), Some(once(jitter, -3)));
}

#[test]
fn a_zero_or_negative_headline_is_no_figure() {
    let text = std::fs::read_to_string(data("iperf3-3.1-udp.json")).expect("example");
    for bits in ["0", "-0.0"] {
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        // iperf3 3.1 keeps the UDP receiver's figure in end.sum.
        v["end"]["sum"]["bits_per_second"] = serde_json::from_str(bits).expect("number");
        let run = ingest_stdin(&["iperf3"], v.to_string().as_bytes());
        assert_eq!(run.code, 1, "{bits}: {}", run.stderr);
        let s = run.summary();
        assert_eq!(s.status, Some(Status::Partial), "{bits}");
        assert!(s.headline.is_none(), "{bits}");
        assert!(
            s.error
                .as_deref()
                .unwrap_or("")
                .contains("throughput_bits_per_s"),
            "{bits}: {:?}",
            s.error
        );
    }
}

#[test]
fn a_negative_rate_is_refused_naming_it() {
    let text = std::fs::read_to_string(data("iperf3-3.1-udp.json")).expect("example");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v["end"]["sum"]["bits_per_second"] = serde_json::json!(-5);
    let run = ingest_stdin(&["iperf3"], v.to_string().as_bytes());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("negative"), "{}", run.stderr);
}
