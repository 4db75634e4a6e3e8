//! Measuring mode over UDP (`--udp`): the paced sender, the receiver that counts loss,
//! jitter, reordering and duplicates (udp.rs), and their records. Either side may listen: a
//! listening sender waits for the receiver's hello datagram and sends to where it came from.

use crate::addr;
use crate::ctl::Ctl;
use crate::plan::{Endpoint, Plan, Role};
use crate::sock::TICK;
use crate::udp::{self, DATA, END, Flow, HEADER, HELLO, START};
use crate::udpsend;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::units::{format_bits_per_s, format_bytes, format_seconds};
use measure::{Exit, Failure, Status};
use serde_json::json;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// A receiver that has had data takes this long without a datagram as the sender's end
/// (its end datagrams lost).
const QUIET: Duration = Duration::from_secs(2);

/// How a UDP run ended, and what it says.
struct Ended {
    status: Status,
    error: Option<String>,
    end: &'static str,
}

/// Runs `send --udp` or `recv --udp`: begin, the flow, its sample and the summary.
pub fn run(plan: Plan, out: &mut Session) -> Result<Exit, Failure> {
    let mut begin = plan.info();
    let s = match open(&plan) {
        Ok(s) => s,
        Err(e) => {
            out.begin(begin)?;
            let what = match &plan.endpoint {
                Endpoint::Listen(_, typed) => format!("--listen {typed}"),
                Endpoint::Connect(t, _) => format!("--connect {t}"),
            };
            let msg = format!("{what}: {e}");
            out.summary(summary(Status::Failed, Some(msg), Values::new(), &plan))?;
            return Err(Failure::new(Exit::Cannot, what, e));
        }
    };
    if let Some(a) = s.local_addr().ok()
        && matches!(plan.endpoint, Endpoint::Listen(..))
    {
        begin.insert("listen".into(), json!(addr::show(&a)));
        begin.insert("port".into(), json!(a.port()));
    }
    out.begin(begin)?;
    let ctl = Ctl::new(None, plan.time, plan.idle);
    let (values, ended) = match plan.role {
        Role::Send => send(&plan, &s, &ctl, out)?,
        Role::Recv => recv(&plan, &s, &ctl, out)?,
    };
    let code = match (ended.status, ended.end) {
        (_, "interrupted") => Exit::Interrupted,
        (Status::Ok, _) => Exit::Ok,
        _ => Exit::MeasuredFailure,
    };
    if let Some(e) = &ended.error {
        crate::human::say(e);
    }
    out.summary(summary(ended.status, ended.error, values, &plan))?;
    Ok(code)
}

fn summary(status: Status, error: Option<String>, values: Values, plan: &Plan) -> Summary {
    Summary {
        status,
        error,
        headline: Some("throughput_bits_per_s".into()),
        headlines: Vec::new(),
        values,
        info: info(json!({
            "role": plan.role.word(),
            "measured_by": plan.role.word(),
            "protocol": "udp",
        })),
    }
}

/// The socket: bound to the listen address, or connected to the peer.
fn open(plan: &Plan) -> io::Result<UdpSocket> {
    let (local, peer) = match &plan.endpoint {
        Endpoint::Listen(a, _) => (*a, None),
        Endpoint::Connect(_, addrs) => {
            let p = *addrs.first().ok_or(io::ErrorKind::AddrNotAvailable)?;
            let any = match p {
                SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
                SocketAddr::V6(_) => SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0)),
            };
            (plan.bind.unwrap_or(any), Some(p))
        }
    };
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    if local.is_ipv6() && local.ip().is_unspecified() {
        s.set_only_v6(plan.v6_only)?;
    }
    // Room for bursts: the kernel caps it at net.core.rmem_max / wmem_max.
    let buf = plan.opts.window.unwrap_or(4 << 20);
    let _ = s.set_recv_buffer_size(buf);
    let _ = s.set_send_buffer_size(buf);
    s.bind(&SockAddr::from(local))?;
    if let Some(p) = peer {
        s.connect(&SockAddr::from(p))?;
    }
    s.set_read_timeout(Some(TICK))?;
    Ok(s.into())
}

/// A listening sender waits for the receiver's hello (one that proves the --token, if
/// given): where it came from is the peer.
fn wait_hello(s: &UdpSocket, ctl: &Ctl, plan: &Plan) -> Option<SocketAddr> {
    let mut b = [0u8; 256];
    let started = Instant::now();
    // Bounded by Ctrl-C and the idle timeout; each pass waits a tick at most.
    loop {
        if measure::signal::interrupted() || ctl.idle.is_some_and(|d| started.elapsed() >= d) {
            return None;
        }
        if let Ok((n, from)) = s.recv_from(&mut b)
            && udp::header(&b[..n]).is_some_and(|(k, _, _)| k == HELLO)
            && udp::proves(&b[..n], plan.token.as_ref())
        {
            return Some(from);
        }
    }
}

/// Sends paced datagrams until --time, --bytes, Ctrl-C or a fault, then the end datagram
/// (three times, as any may be lost).
fn send(
    plan: &Plan,
    s: &UdpSocket,
    ctl: &Ctl,
    out: &mut Session,
) -> Result<(Values, Ended), Failure> {
    let to = match plan.endpoint {
        Endpoint::Listen(..) => match wait_hello(s, ctl, plan) {
            Some(a) => Some(a),
            None => {
                let e = if plan.token.is_some() {
                    "no receiver said hello with this sender's --token (recv --udp --connect to this port, given the same token)"
                } else {
                    "no receiver said hello (recv --udp --connect to this port)"
                };
                return Ok((Values::new(), failed(e)));
            }
        },
        Endpoint::Connect(..) => None,
    };
    let size = plan.block.max(HEADER);
    let rate = plan.rate.unwrap_or(1e6);
    let gap = udp::gap(size, rate);
    send_start(plan, s, to.as_ref(), ctl);
    let sent = match udpsend::paced(plan, s, to.as_ref(), ctl, size, rate) {
        Ok(x) => x,
        Err(e) => return Ok((Values::new(), failed(&format!("sending: {e}")))),
    };
    let secs = sent.seconds(gap, plan.time.is_some());
    let udpsend::Sent {
        end,
        seq,
        bytes,
        refused,
        batches,
        ..
    } = sent;
    let mut v = Values::new();
    v.set_count("sent_bytes", bytes);
    v.set_count("datagrams_count", seq);
    v.set_count("refused_count", refused);
    if seq > 0 {
        v.set("duration_s", secs);
        v.set("throughput_bits_per_s", bytes as f64 * 8.0 / secs);
    }
    let inf = info(
        json!({"role": "sender", "end": end, "datagram_bytes": size, "rate_bits_per_s": rate,
               "catch_up_batches": batches}),
    );
    out.sample(v.clone(), inf)?;
    let name = out.name().to_string();
    out.human().summary(&format!(
        "{name}: sent {} in {} datagrams over {} = {} (paced to {})\n",
        format_bytes(bytes as f64),
        seq,
        format_seconds(secs),
        format_bits_per_s(bytes as f64 * 8.0 / secs),
        format_bits_per_s(rate)
    ));
    let ended = if seq == 0 || refused > seq / 2 {
        failed("the peer's port is closed (ICMP port unreachable): is a receiver running?")
    } else if end == "interrupted" && (plan.time.is_some() || plan.bytes.is_some()) {
        partial(end, "interrupted before the limit")
    } else if seq < 2 {
        // One datagram times nothing but the pace; the receiver reports no figure either.
        partial(
            end,
            "one datagram is too little to time: give a higher --rate, a longer -t or more --bytes",
        )
    } else {
        Ended {
            status: Status::Ok,
            error: None,
            end,
        }
    };
    Ok((v, ended))
}

/// The start datagram, three times (any may be lost), before the first data datagram: the
/// session's random token and the --token's key block, which the receiver checks.
fn send_start(plan: &Plan, s: &UdpSocket, to: Option<&SocketAddr>, ctl: &Ctl) {
    let start = udp::greeting(
        START,
        crate::agree::token(),
        ctl.now_ns(),
        plan.token.as_ref(),
    );
    for _ in 0..3 {
        let _ = match to {
            Some(a) => s.send_to(&start, a),
            None => s.send(&start),
        };
    }
}

fn failed(e: &str) -> Ended {
    Ended {
        status: Status::Failed,
        error: Some(e.to_string()),
        end: "error",
    }
}

fn partial(end: &'static str, e: &str) -> Ended {
    Ended {
        status: Status::Partial,
        error: Some(e.to_string()),
        end,
    }
}

/// Receives until the sender's end datagram, --time, Ctrl-C, the idle timeout, or
/// [`QUIET`] after the last datagram; writes the flow's sample.
fn recv(
    plan: &Plan,
    s: &UdpSocket,
    ctl: &Ctl,
    out: &mut Session,
) -> Result<(Values, Ended), Failure> {
    let connecting = matches!(plan.endpoint, Endpoint::Connect(..));
    let began = Instant::now();
    let (f, end) = take(plan, s, ctl, connecting);
    let wall_s = began.elapsed().as_secs_f64();
    let mut v = Values::new();
    v.set_count("received_bytes", f.bytes);
    v.set_count("datagrams_count", f.got);
    v.set_count("lost_count", f.lost());
    v.set("loss_ratio", f.loss_ratio());
    v.set("jitter_s", f.jitter_s);
    v.set_count("reordered_count", f.reordered);
    v.set_count("duplicate_count", f.duplicates);
    v.set_count("stray_count", f.strays);
    let mut rate = None;
    if let (Some(a), Some(b)) = (f.first_ns, f.last_ns)
        && b > a
        && f.got > 1
    {
        // First to last datagram spans got - 1 gaps: the bytes of as many datagrams.
        let secs = (b - a) as f64 / 1e9;
        let bits = f.bytes as f64 * 8.0 * (f.got - 1) as f64 / f.got as f64;
        v.set("duration_s", secs);
        v.set("throughput_bits_per_s", bits / secs);
        rate = Some(bits / secs);
    }
    let inf = info(json!({"role": "receiver", "end": end, "sender_count_known": f.sent.is_some()}));
    out.sample(v.clone(), inf)?;
    let name = out.name().to_string();
    out.human().summary(&format!(
        "{name}: received {} in {} datagrams = {}, {} lost ({:.3}%), jitter {}, {} reordered, {} duplicates\n",
        format_bytes(f.bytes as f64),
        f.got,
        rate.map_or("-".into(), format_bits_per_s),
        f.lost(),
        f.loss_ratio() * 100.0,
        format_seconds(f.jitter_s),
        f.reordered,
        f.duplicates
    ));
    let ended = judge(plan, &f, end, wall_s);
    Ok((v, ended))
}

/// How a receive that ended with `end` after `wall_s` seconds went: its status and error.
fn judge(plan: &Plan, f: &Flow, end: &'static str, wall_s: f64) -> Ended {
    match end {
        _ if f.got == 0 && f.strays > 0 => failed(&format!(
            "no sender proved itself: {} datagrams came, none after a start datagram{} (not a netpipe sender of this session)",
            f.strays,
            if plan.token.is_some() {
                " with this receiver's --token"
            } else {
                ""
            }
        )),
        _ if f.got == 0 => failed("no datagram arrived"),
        // Jitter is a smoothed mean of differences between datagrams' transit times, each at
        // most the time the sender sent for: it cannot exceed the time this receiver ran
        // (a second of slack for the sender's clock).
        _ if f.jitter_s > wall_s + 1.0 => partial(
            end,
            &format!(
                "jitter {} s exceeds the {wall_s:.3} s the receiver ran: the datagrams' time \
                 stamps are forged or corrupt, so no figure of this flow is trusted",
                f.jitter_s
            ),
        ),
        "eof" | "limit" => Ended {
            status: Status::Ok,
            error: None,
            end,
        },
        "interrupted" if plan.time.is_none() => Ended {
            status: Status::Ok,
            error: None,
            end,
        },
        "quiet" => partial(
            end,
            "the sender's end datagram never came: it vanished, or the end was lost",
        ),
        _ => partial(end, "interrupted before the sender's end"),
    }
}

/// The receive loop: takes datagrams into a [`Flow`] until the sender's end, --time, Ctrl-C,
/// the idle timeout before any datagram, or [`QUIET`] after the last. A connecting receiver
/// says hello (to a listening sender) every 100 ms until data comes.
fn take(plan: &Plan, s: &UdpSocket, ctl: &Ctl, connecting: bool) -> (Flow, &'static str) {
    let mut f = Flow::default();
    let mut b = vec![0u8; 65536];
    let mut from: Option<SocketAddr> = None;
    let started = Instant::now();
    let mut hello_at = started;
    let mut last = started;
    s.set_read_timeout(Some(if connecting {
        Duration::from_millis(100)
    } else {
        TICK
    }))
    .ok();
    // Bounded by the end datagram, the limits, Ctrl-C and the timeouts; each pass waits a
    // tick at most.
    loop {
        if measure::signal::interrupted() {
            return (f, "interrupted");
        }
        let now = Instant::now();
        if let (Some(t), Some(first)) = (plan.time, f.first_ns)
            && ctl.now_ns() >= first + t.as_nanos() as u64
        {
            return (f, "limit");
        }
        if connecting && f.got == 0 && now >= hello_at {
            let h = udp::greeting(HELLO, 0, ctl.now_ns(), plan.token.as_ref());
            let _ = s.send(&h);
            hello_at = now + Duration::from_millis(100);
        }
        let (n, src) = match s.recv_from(&mut b) {
            Ok(x) => x,
            Err(_) => {
                if f.got > 0 && last.elapsed() >= QUIET {
                    return (f, "quiet");
                }
                if f.got == 0 && ctl.idle.is_some_and(|d| started.elapsed() >= d) {
                    return (f, "idle-timeout");
                }
                continue;
            }
        };
        let Some(parsed) = admit(&b[..n], src, &mut from, plan, &mut f) else {
            continue;
        };
        match parsed {
            (DATA, seq, stamp) => {
                last = Instant::now();
                f.take(seq, stamp, ctl.ns(last), n);
            }
            (END, count, _) => {
                f.sent = Some(count);
                return (f, "eof");
            }
            _ => {}
        }
    }
}

/// Whether the datagram `b` from `src` is the flow's: the peer is the first address whose
/// start datagram proves the --token (any start without one), and after it only that
/// address's data and end datagrams count. Anything else, a datagram with netpipe's header
/// among them, is a stray: counted, ignored. Returns the header of a data or end datagram.
fn admit(
    b: &[u8],
    src: SocketAddr,
    from: &mut Option<SocketAddr>,
    plan: &Plan,
    f: &mut Flow,
) -> Option<(u32, u64, u64)> {
    let h = udp::header(b);
    match (h, *from) {
        (Some((START, _, _)), None) if udp::proves(b, plan.token.as_ref()) => {
            *from = Some(src);
            None
        }
        // The sender's start again (it is sent three times).
        (Some((START, _, _)), Some(p)) if p == src => None,
        (Some((kind, ..)), Some(p)) if p == src && (kind == DATA || kind == END) => h,
        _ => {
            f.strays += 1;
            None
        }
    }
}
