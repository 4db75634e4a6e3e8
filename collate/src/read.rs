//! Reading JSON lines: every input in order, one pass, each line checked by the strict
//! `measure::parse_view` (parse_line's checks, into a record that borrows the line), with
//! bad lines named as `FILE:LINE: what is wrong`.
//!
//! Parsing is the cost (a few microseconds a line), so blocks of lines are parsed on worker
//! threads while the caller consumes the records strictly in input order: the result is the
//! same as a sequential read, first-appearance order included. The queues are bounded, so
//! memory stays a few blocks deep whatever the input size.

use crate::collect::Batch;
use crate::dims::Dim;
use crate::repeats::Repeats;
use measure::{Exit, Failure, RecordView};
use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

/// Where a line came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: Arc<str>,
    pub line: u64,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What to do with a line that is not a valid record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnInvalid {
    /// Stop with `FILE:LINE: why` and exit 2 (the default: a dropped line would silently
    /// move a median, so the user decides).
    Fail,
    /// Count it, remember the first few messages, and go on (`--skip-invalid`).
    Skip,
}

/// What reading found besides the records.
#[derive(Debug, Default)]
pub struct ReadReport {
    pub lines: u64,
    pub skipped: u64,
    /// The first few skipped lines' messages.
    pub examples: Vec<String>,
    /// The records read twice (counted once).
    pub repeats: Repeats,
}

/// Bytes read per block; a block hands on the whole lines among them, and the rest of its
/// last line starts the next block.
const BLOCK_BYTES: usize = 1024 * 1024;
/// Blocks in flight at once (bounds memory).
const IN_FLIGHT: usize = 4;

/// Whole lines of one input, each ending with a newline, as read: the parser thread finds
/// where they end (the reader only looks for the last newline), and numbers them from 0.
struct Block {
    /// The block's buffer; its lines are `text[..len]` (what follows is a spent block's
    /// bytes, kept so that a reused buffer is not zeroed again).
    text: Vec<u8>,
    len: usize,
    reply: SyncSender<Parsed>,
}

/// A parsed block: what collate keeps of its samples and summaries (begin and interval
/// lines are checked and dropped here, so they cost no memory), its invalid lines (by
/// their line in the block, from 0) and how many lines it had; the consumer, which takes
/// the blocks in order, knows the input and the line each block starts at.
struct Parsed {
    batch: Batch,
    bad: Vec<(u64, String)>,
    lines: u64,
}

/// The buffers that go back for reuse: block texts to the reader, emptied batches to the
/// parser threads.
struct Pools {
    texts: SyncSender<Vec<u8>>,
    batches: Mutex<Receiver<Batch>>,
}

/// Parses a block on a worker thread into a batch (an emptied one handed back by the
/// consumer where there is one); the records are reduced to their [`Batch`] extract here, so
/// that they are freed on the thread that allocated them.
fn parse_block(b: Block, group_dims: &[Dim], pools: &Pools) {
    let mut batch = match pools.batches.lock() {
        Ok(rx) => rx.try_recv().unwrap_or_default(),
        Err(_) => Batch::default(),
    };
    let mut bad = Vec::new();
    let mut lines = 0;
    let mut start = 0;
    // Every line in the block ends with a newline (read_input sees to it).
    let text = &b.text[..b.len];
    // A block of text is checked as UTF-8 once, not line by line (a bad line is found, and
    // named, by the line's own check).
    let whole = std::str::from_utf8(text).ok();
    // Each line's view is read into the lists of the one before.
    let mut reuse = measure::record::Reuse::default();
    for end in memchr::memchr_iter(b'\n', text) {
        let raw = &text[start..end];
        let line = whole.map(|t| &t[start..end]);
        start = end + 1;
        let parsed = match line {
            Some(line) => parse_text(line, &mut reuse),
            None => parse_raw(raw),
        };
        match parsed {
            Ok(Some(r)) => {
                batch.push_at(&r, group_dims, lines);
                reuse.give_back(r);
            }
            Ok(None) => {}
            Err(why) => bad.push((lines, why)),
        }
        lines += 1;
    }
    let _ = pools.texts.try_send(b.text);
    let _ = b.reply.send(Parsed { batch, bad, lines });
}

/// One raw line: `None` for a blank line (skipped: concatenated files often have them),
/// else the strictly parsed record (a view borrowing from `raw`) or why it is not one.
pub fn parse_raw(raw: &[u8]) -> Result<Option<RecordView<'_>>, String> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        format!(
            "not UTF-8 text (bad byte at column {}): a record is one JSON object per line",
            e.valid_up_to() + 1
        )
    })?;
    parse_text(text, &mut measure::record::Reuse::default())
}

/// [`parse_raw`] for a line known to be text, its view read into `reuse`'s lists.
fn parse_text<'a>(
    line: &'a str,
    reuse: &mut measure::record::Reuse,
) -> Result<Option<RecordView<'a>>, String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.bytes().all(|c| c.is_ascii_whitespace()) {
        return Ok(None);
    }
    measure::record::parse_view_reusing(line, reuse)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The threads collate spreads work over: one a CPU it may use, up to 8.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
}

/// Opens an input: `-` is stdin.
fn open(path: &str) -> Result<Box<dyn Read + Send>, Failure> {
    if path == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let f = File::open(path).map_err(|e| {
        Failure::new(
            Exit::Cannot,
            path,
            format!("{e} (give JSON lines files written by the benchmatrix tools, or - for stdin)"),
        )
    })?;
    if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Failure::new(
            Exit::Cannot,
            path,
            "is a directory: give the JSON lines files in it (e.g. dir/*.jsonl)",
        ));
    }
    Ok(Box::new(f))
}

/// What the reader thread queues, in input order: each block's input and the receiver of
/// its parse, or why reading stopped.
enum Order {
    Block(Arc<str>, Receiver<Parsed>),
    /// An input that stopped reading after its last block (the consumer, which counts the
    /// lines, names the place).
    Unreadable(Arc<str>, io::Error),
    Stop(Failure),
}

/// Reads every input in order and hands the samples and summaries, extracted by
/// `group_dims`, to `sink` in batches, in input order. `inputs` empty means stdin. Under
/// `OnInvalid::Fail` the first bad line ends the read with `FILE:LINE: why` (exit 2), before
/// any record of its block reaches the sink; under `Skip` bad lines are counted in the report.
pub fn read_all(
    inputs: &[String],
    on_invalid: OnInvalid,
    group_dims: &[Dim],
    mut sink: impl FnMut(&Batch) -> Result<(), Failure>,
) -> Result<ReadReport, Failure> {
    let stdin = ["-".to_string()];
    let inputs = if inputs.is_empty() { &stdin } else { inputs };
    let workers = threads();
    let mut report = ReadReport::default();
    std::thread::scope(|scope| -> Result<(), Failure> {
        let (job_tx, job_rx) = sync_channel::<Block>(IN_FLIGHT);
        let job_rx = Arc::new(Mutex::new(job_rx));
        // Block buffers go back to the reader for reuse, emptied batches to the workers.
        let (pool_tx, pool_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT * 8);
        let (batch_tx, batch_rx) = sync_channel::<Batch>(IN_FLIGHT * 2);
        let pools = Arc::new(Pools {
            texts: pool_tx,
            batches: Mutex::new(batch_rx),
        });
        for _ in 0..workers {
            let rx = Arc::clone(&job_rx);
            let pools = Arc::clone(&pools);
            scope.spawn(move || work(&rx, group_dims, &pools));
        }
        drop(pools);
        let (order_tx, order_rx) = sync_channel::<Order>(IN_FLIGHT);
        scope.spawn(move || read_inputs(inputs, &pool_rx, job_tx, order_tx));
        let result = consume(&order_rx, on_invalid, &mut report, &batch_tx, &mut sink);
        // On an early return the receivers go away; the reader and workers notice their
        // sends failing and stop.
        drop(order_rx);
        result
    })?;
    Ok(report)
}

/// A worker: parses blocks until the reader is done.
fn work(jobs: &Mutex<Receiver<Block>>, group_dims: &[Dim], pools: &Pools) {
    loop {
        let job = match jobs.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        match job {
            Ok(b) => parse_block(b, group_dims, pools),
            Err(_) => return,
        }
    }
}

/// The reader thread: reads blocks from every input in turn, queues each for a worker and
/// (in order) the receiver of its result; dropping `jobs` at the end stops the workers.
fn read_inputs(
    inputs: &[String],
    pool: &Receiver<Vec<u8>>,
    jobs: SyncSender<Block>,
    order: SyncSender<Order>,
) {
    for path in inputs {
        if let Err(stop) = read_input(path, pool, &jobs, &order) {
            if let Some(f) = stop {
                let _ = order.send(Order::Stop(f));
            }
            return;
        }
    }
}

/// Reads one input in blocks of whole lines (a last line without its newline gets one).
/// `Err(Some(why))` when it cannot be opened, `Err(None)` when it stopped reading (said to
/// the consumer) or the consumer or the workers are gone.
fn read_input(
    path: &str,
    pool: &Receiver<Vec<u8>>,
    jobs: &SyncSender<Block>,
    order: &SyncSender<Order>,
) -> Result<(), Option<Failure>> {
    let mut r = open(path)?;
    let file: Arc<str> = Arc::from(path);
    // The start of a line that the last block cut.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut text = pool.try_recv().unwrap_or_default();
        if text.len() < BLOCK_BYTES + carry.len() {
            text.resize(BLOCK_BYTES + carry.len(), 0);
        }
        text[..carry.len()].copy_from_slice(&carry);
        let mut len = carry.len();
        carry.clear();
        let (eof, cut) = match fill(&mut r, &mut text, &mut len) {
            Ok(filled) => filled,
            Err(e) => {
                let _ = order.send(Order::Unreadable(file, e));
                return Err(None);
            }
        };
        if eof && len == 0 {
            return Ok(());
        }
        if eof && text[len - 1] != b'\n' {
            if len == text.len() {
                text.push(b'\n');
            } else {
                text[len] = b'\n';
            }
            len += 1;
        }
        if !eof {
            carry.extend_from_slice(&text[cut..len]);
            len = cut;
        }
        let (tx, rx) = sync_channel(1);
        order
            .send(Order::Block(Arc::clone(&file), rx))
            .map_err(|_| None)?;
        let block = Block {
            text,
            len,
            reply: tx,
        };
        jobs.send(block).map_err(|_| None)?;
        if eof {
            return Ok(());
        }
    }
}

/// Reads into `text` past `len` until it is full and holds a newline (a line longer than a
/// block makes it grow), or the input ends; returns whether it ended and where the bytes
/// after the last newline start.
fn fill(r: &mut dyn Read, text: &mut Vec<u8>, len: &mut usize) -> io::Result<(bool, usize)> {
    let mut searched = 0;
    loop {
        while *len < text.len() {
            match r.read(&mut text[*len..]) {
                Ok(0) => return Ok((true, *len)),
                Ok(n) => *len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(i) = memchr::memrchr(b'\n', &text[searched..*len]) {
            return Ok((false, searched + i + 1));
        }
        searched = *len;
        text.resize(text.len() + BLOCK_BYTES, 0);
    }
}

/// Takes the parsed blocks in input order: counts their lines and bad lines, stops at the
/// first bad line under `OnInvalid::Fail`, hands each batch to `sink`, and the emptied
/// batch back to the workers (`spent`).
fn consume(
    order: &Receiver<Order>,
    on_invalid: OnInvalid,
    report: &mut ReadReport,
    spent: &SyncSender<Batch>,
    sink: &mut impl FnMut(&Batch) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // The input being read and the line its next block starts at.
    let mut file: Option<Arc<str>> = None;
    let mut line = 1;
    for next in order.iter() {
        let (input, rx) = match next {
            Order::Block(input, rx) => (input, rx),
            Order::Unreadable(input, e) => {
                let at = if file.as_ref().is_some_and(|f| Arc::ptr_eq(f, &input)) {
                    line
                } else {
                    1
                };
                return Err(Failure::new(Exit::Cannot, format!("{input}:{at}"), e));
            }
            Order::Stop(f) => return Err(f),
        };
        if !file.as_ref().is_some_and(|f| Arc::ptr_eq(f, &input)) {
            line = 1;
        }
        let parsed = rx
            .recv()
            .map_err(|_| Failure::new(Exit::Cannot, "reading", "a parser thread stopped"))?;
        report.lines += parsed.lines;
        let place = |at: u64| Place {
            file: Arc::clone(&input),
            line: line + at,
        };
        if let Some((at, why)) = parsed.bad.first()
            && on_invalid == OnInvalid::Fail
        {
            let place = place(*at);
            // Records before the bad line in this block still count for nothing:
            // the run stops here.
            return Err(Failure::new(
                Exit::Cannot,
                place,
                format!(
                    "{} (use --skip-invalid to skip bad lines and count them)",
                    crate::escape::visible(why)
                ),
            ));
        }
        for (at, why) in parsed.bad {
            report.skipped += 1;
            if report.examples.len() < 3 {
                report.examples.push(format!("{}: {why}", place(at)));
            }
        }
        let mut batch = parsed.batch;
        batch.set_first_line(line);
        report.repeats.mark(&mut batch, &input);
        sink(&batch)?;
        line += parsed.lines;
        file = Some(input);
        batch.clear();
        let _ = spent.try_send(batch);
    }
    Ok(())
}
