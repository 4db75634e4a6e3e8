//! iperf3 `-J` (one JSON document) and `--json-stream` (one event a line) output: a sample
//! per run with the receiver's figure as headline, an interval record per reported interval
//! (and direction, with `--bidir`), retransmits, UDP jitter and loss.

use crate::input::Input;
use crate::json::{Doc, document};
use crate::model::{Converted, End, Kind, Out, at_offset, bad, copy, copy_scaled, number, scalars};
use measure::parts::Values;
use measure::{Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "iperf3 -J output";

/// `iperf3 -J` output.
pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let start = input.text.find('{').unwrap_or(0);
    match document(input, start, WHAT)? {
        Doc::Whole(v, None) => from_doc(input, &v, None),
        Doc::Whole(_, Some(line)) => Err(bad(
            &input.place(line),
            "text after the JSON document: expected one iperf3 -J document a file",
        )),
        Doc::Truncated(v, line) => {
            let why = format!(
                "{}: the input ends early (an interrupted iperf3 -J?)",
                input.place(line)
            );
            from_doc(input, &v, Some(why))
        }
    }
}

/// `iperf3 --json-stream` output: `{"event":"start"|"interval"|"end"|"error","data":...}`
/// lines, put together into the document `-J` writes.
pub fn convert_stream(input: &Input) -> Result<Converted, Failure> {
    let mut doc = Map::new();
    let mut intervals = Vec::new();
    let lines: Vec<&str> = input.text.lines().collect();
    let mut cut = None;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) if e.is_eof() && i + 1 == lines.len() => {
                cut = Some(format!(
                    "{}: the last line is cut short (an interrupted iperf3 --json-stream?)",
                    input.place(i + 1)
                ));
                break;
            }
            Err(e) => {
                return Err(bad(
                    &input.place(i + 1),
                    format!(
                        "not JSON ({e}): expected an iperf3 --json-stream event line {{\"event\":...,\"data\":...}}"
                    ),
                ));
            }
        };
        crate::literal::remember(line, &v);
        // Taken out, not copied: the numbers inside keep their place, and so their texts.
        let data = v.get_mut("data").map(Value::take).unwrap_or(Value::Null);
        let event = v.get("event").and_then(Value::as_str);
        match event {
            Some("start") => drop(doc.insert("start".into(), data)),
            Some("interval") => intervals.push(data),
            Some("end") => drop(doc.insert("end".into(), data)),
            Some("error") => drop(doc.insert("error".into(), data)),
            Some(_) => {}
            None => {
                return Err(bad(
                    &input.place(i + 1),
                    "expected an iperf3 --json-stream event line with \"event\" and \"data\"",
                ));
            }
        }
    }
    doc.insert("intervals".into(), Value::Array(intervals));
    if cut.is_none() && !doc.contains_key("end") && !doc.contains_key("error") {
        cut = Some(format!(
            "{}: no \"end\" event: the input ends early (an interrupted iperf3 --json-stream?)",
            input.place(input.lines())
        ));
    }
    from_doc(input, &Value::Object(doc), cut)
}

/// The records of one iperf3 document; `cut` says where and why it ends early.
fn from_doc(input: &Input, v: &Value, cut: Option<String>) -> Result<Converted, Failure> {
    let start = v.get("start").filter(|s| s.is_object());
    let error = v.get("error").and_then(Value::as_str).map(str::to_string);
    if start.is_none() && error.is_none() {
        return Err(bad(
            &input.place(1),
            "expected iperf3 -J output: a JSON object with \"start\", \"intervals\" and \"end\"",
        ));
    }
    let empty = json!({});
    let start = start.unwrap_or(&empty);
    let test = start.get("test_start");
    let flag = |k: &str| {
        test.and_then(|t| t.get(k))
            .and_then(Value::as_i64)
            .unwrap_or(0)
            != 0
    };
    let timesecs = start.pointer("/timestamp/timesecs").and_then(Value::as_u64);
    let at = |offset: Option<f64>| timesecs.and_then(|t| at_offset(t, offset.unwrap_or(0.0)));
    let udp = test.and_then(|t| t.get("protocol")).and_then(Value::as_str) == Some("UDP");
    let end = v.get("end").filter(|e| e.is_object());
    let bidir = flag("bidir") || end.is_some_and(|e| e.get("sum_received_bidir_reverse").is_some());
    let ivs = v
        .get("intervals")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut conv = Converted {
        tool: "iperf3".into(),
        version: start
            .get("version")
            .and_then(Value::as_str)
            .map_or("unknown", |s| s.trim_start_matches("iperf ").trim())
            .to_string(),
        name: row_name(start, udp, bidir, flag("reverse")),
        prefix: "iperf3".into(),
        begin: begin_info(start, test, bidir),
        begin_at: at(None),
        records: intervals(ivs, bidir, &at),
        end: End::ok("throughput_bits_per_s", Values::new(), Map::new()),
    };
    let run = end.and_then(|e| run_values(e, udp, bidir));
    conv.end = match (run, cut, error) {
        (Some((values, info, t)), None, error) => {
            let sample = Out::new(Kind::Sample, values.clone(), info.clone());
            conv.records.push(sample.at(at(t)));
            let mut end = match error {
                None => End::ok("throughput_bits_per_s", values, info),
                Some(e) => End::not_ok(Status::Partial, format!("iperf3: {e}"), values, info),
            };
            end.at = at(t);
            end
        }
        (_, Some(why), _) => End::not_ok(Status::Partial, why, partial_values(ivs), Map::new()),
        (None, None, Some(e)) => End::not_ok(
            Status::Failed,
            format!("iperf3: {e}"),
            partial_values(ivs),
            Map::new(),
        ),
        (None, None, None) => no_summary(input, end, ivs)?,
    };
    if let Some(w) = bad_timestamp(start.pointer("/timestamp/timesecs")) {
        conv.end.warnings.push(w);
    }
    Ok(conv)
}

/// A warning for a start time that is there but no Unix time of years 1970 to 9999 (negative,
/// fractional or beyond): the records are then dated when ingest read them, and say so.
fn bad_timestamp(v: Option<&Value>) -> Option<String> {
    let v = v?;
    let fits = v.as_u64().is_some_and(|t| at_offset(t, 0.0).is_some());
    (!fits).then(|| {
        format!(
            "start.timestamp.timesecs is {v}, not a Unix time from 1970 to 9999: the records are dated when ingest read them"
        )
    })
}

/// A whole document without the end's figure: partial when iperf3 stopped before writing its
/// summary (an empty end: a client killed between its last interval and the end), refused
/// when the figure is negative or the end is not iperf3's.
fn no_summary(input: &Input, end: Option<&Value>, ivs: &[Value]) -> Result<End, Failure> {
    if end.is_some_and(|e| e.as_object().is_some_and(|o| o.is_empty())) {
        return Ok(End::not_ok(
            Status::Partial,
            "iperf3's \"end\" is empty and it names no error: the run stopped before its \
             summary; the intervals read are the figures"
                .to_string(),
            partial_values(ivs),
            Map::new(),
        ));
    }
    let why = if negative_rate(end) {
        "the end's bits_per_second is negative, which no transfer measures: the file is \
         edited or corrupt"
    } else {
        "expected iperf3 -J output with an \"end\" object holding \"sum_received\" (or \"sum\")"
    };
    Err(bad(&input.place(input.lines()), why))
}

/// Whether the end's receiver figure is there but negative.
fn negative_rate(end: Option<&Value>) -> bool {
    end.and_then(|e| e.get("sum_received").or_else(|| e.get("sum")))
        .and_then(|s| s.get("bits_per_second"))
        .and_then(Value::as_f64)
        .is_some_and(|b| b < 0.0)
}

/// The row name, `iperf3 TCP|UDP to|from|with PEER`, as seen from the side whose output it is.
fn row_name(start: &Value, udp: bool, bidir: bool, reverse: bool) -> String {
    // A client's output names the server it connected to; a server's (iperf3 -s -J) the
    // client it accepted.
    let peer = start
        .pointer("/connecting_to/host")
        .or_else(|| start.pointer("/accepted_connection/host"))
        .and_then(Value::as_str)
        .unwrap_or("peer");
    // The server's own output sees the data come from its peer (going to it with -R).
    let server = start.get("accepted_connection").is_some();
    let way = match (bidir, reverse != server) {
        (true, _) => "with",
        (false, true) => "from",
        (false, false) => "to",
    };
    format!("iperf3 {} {way} {peer}", if udp { "UDP" } else { "TCP" })
}

/// begin's info: the test's parameters and what iperf3 says of the machine and the peer.
fn begin_info(start: &Value, test: Option<&Value>, bidir: bool) -> Map<String, Value> {
    let mut begin = Map::new();
    scalars(&mut begin, test, "");
    begin.insert("bidir".into(), json!(bidir));
    for key in [
        "system_info",
        "tcp_mss_default",
        "sock_bufsize",
        "sndbuf_actual",
        "rcvbuf_actual",
        "target_bitrate",
    ] {
        if let Some(x) = start.get(key) {
            begin.insert(key.into(), x.clone());
        }
    }
    if let Some(c) = start.get("connecting_to") {
        let peer = format!("{}:{}", c["host"].as_str().unwrap_or(""), c["port"]);
        begin.insert("peer".into(), json!(peer));
    }
    if let Some(t) = start.pointer("/timestamp/time") {
        begin.insert("source_time".into(), t.clone());
    }
    begin
}

/// An interval record per reported interval and direction.
fn intervals(ivs: &[Value], bidir: bool, at: &dyn Fn(Option<f64>) -> Option<String>) -> Vec<Out> {
    let mut records = Vec::new();
    for iv in ivs {
        for (dir, key) in [("forward", "sum"), ("reverse", "sum_bidir_reverse")] {
            let Some(sum) = iv.get(key).filter(|s| s.is_object()) else {
                continue;
            };
            let mut info = Map::new();
            scalars(&mut info, Some(sum), "");
            for k in [
                "bits_per_second",
                "bytes",
                "seconds",
                "retransmits",
                "packets",
                "lost_packets",
                "jitter_ms",
            ] {
                info.remove(k);
            }
            if bidir {
                info.insert("direction".into(), json!(dir));
            }
            let streams = iv
                .get("streams")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            info.insert("streams".into(), json!(streams));
            let mut values = Values::new();
            copy(
                &mut values,
                "throughput_bits_per_s",
                sum.get("bits_per_second"),
            );
            copy(&mut values, "transferred_bytes", sum.get("bytes"));
            copy(&mut values, "interval_s", sum.get("seconds"));
            copy(&mut values, "retransmits_count", sum.get("retransmits"));
            copy(&mut values, "packets_count", sum.get("packets"));
            copy(&mut values, "lost_count", sum.get("lost_packets"));
            copy_scaled(&mut values, "jitter_s", sum.get("jitter_ms"), -3);
            let t = at(sum.get("end").and_then(Value::as_f64));
            records.push(Out::new(Kind::Interval, values, info).at(t));
        }
    }
    records
}

/// The run's figures from `end`: the receiver's bits/s (the headline), the sender's, bytes,
/// retransmits, UDP jitter and loss, CPU; with `--bidir` the reverse direction's as well.
/// Also the info and the offset (s) of the end of the run.
fn run_values(
    end: &Value,
    udp: bool,
    bidir: bool,
) -> Option<(Values, Map<String, Value>, Option<f64>)> {
    // Older iperf3 UDP output has only "sum", the receiver's figures.
    let recv = end.get("sum_received").or_else(|| end.get("sum"))?;
    let sent = end.get("sum_sent");
    let mut values = Values::new();
    let mut info = Map::new();
    direction(&mut values, "", recv, sent, udp);
    if bidir && let Some(r) = end.get("sum_received_bidir_reverse") {
        direction(
            &mut values,
            "reverse_",
            r,
            end.get("sum_sent_bidir_reverse"),
            udp,
        );
    }
    if !values.0.contains_key("throughput_bits_per_s") {
        return None;
    }
    if let Some(cpu) = end.get("cpu_utilization_percent") {
        copy_scaled(
            &mut values,
            "host_cpu_seconds_per_s",
            cpu.get("host_total"),
            -2,
        );
        copy_scaled(
            &mut values,
            "remote_cpu_seconds_per_s",
            cpu.get("remote_total"),
            -2,
        );
    }
    for key in ["sender_tcp_congestion", "receiver_tcp_congestion"] {
        if let Some(x) = end.get(key) {
            info.insert(key.into(), x.clone());
        }
    }
    let streams = end
        .get("streams")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    info.insert("streams".into(), json!(streams));
    info.insert(
        "figure".into(),
        json!(if end.get("sum_received").is_some() {
            "end.sum_received"
        } else {
            "end.sum"
        }),
    );
    Some((values, info, recv.get("end").and_then(Value::as_f64)))
}

/// One direction's figures, keys prefixed with `p`.
fn direction(values: &mut Values, p: &str, recv: &Value, sent: Option<&Value>, udp: bool) {
    copy(
        values,
        &format!("{p}throughput_bits_per_s"),
        recv.get("bits_per_second"),
    );
    copy(values, &format!("{p}received_bytes"), recv.get("bytes"));
    copy(values, &format!("{p}duration_s"), recv.get("seconds"));
    if let Some(s) = sent {
        copy(
            values,
            &format!("{p}sender_throughput_bits_per_s"),
            s.get("bits_per_second"),
        );
        copy(values, &format!("{p}sent_bytes"), s.get("bytes"));
        copy(
            values,
            &format!("{p}retransmits_count"),
            s.get("retransmits"),
        );
    }
    if udp {
        copy_scaled(values, &format!("{p}jitter_s"), recv.get("jitter_ms"), -3);
        copy(values, &format!("{p}lost_count"), recv.get("lost_packets"));
        copy(values, &format!("{p}packets_count"), recv.get("packets"));
        let lost = number(recv.get("lost_packets")).and_then(|n| n.as_f64());
        let packets = number(recv.get("packets")).and_then(|n| n.as_f64());
        if let (Some(l), Some(n)) = (lost, packets)
            && n > 0.0
        {
            values.set(&format!("{p}loss_ratio"), (l / n).clamp(0.0, 1.0));
        }
    }
}

/// What the intervals that were read add up to, for a partial summary.
fn partial_values(ivs: &[Value]) -> Values {
    let (mut bytes, mut secs) = (0.0, 0.0);
    let mut n = 0u64;
    for iv in ivs {
        if let Some(sum) = iv.get("sum") {
            bytes += sum.get("bytes").and_then(Value::as_f64).unwrap_or(0.0);
            secs += sum.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
            n += 1;
        }
    }
    let mut values = Values::new().with_count("intervals_count", n);
    if n > 0 {
        values.set("transferred_bytes", bytes);
        values.set("duration_s", secs);
        if secs > 0.0 {
            values.set("throughput_bits_per_s", bytes * 8.0 / secs);
        }
    }
    values
}
