//! Where a run's sample records go: always through the one `measure::Reporter`, either on the
//! probing thread or (flood) on a writer thread of its own that the probing thread hands
//! compact events in batches, so that serializing JSON does not slow the probing down.

use crate::tracker::TxStamp;
use measure::Reporter;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use serde::Serialize;
use serde_json::{Map, Value};
use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// How long a record may be held back where probes come fast (flood, or intervals below
/// 10 ms): the Reporter's batch bound, and how long events wait before they are handed to
/// the writer thread.
pub const MAX_DELAY: Duration = Duration::from_millis(100);
/// Events handed to the writer thread at once: at a loopback flood's rate about every 25 ms,
/// so the writer is woken (a futex call and two context switches, which on a busy machine
/// come out of the probing thread's time) about 40 times a second.
const BATCH: usize = 4096;
/// The longest an event waits on the probing thread before its batch is handed over.
const BATCH_DELAY: Duration = Duration::from_millis(50);

/// A valid reply, in the compact form the probing thread hands over.
#[derive(Clone, Debug)]
pub struct ReplyEvent {
    pub seq: u16,
    pub number: u64,
    pub ttl: Option<u8>,
    pub bytes: usize,
    pub rtt_s: f64,
    /// The kernel's transmit stamp the send time is, if any.
    pub tx: Option<TxStamp>,
    pub rx_kernel: bool,
    pub out_of_order: bool,
}

/// One sample record on its way to the Reporter.
#[derive(Debug)]
pub enum Event {
    Reply(ReplyEvent),
    Failed(String, Map<String, Value>),
}

/// The values of a reply's sample.
#[derive(Serialize)]
struct ReplyValues {
    rtt_s: f64,
}

/// The info of a reply's sample, serialized straight from the event (no map per reply).
#[derive(Serialize)]
struct ReplyInfo<'a> {
    icmp_seq: u16,
    probe: u64,
    ttl: Option<u8>,
    bytes: usize,
    from: &'a str,
    tx_stamp: &'static str,
    rx_stamp: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    out_of_order: bool,
}

fn stamp(kernel: bool) -> &'static str {
    if kernel { "kernel" } else { "user" }
}

/// A send time's source: `kernel` (the driver's stamp), `kernel-sched` (the scheduler's, where
/// the driver gave none), `user` (the time before sendto).
fn tx_stamp(tx: Option<TxStamp>) -> &'static str {
    match tx {
        Some(TxStamp::Driver) => "kernel",
        Some(TxStamp::Sched) => "kernel-sched",
        None => "user",
    }
}

/// Writes one event as a sample record through `rep`.
fn write(rep: &mut Reporter, ev: Event, from: &str) -> io::Result<()> {
    match ev {
        Event::Reply(e) => {
            let info = ReplyInfo {
                icmp_seq: e.seq,
                probe: e.number,
                ttl: e.ttl,
                bytes: e.bytes,
                from,
                tx_stamp: tx_stamp(e.tx),
                rx_stamp: stamp(e.rx_kernel),
                out_of_order: e.out_of_order,
            };
            rep.sample_ref(&ReplyValues { rtt_s: e.rtt_s }, &info)
        }
        Event::Failed(err, info) => rep.sample_failed(&err, info),
    }
}

/// Room for a batch of events, backed with memory now rather than while probing.
fn new_batch() -> Vec<Event> {
    let mut v = Vec::with_capacity(BATCH);
    crate::prefault::populate(&mut v);
    v
}

/// What the writer thread gives back when it ends: the Reporter (for the summary) and the
/// first write error, if any.
type Done<'r> = (&'r mut Reporter, io::Result<()>);

/// The writer thread's loop: every event of every batch through `rep`, held lines written
/// out once they are due even while no batch comes.
fn writer<'r>(
    rep: &'r mut Reporter,
    from: &str,
    rx: Receiver<Vec<Event>>,
    back: SyncSender<Vec<Event>>,
) -> Done<'r> {
    // Ctrl-C, SIGTERM and SIGHUP go to the probing thread, which then stops at once.
    let mut set = SigSet::empty();
    for sig in measure::signal::ENDING {
        if let Ok(sig) = Signal::try_from(sig) {
            set.add(sig);
        }
    }
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
    below_the_probing_thread();
    loop {
        let mut batch = match rx.recv_timeout(MAX_DELAY) {
            Ok(b) => b,
            Err(RecvTimeoutError::Timeout) => match rep.flush_due() {
                Ok(()) => continue,
                Err(e) => return (rep, Err(e)),
            },
            Err(RecvTimeoutError::Disconnected) => return (rep, Ok(())),
        };
        if let Err(e) = batch.drain(..).try_for_each(|ev| write(rep, ev, from)) {
            return (rep, Err(e));
        }
        let _ = back.try_send(batch);
    }
}

/// Lowers the calling thread's priority: on a busy machine the probes go first and the
/// records catch up (the summary waits for them).
fn below_the_probing_thread() {
    // setpriority(PRIO_PROCESS, tid, 10): on Linux the nice value is per thread, so this
    // thread's own id lowers this thread only. Best effort: without it the records still
    // go, only sooner.
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
}

/// Sample records on their way to the Reporter.
pub enum Records<'s, 'r> {
    /// Through the Reporter on this thread.
    Direct { rep: &'r mut Reporter, from: String },
    /// Through the Reporter on the writer thread.
    Thread {
        tx: SyncSender<Vec<Event>>,
        handle: ScopedJoinHandle<'s, Done<'r>>,
        /// Events not yet handed over: they go in batches, so the writer thread is woken
        /// (a futex call and a context switch) once per batch, not once per probe.
        pending: Vec<Event>,
        since: Instant,
        /// Emptied batches coming back for reuse (no allocation per batch).
        empty: Receiver<Vec<Event>>,
    },
}

impl std::fmt::Debug for Records<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Records::Direct { .. } => "Records::Direct",
            Records::Thread { .. } => "Records::Thread",
        })
    }
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the record writer stopped")
}

impl<'s, 'r: 's> Records<'s, 'r> {
    /// Writes through `rep` on this thread, holding lines back for at most [`MAX_DELAY`]
    /// when `batch`.
    pub fn direct(rep: &'r mut Reporter, from: String, batch: bool) -> Self {
        if batch {
            rep.batch(MAX_DELAY);
        }
        Records::Direct { rep, from }
    }

    /// Writes through `rep` on a thread of `scope`, holding lines back for at most
    /// [`MAX_DELAY`].
    pub fn threaded(
        scope: &'s Scope<'s, '_>,
        rep: &'r mut Reporter,
        from: String,
    ) -> io::Result<Self> {
        rep.batch(MAX_DELAY);
        let (tx, rx) = sync_channel::<Vec<Event>>(256);
        let (back, empty) = sync_channel::<Vec<Event>>(4);
        let handle = std::thread::Builder::new()
            .name("records".into())
            .spawn_scoped(scope, move || writer(rep, &from, rx, back))?;
        Ok(Records::Thread {
            tx,
            handle,
            pending: new_batch(),
            since: Instant::now(),
            empty,
        })
    }

    /// Hands the pending events over.
    fn hand_over(
        tx: &SyncSender<Vec<Event>>,
        pending: &mut Vec<Event>,
        since: &mut Instant,
        empty: &Receiver<Vec<Event>>,
    ) -> io::Result<()> {
        *since = Instant::now();
        let next = empty.try_recv().unwrap_or_else(|_| new_batch());
        let batch = std::mem::replace(pending, next);
        tx.send(batch).map_err(|_| gone())
    }

    fn put(&mut self, ev: Event) -> io::Result<()> {
        match self {
            Records::Direct { rep, from } => write(rep, ev, from),
            Records::Thread {
                tx,
                pending,
                since,
                empty,
                ..
            } => {
                pending.push(ev);
                // At a high rate the clock is read every 64 events only.
                let n = pending.len();
                if n >= BATCH || ((n < 64 || n % 64 == 0) && since.elapsed() >= BATCH_DELAY) {
                    Self::hand_over(tx, pending, since, empty)?;
                }
                Ok(())
            }
        }
    }

    /// Before the probing thread waits: what has waited its time goes out.
    pub fn tick(&mut self) -> io::Result<()> {
        match self {
            Records::Direct { rep, .. } => rep.flush_due(),
            Records::Thread {
                tx,
                pending,
                since,
                empty,
                ..
            } => {
                if !pending.is_empty() && since.elapsed() >= BATCH_DELAY {
                    Self::hand_over(tx, pending, since, empty)?;
                }
                Ok(())
            }
        }
    }

    pub fn reply(&mut self, e: ReplyEvent) -> io::Result<()> {
        self.put(Event::Reply(e))
    }

    pub fn failed(&mut self, err: &str, info: Map<String, Value>) -> io::Result<()> {
        self.put(Event::Failed(err.to_string(), info))
    }

    /// Waits for every record to be written; gives the Reporter back (for the summary) and
    /// the first write error, if any. `None` if the writer thread panicked.
    pub fn finish(self) -> Option<Done<'r>> {
        match self {
            Records::Direct { rep, .. } => Some((rep, Ok(()))),
            Records::Thread {
                tx,
                handle,
                pending,
                ..
            } => {
                if !pending.is_empty() {
                    // The writer may have stopped on an error; join reports it.
                    let _ = tx.send(pending);
                }
                drop(tx);
                handle.join().ok()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::parts::Envelope;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_records_thread_alone_is_lowered_to_nice_10() {
        // Root may raise a thread's priority to nice 0 first, so that the lowering shows
        // even when the tests themselves run under `nice`.
        if !testkit::need_root("setting a thread's nice value to 0") {
            return;
        }
        use rustix::process::{getpriority_process, setpriority_process};
        use rustix::thread::gettid;
        let main_tid = gettid();
        let main_before = getpriority_process(Some(main_tid)).expect("getpriority");
        let (before, after) = std::thread::spawn(|| {
            setpriority_process(Some(gettid()), 0).expect("setpriority 0 as root");
            let before = getpriority_process(Some(gettid())).expect("getpriority");
            below_the_probing_thread();
            (
                before,
                getpriority_process(Some(gettid())).expect("getpriority"),
            )
        })
        .join()
        .expect("thread");
        assert_eq!((before, after), (0, 10));
        assert_eq!(
            getpriority_process(Some(main_tid)).expect("getpriority"),
            main_before,
            "the calling thread's nice value is its own"
        );
    }

    fn event(number: u64) -> ReplyEvent {
        ReplyEvent {
            seq: (number + 1) as u16,
            number,
            ttl: Some(64),
            bytes: 64,
            rtt_s: 0.000104,
            tx: number.is_multiple_of(2).then_some(TxStamp::Driver),
            rx_kernel: true,
            out_of_order: number == 3,
        }
    }

    /// The lines the same events give through the direct and the threaded path.
    fn lines(threaded: bool) -> Vec<measure::Record> {
        let buf = Buf::default();
        let mut rep = Reporter::new(Envelope::new("pingrt", "0.1.0", "t"), Box::new(buf.clone()));
        std::thread::scope(|sc| {
            let mut r = if threaded {
                Records::threaded(sc, &mut rep, "fd00::2".into()).unwrap()
            } else {
                Records::direct(&mut rep, "fd00::2".into(), false)
            };
            for n in 0..5000 {
                r.reply(event(n)).unwrap();
            }
            r.failed("timeout", Map::new()).unwrap();
            let (rep, res) = r.finish().unwrap();
            res.unwrap();
            rep.flush().unwrap();
        });
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| measure::parse_line(l).unwrap())
            .collect()
    }

    #[test]
    fn both_paths_write_every_event_in_order() {
        for threaded in [false, true] {
            let recs = lines(threaded);
            assert_eq!(recs.len(), 5001, "threaded {threaded}");
            for (i, r) in recs.iter().take(5000).enumerate() {
                assert_eq!(r.seq, i as u64);
                assert_eq!(r.info["probe"], i as u64);
                assert_eq!(r.value("rtt_s"), Some(0.000104));
                assert_eq!(r.info["from"], "fd00::2");
            }
            assert_eq!(recs[3].info["out_of_order"], true);
            assert_eq!(recs[5000].error.as_deref(), Some("timeout"));
        }
    }
}
