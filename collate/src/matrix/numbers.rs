//! How a cell reads: its number in the row's display unit with the row's decimals, its ±
//! spread and its change against the baseline (`230 ±2% +20%`).

use super::table::{Better, Cell, Delta, Row, Verdict};
use measure::units::{Scale, sig3};

/// A number for a cell: integers stay integers for counts, else three significant digits.
pub fn fmt_number(v: f64, suffix: &str) -> String {
    if let Some(s) = outside(v) {
        return s;
    }
    if v == 0.0 {
        return "0".into();
    }
    if suffix == "_count" && v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    sig3(v)
}

/// Decimals for a row's numbers: three significant digits of the row's typical value, the
/// same for every cell (so a row reads evenly), fewer where every value is exact with fewer
/// (`7`, `84`, `230` rather than `7.00`, `84.0`, `230`).
pub fn row_decimals(values: &[f64]) -> usize {
    let abs: Vec<f64> = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .collect();
    if abs.is_empty() {
        return 0;
    }
    let typical = measure::stats::median(&abs).unwrap_or(0.0);
    if typical == 0.0 {
        return 0;
    }
    let d = (2 - measure::units::decimal_exponent(typical)).clamp(0, 9) as usize;
    // Fewer decimals only where every value has no more (whole numbers typed by hand, counts),
    // not where rounding happens to end in zeros: 1.0035 stays 1.00.
    for fewer in 0..d {
        if abs.iter().all(|v| exact(*v, fewer)) {
            return fewer;
        }
    }
    d
}

/// A cell's number with the row's decimals, or more where the value is smaller than the
/// row's typical one: every cell keeps three significant digits (`0.0989` in a row of `2.31`,
/// never `0.10`), stopping earlier where the value is exact (`0.004`, `7`).
pub fn fmt_fixed(v: f64, row_decimals: usize) -> String {
    if let Some(s) = outside(v) {
        return s;
    }
    if v == 0.0 {
        let d = row_decimals;
        return format!("{:.d$}", 0.0);
    }
    let sig3 = (2 - measure::units::decimal_exponent(v)).clamp(0, 14) as usize;
    let mut d = row_decimals;
    while d < sig3 && !exact(v, d) {
        d += 1;
    }
    format!("{v:.d$}")
}

/// Whether `d` decimals show `v` without rounding (a value typed with fewer digits).
fn exact(v: f64, d: usize) -> bool {
    let x = v * 10f64.powi(d as i32);
    (x - x.round()).abs() <= 1e-9 * x.abs().max(1.0)
}

/// A number no fixed notation shows well: `-` for none, an exponent for magnitudes outside
/// 1e-9 to 1e15 (`1.00e308` rather than 309 digits, `1.00e-320` rather than `0.000000000000`);
/// 0 and -0 are the callers' (both read `0`).
fn outside(v: f64) -> Option<String> {
    if !v.is_finite() {
        return Some("-".into());
    }
    if v == 0.0 {
        return None;
    }
    let a = v.abs();
    (!(1e-9..1e15).contains(&a)).then(|| format!("{v:.2e}"))
}

/// `±2%`, `±0.4%`.
fn fmt_spread(center: f64, lo: f64, hi: f64) -> Option<String> {
    if center == 0.0 || !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let pct = ((center - lo).max(hi - center) / center.abs()) * 100.0;
    Some(if pct < 0.95 {
        format!("±{pct:.1}%")
    } else {
        format!("±{pct:.0}%")
    })
}

/// `+20%`, `-3.1%`, `+0.52%`.
pub fn fmt_delta(pct: f64) -> String {
    let a = pct.abs();
    if a >= 10.0 {
        format!("{pct:+.0}%")
    } else if a >= 1.0 {
        format!("{pct:+.1}%")
    } else {
        format!("{pct:+.2}%")
    }
}

/// A difference from a baseline of 0 in the row's display unit, with the row's decimals:
/// `+3.0 ms`, `+0.50%` (a ratio is shown in %), `+12` (a count).
pub fn fmt_diff(diff: f64, decimals: usize, scale: &Scale) -> String {
    // -0 reads as +0: the two medians are the same, the distributions are not.
    let v = if diff == 0.0 { 0.0 } else { scale.apply(diff) };
    let sign = if v >= 0.0 { "+" } else { "" };
    let num = fmt_fixed(v, decimals);
    match scale.unit {
        "" => format!("{sign}{num}"),
        "%" => format!("{sign}{num}%"),
        unit => format!("{sign}{num} {unit}"),
    }
}

/// Writes the text of every cell of `r`, with the decimals its display values share.
pub(super) fn set_texts(r: &mut Row, show_ci: bool) {
    let scale = &r.scale;
    let shown: Vec<f64> = r
        .cells
        .iter()
        .flatten()
        .map(|c| scale.apply(c.value))
        .collect();
    let decimals = row_decimals(&shown);
    let better = r.better;
    for cell in r.cells.iter_mut().flatten() {
        cell.shown = fmt_fixed(scale.apply(cell.value), decimals);
        cell.text = cell_text(cell, decimals, scale, show_ci, better);
    }
}

/// `×3` for a cell that pools three runs, `×3!` when they differ, ` *` with values of runs
/// that did not finish, ` ‖` when its values fall in two modes, ` †` with values of runs on
/// a busy machine ([`crate::busy`]), ` ‡` with values of runs on a drifting clock
/// ([`crate::drift`]).
pub fn run_marks(cell: &Cell) -> String {
    let mut t = String::new();
    if cell.runs > 1 {
        t.push_str(&format!(" ×{}", cell.runs));
        if cell.differ.is_some() {
            t.push('!');
        }
    }
    if cell.partial > 0 {
        t.push_str(" *");
    }
    if cell.modes.is_some() {
        t.push_str(" ‖");
    }
    if cell.busy > 0 {
        t.push(' ');
        t.push_str(crate::busy::MARK);
    }
    if cell.drift > 0 {
        t.push(' ');
        t.push_str(crate::drift::MARK);
    }
    t
}

fn cell_text(cell: &Cell, decimals: usize, scale: &Scale, show_ci: bool, b: Better) -> String {
    let mut t = cell.shown.clone();
    if show_ci
        && let Some((lo, hi)) = cell.ci
        && let Some(s) = fmt_spread(cell.value, lo, hi)
    {
        t.push(' ');
        t.push_str(&s);
    }
    t.push_str(&run_marks(cell));
    match &cell.delta {
        Some(Delta::Change { pct, .. }) => {
            t.push(' ');
            t.push_str(&fmt_delta(*pct));
        }
        Some(Delta::Diff { diff, .. }) => {
            t.push(' ');
            t.push_str(&fmt_diff(*diff, decimals, scale));
        }
        Some(Delta::Same { .. }) => t.push_str(" ~"),
        Some(Delta::TooFew { .. }) => t.push_str(" ?"),
        _ => {}
    }
    if let Some(v @ (Verdict::Better | Verdict::Worse)) = cell.verdict(b) {
        t.push(' ');
        t.push_str(v.word());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_delta(20.0), "+20%");
        assert_eq!(fmt_delta(-3.12), "-3.1%");
        assert_eq!(fmt_delta(0.523), "+0.52%");
        assert_eq!(fmt_number(12.0, "_count"), "12");
        assert_eq!(fmt_number(7.0, "_s"), "7.00");
        assert_eq!(fmt_spread(100.0, 98.0, 103.0).as_deref(), Some("±3%"));
        assert_eq!(row_decimals(&[7.0, 84.0, 230.0]), 0);
        assert_eq!(row_decimals(&[17.0, 14.0, 25.0]), 0);
        assert_eq!(row_decimals(&[1.503, 1.49, 1.5]), 2);
        assert_eq!(row_decimals(&[0.2, 0.1, 0.03]), 2);
        assert_eq!(row_decimals(&[12.5, 14.0]), 1);
        assert_eq!(row_decimals(&[1.0035, 1.1]), 2);
        assert_eq!(fmt_fixed(0.004, 0), "0.004");
        assert_eq!(fmt_fixed(7.0, 0), "7");
        assert_eq!(fmt_fixed(230.0, 0), "230");
        assert_eq!(fmt_fixed(1.5, 2), "1.50");
        assert_eq!(fmt_fixed(1e308, 0), "1.00e308");
        assert_eq!(fmt_fixed(1e-320, 2), "1.00e-320");
        assert_eq!(fmt_fixed(-0.0, 0), "0");
        assert_eq!(fmt_fixed(-0.0, 2), "0.00");
        // A cell far below its row's typical value keeps three significant digits.
        assert_eq!(fmt_fixed(0.0989, 2), "0.0989");
        assert_eq!(fmt_fixed(0.09891, 0), "0.0989");
        assert_eq!(fmt_fixed(1.234, 0), "1.23");
        assert_eq!(fmt_fixed(98.9, 0), "98.9");
        assert_eq!(fmt_fixed(1234.6, 0), "1235");
        assert_eq!(fmt_number(1e308, "_s"), "1.00e308");
        assert_eq!(fmt_number(-0.0, "_count"), "0");
        assert_eq!(fmt_spread(100.0, 99.7, 100.2).as_deref(), Some("±0.3%"));
        let ms = Scale {
            unit: "ms",
            factor: 1e-3,
        };
        assert_eq!(fmt_diff(3e-3, 1, &ms), "+3.0 ms");
        assert_eq!(fmt_diff(-2.5e-3, 1, &ms), "-2.5 ms");
        let pct = Scale {
            unit: "%",
            factor: 0.01,
        };
        assert_eq!(fmt_diff(0.005, 1, &pct), "+0.5%");
        let count = Scale {
            unit: "",
            factor: 1.0,
        };
        assert_eq!(fmt_diff(12.0, 0, &count), "+12");
    }
}
