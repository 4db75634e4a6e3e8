//! Measuring mode (`send`, `recv`): opens or accepts the streams of a session, runs them in
//! threads, watches them from the main thread (warm-up, intervals), then writes one sample
//! per connection and the summary.

use crate::addr;
use crate::agree::{self, Hello};
use crate::cpu::Cpu;
use crate::ctl::Ctl;
use crate::end::{End, Outcome};
use crate::human::say;
use crate::interval::Watch;
use crate::live::{self, Live};
use crate::plan::{Endpoint, Plan, Role};
use crate::samples::{self, Ended};
use crate::sock::{self, TICK, WaitEnd};
use crate::summary::{Tally, human_summary, verdict, write_summary};
use measure::Exit;
use measure::Failure;
use measure::Status;
use measure::lifecycle::Session;
use measure::writer::info;
use serde_json::json;
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `send` or `recv`: begin, sessions, samples, summary.
pub fn run(plan: Plan, out: &mut Session) -> Result<Exit, Failure> {
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
                write_summary(out, &plan, &tally, Status::Failed, Some(msg))?;
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
        (Endpoint::Listen(..), Some(l)) => serve(&plan, l, out, &mut tally),
        (Endpoint::Connect(target, addrs), _) => {
            connect_session(&plan, target, addrs, out, &mut tally)
        }
        _ => Ok(()),
    };
    if let Err(f) = result {
        let msg = f.message.clone();
        write_summary(out, &plan, &tally, Status::Failed, msg)?;
        return Err(f);
    }
    let (status, error, code) = verdict(&plan, &tally);
    write_summary(out, &plan, &tally, status, error.clone())?;
    human_summary(out, &plan, &tally, status);
    if let Some(e) = error
        && code != Exit::Ok
    {
        say(&e);
    }
    Ok(code)
}

/// Serves sessions on a listener: one, or one after another with --keep-open.
fn serve(plan: &Plan, l: &Socket, out: &mut Session, t: &mut Tally) -> Result<(), Failure> {
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
                return Err(Failure::new(Exit::Cannot, "accept", e));
            }
        };
        out.human()
            .line(&format!("connection from {}", addr::show(&peer)));
        session(plan, vec![(s, peer)], Some(l), out, t)?;
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
    out: &mut Session,
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
                out.sample_failed(&msg, info(json!({"target": target})))?;
                return Ok(());
            }
        }
    }
    session(plan, socks, None, out, t)
}

/// Runs one session: the given streams, plus those that join from `listener` while it runs.
fn session(
    plan: &Plan,
    first: Vec<(Socket, SocketAddr)>,
    listener: Option<&Socket>,
    out: &mut Session,
    t: &mut Tally,
) -> Result<(), Failure> {
    let mut ctl = Ctl::new(plan.bytes, plan.run_for(), plan.idle);
    ctl.greet = greeting(plan, listener.is_none());
    let ctl = Arc::new(ctl);
    let cpu0 = Cpu::now();
    let mut live: Vec<Live> = Vec::new();
    for (s, p) in first {
        live.push(live::spawn(plan, &ctl, s, p, live.len())?);
    }
    let mut watch = Watch::new(plan, t.sessions, out);
    supervise(plan, &ctl, &mut live, listener, &mut watch, out, t)?;
    let end_ns = ctl.now_ns();
    watch.finish(plan, &ctl, &live, out, end_ns)?;
    let ended = join(live);
    let cpu = Cpu::now().since(cpu0);
    t.cpu = t.cpu.plus(cpu);
    t.active_s += Duration::from_nanos(end_ns).as_secs_f64();
    t.sessions += 1;
    samples::write(
        plan,
        &ended,
        watch.omit_snap.as_ref(),
        listener.is_some(),
        out,
        t,
    )
}

/// What this side says of a session in its netpipe/1 hello (agree.rs).
fn greeting(plan: &Plan, connecting: bool) -> Hello {
    let streams = plan.parallel.unwrap_or(usize::from(connecting));
    Hello {
        role: if plan.role == Role::Send { b'S' } else { b'R' },
        streams: streams.min(usize::from(u16::MAX)) as u16,
        index: 0,
        token: agree::token(),
        bytes: plan.bytes.unwrap_or(u64::MAX),
        time_ns: plan.time.map_or(0, |t| t.as_nanos() as u64),
    }
}

/// Watches the streams until every one has ended: passes Ctrl-C on to them, takes in the
/// streams that join from `listener`, ends the warm-up and writes the intervals.
fn supervise(
    plan: &Plan,
    ctl: &Arc<Ctl>,
    live: &mut Vec<Live>,
    listener: Option<&Socket>,
    watch: &mut Watch,
    out: &mut Session,
    t: &mut Tally,
) -> Result<(), Failure> {
    let want = plan.parallel.unwrap_or(usize::MAX);
    // Bounded: ends when every stream has ended; streams end on EOF, limits, the idle
    // timeout or Ctrl-C (which sets `stop`). Each pass waits a tick at most.
    loop {
        // Read before looking at the streams: a Ctrl-C that came after the last stream
        // ended (and let its peer go) falls between sessions, not into a transfer.
        let interrupted = measure::signal::interrupted();
        if live.iter().all(|l| l.prog.is_done()) {
            return Ok(());
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
            take_joining(plan, ctl, l, live, want)?;
        }
        let wake = watch.tick(plan, ctl, live, out, ctl.now_ns())?;
        let wait = Duration::from_nanos(wake.saturating_sub(ctl.now_ns())).min(TICK);
        match listener {
            Some(l) if live.len() < want && !ctl.stop.load(Ordering::Relaxed) => {
                let _ = sock::poll_in(l, wait);
            }
            // A stream that ends unparks this thread (Ctl::finish).
            _ => std::thread::park_timeout(wait),
        }
    }
}

/// Streams of the same client (-P) join the running session: takes those waiting on `l`.
fn take_joining(
    plan: &Plan,
    ctl: &Arc<Ctl>,
    l: &Socket,
    live: &mut Vec<Live>,
    want: usize,
) -> Result<(), Failure> {
    for _ in 0..64 {
        match sock::accept_ready(l) {
            Ok(Some((s, p))) => {
                let i = live.len();
                live.push(live::spawn(plan, ctl, s, p, i)?);
            }
            _ => break,
        }
        if live.len() >= want {
            break;
        }
    }
    Ok(())
}

/// Waits for every stream's thread and takes its outcome.
fn join(live: Vec<Live>) -> Vec<Ended> {
    live.into_iter()
        .map(|l| {
            let out = l.handle.join().unwrap_or_else(|_| Outcome {
                bytes: l.prog.bytes(),
                ..Outcome::nothing(End::Failed("a stream thread panicked".into()), "")
            });
            Ended {
                out,
                local: l.local,
                peer: l.peer,
            }
        })
        .collect()
}
