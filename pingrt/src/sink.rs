//! Where sample records go: straight to the reporter, or (flood) through a writer thread so
//! that formatting JSON does not slow the probing down.

use crate::fastline::FastLines;
use measure::Reporter;
use measure::writer::Values;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use serde_json::{Map, Value};
use std::io;
use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Events handed to the writer thread at once: at a loopback flood's rate about every 25 ms,
/// so the writer is woken (a futex call and two context switches, which on a busy machine
/// come out of the probing thread's time) about 40 times a second.
const BATCH: usize = 4096;
/// Bytes of sample lines the writer thread formats before it hands them to the output.
const CHUNK: usize = 64 * 1024;
/// The longest an event waits before its batch is handed over.
const BATCH_DELAY: Duration = Duration::from_millis(50);

/// A valid reply, in the compact form the probing thread hands over.
#[derive(Clone, Debug)]
pub struct ReplyEvent {
    pub seq: u16,
    pub number: u64,
    pub ttl: Option<u8>,
    pub bytes: usize,
    pub rtt_s: f64,
    pub tx_kernel: bool,
    pub rx_kernel: bool,
    pub out_of_order: bool,
}

/// One sample record on its way to the writer.
pub enum Event {
    Reply(ReplyEvent),
    Failed(String, Map<String, Value>),
}

/// The info of a reply's sample.
pub fn reply_info(e: &ReplyEvent, from: &str) -> Map<String, Value> {
    let mut i = Map::new();
    i.insert("icmp_seq".into(), Value::from(e.seq));
    i.insert("probe".into(), Value::from(e.number));
    i.insert("ttl".into(), e.ttl.map_or(Value::Null, Value::from));
    i.insert("bytes".into(), Value::from(e.bytes));
    i.insert("from".into(), Value::from(from));
    let tx = if e.tx_kernel { "kernel" } else { "user" };
    i.insert("tx_stamp".into(), Value::from(tx));
    let rx = if e.rx_kernel { "kernel" } else { "user" };
    i.insert("rx_stamp".into(), Value::from(rx));
    if e.out_of_order {
        i.insert("out_of_order".into(), Value::Bool(true));
    }
    i
}

fn write(rep: &mut Reporter, ev: Event, from: &str) -> io::Result<()> {
    match ev {
        Event::Reply(e) => rep.sample(Values::new().with("rtt_s", e.rtt_s), reply_info(&e, from)),
        Event::Failed(err, info) => rep.sample_failed(&err, info),
    }
}

/// Room for a batch of events, backed with memory now rather than while probing.
fn new_batch() -> Vec<Event> {
    let mut v = Vec::with_capacity(BATCH);
    crate::prefault::populate(&mut v);
    v
}

/// Writes the lines of `batch` to `out` (through `chunk`, a piece at a time) and flushes.
fn write_lines(
    f: &mut FastLines,
    out: &mut crate::output::Shared,
    chunk: &mut Vec<u8>,
    batch: &[Event],
) -> io::Result<()> {
    for ev in batch {
        match ev {
            Event::Reply(e) => f.reply(chunk, e),
            Event::Failed(err, info) => f.failed(chunk, err, info),
        }
        if chunk.len() >= CHUNK {
            out.write_all(chunk)?;
            chunk.clear();
        }
    }
    out.write_all(chunk)?;
    chunk.clear();
    out.flush()
}

/// Sample records on their way out.
pub enum Sink {
    Direct(Box<Reporter>, String),
    Thread {
        tx: SyncSender<Vec<Event>>,
        handle: JoinHandle<(Reporter, io::Result<()>)>,
        /// Events not yet handed over: they go in batches, so the writer thread is woken
        /// (a futex call and a context switch) once per batch, not once per probe.
        pending: Vec<Event>,
        since: Instant,
        /// Emptied batches coming back for reuse (no allocation per batch).
        empty: Receiver<Vec<Event>>,
    },
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Sink::Direct(..) => "Sink::Direct",
            Sink::Thread { .. } => "Sink::Thread",
        })
    }
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the record writer stopped")
}

impl Sink {
    /// Writes through `rep` on this thread.
    pub fn direct(rep: Reporter, from: String) -> Sink {
        Sink::Direct(Box::new(rep), from)
    }

    /// Writes on a thread of its own: through `fast` lines into `out` when given (the
    /// Reporter's own output), else through `rep`.
    pub fn threaded(
        mut rep: Reporter,
        from: String,
        out: Option<crate::output::Shared>,
    ) -> io::Result<Sink> {
        let mut fast = match out {
            Some(o) => FastLines::new(rep.envelope(), &from).map(|f| (f, o)),
            None => None,
        };
        let (tx, rx) = sync_channel::<Vec<Event>>(256);
        let (back, empty) = sync_channel::<Vec<Event>>(4);
        let handle = std::thread::Builder::new()
            .name("records".into())
            .spawn(move || {
                // Below the probing thread: on a busy machine the probes go first and the
                // records catch up (the summary waits for them).
                // Ctrl-C and SIGTERM go to the probing thread, which then stops at once.
                let mut set = SigSet::empty();
                set.add(Signal::SIGINT);
                set.add(Signal::SIGTERM);
                let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
                let tid = nix::unistd::gettid().as_raw() as libc::id_t;
                // SAFETY: setpriority takes no pointers; it lowers the priority of this
                // thread (its own id) only. Neither nix nor socket2 offers setpriority.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 10) };
                // A batch's lines, handed to the output in pieces of about CHUNK bytes.
                let mut chunk = Vec::with_capacity(CHUNK + 4096);
                for mut batch in rx {
                    let res = match &mut fast {
                        Some((f, out)) => write_lines(f, out, &mut chunk, &batch),
                        None => batch
                            .drain(..)
                            .try_for_each(|ev| write(&mut rep, ev, &from)),
                    };
                    if let Err(e) = res {
                        return (rep, Err(e));
                    }
                    batch.clear();
                    let _ = back.try_send(batch);
                }
                (rep, Ok(()))
            })?;
        Ok(Sink::Thread {
            tx,
            handle,
            pending: new_batch(),
            since: Instant::now(),
            empty,
        })
    }

    fn put(&mut self, ev: Event) -> io::Result<()> {
        match self {
            Sink::Direct(rep, from) => write(rep, ev, from),
            Sink::Thread {
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
                    *since = Instant::now();
                    let next = empty.try_recv().unwrap_or_else(|_| new_batch());
                    let batch = std::mem::replace(pending, next);
                    tx.send(batch).map_err(|_| gone())?;
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

    /// Waits for every record to be written; gives the reporter back (for the summary) and
    /// the first write error, if any. `None` if the writer thread panicked.
    pub fn finish(self) -> Option<(Reporter, io::Result<()>)> {
        match self {
            Sink::Direct(rep, _) => Some((*rep, Ok(()))),
            Sink::Thread {
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
