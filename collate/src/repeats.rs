//! Records read twice (`collate f f`, `cat f f | collate`): a record is identified by its
//! (run, type, seq), so a repeat is counted once, and a warning per pair of inputs names
//! the first place of the record and of its repeat, with how many repeated.
//!
//! The check keeps, per run and type, the place each seq was first read at: a table
//! indexed by seq (the tools number each run's lines from 0), with a map for seqs that would
//! leave the table mostly empty, so it costs 8 to 50 bytes a record and no hash of the record.

use crate::collect::Batch;
use measure::Kind;
use std::collections::HashMap;
use std::sync::Arc;

/// A seq up to this far past the table's end grows the table (else it goes to the map while
/// the table would be less than half full, so that strided seqs cost no empty slots).
const DENSE_SLACK: usize = 64;

/// Where a record was first read: the input's index and the line (0 for never).
type At = (u32, u64);

/// Bits of a packed place that hold the line; the input's index takes the rest.
const LINE_BITS: u32 = 44;

/// A place in 8 bytes (0 for never), or None when it does not fit (then the map keeps it).
fn pack((file, line): At) -> Option<u64> {
    (u64::from(file) < 1 << (64 - LINE_BITS) && line < 1 << LINE_BITS)
        .then(|| u64::from(file) << LINE_BITS | line)
}

fn unpack(p: u64) -> At {
    ((p >> LINE_BITS) as u32, p & ((1 << LINE_BITS) - 1))
}

/// The places of one run's records of one type, by seq.
#[derive(Debug, Default)]
struct Seen {
    dense: Vec<u64>,
    filled: usize,
    sparse: HashMap<u64, At>,
}

impl Seen {
    /// Notes `at` as the place of `seq`; the first place when `seq` was read before.
    fn see(&mut self, seq: u64, at: At) -> Option<At> {
        if !self.sparse.is_empty()
            && let Some(&first) = self.sparse.get(&seq)
        {
            return Some(first);
        }
        match (usize::try_from(seq), pack(at)) {
            (Ok(i), Some(packed)) if i < self.dense.len() || i < 2 * self.filled + DENSE_SLACK => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, 0);
                }
                let slot = &mut self.dense[i];
                if *slot != 0 {
                    return Some(unpack(*slot));
                }
                *slot = packed;
                self.filled += 1;
                None
            }
            _ => {
                let i = usize::try_from(seq).unwrap_or(usize::MAX);
                if let Some(&p) = self.dense.get(i).filter(|&&p| p != 0) {
                    return Some(unpack(p));
                }
                self.sparse.insert(seq, at);
                None
            }
        }
    }
}

/// The repeats of one input's records in one (possibly the same) input.
#[derive(Debug)]
struct Pair {
    first_file: u32,
    repeat_file: u32,
    count: u64,
    /// The first repeat: where the record was first read, where again, and what it is.
    first: u64,
    again: u64,
    what: String,
}

/// The records read so far, by (run, type, seq).
#[derive(Debug, Default)]
pub struct Repeats {
    files: Vec<Arc<str>>,
    runs: crate::fastmap::FastMap<String, u32>,
    seen: Vec<[Seen; 2]>,
    pairs: Vec<Pair>,
}

impl Repeats {
    /// Marks every record of `batch` (read from `file`, in input order) that repeats one
    /// read before, so that the collector leaves it out.
    pub fn mark(&mut self, batch: &mut Batch, file: &Arc<str>) {
        let fi = match self.files.last() {
            Some(last) if Arc::ptr_eq(last, file) => self.files.len() as u32 - 1,
            _ => {
                self.files.push(Arc::clone(file));
                self.files.len() as u32 - 1
            }
        };
        let mut last_run: Option<(String, u32)> = None;
        for i in 0..batch.len() {
            let (run, kind, seq, line) = batch.identity(i);
            // A begin counts in no cell (--times takes only its time): a repeated one is
            // harmless, and its seq is not a sample's.
            if kind == Kind::Begin {
                continue;
            }
            let ri = match &last_run {
                Some((r, id)) if r == run => *id,
                _ => {
                    let next = self.runs.len() as u32;
                    let id = *self.runs.entry(run.to_string()).or_insert(next);
                    if id == next {
                        self.seen.push(Default::default());
                    }
                    last_run = Some((run.to_string(), id));
                    id
                }
            };
            let k = usize::from(kind == Kind::Summary);
            if let Some(first) = self.seen[ri as usize][k].see(seq, (fi, line)) {
                self.note(first, (fi, line), || {
                    format!("run {run}, {} seq {seq}", kind.as_str())
                });
                batch.set_repeat(i);
            }
        }
    }

    fn note(&mut self, first: At, again: At, what: impl FnOnce() -> String) {
        if let Some(p) = self
            .pairs
            .iter_mut()
            .find(|p| p.first_file == first.0 && p.repeat_file == again.0)
        {
            p.count += 1;
            return;
        }
        self.pairs.push(Pair {
            first_file: first.0,
            repeat_file: again.0,
            count: 1,
            first: first.1,
            again: again.1,
            what: what(),
        });
    }

    /// One warning per pair of inputs that repeated records, in the order found.
    pub fn warnings(&self) -> Vec<String> {
        self.pairs
            .iter()
            .map(|p| {
                let a = &self.files[p.first_file as usize];
                let b = &self.files[p.repeat_file as usize];
                let more = match p.count - 1 {
                    0 => String::new(),
                    n => format!(" and {n} more record{} of {a} again in {b}", plural(n)),
                };
                format!(
                    "{b}:{} repeats the record at {a}:{} ({}){more}: a record (run, type, \
                     seq) is counted once",
                    p.again, p.first, p.what
                )
            })
            .collect()
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seq_is_seen_once_dense_or_sparse() {
        let mut s = Seen::default();
        assert_eq!(s.see(0, (0, 1)), None);
        assert_eq!(s.see(1 << 40, (0, 2)), None);
        assert_eq!(s.see(5, (0, 3)), None);
        assert_eq!(s.see(0, (1, 9)), Some((0, 1)));
        assert_eq!(s.see(1 << 40, (1, 10)), Some((0, 2)));
        assert_eq!(s.see(5, (1, 11)), Some((0, 3)));
        assert_eq!(s.see(4, (1, 12)), None);
        // Strided seqs go to the map rather than into a mostly empty table.
        let mut s = Seen::default();
        for k in 0..1000 {
            assert_eq!(s.see(k * 100, (0, k + 1)), None);
        }
        assert!(s.dense.len() < 1000, "{}", s.dense.len());
        assert_eq!(s.see(99_900, (1, 1)), Some((0, 1000)));
        // A place too big to pack goes to the map, and is found there.
        let mut s = Seen::default();
        assert_eq!(s.see(3, (0, 1 << 50)), None);
        assert_eq!(s.see(3, (1, 1)), Some((0, 1 << 50)));
        assert_eq!(s.see(2, (0, 7)), None);
        assert_eq!(s.see(2, (2, 1 << 50)), Some((0, 7)));
    }
}
