//! hyperfine `--export-json` output: each command (each parameter value of a scan) a run of
//! its own, named by the command: a sample per timed run (`wall_s`, with its exit code), and
//! the summary hyperfine computed for it (mean, median, stddev, min, max, user, system).

use crate::input::Input;
use crate::json::whole;
use crate::model::{Converted, End, Kind, Out, bad, copy, number};
use measure::parts::Values;
use measure::{Exit, Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "hyperfine --export-json output";

/// hyperfine's figures of one command and the keys they become (seconds).
const FIGURES: [(&str, &str); 7] = [
    ("mean", "wall_mean_s"),
    ("stddev", "wall_stddev_s"),
    ("median", "wall_median_s"),
    ("min", "wall_min_s"),
    ("max", "wall_max_s"),
    ("user", "user_mean_s"),
    ("system", "sys_mean_s"),
];

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let start = input.text.find('{').unwrap_or(0);
    let doc = whole(input, start, WHAT)?;
    let place = input.place(input.line_of(start));
    let results = doc
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(&place, format!("no \"results\" array: expected {WHAT}")))?;
    let names = rows(results, &place)?;
    let mut records = Vec::new();
    let mut ends = Vec::new();
    for (i, (r, (name, repeated))) in results.iter().zip(&names).enumerate() {
        let mut end = command(r, i, name, &place, &mut records)?;
        if let Some(j) = repeated {
            end.warnings.push(format!(
                "results[{i}] repeats the command of results[{j}]: a row of its own, {name:?}, \
                 not pooled with it"
            ));
        }
        ends.push(end.clone());
        records.push(Out::new(Kind::Ends(Box::new(end)), Values::new(), Map::new()).series(name));
    }
    let name = match names.as_slice() {
        [(one, _)] => one.clone(),
        _ => "hyperfine".to_string(),
    };
    Ok(Converted {
        tool: "hyperfine".into(),
        version: "unknown".into(),
        name,
        prefix: String::new(),
        begin: Map::new(),
        begin_at: None,
        records,
        end: overall(&ends),
    })
}

/// The row name of each result: its command (hyperfine's `--command-name` when given), with
/// the parameters whose value it does not show (`build (threads = 1)`), and ` #2`, ` #3`
/// for a repeat of an earlier row, with the index of the first.
fn rows(results: &[Value], place: &str) -> Result<Vec<(String, Option<usize>)>, Failure> {
    let mut names: Vec<(String, Option<usize>)> = Vec::new();
    let mut bases: Vec<String> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let command = r.get("command").and_then(Value::as_str).ok_or_else(|| {
            bad(
                place,
                format!("results[{i}] has no \"command\": expected {WHAT}"),
            )
        })?;
        let unshown: Vec<String> = match r.get("parameters") {
            Some(Value::Object(p)) => p
                .iter()
                .filter_map(|(k, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    (!command.contains(&v)).then(|| format!("{k} = {v}"))
                })
                .collect(),
            _ => Vec::new(),
        };
        let name = match unshown.is_empty() {
            true => command.to_string(),
            false => format!("{command} ({})", unshown.join(", ")),
        };
        let first = bases.iter().position(|b| *b == name);
        let mut row = name.clone();
        if first.is_some() {
            let mut n = bases.iter().filter(|b| **b == name).count() + 1;
            row = format!("{name} #{n}");
            while names.iter().any(|(r, _)| *r == row) {
                n += 1;
                row = format!("{name} #{n}");
            }
        }
        bases.push(name);
        names.push((row, first));
    }
    Ok(names)
}

/// The samples of result `i` (one command, named `name`), one per timed run, and its
/// summary.
fn command(
    r: &Value,
    i: usize,
    name: &str,
    place: &str,
    records: &mut Vec<Out>,
) -> Result<End, Failure> {
    let cmd = r.get("command").cloned().unwrap_or(Value::Null);
    let params = r.get("parameters").filter(|p| p.is_object());
    let times: &[Value] = r.get("times").and_then(Value::as_array).map_or(&[], |t| t);
    let codes = r.get("exit_codes").and_then(Value::as_array);
    let mut failed = 0u64;
    for (k, t) in times.iter().enumerate() {
        if number(Some(t)).is_none() {
            return Err(bad(
                place,
                format!("results[{i}].times[{k}] is {t}, not a number of seconds"),
            ));
        }
        let mut values = Values::new();
        copy(&mut values, "wall_s", Some(t));
        let mut info = Map::new();
        info.insert("command".into(), cmd.clone());
        info.insert("run".into(), json!(k + 1));
        if let Some(c) = codes.and_then(|c| c.get(k)) {
            // A null exit code is a command killed by a signal: failed as well.
            if c.as_i64() != Some(0) {
                failed += 1;
            }
            info.insert("exit".into(), c.clone());
        }
        if let Some(p) = params {
            info.insert("parameters".into(), p.clone());
        }
        records.push(Out::new(Kind::Sample, values, info).series(name));
    }
    let mut info = Map::new();
    info.insert("command".into(), cmd);
    if let Some(p) = params {
        info.insert("parameters".into(), p.clone());
    }
    let mut end = summary(r, times.len() as u64, failed, info);
    if failed > 0 {
        end.warnings.push(format!(
            "results[{i}] ({name}): {failed} run(s) exited non-zero or were killed (hyperfine -i)"
        ));
    }
    if times.is_empty() {
        let how = match r.get("times") {
            Some(_) => "\"times\": []",
            None => "no \"times\"",
        };
        end.warnings.push(format!(
            "results[{i}] ({name}) has {how}: no samples, only hyperfine's figures"
        ));
    }
    Ok(end)
}

/// One command's summary: hyperfine's own figures as they are, the headline its median wall
/// time (its mean where an export has no median), and how many runs there were and failed.
fn summary(r: &Value, runs: u64, failed: u64, info: Map<String, Value>) -> End {
    let mut values = Values::new().with_count("runs_count", runs);
    for (from, to) in FIGURES {
        copy(&mut values, to, r.get(from));
    }
    if failed > 0 {
        values.set_count("failed_runs_count", failed);
    }
    let headline = ["wall_median_s", "wall_mean_s"]
        .into_iter()
        .find(|h| values.0.contains_key(*h));
    match headline {
        Some(h) => End::ok(h, values, info),
        None => {
            let why = "neither a median nor a mean wall time".to_string();
            End::not_ok(Status::Failed, why, values, info)
        }
    }
}

/// How ingest exits: 1 with the reasons when any command's summary is not ok, else 0.
fn overall(ends: &[End]) -> End {
    let errors: Vec<String> = ends.iter().filter_map(|e| e.error.clone()).collect();
    let mut end = match ends.first() {
        Some(e) if errors.is_empty() => e.clone(),
        Some(_) => End::not_ok(Status::Failed, errors.join("; "), Values::new(), Map::new()),
        None => End::not_ok(
            Status::Failed,
            "no command in the results".into(),
            Values::new(),
            Map::new(),
        ),
    };
    if errors.is_empty() && !ends.is_empty() {
        end.exit = Exit::Ok;
    }
    end
}
