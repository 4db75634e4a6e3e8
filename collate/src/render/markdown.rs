//! The Markdown (GitHub-flavoured) table: a column's header levels on one line joined by
//! `<br>`, numbers right-aligned, the facts and the rows as table lines, then the notes; every
//! text escaped where it could start markup.

use super::layout::{MISSING, cell_text};
use crate::escape::visible;
use crate::matrix::Table;

/// Escapes Markdown (after [`visible`]: CommonMark backslash escapes for ASCII punctuation
/// that could start markup, `\|` for the GFM table separator).
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in visible(s).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '&' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn markdown(t: &Table) -> String {
    let mut out = String::from("| |");
    for c in &t.columns {
        let parts: Vec<String> = c
            .levels
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| md_escape(l))
            .collect();
        out.push(' ');
        out.push_str(&parts.join("<br>"));
        out.push_str(" |");
    }
    out.push_str("\n|:---|");
    for _ in &t.columns {
        out.push_str("---:|");
    }
    out.push('\n');
    for f in &t.facts {
        out.push_str("| *fact:* ");
        out.push_str(&md_escape(&f.key));
        out.push_str(" |");
        for v in &f.values {
            out.push(' ');
            out.push_str(&md_escape(v.as_deref().unwrap_or(MISSING)));
            out.push_str(" |");
        }
        out.push('\n');
    }
    for r in &t.rows {
        out.push_str("| ");
        out.push_str(&md_escape(&r.title));
        out.push_str(" |");
        for c in &r.cells {
            out.push(' ');
            out.push_str(&md_escape(cell_text(c)));
            out.push_str(" |");
        }
        out.push('\n');
    }
    for n in &t.notes {
        out.push('\n');
        out.push_str(&md_escape(&n.full()));
        out.push('\n');
    }
    out
}
