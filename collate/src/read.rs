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
use std::io::{self, BufRead, BufReader};
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

/// Lines per block handed to a worker (at most).
const BLOCK_LINES: usize = 2048;
/// Bytes per block (about; a block ends after the line that reaches it), so that long lines
/// do not make big blocks.
const BLOCK_BYTES: usize = 256 * 1024;
/// Blocks in flight at once (bounds memory).
const IN_FLIGHT: usize = 8;

struct Block {
    file: Arc<str>,
    first_line: u64,
    text: Vec<u8>,
    /// Where each line ends in `text` (past its newline), as the reader found them, so that
    /// the workers do not look for the newlines again.
    ends: Vec<usize>,
    reply: SyncSender<Parsed>,
}

/// A parsed block: what collate keeps of its samples and summaries (begin and interval
/// lines are checked and dropped here, so they cost no memory), and its invalid lines.
struct Parsed {
    file: Arc<str>,
    batch: Batch,
    bad: Vec<(Place, String)>,
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
    // Every line in the block ends with a newline (fill_block sees to it).
    for (i, &end) in b.ends.iter().enumerate() {
        let raw = b.text.get(start..end.saturating_sub(1)).unwrap_or_default();
        start = end;
        lines += 1;
        match parse_raw(raw) {
            Ok(Some(r)) => batch.push_at(&r, group_dims, b.first_line + i as u64),
            Ok(None) => {}
            Err(why) => {
                let place = Place {
                    file: b.file.clone(),
                    line: b.first_line + i as u64,
                };
                bad.push((place, why));
            }
        }
    }
    let mut text = b.text;
    text.clear();
    let _ = pools.texts.try_send(text);
    let file = b.file;
    let _ = b.reply.send(Parsed {
        file,
        batch,
        bad,
        lines,
    });
}

/// One raw line: `None` for a blank line (skipped: concatenated files often have them),
/// else the strictly parsed record (a view borrowing from `raw`) or why it is not one.
pub fn parse_raw(raw: &[u8]) -> Result<Option<RecordView<'_>>, String> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = std::str::from_utf8(raw).map_err(|e| {
        format!(
            "not UTF-8 text (bad byte at column {}): a record is one JSON object per line",
            e.valid_up_to() + 1
        )
    })?;
    measure::parse_view(text)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Reads up to BLOCK_LINES complete lines into `buf`, and where each ends into `ends`;
/// returns how many (a last line without its newline gets one).
fn fill_block(r: &mut dyn BufRead, buf: &mut Vec<u8>, ends: &mut Vec<usize>) -> io::Result<u64> {
    let mut n = 0;
    while n < BLOCK_LINES as u64 && buf.len() < BLOCK_BYTES {
        let got = r.read_until(b'\n', buf)?;
        if got == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') {
            buf.push(b'\n');
        }
        ends.push(buf.len());
        n += 1;
    }
    Ok(n)
}

/// Opens an input: `-` is stdin.
fn open(path: &str) -> Result<Box<dyn BufRead + Send>, Failure> {
    if path == "-" {
        return Ok(Box::new(BufReader::with_capacity(1 << 16, io::stdin())));
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
    Ok(Box::new(
        BufReader::with_capacity(1 << 16, f) as BufReader<File>
    ))
}

/// What the reader thread queues per block, in input order: the receiver of the block's
/// parse, or why reading stopped.
type Order = Result<Receiver<Parsed>, Failure>;

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
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
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
                let _ = order.send(Err(f));
            }
            return;
        }
    }
}

/// Reads one input in blocks. `Err(Some(why))` when it cannot be read, `Err(None)` when the
/// consumer or the workers are gone.
fn read_input(
    path: &str,
    pool: &Receiver<Vec<u8>>,
    jobs: &SyncSender<Block>,
    order: &SyncSender<Order>,
) -> Result<(), Option<Failure>> {
    let mut r = open(path)?;
    let file: Arc<str> = Arc::from(path);
    let mut line = 1u64;
    loop {
        let mut text = pool
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BLOCK_BYTES + 4096));
        let mut ends = Vec::with_capacity(BLOCK_LINES);
        let n = fill_block(&mut r, &mut text, &mut ends)
            .map_err(|e| Failure::new(Exit::Cannot, format!("{path}:{line}"), e))?;
        if n == 0 {
            return Ok(());
        }
        let (tx, rx) = sync_channel(1);
        order.send(Ok(rx)).map_err(|_| None)?;
        let block = Block {
            file: file.clone(),
            first_line: line,
            text,
            ends,
            reply: tx,
        };
        jobs.send(block).map_err(|_| None)?;
        line += n;
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
    for next in order.iter() {
        let rx = next?;
        let parsed = rx
            .recv()
            .map_err(|_| Failure::new(Exit::Cannot, "reading", "a parser thread stopped"))?;
        report.lines += parsed.lines;
        if let Some((place, why)) = parsed.bad.first()
            && on_invalid == OnInvalid::Fail
        {
            // Records before the bad line in this block still count for nothing:
            // the run stops here.
            return Err(Failure::new(
                Exit::Cannot,
                place,
                format!("{why} (use --skip-invalid to skip bad lines and count them)"),
            ));
        }
        for (place, why) in parsed.bad {
            report.skipped += 1;
            if report.examples.len() < 3 {
                report.examples.push(format!("{place}: {why}"));
            }
        }
        let mut batch = parsed.batch;
        report.repeats.mark(&mut batch, &parsed.file);
        sink(&batch)?;
        batch.clear();
        let _ = spent.try_send(batch);
    }
    Ok(())
}
