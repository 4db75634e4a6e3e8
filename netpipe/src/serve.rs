//! A listener's sessions. Connections are greeted as they come (netpipe/1: a netpipe
//! client's hello carries its session token), and grouped into one session per client: a
//! client's -P streams are one session, and with --keep-open several clients are served at
//! once, each its own session with its own samples. All of it runs on this thread without
//! blocking, so a client that vanishes or stays silent never holds up the others.

use crate::addr;
use crate::agree::{self, Hello, Peeked, Pre};
use crate::cpu::Cpu;
use crate::plan::{Direction, Plan, Plans, Role};
use crate::running::{Running, greeting};
use crate::sock::{self, TICK};
use crate::summary::Tally;
use crate::throttle::HELD_PER_SOURCE;
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
    /// When it was accepted.
    born: Instant,
    wait: Duration,
    /// Whether this side has said its hello: a receiver says it only to a client that stays
    /// silent for [`agree::QUIET`] (a netpipe sender waits for it; nc speaks at once).
    said: bool,
}

/// What a listener is serving.
struct Serving {
    running: Vec<Running>,
    pending: Vec<Pending>,
    /// Sessions started so far (the next one's number).
    started: u64,
    /// This side's hello.
    me: Hello,
    /// This side's hello in the other direction, for a client's --bidir reverse streams (a
    /// hello in this side's own role asks for it).
    me_rev: Hello,
    /// Whether a session of each direction has started: without --keep-open there is one
    /// of each, in either order (a --bidir client's reverse streams may greet first).
    fwd_started: bool,
    rev_started: bool,
    /// Since when some session has been running, and the CPU time then.
    busy: Option<(Instant, Cpu)>,
    /// Connections refused for want of the --token.
    refused: u64,
    /// The delays of the sources that gave wrong tokens.
    throttle: crate::throttle::Throttle,
    /// When this listener began, which its refusals tell (how long it has listened).
    since: Instant,
}

/// Serves sessions on a listener until the one session (or, with --keep-open, Ctrl-C) ends.
pub fn serve(plans: &Plans, l: &Socket, out: &mut Session, t: &mut Tally) -> Result<(), Failure> {
    let plan = &plans.fwd;
    let mut sv = Serving {
        running: Vec::new(),
        pending: Vec::new(),
        started: 0,
        me: greeting(plan, plan.parallel.unwrap_or(0)),
        me_rev: greeting(&plans.rev, plan.parallel.unwrap_or(0)),
        fwd_started: false,
        rev_started: false,
        busy: None,
        refused: 0,
        throttle: crate::throttle::Throttle::default(),
        since: Instant::now(),
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
        sv.route(plans, out)?;
        let wait = sv.tick_and_finish(plans, out, t)?;
        t.refused = sv.refused;
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
    /// has started, while it has room for more streams, and while a netpipe client's other
    /// direction (--bidir) may still come.
    fn open(&self, plan: &Plan) -> bool {
        plan.keep_open
            || self.started == 0
            || self.running.iter().any(Running::has_room)
            || (!(self.fwd_started && self.rev_started)
                && self.running.iter().any(|r| r.token.is_some()))
    }

    /// Takes the connections waiting on `l`; a receiver says nothing yet (`route`).
    fn accept(&mut self, plan: &Plan, l: &Socket, out: &mut Session) -> Result<(), Failure> {
        for _ in 0..64 {
            let Ok(Some((s, peer))) = sock::accept_ready(l) else {
                break;
            };
            out.human()
                .line(&format!("connection from {}", addr::show(&peer)));
            let wait = agree::hello_wait(&s);
            self.pending.push(Pending {
                sock: s,
                peer,
                since: Instant::now(),
                born: Instant::now(),
                wait,
                said: plan.role != Role::Recv,
            });
        }
        Ok(())
    }

    /// Places each pending connection whose peer has spoken (or has had its time to); a
    /// receiver says its hello to one that stays silent for [`agree::QUIET`], and nothing to
    /// one whose first bytes are not netpipe's (nc, dd through nc). A
    /// connection from a source whose delay runs (its wrong tokens, `throttle`) is held
    /// unheard, its wait for a hello starting when the delay ends; past
    /// [`HELD_PER_SOURCE`] held ones of a source, more are refused at once.
    fn route(&mut self, plans: &Plans, out: &mut Session) -> Result<(), Failure> {
        let mut still: Vec<Pending> = Vec::new();
        for mut p in std::mem::take(&mut self.pending) {
            if !p.said && p.born.elapsed() >= agree::QUIET && sock::unread_bytes(&p.sock) == 0 {
                // Silent this long: a netpipe sender waiting for a receiver's hello (said
                // even while its source's delay holds it, as the sender's wait runs).
                let _ = agree::write_within(&p.sock, &self.me.encode(), Duration::from_millis(100));
                p.said = true;
                p.since = Instant::now();
            }
            let now = Instant::now();
            if self.throttle.holds(p.peer.ip(), now) {
                let src = crate::throttle::source(p.peer.ip());
                let held = still
                    .iter()
                    .filter(|q| crate::throttle::source(q.peer.ip()) == src)
                    .count();
                if held >= HELD_PER_SOURCE {
                    self.refuse(
                        p,
                        "too many connections at once from a source that gave wrong tokens",
                    );
                } else {
                    p.since = now;
                    still.push(p);
                }
                continue;
            }
            match agree::peek_hello(&p.sock) {
                Peeked::NotYet if !p.said || p.since.elapsed() < p.wait => still.push(p),
                Peeked::Hello(h) => self.place(plans, p, Some(h), out)?,
                _ => self.place(plans, p, None, out)?,
            }
        }
        self.pending = still;
        Ok(())
    }

    /// Puts a connection into its client's session, or starts one for it; a stream beyond
    /// what a session takes is closed. A hello in this side's own role is a --bidir client's
    /// reverse stream: its session runs the other direction.
    fn place(
        &mut self,
        plans: &Plans,
        p: Pending,
        h: Option<Hello>,
        out: &mut Session,
    ) -> Result<(), Failure> {
        let plan = &plans.fwd;
        let token = h.map(|h| h.token);
        let own = if plan.role == Role::Send { b'S' } else { b'R' };
        let dir = if h.is_some_and(|h| h.role == own) {
            Direction::Reverse
        } else {
            Direction::Forward
        };
        if let Some(key) = plan.token {
            let why = match h.map(|h| h.key) {
                None => Some(
                    "not a netpipe client (no hello), and this listener takes only those with its token",
                ),
                Some(None) => Some("a netpipe client without a token"),
                Some(Some(k)) if !k.same(&key) => Some("a netpipe client with another token"),
                Some(Some(_)) => None,
            };
            if let Some(why) = why {
                self.refuse(p, why);
                return Ok(());
            }
            if plan.role == Role::Recv && dir == Direction::Forward {
                // The sender waits for this before its first byte (agree::admitted).
                let _ = agree::write_within(
                    &p.sock,
                    &agree::mark(b"OK  ", 0, 0),
                    Duration::from_secs(1),
                );
            }
        }
        if dir == Direction::Reverse && plan.role == Role::Send {
            // A reverse sender spoke first and waits for a receiver's hello.
            let _ = agree::write_within(&p.sock, &self.me_rev.encode(), Duration::from_secs(1));
        }
        let (me, started_this_way) = match dir {
            Direction::Forward => (self.me, self.fwd_started),
            Direction::Reverse => (self.me_rev, self.rev_started),
        };
        let same = |r: &Running| r.token == token && r.dir == dir;
        if let Some(r) = self.running.iter_mut().find(|r| same(r) && r.has_room()) {
            return r.add(plans, p.sock, p.peer, Pre::heard(h));
        }
        let joined_full = token.is_some() && self.running.iter().any(same);
        let may_start = plan.keep_open || !started_this_way;
        if joined_full || !may_start {
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
        let mut r = Running::start(plans, self.started, (token, want, dir), me, out);
        self.started += 1;
        match dir {
            Direction::Forward => self.fwd_started = true,
            Direction::Reverse => self.rev_started = true,
        }
        r.add(plans, p.sock, p.peer, Pre::heard(h))?;
        self.running.push(r);
        Ok(())
    }

    /// Closes a connection without the --token, saying `DENY` to it (with this process's id
    /// and how long it has listened, so that the client can say which listener refused
    /// it), starts its source's delay, and logs it: every one of the first ten, then at
    /// each power of two, so that a flood cannot fill the log.
    fn refuse(&mut self, p: Pending, why: &str) {
        let deny = agree::deny_mark(std::process::id(), self.since.elapsed().as_secs());
        let _ = agree::write_within(&p.sock, &deny, Duration::from_millis(100));
        let _ = p.sock.shutdown(std::net::Shutdown::Both);
        self.refused += 1;
        let delay = self.throttle.refused(p.peer.ip(), Instant::now());
        let n = self.refused;
        if n <= 10 || n.is_power_of_two() {
            crate::human::say(&format!(
                "refused a connection from {}: {why} (refused so far: {n}; the next from {} is heard after {})",
                addr::show(&p.peer),
                crate::throttle::source(p.peer.ip()),
                measure::units::format_seconds(delay.as_secs_f64())
            ));
        }
    }

    /// Watches the running sessions and writes the samples of those that have ended;
    /// returns how long to wait before looking again.
    fn tick_and_finish(
        &mut self,
        plans: &Plans,
        out: &mut Session,
        t: &mut Tally,
    ) -> Result<Duration, Failure> {
        let mut wait = TICK;
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].done() {
                let r = self.running.remove(i);
                r.finish(plans, true, out, t)?;
                continue;
            }
            let ns = self.running[i].tick(plans, out)?;
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
