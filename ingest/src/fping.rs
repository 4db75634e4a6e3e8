//! `fping` text: per-reply lines of `-c`/`-C` (`HOST : [N], 64 bytes, 0.047 ms (...)`), the
//! `-C` summary (`HOST : 0.047 0.043 -`, on fping's stderr), the `-c` summary
//! (`xmt/rcv/%loss`), and `-e`'s `HOST is alive (0.031 ms)`; an `rtt_s` sample per reply, a
//! failed one per lost probe, each host a series of its own.

use crate::input::Input;
use crate::model::{Converted, End, Kind, Out, bad};
use crate::ping::{ms, stamp};
use measure::writer::Values;
use measure::{Failure, Status};
use serde_json::{Map, json};
use std::collections::BTreeMap;

const WHAT: &str = "fping output: HOST : [N], B bytes, T ms (...), HOST : T T - (-C), HOST : xmt/rcv/%loss = ... (-c), or HOST is alive (T ms) (-e)";

/// What was read of one host.
#[derive(Debug, Default)]
struct Host {
    replies: Vec<Out>,
    /// The `-C` summary's figures, `None` for `-`.
    counted: Option<Vec<Option<f64>>>,
    /// The `-c` summary's sent and received.
    xmt_rcv: Option<(u64, u64)>,
}

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let mut hosts: BTreeMap<String, Host> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for (i, raw) in input.text.lines().enumerate() {
        let (at, line) = stamp(raw.trim_end());
        if line.trim().is_empty() {
            continue;
        }
        let wrong = || {
            bad(
                &input.place(i + 1),
                format!("expected {WHAT}; got {:?}", crate::model::clip(line)),
            )
        };
        if line.starts_with("ICMP ") || line.starts_with("fping: ") || line.starts_with(' ') {
            warnings.push(line.trim().to_string());
            continue;
        }
        let (host, rest) = match line.split_once(" : ") {
            Some((h, r)) => (h.trim().to_string(), r.trim()),
            None => alive(line).ok_or_else(wrong)?,
        };
        if !hosts.contains_key(&host) {
            order.push(host.clone());
        }
        let h = hosts.entry(host).or_default();
        h.line(rest, at).ok_or_else(wrong)?;
    }
    if hosts.is_empty() {
        return Err(bad(
            &input.place(1),
            format!("no host line: expected {WHAT}"),
        ));
    }
    let mut records = Vec::new();
    let (mut sent, mut received) = (0u64, 0u64);
    for name in &order {
        let (s, r) = hosts
            .remove(name)
            .unwrap_or_default()
            .records(name, &mut records);
        sent += s;
        received += r;
    }
    let mut info = fields(&[("hosts", json!(order))]);
    if !warnings.is_empty() {
        info.insert("warnings".into(), json!(warnings));
    }
    let name = match order.as_slice() {
        [one] => format!("ping {one}"),
        _ => "ping".to_string(),
    };
    let end = summary(&records, sent, received, info);
    Ok(Converted {
        tool: "fping",
        version: "unknown".into(),
        name,
        prefix: "ping".into(),
        begin: Map::new(),
        begin_at: None,
        records,
        end,
    })
}

impl Host {
    /// One line about this host (after `HOST : ` or `HOST is `); `None` if it is none of
    /// fping's.
    fn line(&mut self, rest: &str, at: Option<String>) -> Option<()> {
        if let Some(r) = rest.strip_prefix("alive ") {
            let t = r.trim_start_matches('(').trim_end_matches(" ms)");
            let values = Values::new().with("rtt_s", ms(t)?);
            self.replies
                .push(Out::new(Kind::Sample, values, Map::new()).at(at));
        } else if rest == "alive" {
            // Reachable, without a time (fping without -e): counted, no figure.
            let (s, r) = self.xmt_rcv.unwrap_or((0, 0));
            self.xmt_rcv = Some((s + 1, r + 1));
        } else if rest == "unreachable" {
            let failed = Kind::Failed("unreachable".into());
            self.replies
                .push(Out::new(failed, Values::new(), Map::new()).at(at));
        } else if rest.starts_with('[') {
            self.replies.push(reply(rest, at)?);
        } else if let Some(r) = rest.strip_prefix("xmt/rcv/%loss = ") {
            let mut n = r.split(['/', ',']);
            let sent = n.next()?.trim().parse().ok()?;
            let rcv = n.next()?.trim().parse().ok()?;
            self.xmt_rcv = Some((sent, rcv));
        } else {
            let figures: Option<Vec<Option<f64>>> = rest
                .split_whitespace()
                .map(|t| {
                    if t == "-" {
                        Some(None)
                    } else {
                        ms(t).map(Some)
                    }
                })
                .collect();
            self.counted = Some(figures?);
        }
        Some(())
    }

    /// This host's records (from its reply lines, else from the -C summary) appended to
    /// `records`; returns how many probes were sent and answered.
    fn records(self, name: &str, records: &mut Vec<Out>) -> (u64, u64) {
        let mut rs = self.replies;
        if rs.is_empty()
            && let Some(c) = &self.counted
        {
            for (k, f) in c.iter().enumerate() {
                let info = fields(&[("icmp_seq", json!(k))]);
                rs.push(match f {
                    Some(s) => Out::new(Kind::Sample, Values::new().with("rtt_s", *s), info),
                    None => Out::new(Kind::Failed("timeout".into()), Values::new(), info),
                });
            }
        }
        let ok = rs.iter().filter(|r| r.kind == Kind::Sample).count() as u64;
        let counts = match (self.xmt_rcv, &self.counted) {
            (Some(x), _) => x,
            (None, Some(c)) => (c.len() as u64, c.iter().flatten().count() as u64),
            (None, None) => (rs.len() as u64, ok),
        };
        for mut o in rs {
            o.info.insert("host".into(), json!(name));
            records.push(o.series(name));
        }
        counts
    }
}

/// The summary: probes sent and answered, loss, and the mean, min and max of the replies.
fn summary(records: &[Out], sent: u64, received: u64, info: Map<String, serde_json::Value>) -> End {
    let rtts: Vec<f64> = records
        .iter()
        .filter_map(|r| r.values.0.get("rtt_s").and_then(|v| v.as_f64()))
        .collect();
    let mut values = Values::new()
        .with_count("sent_count", sent)
        .with_count("received_count", received);
    if sent > 0 {
        let lost = sent.saturating_sub(received) as f64;
        values.set("loss_ratio", lost / sent as f64);
    }
    if rtts.is_empty() {
        return End::not_ok(Status::Failed, "no reply".into(), values, info);
    }
    values.set("rtt_mean_s", rtts.iter().sum::<f64>() / rtts.len() as f64);
    values.set(
        "rtt_min_s",
        rtts.iter().copied().fold(f64::INFINITY, f64::min),
    );
    values.set("rtt_max_s", rtts.iter().copied().fold(0.0, f64::max));
    End::ok("rtt_mean_s", values, info)
}

fn fields(kv: &[(&str, serde_json::Value)]) -> Map<String, serde_json::Value> {
    kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// `HOST is alive`, `HOST is alive (0.031 ms)`, `HOST is unreachable`: the host and
/// `alive (...)` / `unreachable`.
fn alive(line: &str) -> Option<(String, &str)> {
    let (host, rest) = line.split_once(" is ")?;
    (rest.starts_with("alive") || rest == "unreachable").then(|| (host.trim().to_string(), rest))
}

/// `[3], 64 bytes, 0.047 ms (0.047 avg, 0% loss)` or `[3], timed out (NaN avg, 100% loss)`.
fn reply(rest: &str, at: Option<String>) -> Option<Out> {
    let (seq, rest) = rest.strip_prefix('[')?.split_once("], ")?;
    let seq: u64 = seq.parse().ok()?;
    let mut info = fields(&[("icmp_seq", json!(seq))]);
    if rest.starts_with("timed out") {
        return Some(Out::new(Kind::Failed("timeout".into()), Values::new(), info).at(at));
    }
    let mut parts = rest.split(", ");
    let bytes: u64 = parts.next()?.strip_suffix(" bytes")?.parse().ok()?;
    let t = parts.next()?.split(' ').next()?;
    info.insert("bytes".into(), json!(bytes));
    Some(Out::new(Kind::Sample, Values::new().with("rtt_s", ms(t)?), info).at(at))
}
