//! One line of ping's output told apart and read: the header, a reply with its round trip in
//! its own unit, a probe that failed, the dump BSD ping prints after an ICMP error.

use crate::model::scale_text;
use serde_json::{Map, Value, json};

/// What ping's output is, as a message says it expected it.
pub const WHAT: &str = "ping output: a reply (64 bytes from ADDR: icmp_seq=N ttl=N time=X ms), an error (From ADDR icmp_seq=N ...), or ping's statistics";

/// The units a round trip may be printed in, as a message lists them.
pub const UNITS: &str = "ms, us (µs) or s";

/// The value after `key` up to the next space or comma (`icmp_seq=` in `icmp_seq=3 ttl=64`).
pub fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let i = line.find(key)?;
    let rest = &line[i + key.len()..];
    Some(rest.split([' ', ',']).next().unwrap_or(rest))
}

/// The power of ten that turns `unit` into seconds.
pub fn unit_exp(unit: &str) -> Result<i32, String> {
    match unit {
        "ms" => Ok(-3),
        "us" | "µs" => Ok(-6),
        "s" => Ok(0),
        other => Err(format!("a time in {other:?}: expected {UNITS}")),
    }
}

/// A decimal number's text in `exp` units to seconds, rounded once; `None` when it is not
/// a number that is not negative.
pub fn seconds(text: &str, exp: i32) -> Option<f64> {
    scale_text(text, exp).filter(|s| *s >= 0.0)
}

/// Half a unit of the last digit of `text` (`12.3` ms: 0.05 ms), in seconds: how far the
/// printed figure may be from the figure ping measured.
pub fn half_digit(text: &str, exp: i32) -> f64 {
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    scale_text("5", exp - decimals - 1).unwrap_or(0.0)
}

/// A round trip as a reply prints it.
#[derive(Clone, Debug, PartialEq)]
pub enum Rtt {
    /// `time=0.045 ms`: seconds, and how far off the printed figure may be.
    Exact { secs: f64, half: f64 },
    /// `time<1 ms`: only a bound is known, in seconds.
    Below(f64),
}

/// The round trip of a reply line: `time=0.045 ms`, `time=36 us`, `time=36ms`, `time<1 ms`.
pub fn rtt(line: &str) -> Result<Rtt, String> {
    let (rest, below) = match line.split_once("time=") {
        Some((_, r)) => (r, false),
        None => match line.split_once("time<") {
            Some((_, r)) => (r, true),
            None => return Err("no time= in a reply".into()),
        },
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (num, after) = rest.split_at(end);
    let unit = after.trim_start().split([' ', ',']).next().unwrap_or("");
    if unit.is_empty() {
        return Err(format!("time={num} without a unit: expected {UNITS}"));
    }
    let exp = unit_exp(unit)?;
    let secs = seconds(num, exp).ok_or_else(|| format!("time={num:?} is not a number"))?;
    Ok(if below {
        Rtt::Below(secs)
    } else {
        Rtt::Exact {
            secs,
            half: half_digit(num, exp),
        }
    })
}

/// A reply: `64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.137 ms` (busybox `seq=`,
/// BSD's ping6 `16 bytes from ::1, icmp_seq=0 hlim=64 time=0.061 ms`).
#[derive(Debug)]
pub struct Reply {
    pub seq: u64,
    pub rtt: Rtt,
    /// Marked `(DUP!)`.
    pub dup: bool,
    pub info: Map<String, Value>,
}

/// Whether `line` is a reply (it has a sequence number and a time).
pub fn is_reply(line: &str) -> bool {
    line.contains(" bytes from ")
        && (line.contains("seq=") && (line.contains("time=") || line.contains("time<")))
}

/// The reply on `line`, or what is wrong with it.
pub fn reply(line: &str) -> Result<Reply, String> {
    let no = || format!("expected {WHAT}");
    let bytes: u64 = line
        .split(' ')
        .next()
        .and_then(|b| b.parse().ok())
        .ok_or_else(no)?;
    let from = line.split_once(" bytes from ").ok_or_else(no)?.1;
    let cut = [from.find(": "), from.find(", ")]
        .into_iter()
        .flatten()
        .min();
    let from = cut.map_or(from, |i| &from[..i]);
    let seq = field(line, "icmp_seq=")
        .or_else(|| field(line, "seq="))
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(no)?;
    let rtt = rtt(line)?;
    let mut info = Map::new();
    info.insert("icmp_seq".into(), json!(seq));
    if let Some(ttl) = field(line, "ttl=")
        .or_else(|| field(line, "hlim="))
        .and_then(|t| t.parse::<u64>().ok())
    {
        info.insert("ttl".into(), json!(ttl));
    }
    info.insert("bytes".into(), json!(bytes));
    info.insert("from".into(), json!(from));
    Ok(Reply {
        seq,
        rtt,
        dup: line.contains("(DUP!)"),
        info,
    })
}

/// A probe that failed, as a line says it.
#[derive(Debug, PartialEq)]
pub enum Failure {
    /// An ICMP error for a probe (`From ADDR icmp_seq=N Destination Host Unreachable`;
    /// BSD's `92 bytes from ADDR: Destination Host Unreachable`, whose sequence number, if
    /// any, is in the dump that follows).
    Error { seq: Option<u64>, why: String },
    /// No reply yet (`no answer yet for icmp_seq=N`, `Request timeout for icmp_seq N`): a
    /// reply that comes later replaces it.
    Timeout(u64),
}

/// The failure `line` reports, if it reports one.
pub fn failure(line: &str) -> Option<Failure> {
    if let Some(rest) = line.strip_prefix("From ") {
        let seq = field(rest, "icmp_seq=")?;
        let why = rest.split_once(&format!("={seq} ")).map_or("", |(_, w)| w);
        let why = if why.trim().is_empty() {
            "error"
        } else {
            why.trim()
        };
        return Some(Failure::Error {
            seq: Some(seq.parse().ok()?),
            why: why.to_string(),
        });
    }
    if let Some(seq) = line
        .strip_prefix("Request timeout for icmp_seq ")
        .or_else(|| line.strip_prefix("no answer yet for icmp_seq="))
    {
        return Some(Failure::Timeout(seq.trim().parse().ok()?));
    }
    // BSD: `92 bytes from 10.0.0.1: Destination Host Unreachable`.
    let (bytes, rest) = line.split_once(" bytes from ")?;
    bytes.parse::<u64>().ok()?;
    let (_, why) = rest.split_once(": ")?;
    (!why.contains("seq=") && !why.trim().is_empty()).then(|| Failure::Error {
        seq: None,
        why: why.trim().to_string(),
    })
}

/// Whether `line` belongs to the dump BSD ping prints after an ICMP error: the header line
/// (`Vr HL TOS  Len   ID Flg  off TTL Pro  cks      Src      Dst`, IPv6 `Vr TC  Flow Plen`),
/// its figures (indented), the quoted datagram (`ICMP: type 8, code 0, size 64, id 0x1c2d,
/// seq 0x0001`, `TCP: from port ...`, `UDP: ...`).
pub fn is_dump(line: &str) -> bool {
    line.starts_with("Vr ")
        || line.starts_with(' ')
        || line.starts_with('\t')
        || ["ICMP: ", "ICMP6: ", "TCP: ", "UDP: "]
            .iter()
            .any(|p| line.starts_with(p))
}

/// The sequence number a dump's `ICMP: ..., seq 0x0001` line quotes.
pub fn dump_seq(line: &str) -> Option<u64> {
    let hex = line.strip_prefix("ICMP: ")?.split_once("seq 0x")?.1;
    u64::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_scaled_once_from_their_unit() {
        let exact = |l: &str| match rtt(l) {
            Ok(Rtt::Exact { secs, .. }) => secs,
            other => panic!("{l}: {other:?}"),
        };
        assert_eq!(exact("time=36 us"), 36e-6);
        assert_eq!(exact("time=36 ms"), 0.036);
        assert_eq!(exact("time=36 s"), 36.0);
        assert_eq!(exact("time=0.045 ms"), 0.000045);
        assert_eq!(exact("time=36ms"), 0.036);
        assert_eq!(rtt("time<1 ms"), Ok(Rtt::Below(0.001)));
        let e = rtt("time=36 furlongs").unwrap_err();
        assert!(e.contains("\"furlongs\"") && e.contains(UNITS), "{e}");
        assert!(rtt("time=36").is_err());
        assert_eq!(half_digit("12.3", -3), 0.00005);
        assert_eq!(half_digit("123", -3), 0.0005);
    }

    #[test]
    fn failures_and_dumps() {
        assert_eq!(
            failure("no answer yet for icmp_seq=2"),
            Some(Failure::Timeout(2))
        );
        assert_eq!(
            failure("92 bytes from 10.0.0.1: Destination Host Unreachable"),
            Some(Failure::Error {
                seq: None,
                why: "Destination Host Unreachable".into()
            })
        );
        assert_eq!(
            failure("From 10.0.0.1: icmp_seq=3 Time to live exceeded"),
            Some(Failure::Error {
                seq: Some(3),
                why: "Time to live exceeded".into()
            })
        );
        assert_eq!(
            dump_seq("ICMP: type 8, code 0, size 64, id 0x1c2d, seq 0x000a"),
            Some(10)
        );
        assert!(is_dump(
            " 4  5  00 5400 8a2c   0 0000  40  01 9b4d 10.0.0.5  10.0.0.9 "
        ));
    }
}
