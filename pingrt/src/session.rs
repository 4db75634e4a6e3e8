//! One run: send probes on schedule, read replies, errors and stamps, write the records.

use crate::config::{Config, FLOOD_GAP};
use crate::human::Human;
use crate::packet::{self, Family, IcmpError, Incoming};
use crate::sink::{ReplyEvent, Sink};
use crate::socket::{self, IcmpSocket, Kind, Received, SocketOptions, now_ns};
use crate::stats;
use crate::tracker::{Outcome, Probe, Tracker, wire_seq};
use measure::writer::{Summary, Values, info};
use measure::{Failure, Reporter, Status, exit};
use pnet_packet::icmp::{IcmpCode, IcmpType};
use pnet_packet::icmpv6::{Icmpv6Code, Icmpv6Type};
use serde_json::{Map, Value, json};
use std::io;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why the probing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Every probe was sent and settled (or enough replies came with -w).
    Done,
    Deadline,
    Interrupted,
}

impl End {
    fn as_str(self) -> &'static str {
        match self {
            End::Done => "done",
            End::Deadline => "deadline",
            End::Interrupted => "interrupted",
        }
    }
}

/// Most packets read from one queue before the loop looks at its timers again.
const DRAIN_BATCH: usize = 256;

struct Session {
    cfg: Config,
    /// Sample records go here; taken back for the summary.
    sink: Option<Sink>,
    sock: IcmpSocket,
    id: u16,
    cookie: u64,
    tracker: Tracker,
    rtts: Vec<f64>,
    human: Human,
    buf: Vec<u8>,
    /// The request being sent (reused).
    pkt: Vec<u8>,
    /// The error queue's own buffer (drain may read it while `buf` is in use).
    errbuf: Vec<u8>,
    base_info: Map<String, Value>,
    /// When probing began (CLOCK_REALTIME ns).
    start: i64,
    /// When probing ended (CLOCK_REALTIME ns).
    end_ns: Option<i64>,
    /// Flood: read right after sending (the reply was there last time).
    eager_read: bool,
    /// The target address as text, for every sample.
    target_text: String,
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut b))
        .is_ok();
    if ok {
        u64::from_be_bytes(b)
    } else {
        (now_ns() as u64) ^ (u64::from(std::process::id()) << 32)
    }
}

fn ns(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

fn out_err(e: &io::Error) -> Failure {
    Failure::io("writing records", e)
}

/// The parameters of the run, for `begin` and `summary`.
fn params(cfg: &Config) -> Map<String, Value> {
    info(json!({
        "host": cfg.host,
        "address": cfg.target.ip().to_string(),
        "family": if cfg.family == Family::V4 { "ipv4" } else { "ipv6" },
        "count": cfg.count,
        "interval_s": cfg.interval.as_secs_f64(),
        "timeout_s": cfg.timeout.as_secs_f64(),
        "deadline_s": cfg.deadline.map(|d| d.as_secs_f64()),
        "payload_bytes": cfg.size,
        "ttl": cfg.ttl,
        "source": cfg.source.map(|a| a.to_string()),
        "interface": cfg.interface,
        "flood": cfg.flood,
    }))
}

/// Runs the probes of `cfg`, writing records to `rep`; always writes the summary.
pub fn run(
    cfg: Config,
    mut rep: Reporter,
    eager: Option<Arc<AtomicBool>>,
) -> Result<ExitCode, Failure> {
    let flush_now = || {
        if let Some(e) = &eager {
            e.store(true, Ordering::Relaxed);
        }
    };
    let mut base = params(&cfg);
    let opened = IcmpSocket::open(cfg.family, cfg.socket).and_then(|mut s| {
        s.configure(&SocketOptions {
            ttl: cfg.ttl,
            source: cfg.source,
            interface: cfg.interface.clone(),
            tx_stamps: cfg.kernel_tx,
        })
        .map(|()| s)
    });
    let sock = match opened {
        Ok(s) => s,
        Err(msg) => {
            base.insert(
                "socket".into(),
                json!(format!("{:?}", cfg.socket).to_lowercase()),
            );
            rep.begin(base.clone()).map_err(|e| out_err(&e))?;
            rep.summary(Summary {
                status: Status::Failed,
                error: Some(msg.clone()),
                headline: None,
                values: Values::new(),
                info: base,
            })
            .map_err(|e| out_err(&e))?;
            return Err(Failure::new(exit::CANNOT, cfg.host.clone(), msg));
        }
    };
    // The kernel turns receive stamping on for the whole stack a moment after the first
    // socket asks (a deferred static key); give it that moment so probe 1 gets its stamp.
    std::thread::sleep(std::time::Duration::from_millis(10));
    let cookie = random_u64();
    let id = match sock.kind {
        Kind::Raw => (cookie >> 48) as u16,
        Kind::Dgram => sock.dgram_id().unwrap_or(0),
    };
    base.insert("socket".into(), json!(sock.kind.as_str()));
    base.insert("icmp_id".into(), json!(id));
    base.insert(
        "rx_stamp".into(),
        json!(if sock.timestamping {
            "kernel SO_TIMESTAMPING"
        } else {
            "kernel SO_TIMESTAMPNS"
        }),
    );
    base.insert(
        "tx_stamp".into(),
        json!(if sock.tx_stamps {
            "kernel SO_TIMESTAMPING TX_SCHED, else user before sendto"
        } else {
            "user before sendto"
        }),
    );
    let mut begin = base.clone();
    begin.extend(measure::envfacts::Probe::system().machine());
    rep.begin(begin).map_err(|e| out_err(&e))?;
    let human = Human {
        enabled: !cfg.quiet && measure::cli::is_terminal(2),
        flood: cfg.flood,
    };
    let ip_header = if cfg.family == Family::V4 { 20 } else { 40 };
    human.header(&cfg.host, &cfg.target.ip().to_string(), cfg.size, ip_header);
    let timeout_ns = ns(cfg.timeout);
    let target_text = cfg.target.ip().to_string();
    let sink = if cfg.flood {
        Sink::threaded(rep, target_text.clone())
            .map_err(|e| Failure::new(exit::CANNOT, "cannot start the record writer", e))?
    } else {
        Sink::direct(rep, target_text.clone())
    };
    let mut s = Session {
        tracker: Tracker::new(cookie, cfg.size, timeout_ns),
        buf: vec![0u8; cfg.size + 8 + 60 + 512],
        errbuf: vec![0u8; cfg.size + 8 + 60 + 512],
        pkt: Vec::new(),
        sink: Some(sink),
        cfg,
        sock,
        id,
        cookie,
        rtts: Vec::new(),
        human,
        base_info: base,
        start: now_ns(),
        eager_read: true,
        target_text,
        end_ns: None,
    };
    let result = s.probe_loop();
    flush_now();
    s.finish(result)
}

impl Session {
    fn probe_loop(&mut self) -> Result<End, Failure> {
        let start = now_ns();
        self.start = start;
        let deadline_at = self.cfg.deadline.map(|d| start.saturating_add(ns(d)));
        let interval = ns(self.cfg.interval);
        let flood_gap = if self.cfg.interval.is_zero() {
            ns(FLOOD_GAP)
        } else {
            interval
        };
        let count = self.cfg.count;
        let deadline_mode = self.cfg.deadline.is_some();
        let mut next_send = start;
        let mut lingering = false;
        loop {
            if measure::cli::interrupted() {
                return Ok(End::Interrupted);
            }
            let now = now_ns();
            self.expire(now)?;
            if deadline_at.is_some_and(|d| now >= d) {
                return Ok(End::Deadline);
            }
            let c = self.tracker.counts;
            if deadline_mode && count > 0 && c.received >= count {
                return Ok(End::Done);
            }
            let done_sending = !deadline_mode && count > 0 && c.sent >= count;
            if done_sending {
                if self.tracker.waiting() == 0 {
                    return Ok(End::Done);
                }
                if !lingering {
                    lingering = true;
                    if !self.cfg.timeout_given && c.received > 0 {
                        // As ping: once everything is sent, wait about two of the longest
                        // round trips (at least a second) rather than the full timeout.
                        let max = self.rtts.iter().copied().fold(0.0f64, f64::max);
                        let linger = ((2.0 * max * 1e9) as i64).max(1_000_000_000);
                        self.tracker.cap_deadlines(now.saturating_add(linger));
                        continue;
                    }
                }
            } else {
                let due = now >= next_send || (self.cfg.flood && self.tracker.waiting() == 0);
                if due {
                    self.send_probe()?;
                    if self.cfg.flood && (self.eager_read || self.tracker.next_number() % 256 == 0)
                    {
                        // On a fast path (loopback) the reply is queued before sendto
                        // returns: read it now rather than after another poll. Keep doing so
                        // only while it pays.
                        let before = self.tracker.waiting();
                        self.drain()?;
                        let hit = self.tracker.waiting() < before;
                        self.eager_read = hit;
                    }
                    let after = now_ns();
                    next_send = if self.cfg.flood {
                        after + flood_gap
                    } else {
                        (next_send + interval).max(after - interval)
                    };
                    continue;
                }
            }
            let mut wake = i64::MAX;
            if !done_sending {
                wake = next_send;
            }
            if let Some(d) = self.tracker.next_deadline() {
                wake = wake.min(d);
            }
            if let Some(d) = deadline_at {
                wake = wake.min(d);
            }
            let timeout = (wake != i64::MAX).then(|| wake - now);
            match socket::wait(self.sock.fd(), timeout) {
                Ok((readable, errq)) => {
                    if errq {
                        self.drain_errqueue(DRAIN_BATCH)?;
                    }
                    if readable {
                        self.drain()?;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::new(exit::CANNOT, "poll", e)),
            }
        }
    }

    fn send_probe(&mut self) -> Result<(), Failure> {
        let number = self.tracker.next_number();
        let mut pkt = std::mem::take(&mut self.pkt);
        packet::build_probe(
            &mut pkt,
            self.cfg.family,
            self.id,
            wire_seq(number),
            self.cookie,
            number,
            self.cfg.size,
        );
        let before = now_ns();
        let res = self.sock.send_to(&pkt, &self.cfg.target);
        self.pkt = pkt;
        let after = now_ns();
        let (probe, evicted) = self.tracker.sent(before, after);
        if let Some(old) = evicted {
            self.timeout_sample(&old, "timeout")?;
        }
        self.human.sent();
        match res {
            Ok(()) => {
                if self.sock.tx_stamps {
                    // The stamp is usually queued before sendto returns: read just it.
                    self.drain_errqueue(1)?;
                }
                Ok(())
            }
            Err(e) => {
                let fatal = matches!(
                    e.raw_os_error(),
                    Some(libc::EMSGSIZE)
                        | Some(libc::EINVAL)
                        | Some(libc::EAFNOSUPPORT)
                        | Some(libc::EACCES)
                        | Some(libc::EDESTADDRREQ)
                );
                if fatal {
                    let hint = match e.raw_os_error() {
                        Some(libc::EMSGSIZE) => " (lower -s)",
                        Some(libc::EACCES) => {
                            " (a broadcast address? pingrt does not probe broadcast)"
                        }
                        _ => "",
                    };
                    return Err(Failure::new(
                        exit::CANNOT,
                        format!("sendto {}", self.cfg.target.ip()),
                        format!("{e}{hint}"),
                    ));
                }
                let _ = self.tracker.error(probe.seq);
                let mut i = self.probe_info(&probe);
                i.insert("errno".into(), json!(e.raw_os_error()));
                i.insert("detail".into(), json!(e.to_string()));
                self.human.error(
                    &self.cfg.target.ip().to_string(),
                    probe.seq,
                    &format!("sendto: {e}"),
                );
                self.failed_sample("send_error", i)
            }
        }
    }

    fn probe_info(&self, p: &Probe) -> Map<String, Value> {
        let mut i = Map::new();
        i.insert("icmp_seq".into(), Value::from(p.seq));
        i.insert("probe".into(), Value::from(p.number));
        i
    }

    fn timeout_sample(&mut self, p: &Probe, reason: &str) -> Result<(), Failure> {
        let mut i = self.probe_info(p);
        i.insert("reason".into(), json!(reason));
        let waited = (now_ns() - p.sent_ns()) as f64 / 1e9;
        i.insert("waited_s".into(), json!(waited));
        if reason == "timeout" {
            self.human.timeout(p.seq);
        }
        let err = if reason == "timeout" {
            "timeout"
        } else {
            "unanswered"
        };
        self.failed_sample(err, i)
    }

    fn expire(&mut self, now: i64) -> Result<(), Failure> {
        for p in self.tracker.expire(now) {
            self.timeout_sample(&p, "timeout")?;
        }
        Ok(())
    }

    /// Reads replies (and, on a raw socket, ICMP errors) until the queue is empty.
    fn drain(&mut self) -> Result<(), Failure> {
        for _ in 0..DRAIN_BATCH {
            let mut buf = std::mem::take(&mut self.buf);
            let r = self.sock.recv(&mut buf, false);
            let res = match r {
                Ok(r) => self.incoming(&buf, &r),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.buf = buf;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
                // A datagram socket reports an ICMP error once through recv as well; the
                // details are on the error queue.
                Err(_) => self.drain_errqueue(DRAIN_BATCH),
            };
            self.buf = buf;
            res?;
            if self.cfg.flood && self.tracker.waiting() == 0 {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Reads the error queue: kernel transmit stamps, and ICMP errors on datagram sockets.
    fn drain_errqueue(&mut self, max: usize) -> Result<(), Failure> {
        for _ in 0..max {
            let mut buf = std::mem::take(&mut self.errbuf);
            let r = self.sock.recv(&mut buf, true);
            let res = match r {
                Ok(r) => self.queued_error(&buf, &r),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
                Err(e) => {
                    self.errbuf = buf;
                    if e.kind() != io::ErrorKind::WouldBlock {
                        let _ = self.sock.take_error();
                    }
                    return Ok(());
                }
            };
            self.errbuf = buf;
            res?;
        }
        Ok(())
    }

    fn queued_error(&mut self, buf: &[u8], r: &Received) -> Result<(), Failure> {
        let Some(ee) = r.ext_err else {
            return Ok(());
        };
        match ee.origin {
            libc::SO_EE_ORIGIN_TIMESTAMPING => {
                if let Some(ts) = r.stamp_ns {
                    self.tracker.tx_stamp(ts);
                }
                Ok(())
            }
            libc::SO_EE_ORIGIN_ICMP | libc::SO_EE_ORIGIN_ICMP6 => {
                let data = &buf[..r.len.min(buf.len())];
                let (req_type, err) = match self.cfg.family {
                    Family::V4 => (
                        8,
                        packet::describe_v4(IcmpType(ee.icmp_type), IcmpCode(ee.icmp_code)),
                    ),
                    Family::V6 => (
                        128,
                        packet::describe_v6(Icmpv6Type(ee.icmp_type), Icmpv6Code(ee.icmp_code)),
                    ),
                };
                match (packet::echo_id_seq(data, req_type), err) {
                    (Some((_, seq)), Some(err)) => self.icmp_error(seq, &err, ee.offender),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn icmp_error(
        &mut self,
        seq: u16,
        err: &IcmpError,
        from: Option<IpAddr>,
    ) -> Result<(), Failure> {
        if matches!(err.kind, "redirect" | "source_quench") {
            // Advice, not a loss: the request went on (a redirect) or may still be answered.
            let from_s = from.map(|a| a.to_string()).unwrap_or_else(|| "?".into());
            self.human.error(&from_s, seq, &err.text);
            return Ok(());
        }
        if let Outcome::Error { probe } = self.tracker.error(seq) {
            let from_s = from.map(|a| a.to_string()).unwrap_or_else(|| "?".into());
            self.human.error(&from_s, seq, &err.text);
            let mut i = self.probe_info(&probe);
            i.insert("from".into(), json!(from.map(|a| a.to_string())));
            i.insert("icmp_type".into(), json!(err.icmp_type));
            i.insert("icmp_code".into(), json!(err.icmp_code));
            i.insert("detail".into(), json!(err.text));
            self.failed_sample(err.kind, i)?;
        }
        Ok(())
    }

    fn incoming(&mut self, buf: &[u8], r: &Received) -> Result<(), Failure> {
        let data = &buf[..r.len.min(buf.len())];
        let rx_kernel = r.stamp_ns.is_some();
        let rx_ns = r.stamp_ns.unwrap_or_else(now_ns);
        let raw = self.sock.kind == Kind::Raw;
        let inc = match self.cfg.family {
            Family::V4 => packet::parse_v4(data, raw),
            Family::V6 => packet::parse_v6(data),
        };
        match inc {
            Incoming::Reply {
                id,
                seq,
                payload,
                icmp_len,
                checksum_ok,
                ttl,
            } => {
                if raw && id != self.id {
                    return Ok(()); // another process's echo
                }
                if r.from != Some(self.cfg.target.ip()) {
                    self.tracker.counts.foreign += 1;
                    return Ok(());
                }
                let ttl = ttl.or(r.ttl);
                let outcome = self.tracker.reply(seq, payload, checksum_ok, rx_ns);
                self.reply_outcome(outcome, ttl, icmp_len, rx_kernel)
            }
            Incoming::Error {
                err,
                id,
                seq,
                dst,
                checksum_ok,
            } => {
                // Ours only if it quotes our identifier and our target.
                if (raw && id != self.id) || !checksum_ok || dst != self.cfg.target.ip() {
                    return Ok(());
                }
                self.icmp_error(seq, &err, r.from)
            }
            Incoming::Other => Ok(()),
        }
    }

    fn reply_outcome(
        &mut self,
        o: Outcome,
        ttl: Option<u8>,
        bytes: usize,
        rx_kernel: bool,
    ) -> Result<(), Failure> {
        let from = &self.target_text;
        match o {
            Outcome::Reply {
                probe,
                rtt_s,
                out_of_order,
            } => {
                self.rtts.push(rtt_s);
                self.human.reply(bytes, from, probe.seq, ttl, rtt_s, false);
                let ev = ReplyEvent {
                    seq: probe.seq,
                    number: probe.number,
                    ttl,
                    bytes,
                    rtt_s,
                    tx_kernel: probe.kernel_tx_ns.is_some(),
                    rx_kernel,
                    out_of_order,
                };
                match self.sink.as_mut() {
                    Some(sink) => sink.reply(ev).map_err(|e| out_err(&e)),
                    None => Ok(()),
                }
            }
            Outcome::Duplicate { probe, rtt_s } => {
                self.human.reply(bytes, from, probe.seq, ttl, rtt_s, true);
                Ok(())
            }
            Outcome::Late { seq, rtt_s, .. } => {
                if let Some(rtt) = rtt_s {
                    self.human.note(&format!(
                        "late reply for icmp_seq={seq} after {} ms (not counted)",
                        crate::human::ms(rtt)
                    ));
                }
                Ok(())
            }
            Outcome::Corrupt { seq, why } => {
                self.human
                    .note(&format!("icmp_seq={seq}: {why} (not counted)"));
                Ok(())
            }
            Outcome::Foreign | Outcome::Error { .. } | Outcome::Ignored => Ok(()),
        }
    }

    /// Writes the samples of unanswered probes and the summary; turns the end into an exit code.
    fn finish(mut self, result: Result<End, Failure>) -> Result<ExitCode, Failure> {
        let end = match result {
            Ok(end) => end,
            Err(f) => {
                self.end_ns = Some(now_ns());
                let mut rep = match self.sink.take().and_then(Sink::finish) {
                    Some((rep, _)) => rep,
                    None => return Err(f),
                };
                let msg = f.message.clone().unwrap_or_else(|| "failed".into());
                let (mut values, mut i) = self.summary_values();
                i.insert("end".into(), json!("error"));
                if self.tracker.counts.received == 0 {
                    values = Values::new();
                }
                let _ = rep.summary(Summary {
                    status: if self.tracker.counts.received > 0 {
                        Status::Partial
                    } else {
                        Status::Failed
                    },
                    error: Some(msg),
                    headline: None,
                    values,
                    info: i,
                });
                return Err(f);
            }
        };
        self.end_ns = Some(now_ns());
        if end != End::Done {
            // Probes still out when the deadline or Ctrl-C came count as lost, as in ping.
            let now = now_ns();
            self.tracker.cap_deadlines(now);
            let reason = end.as_str();
            for p in self.tracker.expire(now) {
                self.timeout_sample(&p, reason)?;
            }
        }
        let (values, mut i) = self.summary_values();
        i.insert("end".into(), json!(end.as_str()));
        let c = self.tracker.counts;
        let unlimited = self.cfg.count == 0 && self.cfg.deadline.is_none();
        let abnormal = end == End::Interrupted && !unlimited;
        let (status, error) = if c.received == 0 {
            (
                Status::Failed,
                Some(format!(
                    "no reply from {} ({} sent)",
                    self.cfg.target.ip(),
                    c.sent
                )),
            )
        } else if abnormal {
            (
                Status::Partial,
                Some("interrupted before the last probe".to_string()),
            )
        } else {
            (Status::Ok, None)
        };
        let st = stats::rtt_stats(&self.rtts);
        self.human.summary(
            &self.cfg.host,
            c.sent,
            c.received,
            c.duplicates,
            c.errors,
            values
                .0
                .get("elapsed_s")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            st.map(|s| (s.min, s.mean, s.max, s.mdev)),
        );
        let (mut rep, written) = match self.sink.take().and_then(Sink::finish) {
            Some(r) => r,
            None => {
                return Err(Failure::new(
                    exit::CANNOT,
                    "writing records",
                    "the record writer failed",
                ));
            }
        };
        written.map_err(|e| out_err(&e))?;
        rep.summary(Summary {
            status,
            error,
            headline: Some("rtt_mean_s".into()),
            values,
            info: i,
        })
        .map_err(|e| out_err(&e))?;
        if abnormal {
            return Ok(ExitCode::from(exit::INTERRUPTED));
        }
        Ok(ExitCode::from(if c.received > 0 {
            exit::OK
        } else {
            exit::MEASURED_FAILURE
        }))
    }

    fn summary_values(&mut self) -> (Values, Map<String, Value>) {
        let c = self.tracker.counts;
        let elapsed = self.elapsed_s();
        let mut v = Values::new()
            .with_count("sent_count", c.sent)
            .with_count("received_count", c.received)
            .with_count("duplicate_count", c.duplicates)
            .with_count("late_count", c.late)
            .with_count("out_of_order_count", c.out_of_order)
            .with_count("error_count", c.errors)
            .with_count("timeout_count", c.timeouts)
            .with_count("corrupt_count", c.corrupt)
            .with_count("foreign_count", c.foreign);
        if c.sent > 0 {
            v.set(
                "loss_ratio",
                c.sent.saturating_sub(c.received) as f64 / c.sent as f64,
            );
        }
        if let Some(s) = stats::rtt_stats(&self.rtts) {
            v.set("rtt_min_s", s.min);
            v.set("rtt_mean_s", s.mean);
            v.set("rtt_max_s", s.max);
            v.set("rtt_mdev_s", s.mdev);
            v.set("rtt_stddev_s", s.stddev);
            v.set("rtt_p50_s", s.p50);
            v.set("rtt_p90_s", s.p90);
            v.set("rtt_p99_s", s.p99);
        }
        v.set("elapsed_s", elapsed);
        if elapsed > 0.0 {
            v.set("probe_rate_per_s", c.sent as f64 / elapsed);
        }
        let mut i = self.base_info.clone();
        i.insert("seq_wraps".into(), json!(c.sent / 65_536));
        i.insert("kernel_tx_stamps".into(), json!(c.kernel_tx));
        (v, i)
    }

    fn elapsed_s(&self) -> f64 {
        (self.end_ns.unwrap_or_else(now_ns) - self.start) as f64 / 1e9
    }

    fn failed_sample(&mut self, err: &str, info: Map<String, Value>) -> Result<(), Failure> {
        match self.sink.as_mut() {
            Some(sink) => sink.failed(err, info).map_err(|e| out_err(&e)),
            None => Ok(()),
        }
    }
}
