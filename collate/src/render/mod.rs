//! The output formats: text, DokuWiki, Markdown (GFM), HTML, CSV, JSON and SVG, each from
//! the same [`Table`], each escaping what its syntax needs, each in a file of its own. Here:
//! the [`Format`] names, the dispatch, the overall line every matrix format shows, the
//! escaping HTML and SVG share, and writing to stdout; the text, DokuWiki and Markdown
//! matrices' shared widths and padding are in `layout`.

pub mod chart;
pub mod csv;

mod dokuwiki;
mod html;
mod json;
mod layout;
mod markdown;
mod text;

use crate::escape::visible;
pub use csv::csv_field;
pub use dokuwiki::doku_escape;
pub use layout::MISSING;
pub use markdown::md_escape;
pub use text::FACTS;

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
        Format::Text => text::text(&with_overall(swapped())),
        Format::Dokuwiki => dokuwiki::dokuwiki(&with_overall(swapped())),
        Format::Markdown => markdown::markdown(&with_overall(swapped())),
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
