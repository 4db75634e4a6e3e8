//! `fping` text: per-reply lines of `-c`/`-C` (`HOST : [N], 64 bytes, 0.047 ms (...)`), the
//! `-C` summary (`HOST : 0.047 0.043 -`, on fping's stderr), the `-c` summary
//! (`xmt/rcv/%loss = 4/3/25%, min/avg/max = ...`), and `-e`'s `HOST is alive (0.031 ms)`.
//! Each host of each fping run is a run of its own, named `ping HOST`: an `rtt_s` sample per
//! reply, a failed one per lost probe (from the summary's counts where fping printed no line
//! for it), and a summary with the host's figures as fping printed them. Outputs of several
//! fping runs one after the other are told apart where a host's lines start over.

use crate::input::Input;
use crate::model::{Converted, End, Kind, Out, bad, scale_text};
use crate::ping::{ms, stamp};
use measure::parts::Values;
use measure::{Exit, Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "fping output: HOST : [N], B bytes, T ms (...), HOST : T T - (-C), HOST : xmt/rcv/%loss = ... (-c), or HOST is alive (T ms) (-e)";

/// What was read of one host in one fping run.
#[derive(Debug, Default)]
struct Host {
    name: String,
    replies: Vec<Out>,
    /// The times of the replies as fping printed them (milliseconds), for an exact mean.
    texts: Vec<String>,
    /// The sequence numbers of its per-probe lines; a repeat starts another fping run.
    seqs: Vec<u64>,
    /// An `is alive` or `is unreachable` line was read (`-e` prints one per host).
    told: bool,
    /// `HOST is alive` lines without a time: answered probes without a figure.
    bare_alive: u64,
    /// The `-C` summary's figures as printed, `None` for `-`.
    counted: Option<Vec<Option<String>>>,
    /// The `-c` summary's sent and received.
    xmt_rcv: Option<(u64, u64)>,
    /// The `-c` summary's min/avg/max as printed.
    min_avg_max: Option<[String; 3]>,
}

/// One line about a host, as read.
enum Line {
    /// A reply or timeout line (`[N], ...`), its sequence number.
    Probe(Out, u64),
    /// `is alive (T ms)`, `is alive`, `is unreachable`.
    Told(Option<Out>),
    Counted(Vec<Option<String>>),
    Counts((u64, u64), Option<[String; 3]>),
}

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let mut parts: Vec<Vec<Host>> = vec![Vec::new()];
    let mut warnings = Vec::new();
    for (i, raw) in input.text.lines().enumerate() {
        let (at, line) = stamp(raw.trim_end());
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with("ICMP ") || line.starts_with("fping: ") || line.starts_with(' ') {
            warnings.push(line.trim().to_string());
            continue;
        }
        let wrong = || {
            bad(
                &input.place(i + 1),
                format!("expected {WHAT}; got {:?}", crate::model::clip(line)),
            )
        };
        let (host, rest) = match line.split_once(" : ") {
            Some((h, r)) => (h.trim().to_string(), r.trim()),
            None => alive(line).ok_or_else(wrong)?,
        };
        let read = parse(rest, at).ok_or_else(wrong)?;
        add(&mut parts, host, read);
    }
    if parts.iter().all(Vec::is_empty) {
        return Err(bad(
            &input.place(1),
            format!("no host line: expected {WHAT}"),
        ));
    }
    let several = parts.len() > 1;
    let mut records = Vec::new();
    let mut ends = Vec::new();
    for (k, part) in parts.into_iter().enumerate() {
        for h in part {
            let mut end = h.records(&mut records, several.then_some(k + 1));
            if ends.is_empty() && !warnings.is_empty() {
                end.info.insert("warnings".into(), json!(warnings));
            }
            ends.push(end.clone());
            records.push(
                Out::new(Kind::Ends(Box::new(end)), Values::new(), Map::new()).series(&h.name),
            );
        }
    }
    let hosts: Vec<&str> = records.iter().filter_map(|r| r.series.as_deref()).collect();
    let name = match hosts.iter().all(|h| *h == hosts[0]) {
        true => format!("ping {}", hosts[0]),
        false => "ping".to_string(),
    };
    Ok(Converted {
        tool: "fping".into(),
        version: "unknown".into(),
        name,
        prefix: "ping".into(),
        begin: Map::new(),
        begin_at: None,
        records,
        end: overall(&ends),
    })
}

/// Adds a line about `host` to the last fping run, or starts another one where the host's
/// lines start over: a per-probe line after any summary line or repeating a sequence number,
/// a second `is alive`, a second summary line of the same kind.
fn add(parts: &mut Vec<Vec<Host>>, host: String, read: Line) {
    let part = parts.last().map_or(&[][..], Vec::as_slice);
    let summed = part
        .iter()
        .any(|h| h.counted.is_some() || h.xmt_rcv.is_some());
    let h = part.iter().find(|h| h.name == host);
    let again = match (&read, h) {
        (_, None) => false,
        (Line::Probe(_, seq), Some(h)) => summed || h.seqs.contains(seq),
        (Line::Told(_), Some(h)) => summed || h.told,
        (Line::Counted(_), Some(h)) => h.counted.is_some(),
        (Line::Counts(..), Some(h)) => h.xmt_rcv.is_some(),
    };
    let probe = matches!(read, Line::Probe(..) | Line::Told(_));
    if again || (summed && probe) {
        parts.push(Vec::new());
    }
    let Some(part) = parts.last_mut() else {
        return;
    };
    let h = match part.iter().position(|h| h.name == host) {
        Some(i) => &mut part[i],
        None => {
            part.push(Host {
                name: host,
                ..Host::default()
            });
            let last = part.len() - 1;
            &mut part[last]
        }
    };
    match read {
        Line::Probe(out, seq) => {
            h.seqs.push(seq);
            h.reply(out);
        }
        Line::Told(Some(out)) => {
            h.told = true;
            h.reply(out);
        }
        Line::Told(None) => {
            h.told = true;
            h.bare_alive += 1;
        }
        Line::Counted(c) => h.counted = Some(c),
        Line::Counts(x, m) => {
            h.xmt_rcv = Some(x);
            h.min_avg_max = m;
        }
    }
}

/// One line about a host (after `HOST : ` or `HOST is `); `None` if it is none of fping's.
fn parse(rest: &str, at: Option<String>) -> Option<Line> {
    if let Some(r) = rest.strip_prefix("alive ") {
        let t = r.trim_start_matches('(').trim_end_matches(" ms)");
        let values = Values::new().with("rtt_s", ms(t)?);
        let info = fields(&[("rtt_ms_text", json!(t))]);
        Some(Line::Told(Some(
            Out::new(Kind::Sample, values, info).at(at),
        )))
    } else if rest == "alive" {
        Some(Line::Told(None))
    } else if rest == "unreachable" {
        let failed = Kind::Failed("unreachable".into());
        let out = Out::new(failed, Values::new(), Map::new()).at(at);
        Some(Line::Told(Some(out)))
    } else if rest.starts_with('[') {
        let (out, seq) = reply(rest, at)?;
        Some(Line::Probe(out, seq))
    } else if let Some(r) = rest
        .strip_prefix("xmt/rcv/%loss = ")
        .or_else(|| rest.strip_prefix("xmt/rcv/%return = "))
    {
        let mut n = r.split(['/', ',']);
        let sent = n.next()?.trim().parse().ok()?;
        let rcv = n.next()?.trim().parse().ok()?;
        let mam = match r.split_once("min/avg/max = ") {
            Some((_, m)) => {
                let v: Vec<&str> = m.trim().split('/').collect();
                let [a, b, c] = v.as_slice() else {
                    return None;
                };
                for t in [a, b, c] {
                    ms(t)?;
                }
                Some([a.to_string(), b.to_string(), c.to_string()])
            }
            None => None,
        };
        Some(Line::Counts((sent, rcv), mam))
    } else {
        let figures: Option<Vec<Option<String>>> = rest
            .split_whitespace()
            .map(|t| match t {
                "-" => Some(None),
                _ => ms(t).map(|_| Some(t.to_string())),
            })
            .collect();
        Some(Line::Counted(figures?))
    }
}

impl Host {
    /// A per-probe record, with its time's text kept.
    fn reply(&mut self, out: Out) {
        if let Some(t) = out.info.get("rtt_ms_text").and_then(Value::as_str) {
            self.texts.push(t.to_string());
        }
        self.replies.push(out);
    }

    /// This host's records (from its reply lines, else from the -C summary, and a failed
    /// one per lost probe no line shows) appended to `records`, and its summary.
    fn records(&self, records: &mut Vec<Out>, fping_run: Option<usize>) -> End {
        let mut rs = self.replies.clone();
        let mut texts = self.texts.clone();
        if rs.is_empty()
            && let Some(c) = &self.counted
        {
            for (k, f) in c.iter().enumerate() {
                let info = fields(&[("icmp_seq", json!(k))]);
                rs.push(match f.as_deref().and_then(ms) {
                    Some(s) => Out::new(Kind::Sample, Values::new().with("rtt_s", s), info),
                    None => Out::new(Kind::Failed("timeout".into()), Values::new(), info),
                });
            }
            texts = c.iter().flatten().cloned().collect();
        }
        let ok = rs.iter().filter(|r| r.kind == Kind::Sample).count() as u64;
        let (sent, received) = match (self.xmt_rcv, &self.counted) {
            (Some(x), _) => x,
            (None, Some(c)) => (c.len() as u64, c.iter().flatten().count() as u64),
            (None, None) => (rs.len() as u64 + self.bare_alive, ok + self.bare_alive),
        };
        // fping -q prints no line per probe: a lost probe is known from the counts alone.
        let shown = rs.len() as u64 - ok;
        let unshown = sent.saturating_sub(received).saturating_sub(shown);
        for _ in 0..unshown {
            let info = fields(&[("counted_by", json!("fping's summary"))]);
            rs.push(Out::new(
                Kind::Failed("timeout".into()),
                Values::new(),
                info,
            ));
        }
        let mut info = fields(&[("host", json!(self.name))]);
        if let Some(k) = fping_run {
            info.insert("fping_run".into(), json!(k));
        }
        for mut o in rs {
            o.info.remove("rtt_ms_text");
            o.info.extend(info.clone());
            records.push(o.series(&self.name));
        }
        self.summary(sent, received, &texts, info)
    }

    /// The summary: probes sent and answered, loss, and min, mean and max of the replies:
    /// fping's own where it printed them, else from the printed times, the mean exactly.
    fn summary(&self, sent: u64, received: u64, texts: &[String], info: Map<String, Value>) -> End {
        let mut values = Values::new()
            .with_count("sent_count", sent)
            .with_count("received_count", received);
        if sent > 0 {
            let lost = sent.saturating_sub(received) as f64;
            values.set("loss_ratio", lost / sent as f64);
        }
        let rtts: Vec<f64> = texts.iter().filter_map(|t| ms(t)).collect();
        let figures = match &self.min_avg_max {
            Some([min, avg, max]) => [ms(min), ms(avg), ms(max)],
            None if rtts.is_empty() => [None; 3],
            None => [
                rtts.iter().copied().reduce(f64::min),
                exact_mean(texts),
                rtts.iter().copied().reduce(f64::max),
            ],
        };
        for (key, v) in ["rtt_min_s", "rtt_mean_s", "rtt_max_s"].iter().zip(figures) {
            if let Some(v) = v {
                values.set(key, v);
            }
        }
        match values.0.contains_key("rtt_mean_s") {
            true => End::ok("rtt_mean_s", values, info),
            false => {
                let why = format!("no reply from {} ({sent} sent)", self.name);
                End::not_ok(Status::Failed, why, values, info)
            }
        }
    }
}

/// The mean of decimal texts in milliseconds, in seconds: summed exactly as integers,
/// divided to 24 digits by long division, then rounded once.
fn exact_mean(texts: &[String]) -> Option<f64> {
    let parsed: Vec<(u128, i32)> = texts.iter().map(|t| digits(t)).collect::<Option<_>>()?;
    let scale = parsed.iter().map(|p| p.1).max()?;
    let mut sum: u128 = 0;
    for (d, s) in &parsed {
        let k = 10u128.checked_pow(u32::try_from(scale - s).ok()?)?;
        sum = sum.checked_add(d.checked_mul(k)?)?;
    }
    let n = parsed.len() as u128;
    let mut text = format!("{}.", sum / n);
    let mut r = sum % n;
    for _ in 0..24 {
        r *= 10;
        text.push(char::from(b'0' + (r / n) as u8));
        r %= n;
    }
    scale_text(&text, -scale - 3)
}

/// A non-negative decimal text (`0.047`, `1.234e+03`) as digits and the power of ten they
/// are scaled down by: 0.047 is (47, 3).
fn digits(t: &str) -> Option<(u128, i32)> {
    let (m, e) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (whole, frac) = m.split_once('.').unwrap_or((m, ""));
    let all = format!("{whole}{frac}");
    if all.is_empty() || !all.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((all.parse().ok()?, i32::try_from(frac.len()).ok()? - e))
}

/// How ingest exits: 1 when a host had no reply (as fping exits), else 0.
fn overall(ends: &[End]) -> End {
    let errors: Vec<String> = ends.iter().filter_map(|e| e.error.clone()).collect();
    match ends.first() {
        Some(e) if errors.is_empty() => End {
            exit: Exit::Ok,
            ..e.clone()
        },
        _ => End::not_ok(Status::Failed, errors.join("; "), Values::new(), Map::new()),
    }
}

fn fields(kv: &[(&str, Value)]) -> Map<String, Value> {
    kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// `HOST is alive`, `HOST is alive (0.031 ms)`, `HOST is unreachable`: the host and
/// `alive (...)` / `unreachable`.
fn alive(line: &str) -> Option<(String, &str)> {
    let (host, rest) = line.split_once(" is ")?;
    (rest.starts_with("alive") || rest == "unreachable").then(|| (host.trim().to_string(), rest))
}

/// `[3], 64 bytes, 0.047 ms (0.047 avg, 0% loss)` or `[3], timed out (NaN avg, 100% loss)`,
/// and its sequence number.
fn reply(rest: &str, at: Option<String>) -> Option<(Out, u64)> {
    let (seq, rest) = rest.strip_prefix('[')?.split_once("], ")?;
    let seq: u64 = seq.parse().ok()?;
    let mut info = fields(&[("icmp_seq", json!(seq))]);
    if rest.starts_with("timed out") {
        let out = Out::new(Kind::Failed("timeout".into()), Values::new(), info).at(at);
        return Some((out, seq));
    }
    let mut parts = rest.split(", ");
    let bytes: u64 = parts.next()?.strip_suffix(" bytes")?.parse().ok()?;
    let t = parts.next()?.split(' ').next()?;
    info.insert("bytes".into(), json!(bytes));
    // The text rides along until the mean is taken, and is removed before writing.
    info.insert("rtt_ms_text".into(), json!(t));
    let out = Out::new(Kind::Sample, Values::new().with("rtt_s", ms(t)?), info).at(at);
    Some((out, seq))
}
