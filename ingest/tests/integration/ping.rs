//! ping's variants through the release binary, each from what the tool prints (iputils'
//! ping_common.c and ping_output.c, FreeBSD's and macOS's ping.c, busybox's ping.c): iputils
//! -p, -O, -D and its `pipe N` statistics; BSD's ping6 header, its ICMP error blocks and
//! broadcast replies; busybox; the units of time=; replies that ping's own min/max deny.

use crate::common::{converted, data, ingest, ingest_stdin};
use measure::{Kind, Record, Status};

fn info_u64(r: &Record, key: &str) -> Option<u64> {
    r.info.get(key).and_then(|v| v.as_u64())
}

#[test]
fn iputils_pattern_outstanding_and_time_stamps() {
    let run = ingest(&[&data("ping-iputils-O-p-D.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "ping");
    let begin = &run.records[0];
    assert_eq!(begin.kind, Kind::Begin);
    assert_eq!(
        begin.info.get("pattern").and_then(|v| v.as_str()),
        Some("0xabcd")
    );
    assert_eq!(info_u64(begin, "payload_bytes"), Some(56));
    assert_eq!(
        begin.at, "2023-11-14T22:13:20.123456Z",
        "the first -D stamp"
    );
    let samples = run.of(Kind::Sample);
    let seqs: Vec<_> = samples.iter().map(|r| info_u64(r, "icmp_seq")).collect();
    assert_eq!(
        seqs,
        [1, 3, 2, 4, 5, 6].map(Some),
        "-O's no answer for 2 gives way to 2's late reply; the DUP! of 5 is no sample"
    );
    assert_eq!(samples[0].value("rtt_s"), Some(0.000045));
    assert_eq!(samples[1].value("rtt_s"), Some(0.0123));
    assert_eq!(samples[2].value("rtt_s"), Some(1.276));
    assert_eq!(samples[2].at, "2023-11-14T22:13:22.400000Z");
    assert_eq!(samples[3].error.as_deref(), Some("timeout"));
    assert_eq!(samples[3].at, "2023-11-14T22:13:23.126000Z");
    assert_eq!(
        samples[5].error.as_deref(),
        Some("Destination Host Unreachable")
    );
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.value("sent_count"), Some(6.0));
    assert_eq!(s.value("received_count"), Some(4.0));
    assert_eq!(s.value("duplicates_count"), Some(1.0));
    assert_eq!(s.value("errors_count"), Some(1.0));
    assert_eq!(s.value("rtt_min_s"), Some(0.000045));
    assert_eq!(s.value("rtt_mean_s"), Some(0.257703));
    assert_eq!(s.value("rtt_max_s"), Some(1.276));
    assert_eq!(s.value("rtt_mdev_s"), Some(0.50915));
    assert_eq!(info_u64(s, "pipe"), Some(2), "rtt ... ms, pipe 2");
}

#[test]
fn iputils_errors_only_with_a_pipe_line() {
    let run = ingest(&[&data("ping-iputils-errors-pipe.txt")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 3);
    assert!(samples.iter().all(|r| r.error.is_some()));
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Failed));
    assert_eq!(s.value("errors_count"), Some(3.0));
    assert_eq!(s.value("loss_ratio"), Some(1.0));
    assert_eq!(info_u64(s, "pipe"), Some(4), "a statistics line of its own");
}

#[test]
fn iputils_statistics_forms() {
    let head = "PING h (10.0.0.2) 56(84) bytes of data.\n\
                64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.050 ms\n\
                64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.060 ms (DUP!)\n\
                \n--- h ping statistics ---\n";
    let text = format!(
        "{head}1 packets transmitted, 1 received, +1 duplicates, +1 corrupted, +2 errors, 0% packet loss, time 0ms\n\
         rtt min/avg/max/mdev = 0.050/0.055/0.060/0.005 ms, pipe 3, ipg/ewma 1.234/0.051 ms\n"
    );
    let run = ingest_stdin(&["ping"], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s.value("duplicates_count"), Some(1.0));
    assert_eq!(s.value("corrupted_count"), Some(1.0));
    assert_eq!(s.value("errors_count"), Some(2.0));
    assert_eq!(s.value("ipg_s"), Some(0.001234));
    assert_eq!(s.value("rtt_ewma_s"), Some(0.000051));
    assert_eq!(info_u64(s, "pipe"), Some(3));
    assert_eq!(run.of(Kind::Sample).len(), 1);
}

#[test]
fn bsd_ping6_header_and_replies() {
    let run = ingest(&[&data("ping-bsd6.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "ping");
    let b = &run.records[0];
    assert_eq!(b.info.get("target").and_then(|v| v.as_str()), Some("::1"));
    assert_eq!(info_u64(b, "payload_bytes"), Some(8), "56=40+8+8");
    assert_eq!(b.name, "ping ::1");
    let samples = run.of(Kind::Sample);
    assert_eq!(samples.len(), 2);
    assert_eq!(
        samples[0].info.get("from").and_then(|v| v.as_str()),
        Some("::1")
    );
    assert_eq!(info_u64(samples[0], "ttl"), Some(64), "hlim");
    let s = run.summary();
    assert_eq!(s.value("rtt_stddev_s"), Some(0.00002), "std-dev");
    assert_eq!(s.value("rtt_max_s"), Some(0.000102));
    assert_eq!(run.headline(), ("rtt_mean_s".into(), 0.000081));
}

#[test]
fn bsd_error_blocks_are_failed_samples_and_their_dumps_skipped() {
    let run = ingest(&[&data("ping-bsd-unreachable.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let samples = run.of(Kind::Sample);
    let errors: Vec<_> = samples.iter().map(|r| r.error.as_deref()).collect();
    assert_eq!(
        errors,
        [
            Some("Destination Host Unreachable"),
            Some("timeout"),
            Some("Destination Host Unreachable"),
            None
        ],
        "the timeout of 1 repeats 1's error (seq 0x0001 in its dump): no second sample"
    );
    assert_eq!(info_u64(samples[0], "icmp_seq"), None);
    assert_eq!(info_u64(samples[2], "icmp_seq"), Some(1));
    assert_eq!(samples[3].value("rtt_s"), Some(0.001204));
    let s = run.summary();
    assert_eq!(s.value("errors_count"), Some(2.0));
    assert_eq!(s.value("loss_ratio"), Some(0.667), "66.7% packet loss");
}

#[test]
fn broadcast_replies_without_dup_are_duplicates() {
    for (file, first) in [
        ("ping-broadcast.txt", [0.000312, 0.000298]),
        ("ping-bsd-broadcast.txt", [0.000412, 0.000388]),
    ] {
        let run = ingest(&[&data(file)]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let samples = run.of(Kind::Sample);
        let rtts: Vec<_> = samples.iter().map(|r| r.value("rtt_s")).collect();
        assert_eq!(rtts, first.map(Some), "{file}: a probe's first reply");
        let s = run.summary();
        assert_eq!(s.value("duplicates_count"), Some(2.0), "{file}");
        assert_eq!(s.value("received_count"), Some(2.0), "{file}");
    }
}

#[test]
fn busybox_round_trip_and_duplicates() {
    let run = ingest(&["ping", &data("ping-busybox.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s.value("rtt_min_s"), Some(0.000084));
    assert_eq!(s.value("rtt_max_s"), Some(0.00012));
    assert_eq!(run.headline(), ("rtt_mean_s".into(), 0.000102));
    let text = "PING 10.0.0.2 (10.0.0.2): 56 data bytes\n\
                64 bytes from 10.0.0.2: seq=0 ttl=64 time=0.084 ms\n\
                64 bytes from 10.0.0.2: seq=0 ttl=64 time=0.120 ms (DUP!)\n\
                \n--- 10.0.0.2 ping statistics ---\n\
                1 packets transmitted, 1 packets received, 1 duplicates, 0% packet loss\n\
                round-trip min/avg/max = 0.084/0.102/0.120 ms\n";
    let run = ingest_stdin(&[], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.of(Kind::Sample).len(), 1);
    assert_eq!(run.summary().value("duplicates_count"), Some(1.0));
}

/// A one-reply ping run whose reply prints `time`, its statistics `stats`.
fn one_reply(time: &str, stats: &str) -> String {
    format!(
        "PING h (10.0.0.2) 56(84) bytes of data.\n\
         64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 {time}\n\
         \n--- h ping statistics ---\n\
         1 packets transmitted, 1 received, 0% packet loss, time 0ms\n{stats}"
    )
}

#[test]
fn units_of_a_reply_are_scaled_once() {
    for (time, stats, rtt) in [
        ("time=36 us", "", 36e-6),
        ("time=36 ms", "", 0.036),
        ("time=36 s", "", 36.0),
        (
            "time=0.045 ms",
            "rtt min/avg/max/mdev = 0.045/0.045/0.045/0.000 ms\n",
            0.000045,
        ),
    ] {
        let run = ingest_stdin(&["ping"], one_reply(time, stats).as_bytes());
        assert_eq!(run.of(Kind::Sample)[0].value("rtt_s"), Some(rtt), "{time}");
    }
}

#[test]
fn a_reply_below_a_bound_has_no_rtt() {
    let run = ingest_stdin(&["ping"], one_reply("time<1 ms", "").as_bytes());
    let s = run.of(Kind::Sample);
    assert_eq!(s.len(), 1, "{}", run.stderr);
    assert!(s[0].error.is_none());
    assert_eq!(s[0].value("rtt_s"), None, "only a bound is known");
    assert_eq!(
        s[0].info.get("rtt_below_s").and_then(|v| v.as_f64()),
        Some(0.001)
    );
}

/// ping's refusal of `input`: exit 2, `place` and `expected` in the message, and nothing of
/// ping's written (no begin, no sample): the one record is ingest's failed summary.
fn refused(input: &str, place: &str, expected: &str) {
    let run = ingest_stdin(&["ping"], input.as_bytes());
    assert_eq!(run.code, 2, "{input:?}: {}", run.stderr);
    assert!(run.stderr.contains(place), "{}", run.stderr);
    assert!(run.stderr.contains(expected), "{}", run.stderr);
    assert!(run.of(Kind::Begin).is_empty(), "no begin record");
    assert!(run.of(Kind::Sample).is_empty());
    assert_eq!(run.records.len(), 1);
    assert_eq!(run.summary().tool, "ingest");
    assert_eq!(run.summary().status, Some(Status::Failed));
}

#[test]
fn refusals_name_file_line_and_write_no_begin() {
    refused(
        &one_reply("time=36 furlongs", ""),
        "stdin:2:",
        "a time in \"furlongs\": expected ms, us (µs) or s",
    );
    refused(&one_reply("time=36", ""), "stdin:2:", "without a unit");
    // A reply ten times ping's own max: the output was edited or mixes runs.
    refused(
        &one_reply(
            "time=0.450 ms",
            "rtt min/avg/max/mdev = 0.045/0.045/0.045/0.000 ms\n",
        ),
        "stdin:2:",
        "outside the statistics' min/max",
    );
    refused(
        &one_reply("time=0.045 ms", "rtt min/avg/max/mdev = 0.045/0.045 ms\n"),
        "stdin:6:",
        "expected ping's statistics",
    );
    refused(
        &one_reply("time=0.045 ms", "rtt min/avg/max/wat = 1/2/3/4 ms\n"),
        "stdin:6:",
        "unknown statistic \"wat\"",
    );
}

#[test]
fn rounding_of_the_printed_figures_is_tolerated() {
    // iputils prints 12.345 ms as time=12.3 and cuts its max to 12.345; 123.4 ms as 123.
    for (time, max) in [
        ("time=12.3 ms", "12.345"),
        ("time=12.4 ms", "12.351"),
        ("time=123 ms", "122.600"),
        ("time=0.046 ms", "0.045"),
    ] {
        let stats = format!("rtt min/avg/max/mdev = 0.040/1.000/{max}/0.000 ms\n");
        let run = ingest_stdin(&["ping"], one_reply(time, &stats).as_bytes());
        assert_eq!(run.code, 0, "{time} against {max}: {}", run.stderr);
    }
}

#[test]
fn older_iputils_cut_reply_times_below_the_statistics_min() {
    // iputils before 2018 (CentOS 7, Ubuntu 18.04) cut a reply's time to its printed digits
    // (time=23.3 for 23.359 ms, time=104 for 104.862 ms) and print min/max to the us.
    let run = ingest(&[&data("ping-iputils-cut-times.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "ping");
    let rtts: Vec<_> = run
        .of(Kind::Sample)
        .iter()
        .map(|r| r.value("rtt_s"))
        .collect();
    assert_eq!(
        rtts,
        [Some(0.0233), Some(0.0278), Some(0.0459), Some(0.026), None]
    );
    let s = run.summary();
    assert_eq!(s.value("rtt_min_s"), Some(0.023359));
    assert_eq!(run.headline(), ("rtt_mean_s".into(), 0.030797));
    let stats = "rtt min/avg/max/mdev = 104.862/104.862/104.862/0.000 ms\n";
    let run = ingest_stdin(&["ping"], one_reply("time=104 ms", stats).as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A whole unit below is as far as a cut reaches: a tenth of a ms more is refused.
    let stats = "rtt min/avg/max/mdev = 23.402/23.402/23.402/0.000 ms\n";
    refused(
        &one_reply("time=23.3 ms", stats),
        "stdin:2:",
        "outside the statistics' min/max",
    );
}

#[test]
fn the_loss_is_the_percentage_ping_printed_beside_its_counts() {
    let run = ingest(&[&data("ping-iputils-cut-times.txt")]);
    let s = run.summary();
    assert_eq!(
        s.value("loss_ratio"),
        Some(0.333333),
        "33.3333% packet loss"
    );
    assert_eq!(s.value("sent_count"), Some(6.0));
    assert_eq!(s.value("received_count"), Some(4.0));
    let text = "PING h (10.0.0.2) 56(84) bytes of data.\n\
                64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.050 ms\n\
                \n--- h ping statistics ---\n\
                450 packets transmitted, 296 received, 34.2222% packet loss, time 449581ms\n\
                rtt min/avg/max/mdev = 0.050/0.050/0.050/0.000 ms\n";
    let run = ingest_stdin(&["ping"], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s.value("loss_ratio"), Some(0.342222), "not 154/450");
    assert_eq!(s.value("sent_count"), Some(450.0));
    assert_eq!(s.value("received_count"), Some(296.0));
    refused(
        &text.replace("34.2222%", "34.2x22%"),
        "stdin:5:",
        "expected L% packet loss",
    );
}

#[test]
fn a_ping_interrupted_by_ctrl_c_before_any_reply_is_a_failed_run() {
    // What a terminal holds after Ctrl-C: the ^C it echoed, then ping's statistics.
    let text = "PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.\n\
                ^C\n\
                --- 10.0.0.9 ping statistics ---\n\
                3 packets transmitted, 0 received, 100% packet loss, time 2038ms\n\n";
    let run = ingest_stdin(&[], text.as_bytes());
    assert_eq!(run.code, 1, "{}", run.stderr);
    converted(&run, "ping");
    let s = run.summary();
    assert_eq!(s.status, Some(Status::Failed));
    assert_eq!(s.error.as_deref(), Some("no reply"));
    assert_eq!(s.value("sent_count"), Some(3.0));
    assert_eq!(s.value("loss_ratio"), Some(1.0));
    // Cut short after the ^C: what was read, a partial summary.
    let run = ingest_stdin(&["ping"], &text.as_bytes()[..50]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.summary().status, Some(Status::Partial));
    let text = one_reply(
        "time=0.046 ms",
        "rtt min/avg/max/mdev = 0.046/0.046/0.046/0.000 ms\n",
    )
    .replace("\n\n---", "\n^C\n---");
    let run = ingest_stdin(&[], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.headline(), ("rtt_mean_s".into(), 0.000046));
}

#[test]
fn a_prompt_and_command_line_before_ping_are_skipped_with_a_warning() {
    let text = format!(
        "[user@centos7 ~]$ ping -c 1 -p 5a 10.0.0.2\nPATTERN: 0x5a\n{}",
        one_reply(
            "time=0.046 ms",
            "rtt min/avg/max/mdev = 0.046/0.046/0.046/0.000 ms\n"
        )
    );
    for args in [&[][..], &["ping"]] {
        let run = ingest_stdin(args, text.as_bytes());
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        converted(&run, "ping");
        assert!(
            run.stderr
                .contains("warning: line 1: skipped, before ping's PING line"),
            "{}",
            run.stderr
        );
        let s = run.summary();
        let warnings = s.info.get("warnings").and_then(|w| w.as_array());
        assert_eq!(warnings.map(Vec::len), Some(1), "{:?}", s.info);
        let pattern = run.records[0].info.get("pattern").and_then(|v| v.as_str());
        assert_eq!(pattern, Some("0x5a"), "-p's PATTERN line is still read");
    }
    // After the PING line, a line that is not ping's is refused as before.
    refused(
        &one_reply("time=0.046 ms", "").replace("\n\n---", "\nuser@host:~$ ls\n---"),
        "stdin:3:",
        "expected ping output",
    );
}

#[test]
fn a_utf16_capture_is_read_after_decoding_or_refused_naming_iconv() {
    let text = std::fs::read_to_string(data("ping-iputils-cut-times.txt")).expect("example");
    let plain = ingest_stdin(&[], text.as_bytes());
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let units: Vec<u16> = text.encode_utf16().collect();
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(units.iter().flat_map(|u| u.to_le_bytes()))
        .collect();
    let be: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(units.iter().flat_map(|u| u.to_be_bytes()))
        .collect();
    for bytes in [&le, &be] {
        let run = ingest_stdin(&[], bytes);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.headline(), plain.headline());
        assert_eq!(run.of(Kind::Sample).len(), plain.of(Kind::Sample).len());
    }
    for (bytes, enc) in [(&le[2..], "UTF-16LE"), (&le[..le.len() - 1], "UTF-16")] {
        let run = ingest_stdin(&["ping"], bytes);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let want = format!("iconv -f {enc} -t UTF-8 FILE | ingest");
        assert!(run.stderr.contains(&want), "{}", run.stderr);
    }
}
