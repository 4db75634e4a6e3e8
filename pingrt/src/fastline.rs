//! Sample lines formatted without building a `measure::Record` for each (flood mode): the
//! envelope is serialized once by measure itself and reused; a unit test checks that every
//! line reads back through measure's strict reader as the same record the Reporter writes.
//! (measure has no allocation-free sample writer; this is that, for pingrt's two shapes.)

use crate::sink::ReplyEvent;
use measure::writer::{Envelope, now_rfc3339};
use measure::{Kind, Record, SCHEMA};
use serde_json::{Map, Value};
use std::fmt::Write as _;

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
    line: String,
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
            line: String::with_capacity(512),
        })
    }

    fn start(&mut self) {
        self.line.clear();
        self.line.push_str(&self.head);
        let _ = write!(
            self.line,
            "\"seq\":{},\"at\":\"{}\",",
            self.seq,
            now_rfc3339()
        );
        self.line.push_str(&self.middle);
        self.seq += 1;
    }

    /// The line (with its newline) of a reply's sample.
    pub fn reply(&mut self, e: &ReplyEvent) -> &str {
        self.start();
        let rtt = serde_json::Number::from_f64(e.rtt_s)
            .map(|n| n.to_string())
            .unwrap_or_else(|| "null".into());
        let ttl = e.ttl.map_or_else(|| "null".to_string(), |t| t.to_string());
        let _ = writeln!(
            self.line,
            "\"values\":{{\"rtt_s\":{rtt}}},\"info\":{{\"icmp_seq\":{},\"probe\":{},\"ttl\":{ttl},\"bytes\":{},\"from\":{},\"tx_stamp\":\"{}\",\"rx_stamp\":\"{}\"{}}}}}",
            e.seq,
            e.number,
            e.bytes,
            self.from,
            if e.tx_kernel { "kernel" } else { "user" },
            if e.rx_kernel { "kernel" } else { "user" },
            if e.out_of_order {
                ",\"out_of_order\":true"
            } else {
                ""
            },
        );
        &self.line
    }

    /// The line (with its newline) of a failed sample.
    pub fn failed(&mut self, err: &str, info: &Map<String, Value>) -> &str {
        self.start();
        let err = serde_json::to_string(err).unwrap_or_else(|_| "\"error\"".into());
        let info = serde_json::to_string(info).unwrap_or_else(|_| "{}".into());
        let _ = writeln!(
            self.line,
            "\"error\":{err},\"values\":{{}},\"info\":{info}}}"
        );
        &self.line
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

    fn same_but_time(fast: &str, slow: &str) {
        let mut a = measure::parse_line(fast.trim_end()).unwrap();
        let b = measure::parse_line(slow.trim_end()).unwrap();
        a.at = b.at.clone();
        assert_eq!(a, b, "\nfast {fast}\nslow {slow}");
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
            for e in &events {
                fast_lines.push(fast.reply(e).to_string());
                rep.sample(
                    Values::new().with("rtt_s", e.rtt_s),
                    reply_info(e, "fd00::2"),
                )
                .unwrap();
            }
            let mut info = Map::new();
            info.insert("icmp_seq".into(), Value::from(3));
            info.insert("detail".into(), Value::from("Time to live \"exceeded\""));
            fast_lines.push(fast.failed("ttl_exceeded", &info).to_string());
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
