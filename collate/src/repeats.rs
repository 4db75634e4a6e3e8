//! Records read twice (`collate f f`, `cat f f | collate`), and records that only share an
//! identity. A record is identified by its (run, type, seq): a record under an identity read
//! before is a repeat when it is the same record (the same host, label and values), counted
//! once, and a warning per pair of inputs names the first place of the record and of its
//! repeat, with how many repeated. A different record under an identity read before (another
//! environment that reused a run id, or other values) is a conflict: both are kept, and a
//! warning per pair of inputs names both places. The records of another environment and
//! input than the run's first count as a run of their own from their first conflict on
//! (`RUN/2`, ...), so that neither environment's column depends on the order of the inputs.
//!
//! The check keeps, per run and type, the place each seq was first read at and its
//! fingerprint: a table indexed by seq (the tools number each run's lines from 0), with a
//! map for seqs that would leave the table mostly empty, so it costs 12 to 60 bytes a record
//! and no hash lookup of the record; the fingerprints are hashed on the parser threads.

use crate::batch::Batch;
use crate::fastmap::FastMap;
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

/// What a record's identity was found to hold before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Nothing: the record is noted there.
    New,
    /// The same record, first read at this place.
    Same(At),
    /// Another record, read at this place.
    Other(At),
}

/// The places and fingerprints of one run's records of one type, by seq.
#[derive(Debug, Default)]
struct Seen {
    dense: Vec<u64>,
    fps: Vec<u32>,
    filled: usize,
    sparse: HashMap<u64, (At, u32)>,
}

impl Seen {
    /// The place and fingerprint of `seq`, when it was read.
    fn get(&self, seq: u64) -> Option<(At, u32)> {
        if let Some(&found) = self.sparse.get(&seq) {
            return Some(found);
        }
        let i = usize::try_from(seq).ok()?;
        let p = *self.dense.get(i).filter(|&&p| p != 0)?;
        Some((unpack(p), self.fps[i]))
    }

    /// Notes `at` (a record of fingerprint `fp`) as the place of `seq`, unless `seq` was
    /// read before: then what was read there.
    fn see(&mut self, seq: u64, at: At, fp: u32) -> Found {
        let known = |(first, f): (At, u32)| {
            if f == fp {
                Found::Same(first)
            } else {
                Found::Other(first)
            }
        };
        if !self.sparse.is_empty()
            && let Some(&found) = self.sparse.get(&seq)
        {
            return known(found);
        }
        match (usize::try_from(seq), pack(at)) {
            (Ok(i), Some(packed)) if i < self.dense.len() || i < 2 * self.filled + DENSE_SLACK => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, 0);
                    self.fps.resize(i + 1, 0);
                }
                let slot = &mut self.dense[i];
                if *slot != 0 {
                    return known((unpack(*slot), self.fps[i]));
                }
                *slot = packed;
                self.fps[i] = fp;
                self.filled += 1;
                Found::New
            }
            _ => {
                let i = usize::try_from(seq).unwrap_or(usize::MAX);
                if let Some(&p) = self.dense.get(i).filter(|&&p| p != 0) {
                    return known((unpack(p), self.fps[i]));
                }
                self.sparse.insert(seq, (at, fp));
                Found::New
            }
        }
    }
}

/// The records counted in one run: a run id's first, or the records of another environment
/// and input under the same run id (a variant, counted as a run of its own).
#[derive(Debug)]
struct Unit {
    /// Begins, samples and summaries.
    seen: [Seen; 3],
    /// The host and label (hashed) and the input of its first record.
    env: u64,
    file: u32,
    /// The run the collector counts a variant's records in.
    name: Option<String>,
}

/// A run id's units: the first, and the variants that conflicts made.
#[derive(Debug)]
struct Entry {
    base: u32,
    variants: Vec<u32>,
}

/// The repeats, or the conflicts, of one input's records in one (possibly the same) input.
#[derive(Debug)]
struct Pair {
    first_file: u32,
    repeat_file: u32,
    count: u64,
    /// The first one: where the record was first read, where again, and what it is.
    first: u64,
    again: u64,
    what: String,
    /// For a conflict, the run the second input's records count in, when it is another.
    apart: Option<String>,
}

/// One record being checked: where it was read, its identity and fingerprint.
#[derive(Debug, Clone, Copy)]
struct Rec {
    at: At,
    slot: usize,
    seq: u64,
    env: u64,
    fp: u32,
}

/// The records read so far, by (run, type, seq).
#[derive(Debug, Default)]
pub struct Repeats {
    files: Vec<Arc<str>>,
    runs: FastMap<String, u32>,
    entries: Vec<Entry>,
    units: Vec<Unit>,
    /// Further records kept under an identity a unit holds (a conflict within one input and
    /// environment): their fingerprints and places, so that their repeats are found too.
    extra: FastMap<(u32, usize, u64), Vec<(u32, At)>>,
    repeats: Vec<Pair>,
    conflicts: Vec<Pair>,
}

/// The slot of a record type in a unit's `seen`.
fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Sample | Kind::Interval => 0,
        Kind::Summary => 1,
        Kind::Begin => 2,
    }
}

impl Repeats {
    /// Marks every record of `batch` (read from `file`, in input order) that repeats one
    /// read before, so that the collector leaves it out, and moves the records of another
    /// environment that conflict to a run of their own.
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
            let (env, fp) = batch.fingerprint(i);
            let e = match &last_run {
                Some((r, id)) if r == run => *id,
                _ => {
                    let id = self.entry(run, env, fi);
                    last_run = Some((run.to_string(), id));
                    id
                }
            };
            let rec = Rec {
                at: (fi, line),
                slot: slot(kind),
                seq,
                env,
                fp,
            };
            let entry = &self.entries[e as usize];
            if entry.variants.is_empty() {
                let unit = &mut self.units[entry.base as usize];
                match unit.seen[rec.slot].see(seq, rec.at, fp) {
                    Found::New => continue,
                    Found::Same(first) => {
                        note(&mut self.repeats, first, rec.at, None, || {
                            what(run, kind, seq)
                        });
                        batch.set_repeat(i);
                        continue;
                    }
                    Found::Other(_) => {}
                }
            }
            let what = what(run, kind, seq);
            self.settle(batch, i, e, rec, what);
        }
    }

    /// The entry of run id `run`, made on first sight with its first unit.
    fn entry(&mut self, run: &str, env: u64, file: u32) -> u32 {
        if let Some(&e) = self.runs.get(run) {
            return e;
        }
        let e = self.entries.len() as u32;
        let base = self.unit(env, file, None);
        self.entries.push(Entry {
            base,
            variants: Vec::new(),
        });
        self.runs.insert(run.to_string(), e);
        e
    }

    fn unit(&mut self, env: u64, file: u32, name: Option<String>) -> u32 {
        self.units.push(Unit {
            seen: Default::default(),
            env,
            file,
            name,
        });
        self.units.len() as u32 - 1
    }

    /// The slow path, for a record whose identity holds another record, or of a run id
    /// that has variants: a repeat of a record of any of the run id's units is left out;
    /// else the record counts in the unit of its environment and input, and a conflict with
    /// another record is named (and makes that unit, when the record is not of the run
    /// id's first environment and input).
    fn settle(&mut self, batch: &mut Batch, i: usize, e: u32, r: Rec, what: String) {
        let entry = &self.entries[e as usize];
        let units: Vec<u32> = std::iter::once(entry.base)
            .chain(entry.variants.iter().copied())
            .collect();
        let mut other = None;
        for &u in &units {
            let mut known: Vec<(u32, At)> = Vec::new();
            if let Some((first, f)) = self.units[u as usize].seen[r.slot].get(r.seq) {
                known.push((f, first));
            }
            if let Some(list) = self.extra.get(&(u, r.slot, r.seq)) {
                known.extend(list.iter().copied());
            }
            if let Some(&(_, first)) = known.iter().find(|(f, _)| *f == r.fp) {
                note(&mut self.repeats, first, r.at, None, || what);
                batch.set_repeat(i);
                return;
            }
            other = other.or(known.first().map(|&(_, at)| at));
        }
        let base = units[0];
        let own = |u: &Unit| u.env == r.env && u.file == r.at.0;
        let mut unit = units[1..]
            .iter()
            .copied()
            .find(|&u| own(&self.units[u as usize]))
            .unwrap_or(base);
        if let Some(first) = other {
            if unit == base && !own(&self.units[base as usize]) {
                let run = batch.identity(i).0;
                let name = format!("{run}/{}", units.len() + 1);
                unit = self.unit(r.env, r.at.0, Some(name));
                self.entries[e as usize].variants.push(unit);
            }
            let apart = self.units[unit as usize].name.clone();
            note(&mut self.conflicts, first, r.at, apart, || what);
        }
        let u = &mut self.units[unit as usize];
        if u.seen[r.slot].see(r.seq, r.at, r.fp) != Found::New {
            self.extra
                .entry((unit, r.slot, r.seq))
                .or_default()
                .push((r.fp, r.at));
        }
        if let Some(name) = &self.units[unit as usize].name {
            batch.set_run(i, name);
        }
    }

    /// One warning per pair of inputs that repeated records, then one per pair whose
    /// records conflict, in the order found.
    pub fn warnings(&self) -> Vec<String> {
        let name = |f: u32| crate::escape::visible(&self.files[f as usize]).into_owned();
        let repeats = self.repeats.iter().map(|p| {
            let (a, b) = (name(p.first_file), name(p.repeat_file));
            format!(
                "{b}:{} repeats the record at {a}:{} ({}){}: a record (run, type, seq) is \
                 counted once",
                p.again,
                p.first,
                crate::escape::visible(&p.what),
                more(p.count, &a, &b)
            )
        });
        let conflicts = self.conflicts.iter().map(|p| {
            let (a, b) = (name(p.first_file), name(p.repeat_file));
            let kept = match &p.apart {
                Some(run) => format!(", {b}'s as run {}", crate::escape::visible(run)),
                None => String::new(),
            };
            let others = match p.count - 1 {
                0 => String::new(),
                n => format!(", as are {n} more of {b}'s"),
            };
            format!(
                "{b}:{} and {a}:{} are different records under one identity ({}; another \
                 host, label or values){others}: both are kept{kept}",
                p.again,
                p.first,
                crate::escape::visible(&p.what),
            )
        });
        repeats.chain(conflicts).collect()
    }
}

/// What a record is, for a warning.
fn what(run: &str, kind: Kind, seq: u64) -> String {
    format!("run {run}, {} seq {seq}", kind.as_str())
}

/// Counts a repeat or a conflict in its pair of inputs (noting the first of each pair).
fn note(
    pairs: &mut Vec<Pair>,
    first: At,
    again: At,
    apart: Option<String>,
    what: impl FnOnce() -> String,
) {
    if let Some(p) = pairs
        .iter_mut()
        .find(|p| p.first_file == first.0 && p.repeat_file == again.0)
    {
        p.count += 1;
        return;
    }
    pairs.push(Pair {
        first_file: first.0,
        repeat_file: again.0,
        count: 1,
        first: first.1,
        again: again.1,
        what: what(),
        apart,
    });
}

/// " and N more records of A again in B", for a pair of `count`.
fn more(count: u64, a: &str, b: &str) -> String {
    match count - 1 {
        0 => String::new(),
        n => format!(" and {n} more record{} of {a} again in {b}", plural(n)),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::Found::{New, Other, Same};
    use super::*;

    #[test]
    fn a_seq_is_seen_once_dense_or_sparse() {
        let mut s = Seen::default();
        assert_eq!(s.see(0, (0, 1), 7), New);
        assert_eq!(s.see(1 << 40, (0, 2), 7), New);
        assert_eq!(s.see(5, (0, 3), 7), New);
        assert_eq!(s.see(0, (1, 9), 7), Same((0, 1)));
        assert_eq!(s.see(1 << 40, (1, 10), 8), Other((0, 2)));
        assert_eq!(s.see(5, (1, 11), 7), Same((0, 3)));
        assert_eq!(s.see(4, (1, 12), 7), New);
        assert_eq!(s.get(1 << 40), Some(((0, 2), 7)));
        assert_eq!(s.get(5), Some(((0, 3), 7)));
        assert_eq!(s.get(6), None);
        // Strided seqs go to the map rather than into a mostly empty table.
        let mut s = Seen::default();
        for k in 0..1000 {
            assert_eq!(s.see(k * 100, (0, k + 1), 1), New);
        }
        assert!(s.dense.len() < 1000, "{}", s.dense.len());
        assert_eq!(s.see(99_900, (1, 1), 1), Same((0, 1000)));
        // A place too big to pack goes to the map, and is found there.
        let mut s = Seen::default();
        assert_eq!(s.see(3, (0, 1 << 50), 1), New);
        assert_eq!(s.see(3, (1, 1), 2), Other((0, 1 << 50)));
        assert_eq!(s.see(2, (0, 7), 1), New);
        assert_eq!(s.see(2, (2, 1 << 50), 1), Same((0, 7)));
    }
}
