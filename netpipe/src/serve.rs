//! A listener's sessions. Connections are greeted as they come (netpipe/1: a netpipe
//! client's hello carries its session token), and grouped into one session per client: a
//! client's -P streams are one session, and with --keep-open several clients are served at
//! once, each its own session with its own samples. All of it runs on this thread without
//! blocking, so a client that vanishes or stays silent never holds up the others.

use crate::addr;
use crate::agree::{self, Hello, Peeked};
use crate::cpu::Cpu;
use crate::plan::{Plan, Role};
use crate::running::{Running, greeting};
use crate::sock::{self, TICK};
use crate::summary::Tally;
use measure::Failure;
use measure::lifecycle::Session;
use socket2::Socket;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A connection accepted and not yet placed in a session: its peer's hello is awaited.
struct Pending {
    sock: Socket,
    peer: SocketAddr,
    since: Instant,
    wait: Duration,
}

/// What a listener is serving.
struct Serving {
    running: Vec<Running>,
    pending: Vec<Pending>,
    /// Sessions started so far (the next one's number).
    started: u64,
    /// This side's hello.
    me: Hello,
    /// Since when some session has been running, and the CPU time then.
    busy: Option<(Instant, Cpu)>,
}

/// Serves sessions on a listener until the one session (or, with --keep-open, Ctrl-C) ends.
pub fn serve(plan: &Plan, l: &Socket, out: &mut Session, t: &mut Tally) -> Result<(), Failure> {
    let mut sv = Serving {
        running: Vec::new(),
        pending: Vec::new(),
        started: 0,
        me: greeting(plan, plan.parallel.unwrap_or(0)),
        busy: None,
    };
    // Bounded by Ctrl-C and, without --keep-open, by one session; each pass waits a tick at
    // most.
    loop {
        // Read before looking at the streams: a Ctrl-C after the last stream ended falls
        // between sessions, not into a transfer.
        let interrupted = measure::signal::interrupted();
        if interrupted && !t.interrupted {
            t.interrupted = true;
            for r in &sv.running {
                t.cut |= r.stop();
            }
            sv.pending.clear();
        }
        let open = !t.interrupted && sv.open(plan);
        if open {
            sv.accept(plan, l, out)?;
        }
        sv.route(plan, out)?;
        let wait = sv.tick_and_finish(plan, out, t)?;
        let idle = sv.running.is_empty() && sv.pending.is_empty();
        if idle && (t.interrupted || (!plan.keep_open && sv.started > 0)) {
            return Ok(());
        }
        let wait = if sv.pending.is_empty() {
            wait
        } else {
            wait.min(Duration::from_millis(5))
        };
        if open {
            let _ = sock::poll_in(l, wait);
        } else {
            // A stream that ends unparks this thread (Ctl::finish).
            std::thread::park_timeout(wait);
        }
    }
}

impl Serving {
    /// Whether connections are taken: always with --keep-open, else until the one session
    /// has started and while it has room for more streams.
    fn open(&self, plan: &Plan) -> bool {
        plan.keep_open || self.started == 0 || self.running.iter().any(Running::has_room)
    }

    /// Takes the connections waiting on `l`; a receiver says its hello at once.
    fn accept(&mut self, plan: &Plan, l: &Socket, out: &mut Session) -> Result<(), Failure> {
        for _ in 0..64 {
            let Ok(Some((s, peer))) = sock::accept_ready(l) else {
                break;
            };
            out.human()
                .line(&format!("connection from {}", addr::show(&peer)));
            if plan.role == Role::Recv {
                let _ = agree::write_within(&s, &self.me.encode(), Duration::from_millis(100));
            }
            let wait = agree::hello_wait(&s);
            self.pending.push(Pending {
                sock: s,
                peer,
                since: Instant::now(),
                wait,
            });
        }
        Ok(())
    }

    /// Places each pending connection whose peer has spoken (or has had its time to).
    fn route(&mut self, plan: &Plan, out: &mut Session) -> Result<(), Failure> {
        let peer_role = if plan.role == Role::Recv { b'S' } else { b'R' };
        let mut still = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            match agree::peek_hello(&p.sock, peer_role) {
                Peeked::NotYet if p.since.elapsed() < p.wait => still.push(p),
                Peeked::Hello(h) => self.place(plan, p, Some(h), out)?,
                _ => self.place(plan, p, None, out)?,
            }
        }
        self.pending = still;
        Ok(())
    }

    /// Puts a connection into its client's session, or starts one for it; a stream beyond
    /// what a session takes is closed.
    fn place(
        &mut self,
        plan: &Plan,
        p: Pending,
        h: Option<Hello>,
        out: &mut Session,
    ) -> Result<(), Failure> {
        let token = h.map(|h| h.token);
        if let Some(r) = self
            .running
            .iter_mut()
            .find(|r| r.token == token && r.has_room())
        {
            return r.add(plan, p.sock, p.peer, Some(h));
        }
        let joined_full = token.is_some() && self.running.iter().any(|r| r.token == token);
        if joined_full || !(plan.keep_open || self.started == 0) {
            return Ok(());
        }
        let want = match h {
            Some(h) => plan.parallel.unwrap_or(usize::from(h.streams.max(1))),
            None if plan.keep_open => plan.parallel.unwrap_or(1),
            None => plan.parallel.unwrap_or(usize::MAX),
        };
        if self.running.is_empty() {
            self.busy = Some((Instant::now(), Cpu::now()));
        }
        let mut r = Running::start(plan, self.started, token, want, self.me, out);
        self.started += 1;
        r.add(plan, p.sock, p.peer, Some(h))?;
        self.running.push(r);
        Ok(())
    }

    /// Watches the running sessions and writes the samples of those that have ended;
    /// returns how long to wait before looking again.
    fn tick_and_finish(
        &mut self,
        plan: &Plan,
        out: &mut Session,
        t: &mut Tally,
    ) -> Result<Duration, Failure> {
        let mut wait = TICK;
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].done() {
                let r = self.running.remove(i);
                r.finish(plan, true, out, t)?;
                continue;
            }
            let ns = self.running[i].tick(plan, out)?;
            wait = wait.min(Duration::from_nanos(ns));
            i += 1;
        }
        if self.running.is_empty()
            && let Some((since, cpu0)) = self.busy.take()
        {
            t.active_s += since.elapsed().as_secs_f64();
            t.cpu = t.cpu.plus(Cpu::now().since(cpu0));
        }
        Ok(wait)
    }
}
