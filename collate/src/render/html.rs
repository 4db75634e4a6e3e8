//! The HTML report: one self-contained page (no external assets, no script) with the
//! matrix, its notes, and one inline SVG chart per row; changes against the baseline are
//! coloured (better green, worse red) as well as written.

use super::{MISSING, OVERALL, chart, html_escape};
use crate::matrix::{Better, Cell, Delta, Table, Verdict};

/// A cell's class: its verdict, `up` or `down` for the sign of a change, `baseline`.
fn class(c: &Cell, better: Better) -> String {
    let mut classes = Vec::new();
    match &c.delta {
        Some(Delta::Change { pct, .. }) if *pct > 0.0 => classes.push("up"),
        Some(Delta::Diff { diff, .. }) if *diff > 0.0 => classes.push("up"),
        Some(Delta::Change { .. } | Delta::Diff { .. }) => classes.push("down"),
        Some(Delta::Baseline) => classes.push("baseline"),
        _ => {}
    }
    match c.verdict(better) {
        Some(Verdict::Better) => classes.push("better"),
        Some(Verdict::Worse) => classes.push("worse"),
        _ => {}
    }
    if classes.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", classes.join(" "))
    }
}

/// The report: the matrix `t` (transposed where asked), its notes, then one chart per row
/// of `rows` (the matrix as built).
pub(super) fn html(t: &Table, rows: &Table) -> String {
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>benchmatrix report</title>\n<style>\ntable { border-collapse: collapse; font-family: sans-serif; }\nth, td { border: 1px solid #999; padding: 0.2em 0.5em; }\nthead th { text-align: center; }\ntbody th { text-align: left; font-weight: normal; }\ntd { text-align: right; font-variant-numeric: tabular-nums; }\ntd.missing { color: #999; }\ntd.up, td.down, td.better, td.worse { font-weight: bold; }\ntd.better { color: #1b5e20; background: #e8f5e9; }\ntd.worse { color: #b71c1c; background: #ffebee; }\ntd.baseline { background: #f0f0f0; }\ntr.overall th, tr.overall td { border-top: 2px solid #333; }\ntable.facts td { text-align: left; }\ntable.facts td.differs { background: #fff3cd; font-weight: bold; }\nsvg.chart { display: block; margin: 1em 0; }\n.unit, .legend { fill: #444; }\n</style>\n</head>\n<body>\n");
    let n = t.columns.len();
    if n <= PAGE {
        matrix(&mut o, t, 0, n);
    } else {
        // A wide matrix in pages of PAGE columns, each with the rows that have a value in
        // them: every page stays a table a person can read.
        for lo in (0..n).step_by(PAGE) {
            let hi = (lo + PAGE).min(n);
            o.push_str(&format!(
                "<h2 id=\"columns-{}\">Columns {}&ndash;{hi} of {n}</h2>\n<p>Rows without a value in these columns are left out of this page.</p>\n",
                lo + 1,
                lo + 1
            ));
            matrix(&mut o, t, lo, hi);
        }
    }
    facts(&mut o, t);
    for n in &t.notes {
        match &n.detail {
            Some(d) => o.push_str(&format!(
                "<details class=\"note\"><summary>{}</summary><p>{}</p></details>\n",
                html_escape(&n.text),
                html_escape(d)
            )),
            None => o.push_str(&format!("<p>{}</p>\n", html_escape(&n.text))),
        }
    }
    o.push_str("<h2>Charts</h2>\n");
    for r in &rows.rows {
        o.push_str(&chart::inline(rows, r));
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// The most columns one table of the report shows; a wider matrix is paged.
pub const PAGE: usize = 24;

/// The table head and body for columns `lo..hi`: every row when they are all the columns,
/// else the rows with a value among them (and the overall line).
fn matrix(o: &mut String, t: &Table, lo: usize, hi: usize) {
    let all = lo == 0 && hi == t.columns.len();
    o.push_str("<table>\n<thead>\n");
    let depth = t.depth();
    for level in 0..depth {
        o.push_str("<tr>");
        if level == 0 {
            o.push_str(&format!("<th rowspan=\"{depth}\"></th>"));
        }
        for (text, _, span) in clip(t.spans(level), lo, hi) {
            if span > 1 {
                o.push_str(&format!(
                    "<th colspan=\"{span}\" scope=\"colgroup\">{}</th>",
                    html_escape(&text)
                ));
            } else {
                o.push_str(&format!("<th scope=\"col\">{}</th>", html_escape(&text)));
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</thead>\n<tbody>\n");
    for r in &t.rows {
        let shown = all || r.title == OVERALL || r.cells[lo..hi].iter().any(Option::is_some);
        if !shown {
            continue;
        }
        let tr = if r.title == OVERALL {
            "<tr class=\"overall\">"
        } else {
            "<tr>"
        };
        o.push_str(&format!(
            "{tr}<th scope=\"row\">{}</th>",
            html_escape(&r.title)
        ));
        for c in &r.cells[lo..hi] {
            match c {
                None => o.push_str(&format!("<td class=\"missing\">{MISSING}</td>")),
                Some(c) => {
                    let class = class(c, r.better);
                    o.push_str(&format!(
                        "<td{class} title=\"n={}\">{}</td>",
                        c.n,
                        html_escape(&c.text)
                    ));
                }
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
}

/// The facts that differ between the columns, as a table of their own; a cell whose value
/// is not the reference column's (the baseline's, else the first column's) is marked
/// `differs`.
fn facts(o: &mut String, t: &Table) {
    if t.facts.is_empty() {
        return;
    }
    let reference = t
        .baseline
        .as_ref()
        .and_then(|b| {
            let is_base = |c: &&crate::matrix::Column| {
                c.key == *b || c.dims.iter().any(|(k, v)| k == "label" && v == b)
            };
            t.columns.iter().position(|c| is_base(&c))
        })
        .unwrap_or(0);
    o.push_str("<h2 id=\"facts\">Facts that differ between the columns</h2>\n<table class=\"facts\">\n<thead>\n<tr><th></th>");
    for c in &t.columns {
        o.push_str(&format!("<th scope=\"col\">{}</th>", html_escape(&c.key)));
    }
    o.push_str("</tr>\n</thead>\n<tbody>\n");
    for f in &t.facts {
        o.push_str(&format!(
            "<tr><th scope=\"row\">{}</th>",
            html_escape(&f.key)
        ));
        let base = f.values.get(reference).cloned().flatten();
        for v in &f.values {
            match v {
                None => o.push_str(&format!("<td class=\"missing\">{MISSING}</td>")),
                Some(v) => {
                    let class = if Some(v) != base.as_ref() {
                        " class=\"differs\""
                    } else {
                        ""
                    };
                    o.push_str(&format!("<td{class}>{}</td>", html_escape(v)));
                }
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
}

/// Header spans (text, first column, span) cut to the columns `lo..hi`.
fn clip(spans: Vec<(String, usize, usize)>, lo: usize, hi: usize) -> Vec<(String, usize, usize)> {
    spans
        .into_iter()
        .filter_map(|(text, first, span)| {
            let (a, b) = (first.max(lo), (first + span).min(hi));
            (a < b).then(|| (text, a, b - a))
        })
        .collect()
}
