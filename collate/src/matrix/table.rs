//! The matrix as every format renders it: its columns with their header levels, its rows of
//! cells, the notes under it, and the two layouts (as built, and `--transpose`d).

use crate::stats::Stat;
use measure::units::Scale;

/// How a cell compares with its baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// This cell is the baseline.
    Baseline,
    /// A significant change of `pct` percent (p < alpha).
    Change { pct: f64, p: f64 },
    /// A significant change (p < alpha) from a baseline of 0, where a percentage has no
    /// meaning: `diff` is the difference from the baseline in base units.
    Diff { diff: f64, p: f64 },
    /// No significant difference.
    Same { p: f64 },
    /// Too few samples: even a complete separation could not reach alpha.
    TooFew { n: usize, base_n: usize },
    /// The baseline cell is missing in this row.
    NoBaseline,
}

/// One cell: the statistic of the values that fell in it.
/// A cell of a row, or none: boxed, so that a sparse matrix of many columns holds a
/// pointer, not a whole cell, for each empty one.
pub type Slot = Option<Box<Cell>>;

#[derive(Clone, Debug)]
pub struct Cell {
    pub n: usize,
    /// The statistic in base units.
    pub value: f64,
    /// The confidence interval in base units, when the sample is large enough.
    pub ci: Option<(f64, f64)>,
    pub delta: Option<Delta>,
    /// The baseline cell's statistic, when it has one.
    pub base: Option<f64>,
    /// What every human format prints.
    pub text: String,
    /// The number alone, as `text` rounds it (for the charts).
    pub shown: String,
    /// The values, sorted (kept for the comparison; not printed).
    pub sorted: Vec<f64>,
    /// How many runs the cell pools.
    pub runs: usize,
    /// The runs differ from each other (Kruskal-Wallis), when they do.
    pub differ: Option<RunsDiffer>,
    /// Values from runs that did not finish, put in by `--include-partial`.
    pub partial: usize,
    /// The two modes the values fall in, when they do (`crate::modes`): the statistic is
    /// then neither's, and the cell says so.
    pub modes: Option<crate::modes::Modes>,
    /// Values from runs on a busy machine ([`crate::busy`]).
    pub busy: usize,
    /// Values from runs on a drifting clock ([`crate::drift`]).
    pub drift: usize,
}

/// What a cell left out: values of runs that did not finish.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeftOut {
    pub values: usize,
    /// The runs (ids) they came from, with why each is left out.
    pub runs: Vec<(String, String)>,
}

/// Runs of one cell that differ from each other.
#[derive(Clone, Debug, PartialEq)]
pub struct RunsDiffer {
    /// The Kruskal-Wallis p-value.
    pub p: f64,
    /// (run id, values, median) of each run tested.
    pub runs: Vec<(String, usize, f64)>,
}

/// Which way a row's metric is better, from its unit: times, sizes, counts and ratios
/// (loss, faults, memory) lower, rates higher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    /// A transposed row mixes metrics.
    Unknown,
}

impl Better {
    pub fn of(suffix: &str) -> Better {
        match suffix {
            "_bytes_per_s" | "_bits_per_s" | "_per_s" => Better::Higher,
            "_s" | "_bytes" | "_count" | "_ratio" => Better::Lower,
            _ => Better::Unknown,
        }
    }

    /// The mark in a row's title.
    pub fn arrow(self) -> &'static str {
        match self {
            Better::Lower => "↓",
            Better::Higher => "↑",
            Better::Unknown => "",
        }
    }

    /// `lower`, `higher` (JSON, CSV).
    pub fn word(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
            Better::Unknown => "",
        }
    }

    /// Whether a change from `base` to `value` is better; `None` without a direction.
    pub fn is_better(self, base: f64, value: f64) -> Option<bool> {
        match self {
            Better::Lower => Some(value < base),
            Better::Higher => Some(value > base),
            Better::Unknown => None,
        }
    }
}

/// A cell's verdict against its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    Same,
    Unknown,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Unknown => "unknown",
        }
    }
}

impl Cell {
    /// A cell that only shows `text` (the overall line).
    pub fn text_only(text: String) -> Cell {
        Cell {
            n: 0,
            value: f64::NAN,
            ci: None,
            delta: None,
            base: None,
            text,
            shown: String::new(),
            sorted: Vec::new(),
            runs: 1,
            differ: None,
            partial: 0,
            modes: None,
            busy: 0,
            drift: 0,
        }
    }

    /// The verdict against the baseline in a row where `better` holds; `None` for the
    /// baseline itself and cells without a comparison.
    pub fn verdict(&self, better: Better) -> Option<Verdict> {
        let sign = match self.delta.as_ref()? {
            Delta::Baseline => return None,
            Delta::Change { pct, .. } => *pct,
            Delta::Diff { diff, .. } => *diff,
            Delta::Same { .. } => return Some(Verdict::Same),
            Delta::TooFew { .. } | Delta::NoBaseline => return Some(Verdict::Unknown),
        };
        if sign == 0.0 {
            // The distributions differ, the statistics do not: neither way.
            return Some(Verdict::Unknown);
        }
        Some(match better.is_better(0.0, sign) {
            Some(true) => Verdict::Better,
            Some(false) => Verdict::Worse,
            None => Verdict::Unknown,
        })
    }
}

/// One row.
#[derive(Clone, Debug)]
pub struct Row {
    pub title: String,
    /// The title without the display unit and the direction (CSV's `row`).
    pub name: String,
    /// The row's dimension values, as (key, value).
    pub dims: Vec<(String, String)>,
    pub metrics: Vec<String>,
    /// The unit suffix of the row's metrics (`_s`).
    pub suffix: String,
    pub scale: Scale,
    /// Which way is better.
    pub better: Better,
    /// `samples`, or `summaries` when no sample in the row carries its metric.
    pub source: &'static str,
    pub cells: Vec<Slot>,
    /// Empty in the matrix, whose rows hold one cell per column. In a sparse table (the
    /// history's, [`super::build_sparse`]): the column of each of `cells` and `left_out`,
    /// which hold only the columns the row has values in.
    pub cols: Vec<usize>,
    /// What each cell left out (also where the cell itself is missing for it).
    pub left_out: Vec<LeftOut>,
    /// What was left out of each of the table's `unfinished` columns (none in a sparse table).
    pub unfinished: Vec<LeftOut>,
    /// The role its summaries' headlines give the row ("reads per second"): its title is
    /// then "NAME: ROLE".
    pub role: Option<String>,
    /// The statistic of its cells: `--stat`'s, or the mean its headline names.
    pub stat: Stat,
    /// The columns whose cell shows older runs because the column's newest run has no value
    /// for this row: (column, that run's id, why).
    pub stale: Vec<(usize, String, String)>,
}

impl Row {
    /// Each cell the row has, with its column.
    pub fn placed(&self) -> impl Iterator<Item = (usize, &Cell)> {
        let dense = self.cols.is_empty();
        self.cells.iter().enumerate().filter_map(move |(k, c)| {
            let j = if dense { k } else { self.cols[k] };
            c.as_deref().map(|c| (j, c))
        })
    }
}

/// One column.
#[derive(Clone, Debug)]
pub struct Column {
    /// The levels joined with `/` (the label, for the default columns).
    pub key: String,
    /// Header levels, top first.
    pub levels: Vec<String>,
    /// (key, value) of every dimension, the label's levels included.
    pub dims: Vec<(String, String)>,
}

/// A note under the matrix: one short line, and the run-by-run detail behind it (which runs,
/// how many values, why) that the text matrix shows with --verbose and HTML in a collapsed block.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub text: String,
    pub detail: Option<String>,
}

impl Note {
    pub fn with(text: String, detail: String) -> Note {
        Note {
            text,
            detail: Some(detail),
        }
    }

    /// The line and its detail in one paragraph, as documents (Markdown, DokuWiki, SVG, JSON)
    /// show it.
    pub fn full(&self) -> String {
        match &self.detail {
            Some(d) => format!("{} {d}", self.text),
            None => self.text.clone(),
        }
    }
}

impl From<&str> for Note {
    fn from(text: &str) -> Note {
        text.to_string().into()
    }
}

impl From<String> for Note {
    fn from(text: String) -> Note {
        Note { text, detail: None }
    }
}

/// An environment fact that differs between the columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub key: String,
    pub values: Vec<Option<String>>,
}

/// The matrix, ready to render.
#[derive(Clone, Debug)]
pub struct Table {
    pub columns: Vec<Column>,
    /// The environment facts that differ between the columns (one value per column; None
    /// where a column's records do not say).
    pub facts: Vec<Fact>,
    /// Columns whose every run was left out (unfinished): in no matrix, but in the tidy CSV.
    pub unfinished: Vec<Column>,
    /// Names of the header levels (`label.1`...).
    pub level_keys: Vec<String>,
    pub rows: Vec<Row>,
    pub notes: Vec<Note>,
    /// Whether the text matrix shows the notes' detail (--verbose).
    pub verbose: bool,
    /// With `--baseline`: the overall comparison of each column.
    pub overall: Vec<Option<Overall>>,
    pub stat: String,
    pub baseline: Option<String>,
    pub transposed: bool,
}

impl Table {
    /// The number of header levels.
    pub fn depth(&self) -> usize {
        self.level_keys.len().max(1)
    }

    /// Header cells of `level` as (text, first column, span): adjacent columns merge when
    /// this level and every level above are the same (DokuWiki's and HTML's colspan).
    pub fn spans(&self, level: usize) -> Vec<(String, usize, usize)> {
        let mut out: Vec<(String, usize, usize)> = Vec::new();
        for (j, c) in self.columns.iter().enumerate() {
            if let Some(last) = out.last_mut() {
                let first = &self.columns[last.1];
                let same = (0..=level).all(|l| level_of(first, l) == level_of(c, l));
                if same && !level_of(c, level).is_empty() {
                    last.2 += 1;
                    continue;
                }
            }
            out.push((level_of(c, level).to_string(), j, 1));
        }
        out
    }

    /// Swaps rows and columns (`--transpose`): row titles become a one-level header.
    pub fn transpose(mut self) -> Table {
        let columns: Vec<Column> = self
            .rows
            .iter()
            .map(|r| Column {
                key: r.title.clone(),
                levels: vec![r.title.clone()],
                dims: r.dims.clone(),
            })
            .collect();
        // The cells move into their new rows: the old rows keep nothing.
        let mut old_cells: Vec<Vec<Slot>> = self
            .rows
            .iter_mut()
            .map(|r| std::mem::take(&mut r.cells))
            .collect();
        let rows: Vec<Row> = self
            .columns
            .iter()
            .enumerate()
            .map(|(j, c)| Row {
                title: c.key.clone(),
                name: c.key.clone(),
                dims: c.dims.clone(),
                metrics: Vec::new(),
                suffix: String::new(),
                scale: Scale {
                    unit: "",
                    factor: 1.0,
                },
                better: Better::Unknown,
                source: "samples",
                cells: old_cells.iter_mut().map(|cells| cells[j].take()).collect(),
                cols: Vec::new(),
                left_out: self
                    .rows
                    .iter()
                    .map(|r| r.left_out.get(j).cloned().unwrap_or_default())
                    .collect(),
                unfinished: Vec::new(),
                role: None,
                stat: Stat::Median,
                stale: Vec::new(),
            })
            .collect();
        // The facts belong to the old columns, now rows: a note names them.
        let mut notes = self.notes;
        if let Some(n) = facts_note(&self.facts, &self.columns) {
            notes.insert(0, n.into());
        }
        Table {
            columns,
            facts: Vec::new(),
            unfinished: Vec::new(),
            level_keys: vec!["row".into()],
            rows,
            notes,
            verbose: self.verbose,
            overall: Vec::new(),
            stat: self.stat,
            baseline: self.baseline,
            transposed: true,
        }
    }
}

/// `facts that differ: KEY (COLUMN: VALUE, COLUMN: VALUE); ...`, for a matrix whose columns
/// cannot carry them.
pub fn facts_note(facts: &[Fact], columns: &[Column]) -> Option<String> {
    if facts.is_empty() {
        return None;
    }
    let each: Vec<String> = facts
        .iter()
        .map(|f| {
            let vals: Vec<String> = columns
                .iter()
                .zip(&f.values)
                .map(|(c, v)| format!("{}: {}", c.key, v.as_deref().unwrap_or("-")))
                .collect();
            format!("{} ({})", f.key, vals.join(", "))
        })
        .collect();
    Some(format!("facts that differ: {}.", each.join("; ")))
}

fn level_of(c: &Column, l: usize) -> &str {
    c.levels.get(l).map(String::as_str).unwrap_or("")
}

/// One column's overall comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Overall {
    /// The geometric mean of the direction-aware ratios (above 1: better).
    pub geomean: f64,
    /// The 95% bootstrap interval, when there are at least two rows.
    pub ci: Option<(f64, f64)>,
    /// Rows in the mean.
    pub rows: usize,
    pub better: usize,
    pub worse: usize,
    pub same: usize,
}
