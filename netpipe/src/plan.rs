//! What a measuring run was asked to do: the role, the endpoint, the limits and the socket
//! options, and the begin record's parameters made from them.

use crate::addr;
use crate::sock::SockOpts;
use measure::parts::info;
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::time::Duration;

/// Which way the data flows from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Send,
    Recv,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Send => "sender",
            Role::Recv => "receiver",
        }
    }

    pub fn bytes_key(self) -> &'static str {
        match self {
            Role::Send => "sent_bytes",
            Role::Recv => "received_bytes",
        }
    }
}

/// Which of a run's two directions a session moves data in: the plan's own role, or the
/// other one (a --bidir client's reverse streams, which the listener serves in the other
/// role).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
}

/// Where the streams come from.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// The address, and the --listen value as typed (for messages).
    Listen(SocketAddr, String),
    Connect(String, Vec<SocketAddr>),
}

/// Everything a measuring run was asked to do.
#[derive(Clone, Debug)]
pub struct Plan {
    pub role: Role,
    pub endpoint: Endpoint,
    pub bind: Option<SocketAddr>,
    pub v6_only: bool,
    pub bytes: Option<u64>,
    pub time: Option<Duration>,
    pub omit: Duration,
    pub interval: Option<Duration>,
    pub parallel: Option<usize>,
    pub idle: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    pub keep_open: bool,
    pub block: usize,
    pub random: bool,
    pub method: SendMethod,
    pub opts: SockOpts,
    /// UDP datagrams instead of a TCP stream (`--udp`).
    pub udp: bool,
    /// A UDP sender's pace, in bits per second (`--rate`).
    pub rate: Option<f64>,
    /// Both directions at once (`--bidir`): a connecting side also opens as many streams
    /// in the other role.
    pub bidir: bool,
    /// `--token` (or NETPIPE_TOKEN), zero-padded: a listener takes only netpipe clients
    /// whose hello carries it; a client puts it in its hello.
    pub token: Option<crate::wire::Key>,
}

/// How a sender hands its buffer to the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMethod {
    /// tee + splice of pages put in a pipe once: no copy.
    Splice,
    /// send() from the buffer: one copy, as iperf3 and nc do.
    Copy,
    /// sendfile() from a memfd holding the pattern: no copy.
    Sendfile,
}

impl Plan {
    /// The parameters for the begin record.
    pub fn info(&self) -> Map<String, Value> {
        let (mode, target, port) = match &self.endpoint {
            Endpoint::Listen(a, _) => ("listen", addr::show(a), a.port()),
            Endpoint::Connect(t, a) => ("connect", t.clone(), a.first().map_or(0, |a| a.port())),
        };
        info(json!({
            "role": self.role.word(),
            "mode": mode,
            "target": target,
            "port": port,
            "bind": self.bind.map(|b| addr::show(&b)),
            "bytes_limit": self.bytes,
            "time_limit_s": self.time.map(|t| t.as_secs_f64()),
            "omit_s": self.omit.as_secs_f64(),
            "interval_s": self.interval.map(|t| t.as_secs_f64()),
            "parallel": self.parallel,
            "idle_timeout_s": self.idle.map(|t| t.as_secs_f64()),
            "connect_timeout_s": self.connect_timeout.map(|t| t.as_secs_f64()),
            "keep_open": self.keep_open,
            "block_bytes": self.block,
            "send_method": if self.role == Role::Send { Some(match self.method { SendMethod::Splice => "splice", SendMethod::Copy => "copy", SendMethod::Sendfile => "sendfile" }) } else { None },
            "pattern": if self.role == Role::Send { Some(if self.random { "random" } else { "zero" }) } else { None },
            "window_bytes": self.opts.window,
            "no_delay": self.opts.no_delay,
            "congestion": self.opts.congestion,
            "mss_bytes": self.opts.mss,
            "protocol": if self.udp { "udp" } else { "tcp" },
            "rate_bits_per_s": self.rate,
            "bidir": self.bidir,
            "token_required": matches!(self.endpoint, Endpoint::Listen(..)).then_some(self.token.is_some()),
            "discard": if self.role == Role::Recv && !self.udp { Some("recv MSG_TRUNC") } else { None },
            "wake_mark": if self.role == Role::Recv && !self.udp { Some("SO_RCVLOWAT: 1 ms of data at the recent rate, at most 2 MiB and a quarter of the receive buffer, raised after the first byte") } else { None },
        }))
    }

    /// The plan of the other direction (--bidir, or a listener asked for it): the other
    /// role, with that role's default block size and the copying send method.
    fn reversed(&self) -> Plan {
        let role = match self.role {
            Role::Send => Role::Recv,
            Role::Recv => Role::Send,
        };
        Plan {
            role,
            block: if role == Role::Send { 1 << 20 } else { 4 << 20 },
            method: SendMethod::Copy,
            random: false,
            ..self.clone()
        }
    }

    pub fn listens(&self) -> bool {
        matches!(self.endpoint, Endpoint::Listen(..))
    }

    pub fn run_for(&self) -> Option<Duration> {
        self.time.map(|t| t + self.omit)
    }
}

/// A measuring run's plan for each direction, both made once before the run: a listener may
/// be asked for either, and a --bidir client runs both.
#[derive(Clone, Debug)]
pub struct Plans {
    /// What was asked for: this side's own role.
    pub fwd: Plan,
    /// The other direction: see [`Plan::reversed`].
    pub rev: Plan,
}

impl Plans {
    pub fn new(fwd: Plan) -> Plans {
        let rev = fwd.reversed();
        Plans { fwd, rev }
    }

    /// The plan of the sessions that move data in direction `d`.
    pub fn get(&self, d: Direction) -> &Plan {
        match d {
            Direction::Forward => &self.fwd,
            Direction::Reverse => &self.rev,
        }
    }
}
