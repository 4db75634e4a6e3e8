//! The output formats: text, DokuWiki, Markdown (GFM), HTML, CSV, JSON and SVG, each from
//! the same [`Table`], each escaping what its syntax needs.

pub mod chart;
pub mod csv;

mod html;
mod json;
mod layout;

use crate::escape::visible;
pub use csv::csv_field;
pub use layout::MISSING;
use layout::{FACT_WIDTH, cell_text, center, fact_text, pad_left, pad_right, width, widths};

use crate::matrix::{Cell, Table};
use std::borrow::Cow;

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Dokuwiki,
    Markdown,
    Html,
    Csv,
    Json,
    Svg,
}

impl Format {
    pub const NAMES: [&'static str; 7] =
        ["text", "dokuwiki", "markdown", "html", "csv", "json", "svg"];

    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "text" | "txt" => Format::Text,
            "dokuwiki" | "doku" | "wiki" => Format::Dokuwiki,
            "markdown" | "md" | "gfm" => Format::Markdown,
            "html" => Format::Html,
            "csv" => Format::Csv,
            "json" => Format::Json,
            "svg" => Format::Svg,
            _ => return None,
        })
    }
}

/// Renders the table in `f`, its matrix `transpose`d where asked (the HTML report's charts
/// stay one per row; CSV and SVG have no transposed form).
pub fn render(t: &Table, f: Format, transpose: bool) -> String {
    // The table is copied only to be transposed or to get its overall line: a large matrix
    // is held once.
    let swapped = || {
        if transpose {
            Cow::Owned(t.clone().transpose())
        } else {
            Cow::Borrowed(t)
        }
    };
    match f {
        Format::Text => text(&with_overall(swapped())),
        Format::Dokuwiki => dokuwiki(&with_overall(swapped())),
        Format::Markdown => markdown(&with_overall(swapped())),
        Format::Html => html::html(&with_overall(swapped()), t),
        Format::Csv => csv::csv(t),
        Format::Json => crate::escape::json_ascii_controls(json::json_doc(&swapped())),
        Format::Svg => chart::document(t),
    }
}

/// The overall line's text for one column: `1.05 [0.98–1.12] 2/1/3` (the geometric mean,
/// its interval, and the rows better, worse and the same).
pub fn overall_text(o: &crate::matrix::Overall) -> String {
    let ci =
        o.ci.map(|(lo, hi)| format!(" [{lo:.2}–{hi:.2}]"))
            .unwrap_or_default();
    format!("{:.2}{ci} {}/{}/{}", o.geomean, o.better, o.worse, o.same)
}

/// The title of the overall line.
pub const OVERALL: &str = "overall (ratio, above 1 is better)";

/// `t` with its overall line (`--baseline`) as a last row, or, transposed, as a note.
fn with_overall(t: Cow<'_, Table>) -> Cow<'_, Table> {
    if t.overall.iter().all(Option::is_none) {
        return t;
    }
    let mut t = t.into_owned();
    if t.transposed {
        let parts: Vec<String> = t
            .rows
            .iter()
            .zip(&t.overall)
            .filter_map(|(r, o)| {
                o.as_ref()
                    .map(|o| format!("{}: {}", r.title, overall_text(o)))
            })
            .collect();
        t.notes
            .push(format!("{OVERALL}: {}.", parts.join("; ")).into());
        return Cow::Owned(t);
    }
    let cells = t
        .overall
        .iter()
        .map(|o| {
            o.as_ref()
                .map(|o| Box::new(Cell::text_only(overall_text(o))))
        })
        .collect();
    let Some(mut row) = t.rows.first().cloned() else {
        return Cow::Owned(t);
    };
    row.title = OVERALL.to_string();
    row.name = OVERALL.to_string();
    row.cells = cells;
    row.better = crate::matrix::Better::Unknown;
    row.left_out = Vec::new();
    t.rows.push(row);
    Cow::Owned(t)
}

/// The title of the facts block (the environment facts that differ between the columns).
pub const FACTS: &str = "facts that differ";

// ---------------------------------------------------------------- text

/// Text for the terminal: every text from the records with its control characters and
/// non-characters as escapes ([`visible`]), so that none reaches the terminal raw.
fn text_escape(s: &str) -> String {
    visible(s).into_owned()
}

fn text(t: &Table) -> String {
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

// ---------------------------------------------------------------- DokuWiki

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

fn dokuwiki(t: &Table) -> String {
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

// ---------------------------------------------------------------- Markdown

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

fn markdown(t: &Table) -> String {
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

// ---------------------------------------------------------------- HTML

/// Escapes text and attribute values for HTML and SVG (after [`visible`], so that the
/// document stays well-formed XML: no C0 control, no U+FFFE).
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes collate's output (the matrix, `--times`' table or the history) to stdout.
pub fn print(out: &str) -> Result<measure::Exit, measure::Failure> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| measure::Failure::io("stdout", &e))?;
    Ok(measure::Exit::Ok)
}
