//! Netcat mode: `netpipe -l [-p] PORT > file` and `netpipe HOST PORT < file`. stdout carries
//! the payload only; records go to stderr when it is not a terminal, else to -o FILE or
//! nowhere (the lifecycle decides). This part accepts or connects and reports; relay.rs
//! moves the data.

use crate::addr;
use crate::cpu::Cpu;
use crate::human::say;
use crate::relay::transfer;
use crate::sock::{self, SockOpts, WaitEnd};
use measure::Exit;
use measure::Failure;
use measure::Status;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::units::{format_bits_per_s, format_bytes};
use serde_json::{Map, Value, json};
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What netcat mode was asked to do.
#[derive(Clone, Debug)]
pub struct NcPlan {
    /// Listen on this address, or connect to `target`.
    pub listen: Option<SocketAddr>,
    pub target: String,
    pub addrs: Vec<SocketAddr>,
    pub bind: Option<SocketAddr>,
    pub v6_only: bool,
    pub keep_open: bool,
    /// -d: never read stdin.
    pub no_stdin: bool,
    pub idle: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    /// The flag that set `connect_timeout` as the user typed it (`-w` or `--connect-timeout`),
    /// for the message when it runs out.
    pub connect_flag: &'static str,
    pub opts: SockOpts,
}

#[derive(Debug, Default)]
struct Totals {
    conns: u64,
    rx: u64,
    tx: u64,
    rate_bytes: u64,
    rate_s: f64,
    cpu: Cpu,
    active_s: f64,
    errors: Vec<String>,
    interrupted: bool,
    direction: Option<&'static str>,
}

/// Runs netcat mode; says how it ended.
pub fn run(plan: NcPlan, out: &mut Session) -> Result<Exit, Failure> {
    let mut begin = info(json!({
        "mode": "netcat",
        "role": if plan.listen.is_some() { "listen" } else { "connect" },
        "target": plan.target,
        "port": plan.listen.map(|a| a.port()).or(plan.addrs.first().map(|a| a.port())),
        "bind": plan.bind.map(|b| addr::show(&b)),
        "keep_open": plan.keep_open,
        "idle_timeout_s": plan.idle.map(|d| d.as_secs_f64()),
        "connect_timeout_s": plan.connect_timeout.map(|d| d.as_secs_f64()),
        "window_bytes": plan.opts.window,
        "no_delay": plan.opts.no_delay,
    }));
    let mut tot = Totals::default();
    let result = match plan.listen {
        Some(a) => match sock::listen_any(a, plan.v6_only, &plan.opts) {
            Ok(l) => {
                if let Some(b) = l.local_addr().ok().and_then(|x| x.as_socket()) {
                    begin.insert("listen".into(), json!(addr::show(&b)));
                    begin.insert("port".into(), json!(b.port()));
                }
                out.begin(begin)?;
                serve(&plan, &l, out, &mut tot)
            }
            Err(e) => {
                out.begin(begin)?;
                let (what, why) = addr::listen_failed(&a, &format!("-l {}", a.port()), &e);
                Err(Failure::new(Exit::Cannot, what, why))
            }
        },
        None => {
            out.begin(begin)?;
            client(&plan, out, &mut tot)
        }
    };
    if let Err(f) = result {
        summary(out, &tot, Status::Failed, f.message.clone())?;
        return Err(f);
    }
    let (status, err, code) = verdict(&tot);
    summary(out, &tot, status, err.clone())?;
    human_summary(out, &tot, status);
    if let Some(e) = &err {
        say(e);
    }
    Ok(code)
}

/// The summary for a person (on a terminal): the row and its status, what moved each way,
/// and the figure of the direction that carried data.
fn human_summary(out: &mut Session, tot: &Totals, status: Status) {
    let status = match status {
        Status::Ok => "ok",
        Status::Partial => "partial",
        Status::Failed => "failed",
    };
    let mut text = format!("{}: {status}\n", out.name());
    if tot.conns > 0 {
        text.push_str(&format!(
            "  received {}, sent {} over {} connection(s)\n",
            format_bytes(tot.rx as f64),
            format_bytes(tot.tx as f64),
            tot.conns
        ));
    }
    if tot.rate_s > 0.0 {
        text.push_str(&format!(
            "  {} {} ({})\n",
            tot.direction.unwrap_or(""),
            format_bits_per_s(tot.rate_bytes as f64 * 8.0 / tot.rate_s),
            if tot.direction == Some("sent") {
                "the sender's clock, until the peer closed"
            } else {
                "the receiver's clock, first byte to EOF"
            }
        ));
    }
    out.human().summary(&text);
}

/// Status, error and exit code from what happened.
fn verdict(tot: &Totals) -> (Status, Option<String>, Exit) {
    let moved = if tot.rx + tot.tx > 0 {
        Status::Partial
    } else {
        Status::Failed
    };
    if tot.interrupted {
        (
            moved,
            Some(format!(
                "interrupted after {} bytes received, {} sent",
                tot.rx, tot.tx
            )),
            Exit::Interrupted,
        )
    } else if let Some(e) = tot.errors.first() {
        (moved, Some(e.clone()), Exit::MeasuredFailure)
    } else {
        (Status::Ok, None, Exit::Ok)
    }
}

fn summary(
    out: &mut Session,
    t: &Totals,
    status: Status,
    error: Option<String>,
) -> Result<(), Failure> {
    let mut v = Values::new();
    if t.rate_s > 0.0 && t.rate_bytes > 0 {
        v.set(
            "throughput_bits_per_s",
            t.rate_bytes as f64 * 8.0 / t.rate_s,
        );
        v.set("duration_s", t.rate_s);
    }
    v.set_count("received_bytes", t.rx);
    v.set_count("sent_bytes", t.tx);
    v.set_count("connection_count", t.conns);
    v.set("cpu_user_s", t.cpu.user_s);
    v.set("cpu_sys_s", t.cpu.sys_s);
    if t.active_s > 0.0 {
        v.set("cpu_seconds_per_s", t.cpu.total_s() / t.active_s);
    }
    let i = info(json!({
        "mode": "netcat",
        "measured_by": match t.direction { Some("sent") => "sender", _ => "receiver" },
        "direction": t.direction,
        "errors": t.errors,
    }));
    out.summary(Summary {
        status,
        error,
        headline: Some("throughput_bits_per_s".into()),
        headlines: Vec::new(),
        values: v,
        info: i,
    })
}

fn serve(plan: &NcPlan, l: &Socket, out: &mut Session, tot: &mut Totals) -> Result<(), Failure> {
    let mut first = true;
    // Bounded by Ctrl-C, and without -k by one connection.
    loop {
        let (s, peer) = match sock::accept(l, None) {
            Ok(x) => x,
            Err(WaitEnd::Interrupted) => {
                tot.interrupted = true;
                return Ok(());
            }
            Err(WaitEnd::TimedOut) => continue,
            Err(WaitEnd::Failed(e)) => return Err(Failure::new(Exit::Cannot, "accept", e)),
        };
        out.human()
            .line(&format!("connection from {}", addr::show(&peer)));
        // stdin goes to the first connection only; later ones (-k) only send to us.
        connection(plan, s, peer, true, first && !plan.no_stdin, out, tot)?;
        first = false;
        if !plan.keep_open || tot.interrupted {
            return Ok(());
        }
    }
}

fn client(plan: &NcPlan, out: &mut Session, tot: &mut Totals) -> Result<(), Failure> {
    match sock::connect(&plan.addrs, plan.bind, &plan.opts, plan.connect_timeout) {
        Ok(s) => {
            let peer = s
                .peer_addr()
                .ok()
                .and_then(|a| a.as_socket())
                .unwrap_or(plan.addrs[0]);
            connection(plan, s, peer, false, !plan.no_stdin, out, tot)
        }
        Err(WaitEnd::Interrupted) => {
            tot.interrupted = true;
            Ok(())
        }
        Err(e) => {
            let msg = format!(
                "cannot connect to {}: {}",
                plan.target,
                sock::describe(&e, plan.connect_timeout, plan.connect_flag)
            );
            out.sample_failed(&msg, info(json!({"target": plan.target})))?;
            tot.errors.push(msg);
            Ok(())
        }
    }
}

fn connection(
    plan: &NcPlan,
    s: Socket,
    peer: SocketAddr,
    listener: bool,
    with_stdin: bool,
    out: &mut Session,
    tot: &mut Totals,
) -> Result<(), Failure> {
    plan.opts
        .apply_stream(&s)
        .map_err(|e| Failure::new(Exit::Cannot, "socket options", e))?;
    let local = s.local_addr().ok().and_then(|a| a.as_socket());
    let cpu0 = Cpu::now();
    let t0 = Instant::now();
    let m = transfer(Arc::new(s), listener, with_stdin, plan.idle);
    let cpu = Cpu::now().since(cpu0);
    tot.cpu = tot.cpu.plus(cpu);
    tot.active_s += t0.elapsed().as_secs_f64();
    tot.conns += 1;
    tot.rx += m.rx;
    tot.tx += m.tx;
    if m.interrupted {
        tot.interrupted = true;
    }
    // The figure: the receive direction when anything arrived, else the send direction.
    let (dir, bytes, span) = if m.rx > 0 {
        ("received", m.rx, m.rx_first.zip(m.rx_end))
    } else {
        // The sender's figure ends when the peer closed, if it did after our last byte.
        let end = match (m.tx_end, m.eof_at) {
            (Some(t), Some(e)) if e > t => Some(e),
            (t, _) => t,
        };
        ("sent", m.tx, m.tx_first.zip(end))
    };
    let mut v = Values::new();
    v.set_count("received_bytes", m.rx);
    v.set_count("sent_bytes", m.tx);
    if let Some((a, b)) = span {
        let secs = b.saturating_duration_since(a).as_secs_f64();
        if secs > 0.0 {
            v.set("duration_s", secs);
            v.set("throughput_bits_per_s", bytes as f64 * 8.0 / secs);
            tot.rate_bytes += bytes;
            tot.rate_s += secs;
            tot.direction.get_or_insert(dir);
        }
    }
    let mut i: Map<String, Value> = info(json!({
        "peer": addr::show(&peer),
        "local": local.map(|a| addr::show(&a)),
        "direction": dir,
        "measured_by": if dir == "received" { "receiver" } else { "sender" },
        "stdout_closed": m.stdout_gone,
    }));
    if let Some(e) = &m.error {
        let msg = format!("{}: {e}", addr::show(&peer));
        i.insert("error".into(), json!(e));
        tot.errors.push(msg);
    }
    if m.rx + m.tx == 0 && m.error.is_some() {
        out.sample_failed(m.error.as_deref().unwrap_or("failed"), i)
    } else {
        out.sample(v, i)
    }
}
