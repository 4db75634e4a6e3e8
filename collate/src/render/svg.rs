//! The SVG format: a grouped bar chart, one panel per row and one bar per column, with the
//! confidence interval as an error bar.

use super::html_escape;
use crate::matrix::{Cell, Row, Table};

const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f",
];

/// Bar width, gap between bars, left margin and plot height of the chart, in pixels.
const BAR: f64 = 28.0;
const GAP: f64 = 8.0;
const LEFT: f64 = 70.0;
const PLOT_H: f64 = 120.0;
/// A row's panel: the plot, its title above and the value labels below.
const PANEL_H: f64 = PLOT_H + 70.0;

/// A grouped bar chart: one panel per row, one bar per column (the row's display unit on
/// the axis), the confidence interval as an error bar, missing cells marked "n/a".
pub(super) fn svg(t: &Table) -> String {
    let ncols = t.columns.len().max(1);
    let left = LEFT;
    let legend_h = 18.0 * ncols as f64 + 10.0;
    let width = (left + ncols as f64 * (BAR + GAP) + 20.0).max(420.0);
    let height = PANEL_H * t.rows.len() as f64 + legend_h + 20.0;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    );
    o.push_str(&format!(
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n"
    ));
    for (i, r) in t.rows.iter().enumerate() {
        svg_panel(&mut o, t, r, i as f64 * PANEL_H + 10.0, ncols);
    }
    let ly = PANEL_H * t.rows.len() as f64 + 20.0;
    for (j, c) in t.columns.iter().enumerate() {
        let y = ly + 18.0 * j as f64;
        o.push_str(&format!(
            "<rect x=\"{left}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            PALETTE[j % PALETTE.len()],
            left + 18.0,
            y + 10.0,
            html_escape(&c.key)
        ));
    }
    o.push_str("</svg>\n");
    o
}

/// One row's panel, `top` pixels down: its title, the axis with its maximum, and a bar per
/// column scaled to that maximum.
fn svg_panel(o: &mut String, t: &Table, r: &Row, top: f64, ncols: usize) {
    let left = LEFT;
    let base_y = top + 20.0 + PLOT_H;
    let max = r
        .cells
        .iter()
        .flatten()
        .map(|c| {
            r.scale
                .apply(c.ci.map_or(c.value, |(_, hi)| hi.max(c.value)))
        })
        .fold(0.0f64, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    o.push_str(&format!(
        "<g class=\"row\">\n<text x=\"{left}\" y=\"{}\" font-weight=\"bold\">{}</text>\n",
        top + 12.0,
        html_escape(&r.title)
    ));
    o.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{base_y}\" x2=\"{}\" y2=\"{base_y}\" stroke=\"#333\"/>\n",
        left + ncols as f64 * (BAR + GAP)
    ));
    o.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n<text x=\"{}\" y=\"{base_y}\" text-anchor=\"end\">0</text>\n",
        left - 4.0,
        top + 24.0,
        html_escape(&crate::matrix::fmt_number(max, &r.suffix)),
        left - 4.0
    ));
    for (j, c) in r.cells.iter().enumerate() {
        match c {
            None => o.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#999\">n/a</text>\n",
                bar_x(j) + BAR / 2.0,
                base_y - 4.0
            )),
            Some(c) => svg_bar(o, t, r, j, c, base_y, max),
        }
    }
    o.push_str("</g>\n");
}

/// The left edge of column `j`'s bar.
fn bar_x(j: usize) -> f64 {
    LEFT + j as f64 * (BAR + GAP) + GAP / 2.0
}

/// Cell `c` of column `j` as a bar on the baseline `base_y`, `max` (display units) being the
/// full plot height: the bar with the cell's text as its tooltip, the error bar, the value
/// beneath.
fn svg_bar(o: &mut String, t: &Table, r: &Row, j: usize, c: &Cell, base_y: f64, max: f64) {
    let x = bar_x(j);
    let color = PALETTE[j % PALETTE.len()];
    let scale = |v: f64| r.scale.apply(v);
    let v = scale(c.value).max(0.0);
    let h = v / max * PLOT_H;
    o.push_str(&format!(
        "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{BAR}\" height=\"{h:.1}\" fill=\"{color}\"><title>{}: {}</title></rect>\n",
        base_y - h,
        html_escape(&t.columns[j].key),
        html_escape(&c.text)
    ));
    if let Some((lo, hi)) = c.ci {
        let y = |v: f64| base_y - scale(v).max(0.0) / max * PLOT_H;
        let cx = x + BAR / 2.0;
        o.push_str(&format!(
            "<path d=\"M{cx:.1} {:.1}V{:.1}M{:.1} {:.1}H{:.1}M{:.1} {:.1}H{:.1}\" stroke=\"#000\" fill=\"none\"/>\n",
            y(lo), y(hi), cx - 5.0, y(lo), cx + 5.0, cx - 5.0, y(hi), cx + 5.0
        ));
    }
    o.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9\">{}</text>\n",
        x + BAR / 2.0,
        base_y + 12.0,
        html_escape(&crate::matrix::fmt_number(scale(c.value), &r.suffix))
    ));
}
