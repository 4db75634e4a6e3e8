//! The CSV format: a tidy table for spreadsheets and data frames, one line per cell with a
//! header line, every number in base units and parseable as a float (empty where there is
//! none), and a line (n 0) for each cell of a column whose every run was left out; each
//! line carries its column's facts that differ from the other columns' (`fact_KEY`); where a
//! cell has values of runs on a busy machine, a `busy` column counts them in every line, and
//! where one has values of runs on a drifting clock, a `drift` column likewise; with
//! `--baseline` each cell's ratio, p-value and verdict, and the overall lines.

use crate::matrix::{Cell, Delta, Row, Table};

/// A text field (a row name, a label level, a tag) as a spreadsheet must not run it, with its
/// control characters as escapes ([`crate::escape::visible`]): one that
/// starts with `=`, `+`, `-`, `@`, a tab or a carriage return (what Excel, LibreOffice and
/// Google Sheets take for a formula) gets a leading `'`, as OWASP advises against CSV
/// injection; then RFC 4180 quoting: a field with a comma, a quote or a line break is
/// quoted, with its quotes doubled. Numbers never pass through here.
pub fn csv_field(s: &str) -> String {
    let s = crate::escape::visible(s);
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.into_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A number as a float parser reads it: shortest round trip, an exponent outside 1e-5..1e16.
pub fn float(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(float).unwrap_or_default()
}

/// The header's column keys and, per column of the table, their values: the label's levels
/// (`label`, or `label_1`, `label_2`... down to the deepest label's, when it has levels) and
/// every other column key, then `fact_KEY` for each environment fact that differs between
/// the columns. A column with a shallower label has its missing levels empty.
fn column_keys(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let columns: Vec<&crate::matrix::Column> = t.columns.iter().chain(&t.unfinished).collect();
    let levels = t
        .level_keys
        .iter()
        .filter(|k| k.starts_with("label."))
        .count();
    let keys: Vec<String> = if columns.is_empty() {
        Vec::new()
    } else {
        t.level_keys
            .iter()
            .map(|k| match k.as_str() {
                "label.1" if levels <= 1 => "label".to_string(),
                _ => k.clone(),
            })
            .collect()
    };
    let vals = columns
        .iter()
        .enumerate()
        .map(|(j, c)| {
            let dims = keys.iter().map(|k| {
                let v = c.dims.iter().find(|(ck, _)| ck == k).map_or("", |(_, v)| v);
                crate::matrix::visible(v)
            });
            // Then the column's value of each fact that differs (empty where it does not say).
            let facts = t
                .facts
                .iter()
                .map(move |f| f.values.get(j).cloned().flatten().unwrap_or_default());
            dims.chain(facts).collect()
        })
        .collect();
    let mut header: Vec<String> = keys.iter().map(|k| k.replace('.', "_")).collect();
    header.extend(
        t.facts
            .iter()
            .map(|f| format!("fact_{}", f.key.replace('.', "_"))),
    );
    (header, vals)
}

pub(super) fn csv(t: &Table) -> String {
    let (keys, col_vals) = column_keys(t);
    let baseline = t.baseline.is_some();
    let mut head: Vec<String> = vec!["row".into()];
    head.extend(keys.iter().cloned());
    for k in ["unit", "n", "value", "ci_low", "ci_high", "excluded"] {
        head.push(k.into());
    }
    // `busy` only where a cell has values of a busy run, as `fact_KEY` only where facts
    // differ: records without load facts give the columns they always gave.
    let busy = t
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.busy > 0);
    if busy {
        head.push("busy".into());
    }
    let drift = t
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.drift > 0);
    if drift {
        head.push("drift".into());
    }
    let marks = Marks { busy, drift };
    if baseline {
        head.extend(["ratio".into(), "p_value".into(), "verdict".into()]);
    }
    let mut out = head
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in &t.rows {
        for (j, c) in r.cells.iter().enumerate() {
            let excluded = r.left_out.get(j).map_or(0, |l| l.values);
            if c.is_none() && excluded == 0 {
                continue;
            }
            let mut f = vec![csv_field(&r.name)];
            f.extend(col_vals[j].iter().map(|v| csv_field(v)));
            f.push(r.suffix.trim_start_matches('_').to_string());
            f.extend(cell_fields(c.as_deref(), excluded, marks));
            if baseline {
                f.extend(compare_fields(r, c.as_deref()));
            }
            out.push_str(&f.join(","));
            out.push('\n');
        }
        // A column whose every run was left out: a line per cell that left values out, so a
        // spreadsheet learns that the environment ran.
        for (k, l) in r.unfinished.iter().enumerate() {
            if l.values == 0 {
                continue;
            }
            let mut f = vec![csv_field(&r.name)];
            f.extend(col_vals[t.columns.len() + k].iter().map(|v| csv_field(v)));
            f.push(r.suffix.trim_start_matches('_').to_string());
            f.extend(cell_fields(None, l.values, marks));
            if baseline {
                f.extend(compare_fields(r, None));
            }
            out.push_str(&f.join(","));
            out.push('\n');
        }
    }
    overall_lines(t, &col_vals, marks, &mut out);
    out
}

/// Which of the optional count columns the table has: `busy` (values of runs on a busy
/// machine) and `drift` (values of runs on a drifting clock).
#[derive(Clone, Copy)]
struct Marks {
    busy: bool,
    drift: bool,
}

/// n, value, ci_low, ci_high, excluded and, where the table has those columns, the values of
/// runs on a busy machine and on a drifting clock.
fn cell_fields(c: Option<&Cell>, excluded: usize, marks: Marks) -> Vec<String> {
    let mut f = vec![
        c.map_or("0".into(), |c| c.n.to_string()),
        opt(c.map(|c| c.value)),
        opt(c.and_then(|c| c.ci).map(|ci| ci.0)),
        opt(c.and_then(|c| c.ci).map(|ci| ci.1)),
        excluded.to_string(),
    ];
    if marks.busy {
        f.push(c.map_or("0".into(), |c| c.busy.to_string()));
    }
    if marks.drift {
        f.push(c.map_or("0".into(), |c| c.drift.to_string()));
    }
    f
}

/// ratio, p_value and verdict against the row's baseline cell.
fn compare_fields(r: &Row, c: Option<&Cell>) -> Vec<String> {
    let Some(c) = c else {
        return vec![String::new(), String::new(), String::new()];
    };
    let ratio = match &c.delta {
        Some(Delta::Baseline) => Some(1.0),
        Some(_) => c.base.filter(|b| *b != 0.0).map(|b| c.value / b),
        None => None,
    };
    let p = match &c.delta {
        Some(Delta::Change { p, .. } | Delta::Diff { p, .. } | Delta::Same { p }) => Some(*p),
        _ => None,
    };
    vec![
        opt(ratio),
        opt(p),
        c.verdict(r.better)
            .map(|v| v.word().to_string())
            .unwrap_or_default(),
    ]
}

/// With `--baseline`: per column, the geometric mean of its ratios (above 1 is better) with
/// its interval, and the counts of rows better, worse and the same (`busy` and `drift` empty,
/// where the table has those columns).
fn overall_lines(t: &Table, col_vals: &[Vec<String>], marks: Marks, out: &mut String) {
    for (j, o) in t.overall.iter().enumerate() {
        let Some(o) = o else { continue };
        let cols: Vec<String> = col_vals[j].iter().map(|v| csv_field(v)).collect();
        let mut line = |row: &str, unit: &str, n: usize, value: f64, ci: Option<(f64, f64)>| {
            let mut f = vec![row.to_string()];
            f.extend(cols.iter().cloned());
            f.extend([
                unit.to_string(),
                n.to_string(),
                float(value),
                opt(ci.map(|c| c.0)),
                opt(ci.map(|c| c.1)),
                String::new(),
            ]);
            if marks.busy {
                f.push(String::new());
            }
            if marks.drift {
                f.push(String::new());
            }
            f.extend([
                if unit == "ratio" {
                    float(value)
                } else {
                    String::new()
                },
                String::new(),
                String::new(),
            ]);
            out.push_str(&f.join(","));
            out.push('\n');
        };
        line("overall: geometric mean", "ratio", o.rows, o.geomean, o.ci);
        line(
            "overall: rows better",
            "count",
            o.rows,
            o.better as f64,
            None,
        );
        line("overall: rows worse", "count", o.rows, o.worse as f64, None);
        line("overall: rows same", "count", o.rows, o.same as f64, None);
    }
}
