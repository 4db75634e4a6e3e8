//! The matrix as every format renders it: its columns with their header levels, its rows of
//! cells, the notes under it, and the two layouts (as built, and `--transpose`d).

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
#[derive(Clone, Debug)]
pub struct Cell {
    pub n: usize,
    /// The statistic in base units.
    pub value: f64,
    /// The confidence interval in base units, when the sample is large enough.
    pub ci: Option<(f64, f64)>,
    pub delta: Option<Delta>,
    /// What every human format prints.
    pub text: String,
    /// The values, sorted (kept for the comparison; not printed).
    pub sorted: Vec<f64>,
}

/// One row.
#[derive(Clone, Debug)]
pub struct Row {
    pub title: String,
    /// The row's dimension values, as (key, value).
    pub dims: Vec<(String, String)>,
    pub metrics: Vec<String>,
    /// The unit suffix of the row's metrics (`_s`).
    pub suffix: String,
    pub scale: Scale,
    /// `samples`, or `summaries` when no sample in the row carries its metric.
    pub source: &'static str,
    pub cells: Vec<Option<Cell>>,
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

/// The matrix, ready to render.
#[derive(Clone, Debug)]
pub struct Table {
    pub columns: Vec<Column>,
    /// Names of the header levels (`label.1`...).
    pub level_keys: Vec<String>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
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
        let mut old_cells: Vec<Vec<Option<Cell>>> = self
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
                dims: c.dims.clone(),
                metrics: Vec::new(),
                suffix: String::new(),
                scale: Scale {
                    unit: "",
                    factor: 1.0,
                },
                source: "samples",
                cells: old_cells.iter_mut().map(|cells| cells[j].take()).collect(),
            })
            .collect();
        Table {
            columns,
            level_keys: vec!["row".into()],
            rows,
            notes: self.notes,
            stat: self.stat,
            baseline: self.baseline,
            transposed: true,
        }
    }
}

fn level_of(c: &Column, l: usize) -> &str {
    c.levels.get(l).map(String::as_str).unwrap_or("")
}
