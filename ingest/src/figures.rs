//! Figures as text, for a tool whose output ingest does not know (a script's, dd's, perf
//! bench's, extracted with awk): each line a sample of `KEY=VALUE` pairs, values in the key's
//! base unit (`throughput_bytes_per_s=268435456 elapsed_s=2.1`), `#` comments and blank
//! lines skipped. The summary holds the median of each key over the samples; its headline is
//! the first line's first key. The tool and its version are named on the command line.

use crate::input::Input;
use crate::model::{Converted, End, Kind, Out, bad, clip};
use measure::Failure;
use measure::parts::Values;
use serde_json::{Map, Value, json};

const WHAT: &str = "KEY=VALUE pairs, one sample a line, each KEY with its unit suffix \
                    (wall_s, throughput_bytes_per_s) and each VALUE a number >= 0 in that unit";

/// The source tool as the command line names it: `--tool NAME`, `--tool-version V`.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub tool: String,
    pub version: Option<String>,
}

pub fn convert(input: &Input, source: &Source) -> Result<Converted, Failure> {
    let mut records = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for (i, raw) in input.text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let place = input.place(i + 1);
        let values = sample(line, &place)?;
        for k in values.0.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        records.push(Out::new(Kind::Sample, values, Map::new()));
    }
    let Some(headline) = first_key(&input.text) else {
        return Err(bad(&input.place(1), format!("no figures: expected {WHAT}")));
    };
    let mut values = Values::new();
    for k in &keys {
        let xs: Vec<f64> = records
            .iter()
            .filter_map(|r| r.values.0.get(k).and_then(Value::as_f64))
            .collect();
        if let Some(m) = measure::stats::median(&xs) {
            values.set(k, m);
        }
    }
    let info = json!({ "samples": records.len() });
    let end = End::ok(&headline, values, measure::parts::info(info));
    Ok(Converted {
        tool: source.tool.clone(),
        version: source.version.clone().unwrap_or_else(|| "unknown".into()),
        name: source.tool.clone(),
        prefix: String::new(),
        begin: Map::new(),
        begin_at: None,
        records,
        end,
    })
}

/// One line's pairs, each number carried over as written.
fn sample(line: &str, place: &str) -> Result<Values, Failure> {
    let mut values = Values::new();
    for pair in line.split_whitespace() {
        let Some((key, text)) = pair.split_once('=') else {
            return Err(bad(
                place,
                format!("{:?} is not KEY=VALUE: expected {WHAT}", clip(pair)),
            ));
        };
        if !measure::record::has_unit_suffix(key) {
            return Err(bad(
                place,
                format!("{key} has no unit suffix (_s, _bytes, _per_s...): expected {WHAT}"),
            ));
        }
        let number = match serde_json::from_str::<Value>(text) {
            Ok(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= 0.0) => n,
            _ => return Err(bad(place, format!("{key}={text}: not a number >= 0"))),
        };
        if values
            .0
            .insert(key.to_string(), Value::Number(number))
            .is_some()
        {
            return Err(bad(
                place,
                format!("{key} twice on one line: a sample has each key once"),
            ));
        }
    }
    Ok(values)
}

/// The first key of the first line with figures.
fn first_key(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|p| p.split_once('='))
        .map(|(k, _)| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> Input {
        Input {
            name: "figs".into(),
            text: text.into(),
        }
    }

    fn source() -> Source {
        Source {
            tool: "dd".into(),
            version: Some("9.1".into()),
        }
    }

    #[test]
    fn each_line_is_a_sample_and_the_summary_their_medians() {
        let c = convert(
            &input("# dd's rates\nthroughput_bytes_per_s=300 elapsed_s=1.5\n\nthroughput_bytes_per_s=100\nthroughput_bytes_per_s=200\n"),
            &source(),
        )
        .unwrap();
        assert_eq!((c.tool.as_str(), c.version.as_str()), ("dd", "9.1"));
        assert_eq!(c.records.len(), 3);
        assert_eq!(c.records[0].values.0["elapsed_s"], json!(1.5));
        assert_eq!(c.end.headline.as_deref(), Some("throughput_bytes_per_s"));
        assert_eq!(c.end.values.0["throughput_bytes_per_s"], json!(200.0));
        assert_eq!(c.end.values.0["elapsed_s"], json!(1.5));
    }

    #[test]
    fn bad_lines_are_named_with_their_place() {
        for (text, says) in [
            ("wall_s=1\nwall 2\n", "figs:2: \"wall\" is not KEY=VALUE"),
            ("wall=1\n", "figs:1: wall has no unit suffix"),
            ("wall_s=-1\n", "figs:1: wall_s=-1: not a number >= 0"),
            ("wall_s=fast\n", "figs:1: wall_s=fast: not a number"),
            ("wall_s=1 wall_s=2\n", "figs:1: wall_s twice on one line"),
            ("# nothing\n\n", "figs:1: no figures"),
        ] {
            let e = convert(&input(text), &source()).unwrap_err();
            let m = e.message.unwrap_or_default();
            assert!(m.starts_with(says), "{text:?}: {m}");
        }
    }
}
