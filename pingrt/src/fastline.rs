//! Sample lines formatted without building a `measure::Record` for each (flood mode): the
//! envelope is serialized once by measure itself and reused; a unit test checks that every
//! line reads back through measure's strict reader as the same record the Reporter writes.
//! (measure has no allocation-free sample writer; this is that, for pingrt's two shapes.)

use crate::clock::now_ns;
use crate::sink::ReplyEvent;
use measure::writer::{Envelope, now_rfc3339};
use measure::{Kind, Record, SCHEMA};
use serde_json::{Map, Value};
use std::time::{Duration, SystemTime};

/// Formats sample lines of one run, numbering them from 0.
#[derive(Debug)]
pub struct FastLines {
    /// `{"schema":...,"run":"...",` up to the sequence number.
    head: String,
    /// `"host":...,"name":...,"tags":{...},` between the time and the values.
    middle: String,
    /// The reply address as a JSON string.
    from: String,
    seq: u64,
    /// The second (since the epoch) that `second_text` spells.
    second: i64,
    /// `2026-11-30T13:00:00.`: the time up to its microseconds, formatted once a second.
    second_text: String,
}

/// `n` in decimal.
fn push_int(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

impl FastLines {
    /// Splits measure's own serialization of a sample of `env`; `None` if it does not have
    /// the expected shape (the caller then writes through the Reporter).
    pub fn new(env: &Envelope, from: &str) -> Option<FastLines> {
        let r = Record {
            schema: SCHEMA.to_string(),
            tool: env.tool.clone(),
            version: env.version.clone(),
            kind: Kind::Sample,
            run: env.run.clone(),
            seq: 0,
            at: "AT".to_string(),
            host: env.host.clone(),
            label: env.label.clone(),
            name: env.name.clone(),
            tags: env.tags.clone(),
            status: None,
            error: None,
            headline: None,
            values: Map::new(),
            info: Map::new(),
        };
        let t = r.to_line();
        let mark = r#""seq":0,"at":"AT","#;
        let tail = r#""values":{},"info":{}}"#;
        let i = t.find(mark)?;
        let rest = t.get(i + mark.len()..)?;
        let middle = rest.strip_suffix(tail)?;
        Some(FastLines {
            head: t[..i].to_string(),
            middle: middle.to_string(),
            from: serde_json::to_string(from).ok()?,
            seq: 0,
            second: i64::MIN,
            second_text: String::new(),
        })
    }

    /// The time `ns` (CLOCK_REALTIME) as measure writes `at`: RFC 3339 UTC with microseconds.
    fn push_at(&mut self, out: &mut Vec<u8>, ns: i64) {
        let (second, micros) = (
            ns.div_euclid(1_000_000_000),
            ns.rem_euclid(1_000_000_000) / 1000,
        );
        if second != self.second {
            let Ok(secs) = u64::try_from(second) else {
                out.extend_from_slice(now_rfc3339().as_bytes());
                return;
            };
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
            // `...:SS.000000Z` without its last 7 characters.
            let full = humantime::format_rfc3339_micros(t).to_string();
            self.second_text = full[..full.len() - 7].to_string();
            self.second = second;
        }
        out.extend_from_slice(self.second_text.as_bytes());
        let mut digits = [b'0'; 6];
        let mut m = micros;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (m % 10) as u8;
            m /= 10;
        }
        out.extend_from_slice(&digits);
        out.push(b'Z');
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.head.as_bytes());
        out.extend_from_slice(b"\"seq\":");
        push_int(out, self.seq);
        out.extend_from_slice(b",\"at\":\"");
        self.push_at(out, now_ns());
        out.extend_from_slice(b"\",");
        out.extend_from_slice(self.middle.as_bytes());
        self.seq += 1;
    }

    /// Appends the line (with its newline) of a reply's sample to `out`.
    pub fn reply(&mut self, out: &mut Vec<u8>, e: &ReplyEvent) {
        self.start(out);
        out.extend_from_slice(b"\"values\":{\"rtt_s\":");
        // serde_json's own number text (null if not finite, as the Reporter would leave it).
        if serde_json::to_writer(&mut *out, &e.rtt_s).is_err() {
            out.extend_from_slice(b"null");
        }
        out.extend_from_slice(b"},\"info\":{\"icmp_seq\":");
        push_int(out, e.seq);
        out.extend_from_slice(b",\"probe\":");
        push_int(out, e.number);
        out.extend_from_slice(b",\"ttl\":");
        match e.ttl {
            Some(t) => push_int(out, t),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"bytes\":");
        push_int(out, e.bytes);
        out.extend_from_slice(b",\"from\":");
        out.extend_from_slice(self.from.as_bytes());
        out.extend_from_slice(if e.tx_kernel {
            b",\"tx_stamp\":\"kernel\""
        } else {
            b",\"tx_stamp\":\"user\""
        });
        out.extend_from_slice(if e.rx_kernel {
            b",\"rx_stamp\":\"kernel\""
        } else {
            b",\"rx_stamp\":\"user\""
        });
        if e.out_of_order {
            out.extend_from_slice(b",\"out_of_order\":true");
        }
        out.extend_from_slice(b"}}\n");
    }

    /// Appends the line (with its newline) of a failed sample to `out`.
    pub fn failed(&mut self, out: &mut Vec<u8>, err: &str, info: &Map<String, Value>) {
        self.start(out);
        out.extend_from_slice(b"\"error\":");
        if serde_json::to_writer(&mut *out, err).is_err() {
            out.extend_from_slice(b"\"error\"");
        }
        out.extend_from_slice(b",\"values\":{},\"info\":");
        if serde_json::to_writer(&mut *out, info).is_err() {
            out.extend_from_slice(b"{}");
        }
        out.extend_from_slice(b"}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::reply_info;
    use measure::Reporter;
    use measure::writer::Values;
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// `line` with the value of `at` taken out.
    fn without_time(line: &str) -> String {
        let i = line.find(r#""at":""#).unwrap() + 6;
        let j = i + line[i..].find('"').unwrap();
        format!("{}{}", &line[..i], &line[j..])
    }

    fn same_but_time(fast: &str, slow: &str) {
        let mut a = measure::parse_line(fast.trim_end()).unwrap();
        let b = measure::parse_line(slow.trim_end()).unwrap();
        a.at = b.at.clone();
        assert_eq!(a, b, "\nfast {fast}\nslow {slow}");
        // Byte for byte too: the same key order and number text as the Reporter's.
        assert_eq!(without_time(fast.trim_end()), without_time(slow));
    }

    #[test]
    fn time_is_written_as_measure_writes_it() {
        let env = Envelope::new("pingrt", "0.1.0", "plain");
        let mut fast = FastLines::new(&env, "127.0.0.1").unwrap();
        let base = 1_796_000_000_000_000_000i64;
        for ns in [
            base,
            base + 999_999_999,
            base + 1_000_000_000,
            base + 1_000_000_999,
            base + 86_400_123_456_789,
            base + 7_654_321,
            base,
        ] {
            let mut out = Vec::new();
            fast.push_at(&mut out, ns);
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns as u64);
            let want = humantime::format_rfc3339_micros(t).to_string();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        // A line's time is now, in measure's format.
        let mut out = Vec::new();
        fast.failed(&mut out, "timeout", &Map::new());
        let r = measure::parse_line(std::str::from_utf8(&out).unwrap().trim_end()).unwrap();
        assert_eq!(r.at.len(), measure::writer::now_rfc3339().len());
        assert!(r.at.ends_with('Z'));
    }

    #[test]
    fn lines_read_back_as_the_reporters_records() {
        let mut env = Envelope::new("pingrt", "0.1.0", "ping \"odd\" name\\");
        env.label = "a/b \u{e9}".into();
        env.tags.insert("peer".into(), "fd00::1".into());
        for env in [env.clone(), Envelope::new("pingrt", "0.1.0", "plain")] {
            let buf = Buf::default();
            let mut rep = Reporter::new(env.clone(), Box::new(buf.clone()));
            let mut fast = FastLines::new(&env, "fd00::2").unwrap();
            let events = [
                ReplyEvent {
                    seq: 65535,
                    number: 70000,
                    ttl: Some(64),
                    bytes: 64,
                    rtt_s: 0.000104,
                    tx_kernel: true,
                    rx_kernel: true,
                    out_of_order: false,
                },
                ReplyEvent {
                    seq: 1,
                    number: 0,
                    ttl: None,
                    bytes: 8,
                    rtt_s: 1.5e-7,
                    tx_kernel: false,
                    rx_kernel: false,
                    out_of_order: true,
                },
            ];
            let mut fast_lines = Vec::new();
            let line = |out: Vec<u8>| String::from_utf8(out).unwrap();
            for e in &events {
                let mut out = Vec::new();
                fast.reply(&mut out, e);
                fast_lines.push(line(out));
                rep.sample(
                    Values::new().with("rtt_s", e.rtt_s),
                    reply_info(e, "fd00::2"),
                )
                .unwrap();
            }
            let mut info = Map::new();
            info.insert("icmp_seq".into(), Value::from(3));
            info.insert("detail".into(), Value::from("Time to live \"exceeded\""));
            let mut out = Vec::new();
            fast.failed(&mut out, "ttl_exceeded", &info);
            fast_lines.push(line(out));
            rep.sample_failed("ttl_exceeded", info).unwrap();
            let slow = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
            let slow: Vec<&str> = slow.lines().collect();
            assert_eq!(slow.len(), 3);
            for (f, s) in fast_lines.iter().zip(slow) {
                assert!(f.ends_with('\n') && f.matches('\n').count() == 1);
                same_but_time(f, s);
            }
        }
    }
}
