//! The history for programs: JSON (every series with its points, their intervals and its
//! change points, the facts that differ around each) and a tidy CSV (one line per row, label
//! and run: the point, its interval, its segment's level and the shift where a level starts).

use super::{History, Series};
use crate::render::csv::{csv_field, float};
use serde_json::{Value, json};

fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn dims_obj(d: &[(String, String)]) -> Value {
    Value::Object(
        d.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// The whole history as one JSON document. The series are written one at a time into the
/// place the empty list holds (each series' tree lives only while it is written), so the
/// document is never one tree of every series.
pub fn json(h: &History) -> String {
    let doc = json!({
        "history": true,
        "stat": h.stat,
        "confidence": crate::matrix::CONFIDENCE,
        "change_points": {
            "method": "e-divisive means (energy distance, alpha 1), permutation test: exact up to exact_runs, else sequential Monte Carlo (at most permutations draws)",
            "alpha": h.params.alpha,
            "min_runs": h.params.min_size,
            "exact_runs": crate::changepoint::EXACT_MAX,
            "permutations": h.params.permutations(),
        },
        "series": [],
        "notes": h.notes,
    });
    let s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    let Some((head, tail)) = s.split_once(SERIES_SLOT) else {
        return s + "\n";
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(head);
    out.push_str("\n  \"series\": [");
    for (i, series) in h.series.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        let text = serde_json::to_string_pretty(&series_json(series)).unwrap_or_default();
        for (k, line) in text.lines().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
    }
    out.push_str(if h.series.is_empty() { "]," } else { "\n  ]," });
    out.push_str(tail);
    out.push('\n');
    out
}

/// The line the empty series list takes in the pretty document, at the top level.
const SERIES_SLOT: &str = "\n  \"series\": [],";

fn series_json(s: &Series) -> Value {
    let points: Vec<Value> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "index": i, "run": p.unit, "at": p.at, "n": p.n, "value": num(p.value),
                "ci_low": p.ci.map_or(Value::Null, |c| num(c.0)),
                "ci_high": p.ci.map_or(Value::Null, |c| num(c.1)),
                "partial": p.partial,
            })
        })
        .collect();
    let changes: Vec<Value> = s
        .changes
        .iter()
        .map(|c| {
            let p = &s.points[c.index];
            json!({
                "index": c.index, "run": p.unit, "at": p.at,
                "before": num(c.before), "after": num(c.after),
                "shift_pct": c.pct.map_or(Value::Null, num), "p": num(c.p),
                "facts": c.facts.iter().map(|f| json!({
                    "key": f.key, "before": f.before, "after": f.after,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "row": s.title,
        "name": s.name,
        "row_dims": dims_obj(&s.row_dims),
        "column": s.key,
        "dims": dims_obj(&s.col_dims),
        "unit_suffix": s.suffix,
        "display_unit": s.scale.unit,
        "display_factor": num(s.scale.factor),
        "better": s.better.word(),
        "stat": s.stat,
        "points": points,
        "changes": changes,
    })
}

/// The tidy CSV: a header, then one line per (row, column, run).
pub fn csv(h: &History) -> String {
    let keys: Vec<&str> = h
        .series
        .first()
        .map(|s| s.col_dims.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut head = vec!["row".to_string()];
    head.extend(keys.iter().map(|k| k.replace('.', "_")));
    for k in [
        "unit",
        "index",
        "run",
        "at",
        "n",
        "value",
        "ci_low",
        "ci_high",
        "level",
        "change_pct",
        "change_p",
    ] {
        head.push(k.to_string());
    }
    let mut out = head.join(",");
    out.push('\n');
    for s in &h.series {
        let cols: Vec<String> = keys
            .iter()
            .map(|k| {
                let v = s
                    .col_dims
                    .iter()
                    .find(|(ck, _)| ck == k)
                    .map_or("", |(_, v)| v);
                csv_field(v)
            })
            .collect();
        let flat = if s.changes.is_empty() {
            median(s)
        } else {
            f64::NAN
        };
        let mut seg = 0;
        for (i, p) in s.points.iter().enumerate() {
            while seg < s.changes.len() && s.changes[seg].index <= i {
                seg += 1;
            }
            let level = match seg {
                0 => s.changes.first().map_or(f64::NAN, |c| c.before),
                k => s.changes[k - 1].after,
            };
            let level = if s.changes.is_empty() { flat } else { level };
            let start = s.changes.iter().find(|c| c.index == i);
            let mut f = vec![csv_field(&s.name)];
            f.extend(cols.iter().cloned());
            f.push(s.suffix.trim_start_matches('_').to_string());
            f.push(i.to_string());
            f.push(csv_field(&p.unit));
            f.push(csv_field(&p.at));
            f.push(p.n.to_string());
            f.push(float(p.value));
            f.push(p.ci.map(|c| float(c.0)).unwrap_or_default());
            f.push(p.ci.map(|c| float(c.1)).unwrap_or_default());
            f.push(float(level));
            f.push(start.and_then(|c| c.pct).map(float).unwrap_or_default());
            f.push(start.map(|c| float(c.p)).unwrap_or_default());
            out.push_str(&f.join(","));
            out.push('\n');
        }
    }
    out
}

/// The median of a series' points (its one level, when it has no change).
fn median(s: &Series) -> f64 {
    let mut v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    v.sort_by(f64::total_cmp);
    crate::stats::quantile_sorted(&v, 0.5)
}
