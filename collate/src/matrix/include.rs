//! Which runs' values count in the matrix: the complete ones, or every run with
//! `--include-partial`.

use crate::collect::Series;
use crate::runs::RunInfo;

/// Which runs' values count: complete runs, or every run with `--include-partial`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Include<'a> {
    pub runs: &'a [RunInfo],
    /// The units of pooling by number (an invocation's id, or a run's own).
    pub units: &'a [String],
    pub partial: bool,
}

impl Include<'_> {
    pub fn run(&self, r: u32) -> bool {
        self.partial || self.runs[r as usize].complete()
    }

    /// Whether run `r` ran on a busy machine ([`crate::busy`]).
    pub fn busy(&self, r: u32) -> bool {
        self.runs[r as usize].load.busy()
    }

    /// Whether run `r` measured on a drifting clock ([`crate::drift`]).
    pub fn drifting(&self, r: u32) -> bool {
        self.runs[r as usize].clock.drifting()
    }

    /// The ordinal of the first record of `s` whose run counts (for first-appearance order:
    /// an old failed attempt does not move a row or a column).
    pub fn first(&self, s: &Series) -> Option<u64> {
        s.samples
            .segs
            .iter()
            .chain(&s.summaries.segs)
            .filter(|g| self.run(g.run))
            .map(|g| g.first)
            .min()
    }
}
