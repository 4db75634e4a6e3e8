//! A block of records reduced to what collate keeps of each (a [`Batch`] of [`Lite`]
//! extracts), built on the reader threads, and the view of one record the collector adds.

use crate::busy::Load;
use crate::dims::Dim;
use crate::drift::Clock;
use measure::record::{CellStat, Status};
use measure::{Kind, RecordView};
use std::hash::{BuildHasher, Hasher};

/// The hash of the fingerprints: the same on every thread and in every run, so that a
/// record read by any parser thread hashes alike.
const FINGERPRINT: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x6265_6e63_686d_7478);

/// The hash of a record's host and label (0xff, which no UTF-8 text holds, between them).
fn environment(host: &str, label: &str) -> u64 {
    let mut h = FINGERPRINT.build_hasher();
    h.write(host.as_bytes());
    h.write_u8(0xff);
    h.write(label.as_bytes());
    h.finish()
}

/// Separates the parts of a group key (the unit separator; a value holding it has it
/// replaced by a space when the key is built, so that the parts stay aligned).
pub const SEP: char = '\u{1f}';

/// The part of a record that collate keeps, extracted on the reader threads into a
/// [`Batch`]: its type, whether it failed, its group key (the values of the grouping
/// dimensions), the headline it names and its values.
#[derive(Debug, Clone, Copy)]
struct Lite {
    kind: Kind,
    failed: bool,
    /// A sample with neither values nor an error.
    empty: bool,
    status: Option<Status>,
    error: Option<(u32, u32)>,
    at: (u32, u32),
    group: (u32, u32),
    headline: Option<(u32, u32)>,
    /// A summary's headlines (key, role, stat), a range of the batch's `roles`.
    roles: (u32, u32),
    /// A begin's environment facts (key, text), a range of the batch's `facts`.
    facts: (u32, u32),
    /// A begin's or a summary's load facts, an index into the batch's `loads`.
    load: Option<u32>,
    /// A begin's guest/host clock ratio, an index into the batch's `clocks`.
    clock: Option<u32>,
    vals: (u32, u32),
    /// The identity of the record (run, seq) and its line in its input, for the check for
    /// repeats; `repeat` when it repeats a record read before (and is left out).
    run: (u32, u32),
    /// The suite invocation the run belongs to, where the record names one.
    invocation: Option<(u32, u32)>,
    seq: u64,
    line: u64,
    repeat: bool,
    /// What tells a repeat from a different record under the same (run, type, seq): the
    /// hash of its host and label, and of those and its values.
    env: u64,
    fp: u32,
}

/// A headline's key and role, as ranges of a batch's text, and the statistic it names.
type Role = ((u32, u32), (u32, u32), Option<CellStat>);

/// A fact's key and text, as ranges of a batch's text.
type FactText = ((u32, u32), (u32, u32));

/// Many records' [`Lite`] parts in a few buffers (few allocations per block of lines).
#[derive(Debug, Default)]
pub struct Batch {
    /// The line in its input of the block's first line: the records' lines are counted
    /// from it (the parser threads number a block's lines from 0, the reader knows where
    /// the block starts).
    first_line: u64,
    buf: String,
    vals: Vec<((u32, u32), f64)>,
    roles: Vec<Role>,
    facts: Vec<FactText>,
    loads: Vec<Load>,
    clocks: Vec<Clock>,
    recs: Vec<Lite>,
}

/// One record of a batch.
#[derive(Debug, Clone, Copy)]
pub struct LiteView<'a> {
    pub kind: Kind,
    pub failed: bool,
    pub empty: bool,
    pub status: Option<Status>,
    pub error: Option<&'a str>,
    pub run: &'a str,
    pub invocation: Option<&'a str>,
    pub at: &'a str,
    pub group: &'a str,
    pub headline: Option<&'a str>,
    /// A begin's or a summary's load facts, where it has any.
    pub load: Option<Load>,
    /// A begin's guest/host clock ratio, where it has one ([`crate::drift`]).
    pub clock: Option<Clock>,
    pub(crate) vals: &'a [((u32, u32), f64)],
    roles: &'a [Role],
    facts: &'a [FactText],
    buf: &'a str,
}

impl<'a> LiteView<'a> {
    pub fn values(&self) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        let buf = self.buf;
        self.vals
            .iter()
            .map(move |&((a, b), v)| (&buf[a as usize..b as usize], v))
    }

    /// A begin's environment facts: each key and its text.
    pub fn facts(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let buf = self.buf;
        let s = move |(a, b): (u32, u32)| &buf[a as usize..b as usize];
        self.facts.iter().map(move |&(k, v)| (s(k), s(v)))
    }

    /// A summary's headlines: each key, the role of its row and the statistic it names.
    pub fn headlines(&self) -> impl Iterator<Item = (&'a str, &'a str, Option<CellStat>)> + 'a {
        let buf = self.buf;
        let s = move |(a, b): (u32, u32)| &buf[a as usize..b as usize];
        self.roles.iter().map(move |&(k, r, st)| (s(k), s(r), st))
    }
}

impl Batch {
    /// Empties the batch and keeps its buffers, for the next block: the reader hands batches
    /// back to the parser threads, so that their buffers are not allocated (and their pages
    /// faulted in) again for every block of lines.
    pub fn clear(&mut self) {
        self.first_line = 0;
        self.buf.clear();
        self.vals.clear();
        self.roles.clear();
        self.facts.clear();
        self.loads.clear();
        self.clocks.clear();
        self.recs.clear();
    }

    fn push_str(&mut self, s: &str) -> (u32, u32) {
        let a = self.buf.len() as u32;
        self.buf.push_str(s);
        (a, self.buf.len() as u32)
    }

    /// Adds a begin, sample or summary (intervals are left out) grouped by `group_dims`; the
    /// collector counts samples and summaries, `--times` begins too.
    pub fn push(&mut self, r: &RecordView, group_dims: &[Dim]) {
        self.push_at(r, group_dims, 0);
    }

    /// As [`Batch::push`], for the record read at `line` of its input (counted from the
    /// batch's first line: see [`Batch::set_first_line`]).
    pub fn push_at(&mut self, r: &RecordView, group_dims: &[Dim], line: u64) {
        if r.kind == Kind::Interval {
            return;
        }
        let ga = self.buf.len() as u32;
        for d in group_dims {
            let v = d.value(r, "");
            // A value holding the separator would shift the parts: replace it.
            if v.contains(SEP) {
                self.buf.push_str(&v.replace(SEP, " "));
            } else {
                self.buf.push_str(v);
            }
            self.buf.push(SEP);
        }
        let group = (ga, self.buf.len() as u32);
        let headline = match (&r.kind, &r.headline) {
            (Kind::Summary, Some(h)) => Some(self.push_str(h)),
            _ => None,
        };
        let run = self.push_str(&r.run);
        let invocation = r.invocation.as_deref().map(|i| self.push_str(i));
        let at = self.push_str(&r.at);
        let error = match (r.kind, &r.error) {
            (Kind::Summary, Some(e)) => Some(self.push_str(e)),
            _ => None,
        };
        let ra = self.roles.len() as u32;
        if r.kind == Kind::Summary {
            for h in &r.headlines {
                let kr = (self.push_str(&h.key), self.push_str(&h.role), h.stat);
                self.roles.push(kr);
            }
        }
        let roles = (ra, self.roles.len() as u32);
        let (facts, load, clock) = self.push_facts(r);
        let env = environment(&r.host, &r.label);
        let mut fp = FINGERPRINT.build_hasher();
        fp.write_u64(env);
        let va = self.vals.len() as u32;
        for (k, v) in &r.values {
            if let Some(x) = v.as_f64() {
                let key = self.push_str(k);
                self.vals.push((key, x));
                fp.write(k.as_bytes());
                fp.write_u64(x.to_bits());
            }
        }
        self.recs.push(Lite {
            kind: r.kind,
            failed: r.kind == Kind::Sample && r.error.is_some(),
            empty: r.kind == Kind::Sample && r.error.is_none() && r.values.is_empty(),
            status: r.status,
            error,
            at,
            group,
            headline,
            roles,
            facts,
            load,
            clock,
            vals: (va, self.vals.len() as u32),
            run,
            invocation,
            seq: r.seq,
            line,
            repeat: false,
            env,
            fp: fp.finish() as u32,
        });
    }

    /// A begin's environment facts (a range of `facts`), a begin's or a summary's load
    /// facts (an index into `loads`) and a begin's clock ratio (an index into `clocks`).
    fn push_facts(&mut self, r: &RecordView) -> ((u32, u32), Option<u32>, Option<u32>) {
        let fa = self.facts.len() as u32;
        let mut clock = None;
        if r.kind == Kind::Begin
            && let Some(info) = &r.info
        {
            for (k, v) in crate::facts::texts(info) {
                let kv = (self.push_str(&k), self.push_str(&v));
                self.facts.push(kv);
            }
            let c = Clock::of(info);
            if !c.is_empty() {
                self.clocks.push(c);
                clock = Some(self.clocks.len() as u32 - 1);
            }
        }
        let facts = (fa, self.facts.len() as u32);
        let load = match &r.info {
            Some(info) if matches!(r.kind, Kind::Begin | Kind::Summary) => {
                Some(Load::of(info)).filter(|l| !l.is_empty())
            }
            _ => None,
        };
        let load = load.map(|l| {
            self.loads.push(l);
            self.loads.len() as u32 - 1
        });
        (facts, load, clock)
    }

    /// The (run, type, seq) of record `i` and its line.
    pub fn identity(&self, i: usize) -> (&str, Kind, u64, u64) {
        let l = &self.recs[i];
        let run = &self.buf[l.run.0 as usize..l.run.1 as usize];
        (run, l.kind, l.seq, self.first_line + l.line)
    }

    /// What tells record `i` from another under its (run, type, seq): the hash of its
    /// host and label, and the hash of those and its values (see [`crate::repeats`]).
    pub fn fingerprint(&self, i: usize) -> (u64, u32) {
        (self.recs[i].env, self.recs[i].fp)
    }

    /// Counts record `i` in run `run` (a run of its own for a record that conflicts with
    /// another under its run id: see [`crate::repeats`]).
    pub fn set_run(&mut self, i: usize, run: &str) {
        self.recs[i].run = self.push_str(run);
    }

    /// Counts the records' lines from `first`, the input line of the batch's first line.
    pub fn set_first_line(&mut self, first: u64) {
        self.first_line = first;
    }

    /// Marks record `i` as a repeat of one read before: the collector leaves it out.
    pub fn set_repeat(&mut self, i: usize) {
        self.recs[i].repeat = true;
    }

    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether record `i` repeats one read before.
    pub fn is_repeat(&self, i: usize) -> bool {
        self.recs[i].repeat
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    pub fn get(&self, i: usize) -> LiteView<'_> {
        let l = self.recs[i];
        let s = |(a, b): (u32, u32)| &self.buf[a as usize..b as usize];
        LiteView {
            kind: l.kind,
            failed: l.failed,
            empty: l.empty,
            status: l.status,
            error: l.error.map(s),
            run: s(l.run),
            invocation: l.invocation.map(s),
            at: s(l.at),
            group: s(l.group),
            headline: l.headline.map(s),
            load: l.load.map(|i| self.loads[i as usize]),
            clock: l.clock.map(|i| self.clocks[i as usize]),
            vals: &self.vals[l.vals.0 as usize..l.vals.1 as usize],
            roles: &self.roles[l.roles.0 as usize..l.roles.1 as usize],
            facts: &self.facts[l.facts.0 as usize..l.facts.1 as usize],
            buf: &self.buf,
        }
    }
}
