//! One run: the socket opened and configured, begin written, the probe loop set up with
//! its records and human lines, and the summary once it ends.

use crate::clock::now_ns;
use crate::config::Config;
use crate::human::PingLines;
use crate::packet::{self, Family};
use crate::records::Records;
use crate::socket::{self, IcmpSocket, Kind, SocketOptions};
use crate::tracker::Tracker;
use measure::parts::{Values, info};
use measure::{Exit, Failure, Status};
use serde_json::{Map, Value, json};
use std::io;
use std::time::Duration;

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

/// Below this interval records are batched (bounded by `records::MAX_DELAY`) as in flood.
const FAST_INTERVAL: Duration = Duration::from_millis(10);

/// The state of one run's probing, over the session's Reporter (`'r`) and, in flood mode, a
/// writer thread of the scope `'s`.
pub(crate) struct Prober<'s, 'r> {
    pub(crate) cfg: Config,
    /// Sample records go here; taken back for the summary.
    pub(crate) records: Option<Records<'s, 'r>>,
    pub(crate) sock: IcmpSocket,
    pub(crate) id: u16,
    pub(crate) tracker: Tracker,
    pub(crate) rtts: Vec<f64>,
    pub(crate) human: PingLines<'r>,
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

pub(crate) fn ns(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

pub(crate) fn out_err(e: &io::Error) -> Failure {
    Failure::io("writing the records", e)
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
/// summary and returns the failure.
fn open_socket(
    cfg: &Config,
    base: &mut Map<String, Value>,
    s: &mut measure::Session,
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
        Ok(sock) => Ok(sock),
        Err(msg) => {
            base.insert(
                "socket".into(),
                json!(format!("{:?}", cfg.socket).to_lowercase()),
            );
            s.begin(base.clone())?;
            s.not_ok(Status::Failed, &msg, Values::new(), base.clone())?;
            Err(Failure::new(Exit::Cannot, cfg.host.clone(), msg))
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
            "kernel SO_TIMESTAMPING TX_SOFTWARE (the driver's), else TX_SCHED, else user before sendto"
        } else {
            "user before sendto"
        }),
    );
}

/// Runs the probes of `cfg`, writing every record through `s`; always writes the summary.
pub fn run(cfg: Config, s: &mut measure::Session) -> Result<Exit, Failure> {
    let mut base = params(&cfg);
    let sock = open_socket(&cfg, &mut base, s)?;
    let cookie = measure::parts::random_u64();
    let id = match sock.kind {
        Kind::Raw => (cookie >> 48) as u16,
        Kind::Dgram => sock.dgram_id().unwrap_or(0),
    };
    // Other pingers' replies stay out of the socket (best effort: without the filter the
    // tracker still tells them apart, as foreign).
    let _ = sock.keep_only_ident(id);
    socket_info(&mut base, &sock, id);
    s.begin(base.clone())?;
    // The kernel turns receive stamping on for the whole stack a moment after the first
    // socket asks (a deferred static key): wait for it (at most 10 ms) so probe 1 gets its
    // stamp.
    socket::wait_for_rx_stamps(Duration::from_millis(10));
    let (rep, human) = s.parts();
    let mut lines = PingLines::new(human, cfg.flood, cfg.timestamps);
    let ip_header = if cfg.family == Family::V4 { 20 } else { 40 };
    lines.header(&cfg.host, &cfg.target.ip().to_string(), cfg.size, ip_header);
    let from = cfg.target.ip().to_string();
    std::thread::scope(|scope| {
        let records = if cfg.flood {
            Records::threaded(scope, rep, from)
                .map_err(|e| Failure::new(Exit::Cannot, "cannot start the record writer", e))?
        } else {
            let fast = cfg.interval < FAST_INTERVAL;
            Records::direct(rep, from, fast)
        };
        let mut p = Prober::new(cfg, sock, id, cookie, records, lines, base);
        let result = p.probe_loop();
        p.finish(result)
    })
}

impl<'s, 'r: 's> Prober<'s, 'r> {
    /// A prober over the open socket `sock`, its probe table and RTT list backed with
    /// memory before the first probe (for a run without a count, room for 65536 probes).
    fn new(
        cfg: Config,
        sock: IcmpSocket,
        id: u16,
        cookie: u64,
        records: Records<'s, 'r>,
        human: PingLines<'r>,
        base_info: Map<String, Value>,
    ) -> Self {
        let target_text = cfg.target.ip().to_string();
        let target_addr = socket2::SockAddr::from(cfg.target);
        let mut s = Prober {
            tracker: Tracker::new(cookie, cfg.size, ns(cfg.timeout)),
            buf: vec![0u8; cfg.size + 8 + 60 + 512],
            errbuf: vec![0u8; cfg.size + 8 + 60 + 512],
            requests: packet::Requests::new(cfg.family, id, cookie, cfg.size),
            records: Some(records),
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
}
