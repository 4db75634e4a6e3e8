//! `ping` text (iputils, with or without `-D` time stamps, `-O`, `-p`; BSD's and macOS's ping
//! and ping6; busybox's): an `rtt_s` sample per probe answered, a failed sample per error or
//! unanswered probe, and ping's own statistics (loss, min/avg/max/mdev) in the summary.
//!
//! A probe's first reply is its sample; a further reply for the same `icmp_seq`, marked
//! `(DUP!)` or not (ping marks no duplicate of a broadcast), is counted as a duplicate. A
//! reply printed `time<1 ms` has no `rtt_s` (only its bound is known: `info.rtt_below_s`).

mod lines;
mod summary;

use crate::input::Input;
use crate::model::{Converted, Kind, Out, at_unix_text, bad, clip};
use lines::{Failure as Fail, Rtt, WHAT};
use measure::Failure;
use measure::parts::Values;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use summary::Stats;

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

/// Milliseconds as text to seconds, rounded once.
pub fn ms(text: &str) -> Option<f64> {
    lines::seconds(text, -3)
}

/// What has been read so far.
#[derive(Default)]
struct Reader {
    begin: Map<String, Value>,
    target: Option<String>,
    begin_at: Option<String>,
    /// The records, `None` where a timeout was replaced by its late reply.
    records: Vec<Option<Out>>,
    stats: Option<Stats>,
    warnings: Vec<String>,
    /// Replies past a probe's first.
    dups: u64,
    errors: u64,
    /// The sequence numbers answered, failed with an error, or waiting (timeout record).
    replied: HashSet<u64>,
    failed: HashSet<u64>,
    waiting: HashMap<u64, usize>,
    highest: u64,
    /// Inside the dump after a BSD error line.
    dump: bool,
    /// Each reply's line, seconds and printed precision, to check against min/max.
    checks: Vec<(usize, f64, f64)>,
    /// The lines skipped before the PING line, as warnings say them.
    skipped: Vec<String>,
}

impl Reader {
    /// A sequence number that wrapped (16 bits) starts a new round of them.
    fn wrap(&mut self, seq: u64) {
        if seq + 32768 < self.highest {
            self.replied.clear();
            self.failed.clear();
            self.waiting.clear();
            self.highest = seq;
        }
        self.highest = self.highest.max(seq);
    }

    fn push(&mut self, out: Out) -> usize {
        self.records.push(Some(out));
        self.records.len() - 1
    }

    fn reply(&mut self, n: usize, line: &str, at: Option<String>) -> Result<(), String> {
        let r = lines::reply(line).map_err(|e| format!("{e}; got {:?}", clip(line)))?;
        self.wrap(r.seq);
        if let Rtt::Exact { secs, half } = r.rtt {
            self.checks.push((n, secs, half));
        }
        if r.dup || !self.replied.insert(r.seq) {
            self.dups += 1;
            return Ok(());
        }
        if let Some(i) = self.waiting.remove(&r.seq) {
            self.records[i] = None;
        }
        let mut info = r.info;
        let values = match r.rtt {
            Rtt::Exact { secs, .. } => Values::new().with("rtt_s", secs),
            Rtt::Below(bound) => {
                info.insert("rtt_below_s".into(), json!(bound));
                Values::new()
            }
        };
        self.push(Out::new(Kind::Sample, values, info).at(at));
        Ok(())
    }

    fn failure(&mut self, f: Fail, at: Option<String>) {
        let (seq, why) = match f {
            Fail::Error { seq, why } => {
                self.errors += 1;
                if let Some(s) = seq {
                    self.wrap(s);
                    self.failed.insert(s);
                }
                (seq, why)
            }
            Fail::Timeout(s) => {
                self.wrap(s);
                if self.replied.contains(&s)
                    || self.failed.contains(&s)
                    || self.waiting.contains_key(&s)
                {
                    return;
                }
                (Some(s), "timeout".to_string())
            }
        };
        let mut info = Map::new();
        if let Some(s) = seq {
            info.insert("icmp_seq".into(), json!(s));
        }
        let timeout = why == "timeout";
        let i = self.push(Out::new(Kind::Failed(why), Values::new(), info).at(at));
        if let (true, Some(s)) = (timeout, seq) {
            self.waiting.insert(s, i);
        }
    }

    /// A dump line after a BSD error: its `ICMP: ... seq 0x...` names the failed probe.
    fn dump_line(&mut self, line: &str) {
        let Some(seq) = lines::dump_seq(line) else {
            return;
        };
        if let Some(Some(last)) = self.records.last_mut()
            && !last.info.contains_key("icmp_seq")
        {
            last.info.insert("icmp_seq".into(), json!(seq));
            self.failed.insert(seq);
        }
    }

    /// One line outside the statistics.
    fn line(&mut self, n: usize, line: &str, at: Option<String>) -> Result<(), String> {
        if self.dump && lines::is_dump(line) {
            self.dump_line(line);
            return Ok(());
        }
        self.dump = false;
        if lines::is_reply(line) {
            return self.reply(n, line, at);
        }
        if let Some(f) = lines::failure(line) {
            self.dump = matches!(&f, Fail::Error { .. });
            self.failure(f, at);
        } else if line.starts_with("PATTERN: 0x") {
            self.begin.insert("pattern".into(), json!(&line[9..]));
        } else if line.starts_with("--- ")
            && (line.ends_with(" ping statistics ---") || line.ends_with(" ping6 statistics ---"))
        {
            self.stats = Some(Stats::default());
        } else {
            return Err(format!("expected {WHAT}; got {:?}", clip(line)));
        }
        Ok(())
    }
}

/// Whether `line` is a message ping writes to stderr, often read with its stdout.
fn warning(line: &str) -> bool {
    line.starts_with("ping: ") || line.starts_with("WARNING: ") || line.starts_with("Warning: ")
}

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let mut rd = Reader::default();
    // What a captured terminal holds before ping's header (a prompt, the command line) is no
    // output of ping's: skipped, each line with a warning.
    let header_at = input
        .text
        .lines()
        .position(|l| header(stamp(l.trim_end()).1).is_some());
    for (i, raw) in input.text.lines().enumerate() {
        let place = || input.place(i + 1);
        let (at, line) = stamp(raw.trim_end());
        // A blank line, or the ^C a terminal echoes when ping is interrupted.
        if line.trim().is_empty() || line.trim() == "^C" {
            rd.dump = false;
            continue;
        }
        if let Some(h) = header(line) {
            if rd.target.is_some() {
                return Err(bad(
                    &place(),
                    "a second ping run: give each run an ingest of its own",
                ));
            }
            let (target, begin) = h;
            rd.target = Some(target);
            rd.begin.extend(begin);
            rd.begin_at = at;
        } else if warning(line) {
            rd.warnings.push(line.to_string());
        } else if let Some(st) = rd.stats.as_mut() {
            summary::statistics(line, st).map_err(|e| {
                bad(
                    &place(),
                    format!("expected ping's statistics (N packets transmitted, M received ... / rtt min/avg/max/mdev = ... ms); got {e}"),
                )
            })?;
        } else if let Err(e) = rd.line(i + 1, line, at) {
            if header_at.is_none_or(|h| i > h) {
                return Err(bad(&place(), e));
            }
            rd.skipped.push(format!(
                "line {}: skipped, before ping's PING line: {:?}",
                i + 1,
                clip(line)
            ));
        }
    }
    finish(input, rd)
}

/// The conversion of what was read: refused when it holds no ping output, or when a reply
/// lies outside ping's own min/max.
fn finish(input: &Input, rd: Reader) -> Result<Converted, Failure> {
    let mut records: Vec<Out> = rd.records.into_iter().flatten().collect();
    if rd.target.is_none() && records.is_empty() {
        return Err(bad(
            &input.place(1),
            format!("no PING line and no reply: expected {WHAT}"),
        ));
    }
    if let Some(st) = &rd.stats {
        for (n, secs, half) in &rd.checks {
            st.fits(*secs, *half)
                .map_err(|e| bad(&input.place(*n), e))?;
        }
    }
    let target = rd.target.unwrap_or_else(|| "host".into());
    for r in &mut records {
        r.series = Some(target.clone());
    }
    let mut info = Map::new();
    if !rd.warnings.is_empty() {
        info.insert("warnings".into(), json!(rd.warnings));
    }
    let mut end = summary::summary(input, &records, rd.stats, (rd.dups, rd.errors), info);
    end.warnings.extend(rd.skipped);
    Ok(Converted {
        tool: "ping".into(),
        version: "unknown".into(),
        name: format!("ping {target}"),
        prefix: "ping".into(),
        begin: rd.begin,
        begin_at: rd.begin_at,
        records,
        end,
    })
}

/// The target and begin's info of a header line: `PING host (addr) 56(84) bytes of data.`
/// (iputils), `PING host (addr): 56 data bytes` (BSD, busybox), `PING6(56=40+8+8 bytes) ::1
/// --> ::1` (BSD's ping6: 40 bytes of IPv6 header, 8 of ICMPv6, 8 of data).
fn header(line: &str) -> Option<(String, Map<String, Value>)> {
    let mut begin = Map::new();
    if let Some(rest) = line
        .strip_prefix("PING6(")
        .or_else(|| line.strip_prefix("PING("))
    {
        let (sizes, route) = rest.split_once(" bytes) ")?;
        let (source, dest) = route.split_once(" --> ")?;
        let dest = dest.trim();
        begin.insert("target".into(), json!(dest));
        begin.insert("address".into(), json!(dest));
        begin.insert("source_address".into(), json!(source.trim()));
        if let Some(n) = sizes.rsplit('+').next().and_then(|n| n.parse::<u64>().ok()) {
            begin.insert("payload_bytes".into(), json!(n));
        }
        return Some((dest.to_string(), begin));
    }
    let h = line.strip_prefix("PING ")?;
    let host = h
        .split([' ', '('])
        .next()
        .unwrap_or(h)
        .trim_end_matches(':');
    begin.insert("target".into(), json!(host));
    if let Some(a) = h
        .split_once(" (")
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(a, _)| a)
    {
        begin.insert("address".into(), json!(a));
    }
    let size = [" bytes of data", " data bytes"]
        .iter()
        .find_map(|s| h.split_once(s))
        .and_then(|(before, _)| before.rsplit([' ', ':']).next())
        .and_then(|w| w.split('(').next())
        .and_then(|n| n.parse::<u64>().ok());
    if let Some(n) = size {
        begin.insert("payload_bytes".into(), json!(n));
    }
    Some((host.to_string(), begin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_each_ping() {
        let size = |l: &str| header(l).and_then(|(_, b)| b.get("payload_bytes").cloned());
        for (line, target, bytes) in [
            ("PING h (10.0.0.2) 56(84) bytes of data.", "h", 56),
            (
                "PING h (10.0.0.2) from 10.0.0.1 eth0: 56(84) bytes of data.",
                "h",
                56,
            ),
            ("PING ::1 (::1) 56 data bytes", "::1", 56),
            ("PING 10.0.0.2 (10.0.0.2): 56 data bytes", "10.0.0.2", 56),
            ("PING localhost: 56 data bytes", "localhost", 56),
            (
                "PING6(104=40+8+56 bytes) ::1 --> 2001:db8::2",
                "2001:db8::2",
                56,
            ),
        ] {
            assert_eq!(header(line).map(|h| h.0).as_deref(), Some(target), "{line}");
            assert_eq!(size(line), Some(json!(bytes)), "{line}");
        }
        assert!(header("64 bytes from h").is_none());
    }
}
