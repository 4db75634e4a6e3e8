//! One chart per row, as SVG, for `-f svg` and the HTML report: at the top the row's name
//! (wrapped, never cut), its unit and which way is better, and the legend; then per column a
//! bar to the statistic, its confidence interval as a whisker and every value as a dark dot (jittered across the bar, so that a bimodal cell or one outlier
//! shows), on one scale per row; with a baseline, its interval shaded behind every bar. The
//! column's name is beside the bar and the cell's text (the table's rounding, its ±, its
//! change and verdict) after it, coloured by the verdict, so that nothing needs hovering.

use super::html_escape;
use crate::matrix::{Better, Cell, Delta, Row, Table, Verdict, visible};

/// The chart's width, in pixels.
pub const WIDTH: f64 = 760.0;
/// Up to this many columns a chart draws every one, a missing value as "- (no value)".
const ALL_DRAWN: usize = 24;
/// Room for the cell's text after the longest bar.
const VALUE_W: f64 = 190.0;
/// A bar's height and the gap between bars.
const BAR_H: f64 = 16.0;
const BAR_GAP: f64 = 8.0;
/// Line height of wrapped text.
const LINE: f64 = 15.0;
/// The most dots a cell draws: more values are drawn by rank, evenly (the smallest and the
/// largest always), so that a page of many runs stays small.
const MAX_DOTS: usize = 100;

/// Colours: the baseline, a better and a worse cell, and every other cell.
pub const BASELINE: &str = "#8c8c8c";
pub const BETTER: &str = "#2e7d32";
pub const WORSE: &str = "#c62828";
pub const PLAIN: &str = "#4e79a7";
/// The values' dots, dark on any bar and on the page.
pub const DOT: &str = "#1a1a1a";

/// Words of `s` in lines of at most `max` characters (a longer word is a line of its own).
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in s.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    lines.push(cur);
    lines
}

/// `lines` as a `<text>` at (x, y), one `<tspan>` a line.
fn text_lines(o: &mut String, x: f64, y: f64, attrs: &str, lines: &[String]) {
    o.push_str(&format!("<text x=\"{x:.1}\" y=\"{y:.1}\"{attrs}>"));
    for (i, l) in lines.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { LINE };
        o.push_str(&format!(
            "<tspan x=\"{x:.1}\" dy=\"{dy}\">{}</tspan>",
            html_escape(l)
        ));
    }
    o.push_str("</text>\n");
}

/// The colour of a cell: by its verdict against the baseline.
pub fn colour(c: &Cell, better: Better) -> &'static str {
    match (&c.delta, c.verdict(better)) {
        (Some(Delta::Baseline), _) => BASELINE,
        (_, Some(Verdict::Better)) => BETTER,
        (_, Some(Verdict::Worse)) => WORSE,
        _ => PLAIN,
    }
}

/// A chart's title, unit and legend; returns where the bars start.
fn head(o: &mut String, t: &Table, r: &Row) -> f64 {
    let title = wrap(&r.title, 90);
    text_lines(
        o,
        8.0,
        18.0,
        " font-weight=\"bold\" font-size=\"13\"",
        &title,
    );
    let y = 18.0 + LINE * title.len() as f64;
    let unit = if r.scale.unit.is_empty() {
        "no unit".to_string()
    } else {
        format!("unit: {}", r.scale.unit)
    };
    let way = match r.better {
        Better::Lower => ", lower is better",
        Better::Higher => ", higher is better",
        Better::Unknown => "",
    };
    o.push_str(&format!(
        "<text x=\"8\" y=\"{y:.1}\" class=\"unit\">{}{way}</text>\n",
        html_escape(&unit)
    ));
    legend(o, t, &r.stat.name(), y);
    y + 12.0
}

/// Row `r`'s chart, its top at 0: the SVG elements and the height they take.
pub fn row_chart(t: &Table, r: &Row) -> (String, f64) {
    let mut o = String::new();
    let mut y = head(&mut o, t, r);
    // A chart of many columns draws the cells that have a value, and says how many not.
    let drawn: Vec<usize> = (0..t.columns.len())
        .filter(|&j| t.columns.len() <= ALL_DRAWN || r.cells[j].is_some())
        .collect();
    let names: Vec<Vec<String>> = drawn
        .iter()
        .map(|&j| wrap(&visible(&t.columns[j].key), 28))
        .collect();
    let widest = names
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1);
    let label_w = (widest as f64 * 6.6 + 16.0).min(200.0);
    let plot_w = WIDTH - label_w - VALUE_W;
    let max = r
        .cells
        .iter()
        .flatten()
        .map(|c| {
            let top = c.sorted.last().copied().unwrap_or(c.value).max(c.value);
            c.ci.map_or(top, |(_, hi)| hi.max(top))
        })
        .fold(0.0f64, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    let x_of = |v: f64| label_w + (v.max(0.0) / max).min(1.0) * plot_w;
    let band_at = o.len();
    let first_top = y + BAR_GAP;
    for (k, &j) in drawn.iter().enumerate() {
        let c = &r.cells[j];
        let lines = &names[k];
        let h = BAR_H.max(LINE * lines.len() as f64);
        let top = y + BAR_GAP;
        text_lines(
            &mut o,
            label_w - 6.0,
            top + 12.0,
            " text-anchor=\"end\" class=\"col\"",
            lines,
        );
        match c {
            None => o.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#999\">- (no value)</text>\n",
                label_w + 4.0,
                top + 12.0
            )),
            Some(c) => bar(&mut o, c, r.better, top, &x_of),
        }
        y = top + h;
    }
    o.insert_str(band_at, &band(r, first_top, y, &x_of));
    let empty = t.columns.len() - drawn.len();
    if empty > 0 {
        y += LINE + 4.0;
        o.push_str(&format!(
            "<text x=\"8\" y=\"{y:.1}\" fill=\"#999\">{empty} of the {} columns have no value in this row (not drawn)</text>\n",
            t.columns.len()
        ));
    }
    (o, y + 14.0)
}

/// The baseline's confidence interval (else its statistic) shaded from `top` to `bottom`,
/// behind every bar of the row; nothing without a baseline cell.
fn band(r: &Row, top: f64, bottom: f64, x_of: &dyn Fn(f64) -> f64) -> String {
    let Some(base) = r
        .cells
        .iter()
        .flatten()
        .find(|c| matches!(c.delta, Some(Delta::Baseline)))
    else {
        return String::new();
    };
    let (lo, hi) = base.ci.unwrap_or((base.value, base.value));
    let (a, b) = (x_of(lo), x_of(hi));
    format!(
        "<rect class=\"band\" x=\"{a:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{BASELINE}\" fill-opacity=\"0.18\"/>\n",
        (b - a).max(1.0),
        (bottom - top).max(BAR_H)
    )
}

/// A cell's values as dots across its bar: up to [`MAX_DOTS`] by rank, each at a height
/// that the rank alone sets (the same chart twice is the same picture).
fn dots(o: &mut String, c: &Cell, top: f64, x_of: &dyn Fn(f64) -> f64) {
    let n = c.sorted.len();
    let m = n.min(MAX_DOTS);
    for i in 0..m {
        let k = if m < 2 { 0 } else { i * (n - 1) / (m - 1) };
        let jitter = ((k * 7919) % 11) as f64 - 5.0;
        o.push_str(&format!(
            "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.2\" fill=\"{DOT}\" fill-opacity=\"0.8\" stroke=\"#fff\" stroke-width=\"0.6\"/>\n",
            x_of(c.sorted[k]),
            top + BAR_H / 2.0 + jitter
        ));
    }
}

/// A cell's bar (to its statistic), its whisker, its dots and its text.
fn bar(o: &mut String, c: &Cell, better: Better, top: f64, x_of: &dyn Fn(f64) -> f64) {
    let x0 = x_of(0.0);
    let x1 = x_of(c.value);
    let fill = colour(c, better);
    o.push_str(&format!(
        "<rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{BAR_H}\" fill=\"{fill}\"/>\n",
        (x1 - x0).max(1.0)
    ));
    dots(o, c, top, x_of);
    let mut end = x1.max(c.sorted.last().map_or(x1, |&v| x_of(v)));
    if let Some((lo, hi)) = c.ci {
        let (a, b) = (x_of(lo), x_of(hi));
        let cy = top + BAR_H / 2.0;
        o.push_str(&format!(
            "<path class=\"ci\" d=\"M{a:.1} {cy:.1}H{b:.1}M{a:.1} {:.1}V{:.1}M{b:.1} {:.1}V{:.1}\" stroke=\"#000\" fill=\"none\"/>\n",
            top + 3.0,
            top + BAR_H - 3.0,
            top + 3.0,
            top + BAR_H - 3.0
        ));
        end = end.max(b);
    }
    let weight = if fill == BETTER || fill == WORSE {
        " font-weight=\"bold\""
    } else {
        ""
    };
    let ink = if fill == PLAIN || fill == BASELINE {
        "#222"
    } else {
        fill
    };
    o.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{ink}\"{weight} class=\"value\">{}</text>\n",
        end + 5.0,
        top + 12.0,
        html_escape(&c.text)
    ));
}

/// The legend beside the unit line: what each colour means (only those a baseline needs),
/// else what the marks are.
fn legend(o: &mut String, t: &Table, stat: &str, y: f64) {
    let marks = format!("{stat} (bar), values (dots), 95% CI (whisker)");
    let items: Vec<(&str, &str)> = if t.baseline.is_some() {
        vec![
            (BASELINE, "baseline (its CI shaded)"),
            (BETTER, "better"),
            (WORSE, "worse"),
            (PLAIN, "no significant change"),
        ]
    } else {
        vec![(PLAIN, marks.as_str())]
    };
    let mut x = 300.0;
    for (fill, what) in items {
        o.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{fill}\"/><text x=\"{:.1}\" y=\"{y:.1}\" class=\"legend\">{what}</text>\n",
            y - 9.0,
            x + 14.0
        ));
        x += 24.0 + what.len() as f64 * 6.2;
    }
}

/// Every row's chart in one SVG document, stacked, and the notes under them.
pub fn document(t: &Table) -> String {
    let mut body = String::new();
    let mut y = 0.0;
    for r in &t.rows {
        let (c, h) = row_chart(t, r);
        body.push_str(&format!(
            "<g class=\"row\" transform=\"translate(0,{y:.1})\">\n{c}</g>\n"
        ));
        y += h;
    }
    // The notes under the charts, as under every table: the facts that differ between the
    // columns, what was left out, pooled, compared.
    let facts = crate::matrix::facts_note(&t.facts, &t.columns);
    for n in facts.into_iter().chain(t.notes.iter().map(|n| n.full())) {
        let lines = wrap(&n, 120);
        text_lines(&mut body, 8.0, y + 12.0, " class=\"note\"", &lines);
        y += LINE * lines.len() as f64 + 8.0;
    }
    let h = y.max(40.0);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{h:.0}\" viewBox=\"0 0 {WIDTH} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{h:.0}\" fill=\"white\"/>\n{body}</svg>\n"
    )
}

/// One row's chart as an inline SVG element of the HTML report.
pub fn inline(t: &Table, r: &Row) -> String {
    let (c, h) = row_chart(t, r);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{WIDTH}\" height=\"{h:.0}\" viewBox=\"0 0 {WIDTH} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n{c}</svg>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_values_draw_the_most_dots_with_both_ends() {
        let mut c = Cell::text_only(String::new());
        c.sorted = (0..250).map(f64::from).collect();
        let x_of = |v: f64| v;
        let mut o = String::new();
        dots(&mut o, &c, 0.0, &x_of);
        assert_eq!(o.matches("<circle").count(), MAX_DOTS);
        assert!(o.starts_with("<circle class=\"dot\" cx=\"0.0\""), "{o}");
        assert!(o.contains("cx=\"249.0\""), "{o}");
        c.sorted = vec![3.0];
        let mut one = String::new();
        dots(&mut one, &c, 0.0, &x_of);
        assert_eq!(one.matches("<circle").count(), 1);
    }
}
