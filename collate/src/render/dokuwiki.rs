//! The DokuWiki table: header cells (`^`) for the column headers and the facts' titles,
//! cells padded so that DokuWiki right-aligns numbers and centres a spanning header, and
//! every text escaped where it would be taken for markup.

use super::layout::{MISSING, cell_text, center, pad_left, pad_right, width, widths};
use crate::escape::visible;
use crate::matrix::Table;

/// Escapes a DokuWiki cell (after [`visible`]): text that holds a table separator or markup goes in `%%...%%`
/// (or `<nowiki>` when it holds `%%` itself); an empty text becomes a space so that it is
/// not taken for a merged cell.
pub fn doku_escape(s: &str) -> String {
    let s = &*visible(s);
    const MARKUP: [&str; 12] = [
        "|", "^", "**", "//", "__", "''", "[[", "{{", "((", "\\\\", "~~", "%%",
    ];
    if s.is_empty() {
        return " ".into();
    }
    // `<` starts markup only as a tag (`<html>`, `<del>`, `</sub>`); `domU->dom0` and
    // `domU<->dom0` stay as written (DokuWiki shows them as arrows, as in the classic comparison's table).
    let tag = s
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || w[1] == b'/'));
    if !tag && !MARKUP.iter().any(|m| s.contains(m)) {
        return s.to_string();
    }
    if s.contains("%%") {
        return format!("<nowiki>{}</nowiki>", s.replace("</nowiki>", "</nowiki >"));
    }
    format!("%%{s}%%")
}

pub(super) fn dokuwiki(t: &Table) -> String {
    // Every cell holds at least two spaces before its text so that DokuWiki right-aligns
    // it; a spanning header holds two on each side, so that DokuWiki centres it.
    let w = widths(t, &doku_escape, 2, 4, 0);
    let titles: Vec<String> = t.rows.iter().map(|r| doku_escape(&r.title)).collect();
    let fact_titles: Vec<String> = t
        .facts
        .iter()
        .map(|f| doku_escape(&format!("fact: {}", f.key)))
        .collect();
    let tw = titles.iter().chain(&fact_titles).map(|s| width(s));
    let tw = tw.max().unwrap_or(1).max(1);
    let mut out = String::new();
    for level in 0..t.depth() {
        out.push('^');
        out.push_str(&" ".repeat(tw));
        out.push('^');
        for (text, start, span) in t.spans(level) {
            let e = doku_escape(&text);
            if span == 1 {
                out.push_str(&pad_left(&e, w[start]));
                out.push('^');
            } else {
                // The text fills the width of its columns; the span-1 empty cells after it
                // are the separators that the data rows have between those columns.
                let total: usize = w[start..start + span].iter().sum();
                out.push_str(&center(&e, total));
                out.push_str(&"^".repeat(span));
            }
        }
        out.push('\n');
    }
    // A fact's title is a header cell: it describes the column, it is no measurement.
    for (f, title) in t.facts.iter().zip(&fact_titles) {
        out.push('^');
        out.push_str(&pad_right(title, tw));
        out.push('|');
        for (j, v) in f.values.iter().enumerate() {
            let text = v.as_deref().unwrap_or(MISSING);
            out.push_str(&pad_left(&doku_escape(text), w[j]));
            out.push('|');
        }
        out.push('\n');
    }
    for (r, title) in t.rows.iter().zip(&titles) {
        out.push('|');
        out.push_str(&pad_right(title, tw));
        out.push('|');
        for (j, c) in r.cells.iter().enumerate() {
            out.push_str(&pad_left(&doku_escape(cell_text(c)), w[j]));
            out.push('|');
        }
        out.push('\n');
    }
    for n in &t.notes {
        out.push('\n');
        out.push_str(&doku_escape(&n.full()));
        out.push('\n');
    }
    out
}
