//! The JSON format: the matrix with every figure in base units, each cell's comparison and
//! runs, each column's facts that differ from the others', the notes and the overall line,
//! for programs.

use crate::matrix::{Better, Cell, Delta, Row, Table};
use serde_json::{Value, json};

fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn dims_obj(d: &[(String, String)]) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in d {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    Value::Object(m)
}

pub(super) fn json_doc(t: &Table) -> String {
    // Each column with the facts that differ between the columns: its value of each (null
    // where its records do not say).
    let columns: Vec<Value> = t
        .columns
        .iter()
        .enumerate()
        .map(|(j, c)| {
            let facts: serde_json::Map<String, Value> = t
                .facts
                .iter()
                .map(|f| (f.key.clone(), json!(f.values.get(j).cloned().flatten())))
                .collect();
            json!({"key": c.key, "levels": c.levels, "dims": dims_obj(&c.dims), "facts": facts})
        })
        .collect();
    let doc = json!({
        "stat": t.stat,
        "confidence": crate::matrix::CONFIDENCE,
        "alpha": crate::matrix::ALPHA,
        "baseline": t.baseline,
        "transposed": t.transposed,
        "levels": t.level_keys,
        "columns": columns,
        "rows": [],
        "notes": t.notes.iter().map(|n| n.full()).collect::<Vec<_>>(),
        "overall": t.overall.iter().map(|o| o.as_ref().map_or(Value::Null, |o| json!({
            "geomean": num(o.geomean),
            "ci_low": o.ci.map_or(Value::Null, |c| num(c.0)),
            "ci_high": o.ci.map_or(Value::Null, |c| num(c.1)),
            "rows": o.rows, "better": o.better, "worse": o.worse, "same": o.same,
        }))).collect::<Vec<_>>(),
    });
    let s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    // The rows are written one at a time into the place the empty list holds (each row's
    // tree lives only while it is written): a matrix of many columns is never one tree.
    let Some((head, tail)) = s.split_once(ROWS_SLOT) else {
        return s + "\n";
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(head);
    out.push_str("\n  \"rows\": [");
    for (i, r) in t.rows.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        let text = serde_json::to_string_pretty(&row_json(r)).unwrap_or_default();
        for (k, line) in text.lines().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
    }
    out.push_str(if t.rows.is_empty() { "]," } else { "\n  ]," });
    out.push_str(tail);
    out.push('\n');
    out
}

/// The line the empty rows list takes in the pretty document, at the top level.
const ROWS_SLOT: &str = "\n  \"rows\": [],";

/// One row: its dimensions, unit and cells.
fn row_json(r: &Row) -> Value {
    let cells: Vec<Value> = r
        .cells
        .iter()
        .map(|c| c.as_deref().map_or(Value::Null, |c| cell_json(c, r.better)))
        .collect();
    json!({
        "title": r.title,
        "dims": dims_obj(&r.dims),
        "metrics": r.metrics,
        "unit_suffix": r.suffix,
        "display_unit": r.scale.unit,
        "display_factor": num(r.scale.factor),
        "source": r.source,
        "better": r.better.word(),
        "stat": r.stat.name(),
        "cells": cells,
        "excluded": r.left_out.iter().map(|l| l.values).collect::<Vec<_>>(),
    })
}

/// One cell: n, value and CI in base units, its runs, how many of its values come from runs
/// that did not finish (`partial`), ran on a busy machine (`busy`) or on a drifting clock
/// (`drift`), its comparison with the baseline and the verdict that comparison gives in a
/// row where `better` holds.
fn cell_json(c: &Cell, better: Better) -> Value {
    let mut m = json!({
        "n": c.n,
        "runs": c.runs,
        "runs_differ": c.differ.as_ref().map_or(Value::Null, |d| json!({
            "p": num(d.p),
            "runs": d.runs.iter().map(|(id, n, m)| json!({"run": id, "n": n, "median": num(*m)})).collect::<Vec<_>>(),
        })),
        "partial": c.partial,
        "modes": c.modes.map_or(Value::Null, |m| json!({
            "low": num(m.low), "high": num(m.high), "n_low": m.n_low, "n_high": m.n_high,
        })),
        "busy": c.busy,
        "drift": c.drift,
        "value": num(c.value),
        "ci_low": c.ci.map_or(Value::Null, |(lo, _)| num(lo)),
        "ci_high": c.ci.map_or(Value::Null, |(_, hi)| num(hi)),
        "text": c.text,
    });
    if let Some(d) = &c.delta {
        let dv = match d {
            Delta::Baseline => json!({"baseline": true}),
            Delta::Change { pct, p } => {
                json!({"delta_pct": num(*pct), "p": num(*p), "significant": true})
            }
            Delta::Diff { diff, p } => {
                json!({"delta_pct": Value::Null, "delta": num(*diff), "p": num(*p), "significant": true})
            }
            Delta::Same { p } => {
                json!({"delta_pct": Value::Null, "p": num(*p), "significant": false})
            }
            Delta::TooFew { n, base_n } => {
                json!({"too_few": true, "n": n, "baseline_n": base_n})
            }
            Delta::NoBaseline => json!({"baseline_missing": true}),
        };
        m["compare"] = dv;
        if let Some(v) = c.verdict(better) {
            m["compare"]["verdict"] = json!(v.word());
        }
    }
    m
}
