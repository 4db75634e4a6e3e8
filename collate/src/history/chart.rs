//! The history as charts: per series a line chart of its runs in order of time, each run a
//! point at its statistic with its 95% CI as a whisker, each segment's level as a dashed
//! line, and each change a vertical mark with its shift written beside it; the HTML page
//! lists each change's run and the facts that differ under its chart. The marks of a chart
//! are few elements (one path for the whiskers, one for the line), so a page of a thousand
//! runs a row stays small.

use super::words::{change_line, fact_text, shift_text, short_at, shown};
use super::{History, Series};
use crate::render::chart::{BETTER, DOT, PLAIN, WIDTH, WORSE, wrap};
use crate::render::html_escape;
use std::fmt::Write as _;

/// The plot's left and right edges and its height.
const LEFT: f64 = 70.0;
const RIGHT: f64 = WIDTH - 20.0;
const PLOT_H: f64 = 170.0;
/// Line height of the title.
const LINE: f64 = 15.0;

/// The y range of a series: every point and interval, padded by 5%.
fn y_range(s: &Series) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in &s.points {
        let (a, b) = p.ci.unwrap_or((p.value, p.value));
        for v in [p.value, a, b].into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1e-12) * 0.05
    };
    (lo - pad, hi + pad)
}

/// Series `s`'s chart, its top at 0: the SVG elements and their height.
pub fn series_chart(s: &Series) -> (String, f64) {
    let mut o = String::new();
    let title = wrap(&format!("{} · {}", s.title, s.key), 100);
    let _ = write!(
        o,
        "<text x=\"8\" y=\"18\" font-weight=\"bold\" font-size=\"13\">"
    );
    for (i, l) in title.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { LINE };
        let _ = write!(o, "<tspan x=\"8\" dy=\"{dy}\">{}</tspan>", html_escape(l));
    }
    o.push_str("</text>\n");
    let top = 18.0 + LINE * title.len() as f64;
    let _ = writeln!(
        o,
        "<text x=\"8\" y=\"{top:.1}\" class=\"legend\">{} runs: each run's {} (point{}) and its 95% CI (whisker), each level (dashed), each change (a vertical mark)</text>",
        s.points.len(),
        html_escape(&s.stat),
        if s.points.iter().any(|p| p.partial > 0) {
            "; hollow: with values of unfinished runs"
        } else {
            ""
        }
    );
    let y0 = top + 14.0;
    let (lo, hi) = y_range(s);
    let n = s.points.len();
    let x_of = |i: usize| {
        if n < 2 {
            (LEFT + RIGHT) / 2.0
        } else {
            LEFT + (RIGHT - LEFT) * i as f64 / (n - 1) as f64
        }
    };
    let y_of = |v: f64| y0 + PLOT_H - (v.clamp(lo, hi) - lo) / (hi - lo) * PLOT_H;
    axes(&mut o, s, y0, lo, hi);
    levels(&mut o, s, &x_of, &y_of);
    marks(&mut o, s, &x_of, &y_of);
    changes(&mut o, s, y0, &x_of);
    (o, y0 + PLOT_H + 34.0)
}

/// The frame, the y range's ends in the display unit and the first and last run's time.
fn axes(o: &mut String, s: &Series, y0: f64, lo: f64, hi: f64) {
    let bottom = y0 + PLOT_H;
    let _ = writeln!(
        o,
        "<rect class=\"frame\" x=\"{LEFT}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{PLOT_H}\" fill=\"none\" stroke=\"#ccc\"/>",
        RIGHT - LEFT
    );
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" class=\"unit\">{}</text><text x=\"{:.1}\" y=\"{bottom:.1}\" text-anchor=\"end\" class=\"unit\">{}</text>",
        LEFT - 4.0,
        y0 + 10.0,
        html_escape(&shown(s, hi)),
        LEFT - 4.0,
        html_escape(&shown(s, lo))
    );
    let (first, last) = (&s.points[0], &s.points[s.points.len() - 1]);
    let _ = writeln!(
        o,
        "<text x=\"{LEFT}\" y=\"{:.1}\" class=\"unit\">run 1: {}</text><text x=\"{RIGHT}\" y=\"{:.1}\" text-anchor=\"end\" class=\"unit\">run {}: {}</text>",
        bottom + 14.0,
        html_escape(&short_at(&first.at)),
        bottom + 14.0,
        s.points.len(),
        html_escape(&short_at(&last.at))
    );
}

/// Each segment's level (the median of its points) as a dashed line across it.
fn levels(o: &mut String, s: &Series, x_of: &dyn Fn(usize) -> f64, y_of: &dyn Fn(f64) -> f64) {
    let mut bounds: Vec<(usize, f64)> = Vec::new();
    match s.changes.first() {
        None => {
            let mut v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            v.sort_by(f64::total_cmp);
            bounds.push((0, crate::stats::quantile_sorted(&v, 0.5)));
        }
        Some(c) => {
            bounds.push((0, c.before));
            bounds.extend(s.changes.iter().map(|c| (c.index, c.after)));
        }
    }
    let mut d = String::new();
    for (k, &(start, level)) in bounds.iter().enumerate() {
        let end = bounds.get(k + 1).map_or(s.points.len() - 1, |b| b.0 - 1);
        let y = y_of(level);
        let _ = write!(
            d,
            "M{:.1} {y:.1}H{:.1}",
            x_of(start),
            x_of(end).max(x_of(start) + 2.0)
        );
    }
    let _ = writeln!(
        o,
        "<path class=\"level\" d=\"{d}\" stroke=\"#888\" stroke-dasharray=\"5 3\" fill=\"none\"/>"
    );
}

/// The whiskers (one path), the line through the points, and the points.
fn marks(o: &mut String, s: &Series, x_of: &dyn Fn(usize) -> f64, y_of: &dyn Fn(f64) -> f64) {
    let mut ci = String::new();
    let mut line = String::new();
    let mut dots = String::new();
    let r = if s.points.len() > 200 { 1.4 } else { 2.6 };
    for (i, p) in s.points.iter().enumerate() {
        let (x, y) = (x_of(i), y_of(p.value));
        if let Some((a, b)) = p.ci {
            let _ = write!(ci, "M{x:.1} {:.1}V{:.1}", y_of(a), y_of(b));
        }
        let _ = write!(line, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
        // A run with values of runs that did not finish (--include-partial) is hollow.
        let hollow = if p.partial > 0 {
            " fill=\"#fff\" stroke=\"#1a1a1a\" class=\"partial\""
        } else {
            ""
        };
        let _ = write!(
            dots,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\"{hollow}/>"
        );
    }
    if !ci.is_empty() {
        let _ = writeln!(
            o,
            "<path class=\"ci\" d=\"{ci}\" stroke=\"#000\" stroke-opacity=\"0.55\" fill=\"none\"/>"
        );
    }
    let _ = writeln!(
        o,
        "<polyline class=\"line\" points=\"{line}\" fill=\"none\" stroke=\"{PLAIN}\" stroke-width=\"1.5\"/>"
    );
    let _ = writeln!(o, "<g class=\"points\" fill=\"{DOT}\">{dots}</g>");
}

/// Each change as a vertical mark between its two runs, coloured by whether the new level
/// is better or worse, with its shift written at the top.
fn changes(o: &mut String, s: &Series, y0: f64, x_of: &dyn Fn(usize) -> f64) {
    for c in &s.changes {
        let x = (x_of(c.index - 1) + x_of(c.index)) / 2.0;
        let ink = match s.better.is_better(c.before, c.after) {
            Some(true) => BETTER,
            Some(false) => WORSE,
            None => "#333",
        };
        let anchor = if x > RIGHT - 80.0 { "end" } else { "start" };
        let dx = if anchor == "end" { -4.0 } else { 4.0 };
        let _ = writeln!(
            o,
            "<line class=\"change\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{ink}\" stroke-width=\"2\"/><text class=\"shift\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"{ink}\" font-weight=\"bold\">{}</text>",
            y0 + PLOT_H,
            x + dx,
            y0 + 12.0,
            html_escape(&shift_text(s, c))
        );
    }
}

/// The page's style.
const STYLE: &str = "body { font-family: sans-serif; }\nsvg.chart { display: block; margin: 1em 0 0.3em 0; }\n.unit, .legend { fill: #444; }\nul.changes { margin-top: 0; }\nul.facts { margin: 0.2em 0; }\np.nochange { color: #666; margin-top: 0; }\n";

/// The HTML page: a heading per row, then per series its chart, its changes and the facts
/// that differ around each.
pub fn page(h: &History) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>benchmatrix history</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>History</h1>\n<p>Each row of each column as its runs in order of time: each run's {} with its 95% confidence interval. Changes of level by e-divisive means (energy distance), each kept where its permutation test gives p &lt; {} with at least {} runs on each side.</p>\n",
        html_escape(&h.stat),
        h.params.alpha,
        h.params.min_size
    );
    let mut last_title = None;
    for s in &h.series {
        if last_title != Some(&s.title) {
            let _ = writeln!(o, "<h2>{}</h2>", html_escape(&s.title));
            last_title = Some(&s.title);
        }
        let (c, ht) = series_chart(s);
        let _ = write!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart history\" width=\"{WIDTH}\" height=\"{ht:.0}\" viewBox=\"0 0 {WIDTH} {ht:.0}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n{c}</svg>\n"
        );
        if s.changes.is_empty() {
            o.push_str("<p class=\"nochange\">No change of level.</p>\n");
            continue;
        }
        o.push_str("<ul class=\"changes\">\n");
        for (k, c) in s.changes.iter().enumerate() {
            let _ = write!(o, "<li>{}", html_escape(&change_line(s, k)));
            if !c.facts.is_empty() {
                o.push_str("<ul class=\"facts\">");
                for f in &c.facts {
                    let _ = write!(o, "<li>{}</li>", html_escape(&fact_text(f)));
                }
                o.push_str("</ul>");
            }
            o.push_str("</li>\n");
        }
        o.push_str("</ul>\n");
    }
    for n in &h.notes {
        let _ = writeln!(o, "<p>{}</p>", html_escape(n));
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// Every series' chart in one SVG document, stacked, each followed by its changes as text.
pub fn document(h: &History) -> String {
    let mut body = String::new();
    let mut y = 0.0;
    for s in &h.series {
        let (c, ht) = series_chart(s);
        let _ = writeln!(
            body,
            "<g class=\"series\" transform=\"translate(0,{y:.1})\">\n{c}</g>"
        );
        y += ht;
        for (k, c) in s.changes.iter().enumerate() {
            let facts = c.facts.iter().map(|f| format!("  {}", fact_text(f)));
            for l in std::iter::once(change_line(s, k)).chain(facts) {
                let _ = writeln!(
                    body,
                    "<text x=\"8\" y=\"{:.1}\" class=\"note\" xml:space=\"preserve\">{}</text>",
                    y + 4.0,
                    html_escape(&l)
                );
                y += LINE;
            }
        }
        y += 8.0;
    }
    let ht = y.max(40.0);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{ht:.0}\" viewBox=\"0 0 {WIDTH} {ht:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{ht:.0}\" fill=\"white\"/>\n{body}</svg>\n"
    )
}
