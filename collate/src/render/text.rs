//! The text matrix for the terminal: the column headers aligned over their columns (a
//! header spanning columns centred over them), the facts that differ, one line per row, then
//! the notes; every text from the records shown with its control characters as escapes.

use super::layout::{FACT_WIDTH, cell_text, center, fact_text, pad_left, pad_right, width, widths};
use crate::escape::visible;
use crate::matrix::Table;

/// The title of the facts block (the environment facts that differ between the columns).
pub const FACTS: &str = "facts that differ";
/// Text for the terminal: every text from the records with its control characters and
/// non-characters as escapes ([`visible`]), so that none reaches the terminal raw.
fn text_escape(s: &str) -> String {
    visible(s).into_owned()
}

pub(super) fn text(t: &Table) -> String {
    let w = widths(t, &text_escape, 0, 0, 2);
    let fact_titles: Vec<String> = t
        .facts
        .iter()
        .map(|f| format!("  {}", visible(&f.key)))
        .collect();
    let tw = t.rows.iter().map(|r| width(&visible(&r.title)));
    let tw = tw
        .chain(fact_titles.iter().map(|s| width(s)))
        .max()
        .unwrap_or(0);
    let gap = "  ";
    let mut out = String::new();
    for level in 0..t.depth() {
        let mut line = " ".repeat(tw);
        for (text, start, span) in t.spans(level) {
            let total: usize =
                w[start..start + span].iter().sum::<usize>() + gap.len() * (span - 1);
            line.push_str(gap);
            let text = visible(&text);
            if span == 1 {
                line.push_str(&pad_left(&text, total));
            } else {
                line.push_str(&center(&text, total));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if !t.facts.is_empty() {
        out.push_str(FACTS);
        out.push_str(":\n");
        for (f, title) in t.facts.iter().zip(&fact_titles) {
            let mut line = pad_right(title, tw);
            for (j, v) in f.values.iter().enumerate() {
                line.push_str(gap);
                line.push_str(&pad_left(&text_escape(&fact_text(v, t.verbose)), w[j]));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    for r in &t.rows {
        let mut line = pad_right(&visible(&r.title), tw);
        for (j, c) in r.cells.iter().enumerate() {
            line.push_str(gap);
            line.push_str(&pad_left(&visible(cell_text(c)), w[j]));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for n in &t.notes {
        out.push('\n');
        out.push_str(&visible(&n.text));
        match &n.detail {
            Some(d) if t.verbose => {
                out.push_str("\n  ");
                out.push_str(&visible(d));
            }
            Some(_) => out.push_str(" (--verbose: which runs)"),
            None => {}
        }
        out.push('\n');
    }
    let cut = |v: &Option<String>| {
        v.as_deref()
            .is_some_and(|s| width(&visible(s)) > FACT_WIDTH)
    };
    if !t.verbose && t.facts.iter().any(|f| f.values.iter().any(cut)) {
        out.push_str(&format!(
            "\nA fact ending in … is cut at {FACT_WIDTH} characters (--verbose: whole).\n"
        ));
    }
    out
}
