//! What the text, DokuWiki and Markdown matrices share: a missing cell's text, a cell's and
//! a fact's text, the width of a text, padding, and the column widths every cell and header
//! fits in.

use crate::escape::visible;
use crate::matrix::{Slot, Table};

/// What a missing cell shows in the human formats (never 0).
pub const MISSING: &str = "-";

pub(super) fn width(s: &str) -> usize {
    s.chars().count()
}

pub(super) fn cell_text(c: &Slot) -> &str {
    c.as_ref().map(|c| c.text.as_str()).unwrap_or(MISSING)
}

/// The longest fact text the text matrix shows without `--verbose` (a longer one ends in
/// `…`; with `--verbose`, and in every other format, it is shown whole).
pub(super) const FACT_WIDTH: usize = 32;

/// A fact's value as the text matrix shows it: `-` where the column does not say, cut to
/// FACT_WIDTH unless `whole`.
pub(super) fn fact_text(v: &Option<String>, whole: bool) -> String {
    match v.as_deref().map(visible) {
        None => MISSING.to_string(),
        Some(s) if !whole && width(&s) > FACT_WIDTH => {
            let cut: String = s.chars().take(FACT_WIDTH - 1).collect();
            format!("{cut}…")
        }
        Some(s) => s.into_owned(),
    }
}

/// Column widths: every cell and single-column header fits with `min_single` spaces of
/// padding; a header spanning columns fits with `min_span`, counting `sep` characters
/// between the columns it spans (the last column of a span takes what is missing).
pub(super) fn widths(
    t: &Table,
    esc: &dyn Fn(&str) -> String,
    min_single: usize,
    min_span: usize,
    sep: usize,
) -> Vec<usize> {
    let mut w: Vec<usize> = vec![min_single + 1; t.columns.len()];
    for r in &t.rows {
        for (j, c) in r.cells.iter().enumerate() {
            w[j] = w[j].max(width(&esc(cell_text(c))) + min_single);
        }
    }
    for f in &t.facts {
        for (j, v) in f.values.iter().enumerate().take(w.len()) {
            w[j] = w[j].max(width(&esc(&fact_text(v, t.verbose))) + min_single);
        }
    }
    for level in 0..t.depth() {
        for (text, start, span) in t.spans(level) {
            if span == 1 {
                w[start] = w[start].max(width(&esc(&text)) + min_single);
            }
        }
    }
    for level in 0..t.depth() {
        for (text, start, span) in t.spans(level) {
            if span > 1 {
                let need = width(&esc(&text)) + min_span;
                let have = w[start..start + span].iter().sum::<usize>() + sep * (span - 1);
                if need > have {
                    w[start + span - 1] += need - have;
                }
            }
        }
    }
    w
}

pub(super) fn pad_left(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(width(s))))
}

pub(super) fn pad_right(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

pub(super) fn center(s: &str, w: usize) -> String {
    let free = w.saturating_sub(width(s));
    let left = free / 2;
    format!("{}{s}{}", " ".repeat(left), " ".repeat(free - left))
}
