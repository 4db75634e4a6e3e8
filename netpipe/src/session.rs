//! Measuring mode (`send`, `recv`): opens or accepts the streams of a session, runs them in
//! threads, watches them from the main thread (warm-up, intervals), then writes one sample
//! per connection and the summary.

use crate::addr;
use crate::agree::Pre;
use crate::cpu::Cpu;
use crate::human::say;
use crate::plan::{Direction, Endpoint, Plans};
use crate::running::{Running, greeting};
use crate::serve;
use crate::sock::{self, TICK, WaitEnd};
use crate::summary::{Tally, human_summary, verdict, write_summary};
use measure::Exit;
use measure::Failure;
use measure::Status;
use measure::lifecycle::Session;
use measure::parts::info;
use serde_json::json;
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `send` or `recv`: begin, sessions, samples, summary.
pub fn run(plans: Plans, out: &mut Session) -> Result<Exit, Failure> {
    if plans.fwd.udp {
        return crate::udprun::run(plans.fwd, out);
    }
    let plan = &plans.fwd;
    let mut begin = plan.info();
    let mut tally = Tally::default();
    let listener = match &plan.endpoint {
        Endpoint::Listen(a, typed) => match sock::listen_any(*a, plan.v6_only, &plan.opts) {
            Ok(l) => {
                if let Some(bound) = l.local_addr().ok().and_then(|a| a.as_socket()) {
                    begin.insert("listen".into(), json!(addr::show(&bound)));
                    begin.insert("port".into(), json!(bound.port()));
                }
                Some(l)
            }
            Err(e) => {
                let (what, why) = addr::listen_failed(a, &format!("--listen {typed}"), &e);
                out.begin(begin)?;
                let msg = format!("{what}: {why}");
                write_summary(out, &plans, &tally, Status::Failed, Some(msg))?;
                return Err(Failure::new(Exit::Cannot, what, why));
            }
        },
        Endpoint::Connect(..) => None,
    };
    out.begin(begin)?;
    if let Some(l) = &listener {
        out.human().line(&format!(
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
        (Endpoint::Listen(..), Some(l)) => serve::serve(&plans, l, out, &mut tally),
        (Endpoint::Connect(target, addrs), _) => {
            connect_session(&plans, target, addrs, out, &mut tally)
        }
        _ => Ok(()),
    };
    if let Err(f) = result {
        let msg = f.message.clone();
        write_summary(out, &plans, &tally, Status::Failed, msg)?;
        return Err(f);
    }
    let (status, error, code) = verdict(&plans, &tally);
    write_summary(out, &plans, &tally, status, error.clone())?;
    human_summary(out, &plans, &tally, status);
    if let Some(e) = error
        && code != Exit::Ok
    {
        say(&e);
    }
    Ok(code)
}

/// Opens the streams to the peer and runs one session.
fn connect_session(
    plans: &Plans,
    target: &str,
    addrs: &[SocketAddr],
    out: &mut Session,
    t: &mut Tally,
) -> Result<(), Failure> {
    let plan = &plans.fwd;
    let n = plan.parallel.unwrap_or(1);
    let both = if plan.bidir { 2 * n } else { n };
    let mut socks = Vec::with_capacity(both);
    for _ in 0..both {
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
                    sock::describe(&e, plan.connect_timeout, "--connect-timeout")
                );
                t.fwd.errors.push(msg.clone());
                t.fwd.failed_streams += 1;
                out.sample_failed(&msg, info(json!({"target": target})))?;
                return Ok(());
            }
        }
    }
    let rev = socks.split_off(n);
    let mut parts = vec![(Direction::Forward, socks)];
    if !rev.is_empty() {
        parts.push((Direction::Reverse, rev));
    }
    session(plans, parts, out, t)
}

/// The streams of one direction: which one, and its connections.
type Part = (Direction, Vec<(Socket, SocketAddr)>);

/// Runs one session on the given streams (one direction, or both with --bidir), watching them
/// from this thread until every one has ended: passes Ctrl-C on, ends the warm-up and writes
/// the intervals.
fn session(
    plans: &Plans,
    parts: Vec<Part>,
    out: &mut Session,
    t: &mut Tally,
) -> Result<(), Failure> {
    let cpu0 = Cpu::now();
    let mut runs = Vec::new();
    for (dir, socks) in parts {
        let greet = greeting(plans.get(dir), socks.len());
        let n = socks.len();
        let mut r = Running::start(plans, t.fwd.sessions, (None, n, dir), greet, out);
        for (s, p) in socks {
            r.add(plans, s, p, Pre::NotBegun)?;
        }
        runs.push(r);
    }
    let started = std::time::Instant::now();
    // Bounded: ends when every stream has ended; streams end on EOF, limits, the idle
    // timeout or Ctrl-C (which sets `stop`). Each pass waits a tick at most.
    loop {
        // Read before looking at the streams: a Ctrl-C after the last stream ended falls
        // after the transfer, not into it.
        let interrupted = measure::signal::interrupted();
        if runs.iter().all(Running::done) {
            break;
        }
        let mut wait = TICK;
        for r in runs.iter_mut() {
            if interrupted && !r.ctl.stop.load(Ordering::Relaxed) {
                t.cut |= r.stop();
                t.interrupted = true;
            }
            wait = wait.min(Duration::from_nanos(r.tick(plans, out)?));
        }
        // A stream that ends unparks this thread (Ctl::finish).
        std::thread::park_timeout(wait);
    }
    t.active_s += started.elapsed().as_secs_f64();
    for r in runs {
        r.finish(plans, false, out, t)?;
    }
    t.cpu = t.cpu.plus(Cpu::now().since(cpu0));
    Ok(())
}
