//! collate's engine: reads every input into the collector, builds the matrix and writes it
//! in the chosen format to stdout, saying on stderr what it skipped or left out.

use crate::cli::Opts;
use crate::gather::{collect_spec, unknown_keys, why_empty};
use crate::{matrix, render};
use measure::{Exit, Failure};

/// Collates what `o` names and prints the matrix.
pub fn run(o: Opts) -> Result<Exit, Failure> {
    if o.times {
        return crate::times::run(&o.files, o.on_invalid, o.format, o.matrix.latest);
    }
    if o.history {
        return crate::history::run(&o);
    }
    let collector = collect_spec(o.spec.clone(), &o.files, o.on_invalid)?;
    unknown_keys(&collector)?;
    let table = matrix::build(&collector, &o.matrix)?;
    if table.rows.is_empty() || table.columns.is_empty() {
        return Err(Failure::new(
            Exit::MeasuredFailure,
            "empty matrix",
            why_empty(&collector),
        ));
    }
    render::print(&render::render(&table, o.format, o.transpose))
}
