//! Measuring mode (`send`, `recv`): opens or accepts the streams of a session, runs them in
//! threads, reports intervals from the main thread, then one sample per connection and the
//! summary.

use crate::addr;
use crate::cpu::Cpu;
use crate::sock::{self, SockOpts, TICK, WaitEnd};
use crate::stream::{self, Ctl, End, Outcome, Progress};
use measure::Failure;
use measure::Status;
use measure::cli::exit;
use measure::writer::{Reporter, Summary, Values, info};
use serde_json::{Map, Value, json};
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
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

    fn bytes_key(self) -> &'static str {
        match self {
            Role::Send => "sent_bytes",
            Role::Recv => "received_bytes",
        }
    }
}

/// Where the streams come from.
#[derive(Clone, Debug)]
pub enum Endpoint {
    Listen(SocketAddr),
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
        let (mode, target) = match &self.endpoint {
            Endpoint::Listen(a) => ("listen", addr::show(a)),
            Endpoint::Connect(t, _) => ("connect", t.clone()),
        };
        info(json!({
            "role": self.role.word(),
            "mode": mode,
            "target": target,
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
            "pattern": if self.role == Role::Send { Some(if self.random { "random" } else { "zeros" }) } else { None },
            "window_bytes": self.opts.window,
            "no_delay": self.opts.no_delay,
            "congestion": self.opts.congestion,
            "mss_bytes": self.opts.mss,
            "discard": if self.role == Role::Recv { Some("recv MSG_TRUNC") } else { None },
            "wake_mark": if self.role == Role::Recv { Some("SO_RCVLOWAT: 1 ms of data at the recent rate, at most 2 MiB and a quarter of the receive buffer, raised after the first byte") } else { None },
        }))
    }

    fn run_for(&self) -> Option<Duration> {
        self.time.map(|t| t + self.omit)
    }
}

/// One live stream of a session.
struct Live {
    sock: Arc<Socket>,
    prog: Arc<Progress>,
    handle: JoinHandle<Outcome>,
    local: Option<SocketAddr>,
    peer: SocketAddr,
}

/// What a session measured, for the summary.
#[derive(Debug, Default)]
struct Tally {
    sessions: u64,
    streams: u64,
    failed_streams: u64,
    bytes: u64,
    measured_bytes: u64,
    measured_s: f64,
    retrans: u64,
    rtt_sum_s: f64,
    rtt_n: u64,
    cpu: Cpu,
    active_s: f64,
    errors: Vec<String>,
    interrupted: bool,
    /// Ctrl-C came while streams were moving data (not between sessions).
    cut: bool,
    omit_short: bool,
}

/// Runs `send` or `recv`: begin, sessions, samples, summary.
pub fn run(plan: Plan, rep: &mut Reporter) -> Result<u8, Failure> {
    let mut begin = plan.info();
    begin.insert(
        "machine".into(),
        Value::Object(measure::envfacts::Probe::system().machine()),
    );
    let mut tally = Tally::default();
    let listener = match &plan.endpoint {
        Endpoint::Listen(a) => match sock::listen_any(*a, plan.v6_only, &plan.opts) {
            Ok(l) => {
                if let Some(bound) = l.local_addr().ok().and_then(|a| a.as_socket()) {
                    begin.insert("listen".into(), json!(addr::show(&bound)));
                }
                Some(l)
            }
            Err(e) => {
                let msg = format!("cannot listen on {}: {e}", addr::show(a));
                rep.begin(begin).map_err(|e| Failure::io("records", &e))?;
                write_summary(rep, &plan, &tally, Status::Failed, Some(msg.clone()))?;
                return Err(Failure::new(exit::CANNOT, "listen", msg_cause(&msg)));
            }
        },
        Endpoint::Connect(..) => None,
    };
    rep.begin(begin).map_err(|e| Failure::io("records", &e))?;
    if let Some(l) = &listener {
        human(&format!(
            "listening on {} as the {}",
            l.local_addr()
                .ok()
                .and_then(|a| a.as_socket())
                .map(|a| addr::show(&a))
                .unwrap_or_default(),
            plan.role.word()
        ));
    }
    let result = match (&plan.endpoint, &listener) {
        (Endpoint::Listen(_), Some(l)) => serve(&plan, l, rep, &mut tally),
        (Endpoint::Connect(target, addrs), _) => {
            connect_session(&plan, target, addrs, rep, &mut tally)
        }
        _ => Ok(()),
    };
    if let Err(f) = result {
        let msg = f.message.clone();
        write_summary(rep, &plan, &tally, Status::Failed, msg)?;
        return Err(f);
    }
    let (status, error, code) = verdict(&plan, &tally);
    write_summary(rep, &plan, &tally, status, error.clone())?;
    human_summary(&plan, &tally);
    if let Some(e) = error
        && code != exit::OK
    {
        eprintln_human(&format!("netpipe: {e}"));
    }
    Ok(code)
}

fn msg_cause(m: &str) -> String {
    m.split_once(": ")
        .map(|(_, c)| c.to_string())
        .unwrap_or_else(|| m.to_string())
}

/// Status, error and exit code from what happened.
fn verdict(plan: &Plan, t: &Tally) -> (Status, Option<String>, u8) {
    let unlimited = plan.bytes.is_none() && plan.time.is_none();
    if t.interrupted {
        // Ctrl-C is how an unlimited sender or a --keep-open listener is meant to end.
        let expected = !t.cut || (plan.role == Role::Send && unlimited);
        let clean = t.errors.is_empty() && t.measured_bytes > 0 && expected;
        let status = if clean {
            Status::Ok
        } else if t.bytes > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        let err = (status != Status::Ok).then(|| {
            format!(
                "interrupted after {} bytes{}",
                t.bytes,
                first_error(t).map(|e| format!("; {e}")).unwrap_or_default()
            )
        });
        return (status, err, exit::INTERRUPTED);
    }
    if !t.errors.is_empty() {
        let status = if t.bytes > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        let mut e = first_error(t).unwrap_or_default();
        if t.errors.len() > 1 {
            e.push_str(&format!(" (and {} more)", t.errors.len() - 1));
        }
        return (status, Some(e), exit::MEASURED_FAILURE);
    }
    if t.measured_bytes == 0 {
        return (
            Status::Failed,
            Some("no bytes were transferred".into()),
            exit::MEASURED_FAILURE,
        );
    }
    if let (Some(want), Role::Recv) = (plan.bytes, plan.role)
        && t.bytes < want
        && !plan.keep_open
    {
        return (
            Status::Partial,
            Some(format!(
                "the peer closed after {} of the {want} bytes asked for (--bytes)",
                t.bytes
            )),
            exit::MEASURED_FAILURE,
        );
    }
    (Status::Ok, None, exit::OK)
}

fn first_error(t: &Tally) -> Option<String> {
    t.errors.first().cloned()
}

fn write_summary(
    rep: &mut Reporter,
    plan: &Plan,
    t: &Tally,
    status: Status,
    error: Option<String>,
) -> Result<(), Failure> {
    let mut v = Values::new();
    if t.measured_s > 0.0 && t.measured_bytes > 0 {
        v.set(
            "throughput_bits_per_s",
            t.measured_bytes as f64 * 8.0 / t.measured_s,
        );
        v.set(
            "throughput_bytes_per_s",
            t.measured_bytes as f64 / t.measured_s,
        );
    }
    v.set_count(plan.role.bytes_key(), t.bytes);
    v.set_count("measured_bytes", t.measured_bytes);
    v.set("duration_s", t.measured_s);
    v.set_count("stream_count", t.streams);
    v.set_count("failed_stream_count", t.failed_streams);
    v.set_count("session_count", t.sessions);
    if plan.role == Role::Send && t.streams > 0 {
        v.set_count("retransmits_count", t.retrans);
        if t.rtt_n > 0 {
            v.set("rtt_s", t.rtt_sum_s / t.rtt_n as f64);
        }
    }
    v.set("cpu_user_s", t.cpu.user_s);
    v.set("cpu_sys_s", t.cpu.sys_s);
    if t.active_s > 0.0 {
        v.set("cpu_seconds_per_s", t.cpu.total_s() / t.active_s);
    }
    let note = match plan.role {
        Role::Recv => "the receiver's figure: its own clock from the first byte to EOF",
        Role::Send => {
            "the sender's figure: from the first byte written until the peer closed after the half-close; the receiver's own figure is the reference"
        }
    };
    let i = info(json!({
        "role": plan.role.word(),
        "measured_by": plan.role.word(),
        "note": note,
        "errors": t.errors,
        "omit_longer_than_transfer": t.omit_short,
    }));
    rep.summary(Summary {
        status,
        error,
        headline: Some("throughput_bits_per_s".into()),
        values: v,
        info: i,
    })
    .map_err(|e| Failure::io("records", &e))
}

/// Serves sessions on a listener: one, or one after another with --keep-open.
fn serve(plan: &Plan, l: &Socket, rep: &mut Reporter, t: &mut Tally) -> Result<(), Failure> {
    // Bounded by Ctrl-C (and, without --keep-open, by one session).
    loop {
        let (s, peer) = match sock::accept(l, None) {
            Ok(x) => x,
            Err(WaitEnd::Interrupted) => {
                t.interrupted = true;
                return Ok(());
            }
            Err(WaitEnd::TimedOut) => continue,
            Err(WaitEnd::Failed(e)) => {
                return Err(Failure::new(exit::CANNOT, "accept", e));
            }
        };
        human(&format!("connection from {}", addr::show(&peer)));
        session(plan, vec![(s, peer)], Some(l), rep, t)?;
        if !plan.keep_open || t.interrupted {
            return Ok(());
        }
    }
}

/// Opens the streams to the peer and runs one session.
fn connect_session(
    plan: &Plan,
    target: &str,
    addrs: &[SocketAddr],
    rep: &mut Reporter,
    t: &mut Tally,
) -> Result<(), Failure> {
    let n = plan.parallel.unwrap_or(1);
    let mut socks = Vec::with_capacity(n);
    for _ in 0..n {
        match sock::connect(addrs, plan.bind, &plan.opts, plan.connect_timeout) {
            Ok(s) => {
                let peer = s
                    .peer_addr()
                    .ok()
                    .and_then(|a| a.as_socket())
                    .unwrap_or(addrs[0]);
                socks.push((s, peer));
            }
            Err(WaitEnd::Interrupted) => {
                t.interrupted = true;
                return Ok(());
            }
            Err(e) => {
                let msg = format!(
                    "cannot connect to {target}: {}",
                    sock::describe(&e, plan.connect_timeout)
                );
                t.errors.push(msg.clone());
                t.failed_streams += 1;
                rep.sample_failed(&msg, info(json!({"target": target})))
                    .map_err(|e| Failure::io("records", &e))?;
                return Ok(());
            }
        }
    }
    session(plan, socks, None, rep, t)
}

fn spawn(plan: &Plan, ctl: &Arc<Ctl>, s: Socket, peer: SocketAddr) -> Result<Live, Failure> {
    plan.opts
        .apply_stream(&s)
        .map_err(|e| Failure::new(exit::CANNOT, "socket options", e))?;
    let local = s.local_addr().ok().and_then(|a| a.as_socket());
    let sock = Arc::new(s);
    let prog = Arc::new(Progress::new());
    let (s2, p2, c2) = (Arc::clone(&sock), Arc::clone(&prog), Arc::clone(ctl));
    let role = plan.role;
    let block = plan.block;
    let random = plan.random;
    let method = plan.method;
    let handle = std::thread::Builder::new()
        .name("netpipe-stream".into())
        .spawn(move || match role {
            Role::Send => {
                let mut src = match method {
                    SendMethod::Splice => stream::Source::splice(block, random),
                    SendMethod::Sendfile => stream::Source::sendfile(block, random),
                    SendMethod::Copy => None,
                }
                .unwrap_or_else(|| stream::Source::copy(block, random));
                stream::send(&s2, &c2, &p2, &mut src)
            }
            Role::Recv => {
                let mut buf = vec![0u8; block.max(4 << 20)];
                stream::recv(&s2, &c2, &p2, &mut buf)
            }
        })
        .map_err(|e| Failure::new(exit::CANNOT, "starting a stream thread", e))?;
    Ok(Live {
        sock,
        prog,
        handle,
        local,
        peer,
    })
}

/// The sum of TCP_INFO retransmits, mean RTT and summed cwnd over live streams.
fn tcp_now(live: &[Live]) -> (u64, Option<f64>, u64) {
    use std::os::fd::AsRawFd;
    let mut retr = 0u64;
    let mut rtt = 0.0;
    let mut n = 0u32;
    let mut cwnd = 0u64;
    for l in live {
        if let Some(ti) = sock::tcp_info(l.sock.as_raw_fd()) {
            retr += u64::from(ti.total_retrans);
            rtt += ti.rtt_s;
            n += 1;
            cwnd += ti.cwnd_bytes();
        }
    }
    (retr, (n > 0).then(|| rtt / f64::from(n)), cwnd)
}

/// Runs one session: the given streams, plus those that join from `listener` while it runs.
fn session(
    plan: &Plan,
    first: Vec<(Socket, SocketAddr)>,
    listener: Option<&Socket>,
    rep: &mut Reporter,
    t: &mut Tally,
) -> Result<(), Failure> {
    let ctl = Arc::new(Ctl::new(plan.bytes, plan.run_for(), plan.idle));
    let cpu0 = Cpu::now();
    let mut live: Vec<Live> = Vec::new();
    for (s, p) in first {
        live.push(spawn(plan, &ctl, s, p)?);
    }
    let want = plan.parallel.unwrap_or(usize::MAX);
    let omit_ns = plan.omit.as_nanos() as u64;
    let iv_ns = plan
        .interval
        .map(|d| d.as_nanos() as u64)
        .filter(|&n| n > 0);
    // (time, per-stream bytes) when the warm-up ended.
    let mut omit_snap: Option<(u64, Vec<u64>)> = None;
    let mut iv_last: Option<(u64, u64, u64)> = None; // (ns, bytes, retransmits)
    let mut iv_next: u64 = 0;
    let total = |live: &[Live]| live.iter().map(|l| l.prog.bytes()).sum::<u64>();
    // Bounded: ends when every stream has ended; streams end on EOF, limits, the idle
    // timeout or Ctrl-C (which sets `stop`). Each pass waits a tick at most.
    loop {
        // Read before looking at the streams: a Ctrl-C that came after the last stream
        // ended (and let its peer go) falls between sessions, not into a transfer.
        let interrupted = measure::cli::interrupted();
        if live.iter().all(|l| l.prog.is_done()) {
            break;
        }
        if interrupted && !ctl.stop.load(Ordering::Relaxed) {
            ctl.stop.store(true, Ordering::Relaxed);
            t.interrupted = true;
            t.cut = true;
        }
        if let Some(l) = listener
            && live.len() < want
            && !ctl.stop.load(Ordering::Relaxed)
        {
            // Streams of the same client (-P) join the running session.
            for _ in 0..64 {
                match sock::accept_ready(l) {
                    Ok(Some((s, p))) => live.push(spawn(plan, &ctl, s, p)?),
                    _ => break,
                }
                if live.len() >= want {
                    break;
                }
            }
        }
        let now = ctl.now_ns();
        let mut wake = now + TICK.as_nanos() as u64;
        if let Some(f) = ctl.first_ns() {
            if omit_snap.is_none() && now >= f + omit_ns {
                // Without --omit nothing is left out; else what moved until now is.
                let snap: Vec<u64> = if omit_ns == 0 {
                    Vec::new()
                } else {
                    let queued = !ctl.past_deadline(now);
                    live.iter().map(|l| moved(plan, l, queued)).collect()
                };
                omit_snap = Some((if omit_ns == 0 { f } else { now }, snap));
            }
            if omit_snap.is_none() {
                wake = wake.min(f + omit_ns);
            }
            if let Some(iv) = iv_ns {
                if iv_last.is_none() {
                    iv_last = Some((f, 0, 0));
                    iv_next = f + iv;
                }
                if now >= iv_next {
                    // Streams that have all ended meanwhile end the interval at their last byte.
                    let upto = last_byte(&live).map_or(now, |e| e.min(now));
                    if iv_last.is_some_and(|(l_ns, _, _)| upto > l_ns) {
                        let queued = !ctl.past_deadline(now);
                        emit_interval(
                            plan,
                            rep,
                            &live,
                            &mut iv_last,
                            upto,
                            f,
                            omit_ns,
                            t.sessions,
                            queued,
                        )?;
                    }
                    while iv_next <= now {
                        iv_next += iv;
                    }
                }
                wake = wake.min(iv_next);
            }
        }
        let wait = Duration::from_nanos(wake.saturating_sub(ctl.now_ns())).min(TICK);
        match listener {
            Some(l) if live.len() < want && !ctl.stop.load(Ordering::Relaxed) => {
                use std::os::fd::AsRawFd;
                let _ = sock::poll_in(l.as_raw_fd(), wait);
            }
            // A stream that ends unparks this thread (Ctl::finish).
            _ => std::thread::park_timeout(wait),
        }
    }
    let end_ns = ctl.now_ns();
    // The last, shorter interval ends with the last byte (as the samples do), not when this
    // thread woke to see it: a listener waits on the listening socket, a tick at most.
    let last_byte_ns = last_byte(&live).unwrap_or(end_ns);
    // A transfer that ended before this thread looked still gets its (one) interval.
    if let (Some(_), Some(f), None) = (iv_ns, ctl.first_ns(), iv_last) {
        iv_last = Some((f, 0, 0));
    }
    if let (Some(_), Some(f)) = (iv_ns, ctl.first_ns())
        && let Some((last_ns, last_bytes, _)) = iv_last
        && total(&live) > last_bytes
        && last_byte_ns > last_ns
    {
        emit_interval(
            plan,
            rep,
            &live,
            &mut iv_last,
            last_byte_ns,
            f,
            omit_ns,
            t.sessions,
            false,
        )?;
    }
    let mut outs = Vec::with_capacity(live.len());
    for l in live {
        let out = l.handle.join().unwrap_or_else(|_| Outcome {
            end: End::Failed("a stream thread panicked".into()),
            bytes: l.prog.bytes(),
            first_ns: None,
            end_ns: None,
            tcp: None,
            peer_closed: false,
            method: "",
        });
        outs.push((out, l.local, l.peer));
    }
    let cpu = Cpu::now().since(cpu0);
    let active_s = Duration::from_nanos(end_ns).as_secs_f64();
    t.cpu = t.cpu.plus(cpu);
    t.active_s += active_s;
    t.sessions += 1;
    let sess = t.sessions - 1;
    // Samples, one per connection.
    let mut s_first: Option<u64> = None;
    let mut s_end: Option<u64> = None;
    let mut s_bytes = 0u64;
    let mut s_measured = 0u64;
    let omit_ns_at = omit_snap.as_ref().map(|(ns, _)| *ns);
    if omit_ns > 0 && omit_snap.is_none() && outs.iter().any(|(o, _, _)| o.bytes > 0) {
        t.omit_short = true;
        human("the transfer was shorter than --omit: nothing was left out");
    }
    for (i, (o, local, peer)) in outs.iter().enumerate() {
        t.streams += 1;
        s_bytes += o.bytes;
        let omitted = omit_snap
            .as_ref()
            .and_then(|(_, v)| v.get(i).copied())
            .unwrap_or(0);
        let measured = o.bytes - omitted.min(o.bytes);
        s_measured += measured;
        let start = match (o.first_ns, omit_ns_at) {
            (Some(f), Some(om)) => Some(f.max(om)),
            (f, _) => f,
        };
        if let Some(s) = start {
            s_first = Some(s_first.map_or(s, |x: u64| x.min(s)));
        }
        if let Some(e) = o.end_ns {
            s_end = Some(s_end.map_or(e, |x: u64| x.max(e)));
        }
        let mut inf = info(json!({
            "session": sess,
            "stream": i,
            "role": plan.role.word(),
            "measured_by": plan.role.word(),
            "local": local.map(|a| addr::show(&a)),
            "peer": addr::show(peer),
            "end": o.end.word(),
            "omitted_bytes": omitted,
        }));
        if plan.role == Role::Send {
            inf.insert("peer_closed".into(), json!(o.peer_closed));
            inf.insert("send_method".into(), json!(o.method));
        }
        if let Some(ti) = &o.tcp {
            t.retrans += u64::from(ti.total_retrans);
            if ti.rtt_s > 0.0 {
                t.rtt_sum_s += ti.rtt_s;
                t.rtt_n += 1;
            }
            inf.insert("mss_bytes".into(), json!(ti.snd_mss));
            inf.insert("pmtu_bytes".into(), json!(ti.pmtu));
        }
        // A sender without a limit sends until stopped: the receiver closing is its end.
        let receiver_ended = plan.role == Role::Send
            && plan.bytes.is_none()
            && plan.time.is_none()
            && matches!(o.end, End::PeerGone(_))
            && o.bytes > 0;
        if receiver_ended {
            inf.insert("ended_by".into(), json!("receiver"));
        }
        let ok_end = o.end.is_clean() || receiver_ended;
        let clean = ok_end || (o.end == End::Stopped && o.bytes > 0);
        if !ok_end && o.end != End::Stopped {
            t.failed_streams += 1;
            let msg = format!(
                "{} {}: {} after {} bytes",
                if listener.is_some() { "from" } else { "to" },
                addr::show(peer),
                o.end.describe(),
                o.bytes
            );
            t.errors.push(msg);
        }
        if o.bytes == 0 && !clean {
            rep.sample_failed(&o.end.describe(), inf)
                .map_err(|e| Failure::io("records", &e))?;
            continue;
        }
        let mut v = Values::new();
        v.set_count(plan.role.bytes_key(), o.bytes);
        v.set_count("measured_bytes", measured);
        if let (Some(s), Some(e)) = (start, o.end_ns)
            && e > s
        {
            let secs = (e - s) as f64 / 1e9;
            v.set("duration_s", secs);
            v.set("throughput_bits_per_s", measured as f64 * 8.0 / secs);
        }
        if let Some(ti) = &o.tcp {
            v.set_count("retransmits_count", u64::from(ti.total_retrans));
            v.set("rtt_s", ti.rtt_s);
            v.set("rttvar_s", ti.rttvar_s);
            v.set_count("cwnd_bytes", ti.cwnd_bytes());
        }
        if !ok_end {
            rep.sample(v, {
                let mut x = inf;
                x.insert("error".into(), json!(o.end.describe()));
                x
            })
        } else {
            rep.sample(v, inf)
        }
        .map_err(|e| Failure::io("records", &e))?;
    }
    t.bytes += s_bytes;
    if let (Some(f), Some(e)) = (s_first, s_end)
        && e > f
    {
        t.measured_bytes += s_measured;
        t.measured_s += (e - f) as f64 / 1e9;
    }
    Ok(())
}

/// The bytes a stream has moved by now, for intervals and the end of --omit. A receiver reads
/// in gulps of up to a millisecond's worth (stream::Lowat), so while it runs (and `queued`:
/// before a --time limit, after which it reads nothing more) what the kernel holds for it
/// unread (SIOCINQ) counts as arrived. The count read comes first, so that a read between the
/// two can only be missed (and made up later), never counted twice.
fn moved(plan: &Plan, l: &Live, queued: bool) -> u64 {
    let read = l.prog.bytes();
    if plan.role != Role::Recv || !queued || l.prog.is_done() {
        return read;
    }
    use std::os::fd::AsRawFd;
    read + sock::unread_bytes(l.sock.as_raw_fd())
}

/// When the last byte of a session moved, once all its streams have ended.
fn last_byte(live: &[Live]) -> Option<u64> {
    if !live.iter().all(|l| l.prog.is_done()) {
        return None;
    }
    live.iter().filter_map(|l| l.prog.end_ns()).max()
}

#[allow(clippy::too_many_arguments)]
fn emit_interval(
    plan: &Plan,
    rep: &mut Reporter,
    live: &[Live],
    last: &mut Option<(u64, u64, u64)>,
    now: u64,
    first: u64,
    omit_ns: u64,
    session: u64,
    queued: bool,
) -> Result<(), Failure> {
    let Some((l_ns, l_bytes, l_retr)) = *last else {
        return Ok(());
    };
    let mut bytes: u64 = live.iter().map(|l| moved(plan, l, queued)).sum();
    if plan.role == Role::Recv
        && let Some(b) = plan.bytes
    {
        // What waits beyond the session's --bytes is never read.
        bytes = bytes.min(b);
    }
    // Never back: a count that lost a race with a read is made up by the next interval.
    let bytes = bytes.max(l_bytes);
    let secs = (now.saturating_sub(l_ns)) as f64 / 1e9;
    let mut v = Values::new();
    let d = bytes.saturating_sub(l_bytes);
    v.set_count(plan.role.bytes_key(), d);
    v.set("duration_s", secs);
    if secs > 0.0 {
        v.set("throughput_bits_per_s", d as f64 * 8.0 / secs);
    }
    let mut retr_now = l_retr;
    if plan.role == Role::Send {
        let (retr, rtt, cwnd) = tcp_now(live);
        retr_now = retr;
        v.set_count("retransmits_count", retr.saturating_sub(l_retr));
        if let Some(r) = rtt {
            v.set("rtt_s", r);
        }
        v.set_count("cwnd_bytes", cwnd);
    }
    let i = info(json!({
        "session": session,
        "start_s": (l_ns - first) as f64 / 1e9,
        "end_s": (now - first) as f64 / 1e9,
        "streams": live.len(),
        "omitted": l_ns < first + omit_ns,
        "measured_by": plan.role.word(),
    }));
    rep.interval(v, i).map_err(|e| Failure::io("records", &e))?;
    if measure::cli::is_terminal(2) && secs > 0.0 {
        eprintln_human(&format!(
            "netpipe: {:>7.2}-{:<7.2}s {:>10}  {}",
            (l_ns - first) as f64 / 1e9,
            (now - first) as f64 / 1e9,
            measure::units::format_bytes(d as f64),
            measure::units::format_bits_per_s(d as f64 * 8.0 / secs)
        ));
    }
    *last = Some((now, bytes, retr_now));
    Ok(())
}

/// A human line on stderr, only when stderr is a terminal.
pub fn human(msg: &str) {
    if measure::cli::is_terminal(2) {
        eprintln_human(&format!("netpipe: {msg}"));
    }
}

/// Writes a line to stderr, ignoring a closed stderr.
pub fn eprintln_human(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn human_summary(plan: &Plan, t: &Tally) {
    if !measure::cli::is_terminal(2) {
        return;
    }
    let rate = if t.measured_s > 0.0 {
        measure::units::format_bits_per_s(t.measured_bytes as f64 * 8.0 / t.measured_s)
    } else {
        "-".into()
    };
    let cpu = if t.active_s > 0.0 {
        format!(", cpu {:.2} s/s", t.cpu.total_s() / t.active_s)
    } else {
        String::new()
    };
    let retr = if plan.role == Role::Send {
        format!(", {} retransmits", t.retrans)
    } else {
        String::new()
    };
    eprintln_human(&format!(
        "netpipe: {} {} in {} over {} stream(s) = {rate} ({}'s clock){retr}{cpu}",
        if plan.role == Role::Send {
            "sent"
        } else {
            "received"
        },
        measure::units::format_bytes(t.bytes as f64),
        measure::units::format_seconds(t.measured_s),
        t.streams,
        plan.role.word()
    ));
}
