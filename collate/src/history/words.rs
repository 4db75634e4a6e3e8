//! The history's words shared by its formats: a value in the series' unit, a shift, a
//! change's line, a fact's change, a time to the second.

use super::{FactShift, Series, Shift};
use crate::matrix;

/// An `at` to the second: `2026-11-30T13:00:00Z`.
pub fn short_at(at: &str) -> String {
    match at.get(..19) {
        Some(s) if at.len() > 20 => format!("{s}Z"),
        _ => at.to_string(),
    }
}

/// A value in the series' display unit: `1.23 ms`.
pub fn shown(s: &Series, v: f64) -> String {
    let n = matrix::fmt_number(s.scale.apply(v), &s.suffix);
    if s.scale.unit.is_empty() {
        n
    } else {
        format!("{n} {}", s.scale.unit)
    }
}

/// A shift in percent with its sign, `+15.0%`, or the difference where the level was 0.
pub fn shift_text(s: &Series, sh: &Shift) -> String {
    match sh.pct {
        Some(p) => format!("{p:+.1}%"),
        None => {
            let d = sh.after - sh.before;
            format!("{}{}", if d >= 0.0 { "+" } else { "" }, shown(s, d))
        }
    }
}

/// One line per change: the run, its time and id, the levels, the shift and the p-value.
pub fn change_line(s: &Series, k: usize) -> String {
    let c = &s.changes[k];
    let p = &s.points[c.index];
    format!(
        "change at run {} of {} ({}, {}): {} -> {}, {} (p {})",
        c.index + 1,
        s.points.len(),
        short_at(&p.at),
        p.unit,
        shown(s, c.before),
        shown(s, c.after),
        shift_text(s, c),
        matrix::fmt_number(c.p, "")
    )
}

/// A fact's change as one text: `kernel: 6.1.0 -> 6.12.0`.
pub fn fact_text(f: &FactShift) -> String {
    let side = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(" | ")
        }
    };
    format!("{}: {} -> {}", f.key, side(&f.before), side(&f.after))
}
