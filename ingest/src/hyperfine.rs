//! hyperfine `--export-json` output: a sample per run (`wall_s`, with its exit code), the
//! command as the row name, and the summary hyperfine computed (mean, median, user, system).

use crate::input::Input;
use crate::json::whole;
use crate::model::{Converted, End, Kind, Out, bad, copy, number};
use measure::writer::Values;
use measure::{Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "hyperfine --export-json output";

pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let start = input.text.find('{').unwrap_or(0);
    let doc = whole(input, start, WHAT)?;
    let place = input.place(input.line_of(start));
    let results = doc
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(&place, format!("no \"results\" array: expected {WHAT}")))?;
    let mut records = Vec::new();
    let mut failed_runs = 0u64;
    for (i, r) in results.iter().enumerate() {
        failed_runs += runs(r, i, &place, &mut records)?;
    }
    let (name, end) = summary(results, records.len() as u64, failed_runs);
    Ok(Converted {
        tool: "hyperfine",
        version: "unknown".into(),
        name,
        prefix: String::new(),
        begin: Map::new(),
        begin_at: None,
        records,
        end,
    })
}

/// The samples of result `i` (one command): one per run. Returns how many runs failed.
fn runs(r: &Value, i: usize, place: &str, records: &mut Vec<Out>) -> Result<u64, Failure> {
    let command = r.get("command").and_then(Value::as_str).ok_or_else(|| {
        bad(
            place,
            format!("results[{i}] has no \"command\": expected {WHAT}"),
        )
    })?;
    let times = r.get("times").and_then(Value::as_array).ok_or_else(|| {
        bad(
            place,
            format!("results[{i}] ({command}) has no \"times\": expected {WHAT}"),
        )
    })?;
    let codes = r.get("exit_codes").and_then(Value::as_array);
    let mut failed = 0;
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
        info.insert("command".into(), json!(command));
        info.insert("run".into(), json!(k + 1));
        if let Some(c) = codes.and_then(|c| c.get(k)) {
            if c.as_i64().unwrap_or(0) != 0 {
                failed += 1;
            }
            info.insert("exit".into(), c.clone());
        }
        if let Some(p) = r.get("parameters") {
            info.insert("parameters".into(), p.clone());
        }
        records.push(Out::new(Kind::Sample, values, info).series(command));
    }
    Ok(failed)
}

/// The row name and the summary: hyperfine's own statistics of a single command as they
/// are; with several commands the count of runs (each command's cell comes from its samples).
fn summary(results: &[Value], runs: u64, failed_runs: u64) -> (String, End) {
    let mut values = Values::new().with_count("runs_count", runs);
    let mut info = Map::new();
    let name = match results {
        [r] => {
            for (from, to) in [
                ("mean", "wall_mean_s"),
                ("stddev", "wall_stddev_s"),
                ("median", "wall_median_s"),
                ("min", "wall_min_s"),
                ("max", "wall_max_s"),
                ("user", "user_mean_s"),
                ("system", "sys_mean_s"),
            ] {
                copy(&mut values, to, r.get(from));
            }
            let c = r.get("command").and_then(Value::as_str).unwrap_or("");
            info.insert("command".into(), json!(c));
            c.to_string()
        }
        _ => {
            let commands: Vec<&Value> = results.iter().filter_map(|r| r.get("command")).collect();
            info.insert("commands".into(), json!(commands));
            "hyperfine".to_string()
        }
    };
    let headline = if values.0.contains_key("wall_median_s") {
        "wall_median_s"
    } else {
        "runs_count"
    };
    if failed_runs > 0 {
        values.set_count("failed_runs_count", failed_runs);
        let warning = format!("{failed_runs} run(s) exited non-zero (hyperfine -i)");
        info.insert("warning".into(), json!(warning));
    }
    let end = if runs == 0 {
        End::not_ok(Status::Failed, "no run in the results".into(), values, info)
    } else {
        End::ok(headline, values, info)
    };
    (name, end)
}
