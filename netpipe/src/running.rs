//! One running session: its shared control, its live streams and its watch (warm-up,
//! intervals), from the first stream to the samples.

use crate::agree::{self, Hello, Pre};
use crate::ctl::Ctl;
use crate::end::{End, Outcome};
use crate::interval::Watch;
use crate::live::{self, Live};
use crate::plan::{Direction, Plan, Plans, Role};
use crate::samples::{self, Ended};
use crate::summary::Tally;
use measure::Failure;
use measure::lifecycle::Session;
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A session whose streams run.
pub struct Running {
    pub ctl: Arc<Ctl>,
    pub live: Vec<Live>,
    pub watch: Watch,
    /// Its number in the run (0-based), as its records say.
    pub number: u64,
    /// The netpipe client's session token, when the peer is a netpipe (agree.rs).
    pub token: Option<u64>,
    /// How many streams it takes.
    pub want: usize,
    /// Which direction it runs: the plan's own, or the other (--bidir's reverse streams).
    pub dir: Direction,
    started: Instant,
}

impl Running {
    /// Session `number`, taking up to `want` streams, in direction `dir` (a reverse
    /// session's senders say their hello first).
    pub fn start(
        plans: &Plans,
        number: u64,
        (token, want, dir): (Option<u64>, usize, Direction),
        greet: Hello,
        out: &mut Session,
    ) -> Running {
        let plan = plans.get(dir);
        let mut ctl = Ctl::new(plan.bytes, plan.run_for(), plan.idle);
        ctl.greet = greet;
        ctl.speak_first = dir == Direction::Reverse && plan.role == Role::Send;
        Running {
            ctl: Arc::new(ctl),
            live: Vec::new(),
            watch: Watch::new(plan, number, out),
            number,
            token,
            want,
            dir,
            started: Instant::now(),
        }
    }

    /// Starts a stream of the session on `s`.
    pub fn add(
        &mut self,
        plans: &Plans,
        s: Socket,
        peer: SocketAddr,
        pre: Pre,
    ) -> Result<(), Failure> {
        let i = self.live.len();
        let plan = plans.get(self.dir);
        self.live
            .push(live::spawn(plan, &self.ctl, s, peer, i, pre)?);
        Ok(())
    }

    pub fn has_room(&self) -> bool {
        self.live.len() < self.want
    }

    /// Whether every stream has ended (and a netpipe client's streams have all come, or had
    /// a second to).
    pub fn done(&self) -> bool {
        let all_came = !self.has_room()
            || self.token.is_none()
            || self.started.elapsed() >= std::time::Duration::from_secs(1);
        all_came && self.live.iter().all(|l| l.prog.is_done())
    }

    /// Passes Ctrl-C on to the streams; `true` when some were still moving data.
    pub fn stop(&self) -> bool {
        let moving = self.live.iter().any(|l| !l.prog.is_done());
        self.ctl.stop.store(true, Ordering::Relaxed);
        moving
    }

    /// Ends the warm-up and writes the interval due; returns when to look again.
    pub fn tick(&mut self, plans: &Plans, out: &mut Session) -> Result<u64, Failure> {
        let plan = plans.get(self.dir);
        let now = self.ctl.now_ns();
        let wake = self.watch.tick(plan, &self.ctl, &self.live, out, now)?;
        Ok(wake.saturating_sub(self.ctl.now_ns()))
    }

    /// The last interval, then one sample per stream; adds the session to the tally.
    pub fn finish(
        mut self,
        plans: &Plans,
        from_listener: bool,
        out: &mut Session,
        t: &mut Tally,
    ) -> Result<(), Failure> {
        let plan = plans.get(self.dir);
        let end_ns = self.ctl.now_ns();
        self.watch
            .finish(plan, &self.ctl, &self.live, out, end_ns)?;
        let ended = join(self.live);
        let t = t.of(self.dir);
        t.sessions += 1;
        samples::write(
            plan,
            self.number,
            &ended,
            self.watch.omit_snap.as_ref(),
            from_listener,
            out,
            t,
        )
    }
}

/// What this side says of a session in its netpipe/1 hello.
pub fn greeting(plan: &Plan, streams: usize) -> Hello {
    Hello {
        role: if plan.role == Role::Send { b'S' } else { b'R' },
        streams: streams.min(usize::from(u16::MAX)) as u16,
        index: 0,
        token: agree::token(),
        bytes: plan.bytes.unwrap_or(u64::MAX),
        time_ns: plan.time.map_or(0, |t| t.as_nanos() as u64),
        wants_token: plan.listens() && plan.token.is_some(),
        key: plan.token.filter(|_| !plan.listens()),
    }
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
