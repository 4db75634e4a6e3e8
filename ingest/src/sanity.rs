//! A converted run passes as ok only with a figure: a headline that is missing (the source's
//! was negative, so it was left out) or zero (nothing moved, nothing ran) is no measurement,
//! and the run is partial with the reason, never a figure in the matrix.

use crate::model::{Converted, Kind};
use measure::{Exit, Status};

/// `c`, with an ok end that carries no figure above zero turned into a partial one.
pub fn checked(mut c: Converted) -> Converted {
    // Runs closed by their own summaries (hyperfine commands, fping hosts) carry their figures
    // there; `end` then only sets the exit.
    if c.records.iter().any(|r| matches!(r.kind, Kind::Ends(_))) {
        return c;
    }
    let end = &mut c.end;
    if end.status != Status::Ok {
        return c;
    }
    let Some(key) = end.headline.clone() else {
        return c;
    };
    let value = end.values.0.get(&key).and_then(serde_json::Value::as_f64);
    let why = match value {
        Some(v) if v > 0.0 => return c,
        Some(_) => format!("its {key} is 0: a run that measured nothing is no figure"),
        None => format!(
            "it has no {key} (a negative or missing figure is not carried over): no figure to show"
        ),
    };
    end.status = Status::Partial;
    end.error = Some(format!("{} output {why}", c.tool));
    end.headline = None;
    end.exit = Exit::MeasuredFailure;
    c
}
