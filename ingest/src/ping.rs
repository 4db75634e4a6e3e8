//! `ping` text (iputils, with or without `-D` time stamps; BSD's and busybox's as well): an
//! `rtt_s` sample per reply, a failed sample per error or unanswered probe, and ping's own
//! statistics (loss, min/avg/max/mdev) in the summary.

use crate::input::Input;
use crate::model::{Converted, End, Kind, Out, at_unix_text, bad, scale_text};
use measure::writer::Values;
use measure::{Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "ping output: a reply (64 bytes from ADDR: icmp_seq=N ttl=N time=X ms), an error (From ADDR icmp_seq=N ...), or ping's statistics";

/// What a `[1796173612.134843] ` prefix (`-D`) says, and the rest of the line.
pub fn stamp(line: &str) -> (Option<String>, &str) {
    if let Some(rest) = line.strip_prefix('[')
        && let Some((ts, rest)) = rest.split_once("] ")
        && let Some(at) = at_unix_text(ts)
    {
        return (Some(at), rest);
    }
    (None, line)
}

/// The value after `key` up to the next space (`icmp_seq=` in `icmp_seq=3 ttl=64`).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let i = line.find(key)?;
    let rest = &line[i + key.len()..];
    Some(rest.split([' ', ',']).next().unwrap_or(rest))
}

/// Milliseconds as text to seconds, rounded once.
pub fn ms(text: &str) -> Option<f64> {
    scale_text(text, -3).filter(|s| *s >= 0.0)
}

/// ping's statistics lines, as they were read.
#[derive(Debug, Default)]
struct Stats {
    sent: Option<u64>,
    received: Option<u64>,
    duplicates: u64,
    errors: u64,
    rtt: Vec<(String, f64)>,
}

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let mut begin = Map::new();
    let mut target = String::from("host");
    let mut records = Vec::new();
    let mut stats: Option<Stats> = None;
    let mut warnings = Vec::new();
    let mut dups = 0u64;
    let mut begin_at = None;
    for (i, raw) in input.text.lines().enumerate() {
        let place = || input.place(i + 1);
        let (at, line) = stamp(raw.trim_end());
        if line.trim().is_empty() {
            continue;
        }
        if let Some(h) = line.strip_prefix("PING ") {
            if !begin.is_empty() {
                return Err(bad(
                    &place(),
                    "a second ping run: give each run an ingest of its own",
                ));
            }
            header(h, &mut begin, &mut target);
            begin_at = at;
            continue;
        }
        if let Some(st) = stats.as_mut() {
            statistics(line, st).ok_or_else(|| bad(&place(), "expected ping's statistics (N packets transmitted, M received ... / rtt min/avg/max/mdev = ...)"))?;
            continue;
        }
        if line.starts_with("--- ") && line.ends_with(" ping statistics ---") {
            stats = Some(Stats::default());
        } else if line.contains(" bytes from ")
            && (line.contains("time=") || line.contains("time<"))
        {
            if line.contains("DUP!") {
                dups += 1;
                continue;
            }
            records.push(reply(line, at).ok_or_else(|| {
                bad(
                    &place(),
                    format!("expected {WHAT}; got {:?}", crate::model::clip(line)),
                )
            })?);
        } else if let Some(out) = failure(line, at) {
            records.push(out);
        } else if line.starts_with("ping: ")
            || line.starts_with("WARNING: ")
            || line.starts_with("Warning: ")
        {
            warnings.push(line.to_string());
        } else {
            return Err(bad(
                &place(),
                format!("expected {WHAT}; got {:?}", crate::model::clip(line)),
            ));
        }
    }
    if begin.is_empty() && records.is_empty() {
        return Err(bad(
            &input.place(1),
            format!("no PING line and no reply: expected {WHAT}"),
        ));
    }
    for r in &mut records {
        r.series = Some(target.clone());
    }
    let end = summary(input, &records, stats, dups, &warnings);
    Ok(Converted {
        tool: "ping",
        version: "unknown".into(),
        name: format!("ping {target}"),
        prefix: "ping".into(),
        begin,
        begin_at,
        records,
        end,
    })
}

/// `host (addr) 56(84) bytes of data.` (iputils), `host (addr): 56 data bytes` (BSD, busybox).
fn header(h: &str, begin: &mut Map<String, Value>, target: &mut String) {
    let host = h.split([' ', '(']).next().unwrap_or(h);
    *target = host.to_string();
    begin.insert("target".into(), json!(host));
    if let Some(a) = h
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(a, _)| a)
    {
        begin.insert("address".into(), json!(a));
    }
    let size = h
        .rsplit_once(')')
        .map_or(h, |(_, r)| r)
        .trim_start_matches(':')
        .trim();
    if let Some(n) = size
        .split([' ', '('])
        .next()
        .and_then(|n| n.parse::<u64>().ok())
    {
        begin.insert("payload_bytes".into(), json!(n));
    }
}

/// `64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.137 ms` (busybox: `seq=`).
fn reply(line: &str, at: Option<String>) -> Option<Out> {
    let bytes: u64 = line.split(' ').next()?.parse().ok()?;
    let from = line.split_once(" bytes from ")?.1;
    let from = from.split_once(": ").map_or(from, |(f, _)| f);
    let seq = field(line, "icmp_seq=").or_else(|| field(line, "seq="))?;
    let (time, below) = match field(line, "time=") {
        Some(t) => (t, false),
        None => (field(line, "time<")?, true),
    };
    let mut info = Map::new();
    info.insert("icmp_seq".into(), json!(seq.parse::<u64>().ok()?));
    if let Some(ttl) = field(line, "ttl=")
        .or_else(|| field(line, "hlim="))
        .and_then(|t| t.parse::<u64>().ok())
    {
        info.insert("ttl".into(), json!(ttl));
    }
    info.insert("bytes".into(), json!(bytes));
    info.insert("from".into(), json!(from));
    if below {
        info.insert("below".into(), json!(true));
    }
    let values = Values::new().with("rtt_s", ms(time)?);
    Some(Out::new(Kind::Sample, values, info).at(at))
}

/// A probe that failed: `From ADDR icmp_seq=N Destination Host Unreachable`, BSD's
/// `Request timeout for icmp_seq N`, iputils' `-O` `no answer yet for icmp_seq=N`.
fn failure(line: &str, at: Option<String>) -> Option<Out> {
    let (seq, why) = if let Some(rest) = line.strip_prefix("From ") {
        let seq = field(rest, "icmp_seq=").or_else(|| field(rest, "seq="))?;
        let why = rest
            .split_once(&format!("={seq} "))
            .map_or(rest, |(_, w)| w);
        (seq, why.trim().to_string())
    } else if let Some(seq) = line.strip_prefix("Request timeout for icmp_seq ") {
        (seq.trim(), "timeout".to_string())
    } else if let Some(seq) = line.strip_prefix("no answer yet for icmp_seq=") {
        (seq.trim(), "timeout".to_string())
    } else {
        return None;
    };
    let mut info = Map::new();
    info.insert("icmp_seq".into(), json!(seq.parse::<u64>().ok()?));
    Some(Out::new(Kind::Failed(why), Values::new(), info).at(at))
}

/// One statistics line into `st`; `None` when it is none of them.
fn statistics(line: &str, st: &mut Stats) -> Option<()> {
    if line.contains("packets transmitted") {
        for part in line.split(", ") {
            let part = part.trim();
            let n = part.split([' ', '%']).next()?.trim_start_matches('+');
            if part.ends_with("packets transmitted") {
                st.sent = n.parse().ok();
            } else if part.ends_with("received") || part.ends_with("packets received") {
                st.received = n.parse().ok();
            } else if part.ends_with("duplicates") {
                st.duplicates = n.parse().ok()?;
            } else if part.ends_with("errors") {
                st.errors = n.parse().ok()?;
            }
        }
        return st.sent.and(st.received).map(|_| ());
    }
    let (names, nums) = line.split_once(" = ")?;
    let names = names.rsplit(' ').next()?;
    let nums = nums.split([' ', ',']).next()?;
    for (name, n) in names.split('/').zip(nums.split('/')) {
        st.rtt.push((name.to_string(), ms(n)?));
    }
    (!st.rtt.is_empty()).then_some(())
}

/// The summary from ping's statistics; without them (output cut short) a partial one from
/// the samples read.
fn summary(
    input: &Input,
    records: &[Out],
    stats: Option<Stats>,
    dups: u64,
    warnings: &[String],
) -> End {
    let replies: Vec<f64> = records
        .iter()
        .filter_map(|r| r.values.0.get("rtt_s").and_then(Value::as_f64))
        .collect();
    let mut info = Map::new();
    if !warnings.is_empty() {
        info.insert("warnings".into(), json!(warnings));
    }
    let mut values = Values::new();
    let Some(st) = stats.filter(|s| s.sent.is_some()) else {
        values.set_count("received_count", replies.len() as u64);
        if !replies.is_empty() {
            values.set(
                "rtt_mean_s",
                replies.iter().sum::<f64>() / replies.len() as f64,
            );
        }
        let why = format!(
            "{}: no statistics line: the output ends early (an interrupted ping, or ping's stdout cut?)",
            input.place(input.lines())
        );
        return End::not_ok(Status::Partial, why, values, info);
    };
    let (sent, received) = (st.sent.unwrap_or(0), st.received.unwrap_or(0));
    values.set_count("sent_count", sent);
    values.set_count("received_count", received);
    values.set_count("duplicates_count", st.duplicates.max(dups));
    values.set_count("errors_count", st.errors);
    if sent > 0 {
        values.set(
            "loss_ratio",
            (sent.saturating_sub(received)) as f64 / sent as f64,
        );
    }
    for (name, v) in &st.rtt {
        let key = match name.as_str() {
            "avg" => "rtt_mean_s".to_string(),
            other => format!("rtt_{other}_s"),
        };
        values.set(&key, *v);
    }
    if received == 0 || !values.0.contains_key("rtt_mean_s") {
        return End::not_ok(Status::Failed, "no reply".into(), values, info);
    }
    End::ok("rtt_mean_s", values, info)
}
