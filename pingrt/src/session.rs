//! One run: send probes on schedule, read replies, errors and stamps, write the records.

use crate::clock::now_ns;
use crate::config::{Config, FLOOD_GAP};
use crate::human::Human;
use crate::packet::{self, Family};
use crate::sink::Sink;
use crate::socket::{self, IcmpSocket, Kind, SocketOptions};
use crate::tracker::{Probe, Tracker, wire_seq};
use measure::writer::{Summary, Values, info};
use measure::{Failure, Reporter, Status, exit};
use serde_json::{Map, Value, json};
use std::io;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why the probing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Every probe was sent and settled (or enough replies came with -w).
    Done,
    Deadline,
    Interrupted,
}

impl End {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            End::Done => "done",
            End::Deadline => "deadline",
            End::Interrupted => "interrupted",
        }
    }
}

/// Most packets read from one queue before the loop looks at its timers again.
pub(crate) const DRAIN_BATCH: usize = 256;

pub(crate) struct Session {
    pub(crate) cfg: Config,
    /// Sample records go here; taken back for the summary.
    pub(crate) sink: Option<Sink>,
    pub(crate) sock: IcmpSocket,
    pub(crate) id: u16,
    pub(crate) tracker: Tracker,
    pub(crate) rtts: Vec<f64>,
    pub(crate) human: Human,
    pub(crate) buf: Vec<u8>,
    /// The requests, changed in place for each probe.
    pub(crate) requests: packet::Requests,
    /// The error queue's own buffer (drain may read it while `buf` is in use).
    pub(crate) errbuf: Vec<u8>,
    pub(crate) base_info: Map<String, Value>,
    /// When probing began (CLOCK_REALTIME ns).
    pub(crate) start: i64,
    /// When probing ended (CLOCK_REALTIME ns).
    pub(crate) end_ns: Option<i64>,
    /// Flood: read right after sending (the reply was there last time).
    pub(crate) eager_read: bool,
    /// The target address as text, for every sample.
    pub(crate) target_text: String,
    /// The target address in kernel form, for every sendto.
    pub(crate) target_addr: socket2::SockAddr,
}

fn ns(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

pub(crate) fn out_err(e: &io::Error) -> Failure {
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

/// Opens and configures the socket `cfg` asks for; on failure writes begin and a failed
/// summary to `rep` and returns the failure.
fn open_socket(
    cfg: &Config,
    base: &mut Map<String, Value>,
    rep: &mut Reporter,
) -> Result<IcmpSocket, Failure> {
    let opened = IcmpSocket::open(cfg.family, cfg.socket).and_then(|mut s| {
        s.configure(&SocketOptions {
            ttl: cfg.ttl,
            source: cfg.source,
            interface: cfg.interface.clone(),
            tx_stamps: cfg.kernel_tx,
        })
        .map(|()| s)
    });
    match opened {
        Ok(s) => Ok(s),
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
                info: base.clone(),
            })
            .map_err(|e| out_err(&e))?;
            Err(Failure::new(exit::CANNOT, cfg.host.clone(), msg))
        }
    }
}

/// The socket's facts for `begin` and `summary`: its kind, identifier and stamp sources.
fn socket_info(base: &mut Map<String, Value>, sock: &IcmpSocket, id: u16) {
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
}

/// Runs the probes of `cfg`, writing records to `rep`; always writes the summary.
pub fn run(
    cfg: Config,
    mut rep: Reporter,
    eager: Option<Arc<AtomicBool>>,
    shared: Option<crate::output::Shared>,
) -> Result<ExitCode, Failure> {
    let mut base = params(&cfg);
    let sock = open_socket(&cfg, &mut base, &mut rep)?;
    let cookie = measure::writer::random_u64();
    let id = match sock.kind {
        Kind::Raw => (cookie >> 48) as u16,
        Kind::Dgram => sock.dgram_id().unwrap_or(0),
    };
    socket_info(&mut base, &sock, id);
    let mut begin = base.clone();
    begin.extend(measure::envfacts::Probe::system().machine());
    rep.begin(begin).map_err(|e| out_err(&e))?;
    // The kernel turns receive stamping on for the whole stack a moment after the first
    // socket asks (a deferred static key): wait for it (at most 10 ms) so probe 1 gets its
    // stamp.
    socket::wait_for_rx_stamps(std::time::Duration::from_millis(10));
    let human = Human {
        enabled: !cfg.quiet && measure::cli::is_terminal(2),
        flood: cfg.flood,
    };
    let ip_header = if cfg.family == Family::V4 { 20 } else { 40 };
    human.header(&cfg.host, &cfg.target.ip().to_string(), cfg.size, ip_header);
    let target_text = cfg.target.ip().to_string();
    let sink = if cfg.flood {
        Sink::threaded(rep, target_text.clone(), shared)
            .map_err(|e| Failure::new(exit::CANNOT, "cannot start the record writer", e))?
    } else {
        Sink::direct(rep, target_text.clone())
    };
    let mut s = Session::new(cfg, sock, id, cookie, sink, human, base);
    let result = s.probe_loop();
    if let Some(e) = &eager {
        e.store(true, Ordering::Relaxed);
    }
    s.finish(result)
}

impl Session {
    /// A session over the open socket `sock`, its probe table and RTT list backed with
    /// memory before the first probe (for a run without a count, room for 65536 probes).
    fn new(
        cfg: Config,
        sock: IcmpSocket,
        id: u16,
        cookie: u64,
        sink: Sink,
        human: Human,
        base_info: Map<String, Value>,
    ) -> Session {
        let target_text = cfg.target.ip().to_string();
        let target_addr = socket2::SockAddr::from(cfg.target);
        let mut s = Session {
            tracker: Tracker::new(cookie, cfg.size, ns(cfg.timeout)),
            buf: vec![0u8; cfg.size + 8 + 60 + 512],
            errbuf: vec![0u8; cfg.size + 8 + 60 + 512],
            requests: packet::Requests::new(cfg.family, id, cookie, cfg.size),
            sink: Some(sink),
            cfg,
            sock,
            id,
            rtts: Vec::new(),
            human,
            base_info,
            start: now_ns(),
            eager_read: true,
            target_text,
            target_addr,
            end_ns: None,
        };
        s.tracker.reserve(s.cfg.count);
        let expected = if s.cfg.count == 0 {
            1 << 16
        } else {
            s.cfg.count.min(1 << 20)
        };
        s.rtts.reserve_exact(expected as usize);
        crate::prefault::populate(&mut s.rtts);
        s
    }

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
        // A flood probe answered at once leaves its send time as the loop's "now": the clock
        // is read once per probe (the send stamp), microseconds before the next one goes.
        let mut fresh: Option<i64> = None;
        loop {
            if measure::cli::interrupted() {
                return Ok(End::Interrupted);
            }
            let now = fresh.take().unwrap_or_else(now_ns);
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
                    if self.linger(now) {
                        continue;
                    }
                }
            } else if now >= next_send || (self.cfg.flood && self.tracker.waiting() == 0) {
                let (after, answered) = self.send_and_peek()?;
                if answered {
                    fresh = Some(after);
                }
                next_send = if self.cfg.flood {
                    after + flood_gap
                } else {
                    (next_send + interval).max(after - interval)
                };
                continue;
            }
            let mut wake = self.tracker.next_deadline().unwrap_or(i64::MAX);
            if !done_sending {
                wake = wake.min(next_send);
            }
            if let Some(d) = deadline_at {
                wake = wake.min(d);
            }
            self.wait_and_read((wake != i64::MAX).then(|| wake - now))?;
        }
    }

    /// Once everything is sent, as ping: wait about two of the longest round trips (at
    /// least a second) rather than the full timeout, unless -W was given or nothing came
    /// back. Whether the deadlines were brought forward.
    fn linger(&mut self, now: i64) -> bool {
        if self.cfg.timeout_given || self.tracker.counts.received == 0 {
            return false;
        }
        let max = self.rtts.iter().copied().fold(0.0f64, f64::max);
        let linger = ((2.0 * max * 1e9) as i64).max(1_000_000_000);
        self.tracker.cap_deadlines(now.saturating_add(linger));
        true
    }

    /// Sends the next probe; in flood mode reads the reply at once while that pays (on a
    /// fast path such as loopback it is queued before sendto returns). Returns the time
    /// right after sendto and whether the reply was read.
    fn send_and_peek(&mut self) -> Result<(i64, bool), Failure> {
        let after = self.send_probe()?;
        if !(self.cfg.flood && (self.eager_read || self.tracker.next_number() % 256 == 0)) {
            return Ok((after, false));
        }
        let before = self.tracker.waiting();
        self.drain()?;
        let hit = self.tracker.waiting() < before;
        self.eager_read = hit;
        Ok((after, hit))
    }

    /// Waits up to `timeout_ns` (`None`: without limit) for the socket, then reads what
    /// came: the error queue first, then replies.
    fn wait_and_read(&mut self, timeout_ns: Option<i64>) -> Result<(), Failure> {
        match socket::wait(&self.sock, timeout_ns) {
            Ok((readable, errq)) => {
                if errq {
                    self.drain_errqueue(DRAIN_BATCH)?;
                }
                if readable {
                    self.drain()?;
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(Failure::new(exit::CANNOT, "poll", e)),
        }
    }

    /// Sends the next probe; returns the time right after sendto.
    fn send_probe(&mut self) -> Result<i64, Failure> {
        let number = self.tracker.next_number();
        let pkt = self.requests.probe(wire_seq(number), number);
        let before = now_ns();
        let res = self.sock.send_to(pkt, &self.target_addr);
        // The end of the sendto call bounds the kernel's stamp; without those stamps it is
        // not needed and the clock is not read again.
        let after = if self.sock.tx_stamps {
            now_ns()
        } else {
            before
        };
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
                Ok(after)
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
                self.failed_sample("send_error", i).map(|()| after)
            }
        }
    }

    pub(crate) fn probe_info(&self, p: &Probe) -> Map<String, Value> {
        let mut i = Map::new();
        i.insert("icmp_seq".into(), Value::from(p.seq));
        i.insert("probe".into(), Value::from(p.number));
        i
    }

    pub(crate) fn timeout_sample(&mut self, p: &Probe, reason: &str) -> Result<(), Failure> {
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

    pub(crate) fn failed_sample(
        &mut self,
        err: &str,
        info: Map<String, Value>,
    ) -> Result<(), Failure> {
        match self.sink.as_mut() {
            Some(sink) => sink.failed(err, info).map_err(|e| out_err(&e)),
            None => Ok(()),
        }
    }
}
