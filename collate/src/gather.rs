//! Gathering a mode's records: every input read into a [`Collector`], with what was skipped
//! or left out said on stderr, and the reasons a matrix or a history came out empty. The
//! matrix, `--times` and `--history` all start here.

use crate::collect::{Collector, MetricChoice};
use crate::dims::Dim;
use crate::filter::Filter;
use crate::read;
use measure::{Exit, Failure};
use std::io::{IsTerminal, Write};

/// Reads every input (`files`; none is stdin) into a [`Collector`] grouped by `spec`, saying
/// on stderr what was skipped or left out; a failure when the inputs hold no sample or
/// summary at all.
pub(crate) fn collect_spec(
    spec: crate::collect::Spec,
    files: &[String],
    on_invalid: read::OnInvalid,
) -> Result<Collector, Failure> {
    if files.is_empty() && std::io::stdin().is_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "collate: reading JSON lines from the terminal (give FILEs or a pipe; Ctrl-D ends)"
        );
    }
    let mut collector = Collector::new(spec);
    let group_dims = collector.group_dims.clone();
    let report = read::read_all(files, on_invalid, &group_dims, |b| {
        collector.add_batch(b);
        Ok(())
    })?;
    let mut err = std::io::stderr();
    if report.skipped > 0 {
        let _ = writeln!(
            err,
            "collate: skipped {} invalid line{} of {} (--skip-invalid); first: {}",
            report.skipped,
            plural(report.skipped),
            report.lines,
            crate::escape::visible(&report.examples.join("; "))
        );
    }
    for w in report.repeats.warnings() {
        let _ = writeln!(err, "collate: {w}");
    }
    if collector.samples + collector.summaries == 0 {
        return Err(Failure::new(
            Exit::MeasuredFailure,
            "no records",
            format!(
                "{} line{} held no samples or summaries: give the JSON lines the benchmatrix tools write",
                report.lines,
                plural(report.lines)
            ),
        ));
    }
    if collector.failed_samples > 0 {
        let _ = writeln!(
            err,
            "collate: {} failed sample{} (with an error, no values) left out",
            collector.failed_samples,
            plural(collector.failed_samples)
        );
    }
    if collector.empty_samples > 0 {
        let _ = writeln!(
            err,
            "collate: {} sample{} without values (and without an error) left out: a sample carries its measurement in \"values\"",
            collector.empty_samples,
            plural(collector.empty_samples)
        );
    }
    Ok(collector)
}

/// A `--rows` or `--cols` key that no record has (a misspelt tag would name every row
/// ` (us)`) is a usage error.
pub(crate) fn unknown_keys(c: &Collector) -> Result<(), Failure> {
    for (flag, dims, vals) in [
        ("--rows", &c.spec.rows, &c.row_vals),
        ("--cols", &c.spec.cols, &c.col_vals),
    ] {
        for (i, d) in dims.iter().enumerate() {
            if vals.is_empty() || vals.iter().any(|v| !v[i].is_empty()) {
                continue;
            }
            let what = match d {
                Dim::Tag(t) => format!("a tag {t}"),
                d => format!("a value for {}", d.key()),
            };
            return Err(Failure::usage(format!(
                "{flag} {}: no record has {what}; the keys are name, label, label.N, host, tool, version, run, type, metric, unit and tag.KEY for a tag the records carry",
                d.key()
            )));
        }
    }
    Ok(())
}

/// `s` for a count other than one.
fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Why the matrix has no row or no column: the filter, `--metric`, or nothing to show.
pub(crate) fn why_empty(collector: &Collector) -> String {
    if collector.matched == 0 && collector.spec.filter != Filter::All {
        "no record matches --filter".to_string()
    } else if let MetricChoice::Keys(k) = &collector.spec.metrics {
        format!(
            "no values for --metric {}; the metrics are: {}",
            k.join(","),
            crate::escape::visible(&collector.metrics.list.join(", "))
        )
    } else if collector.runs.list.iter().any(|r| !r.complete()) {
        let n = collector.runs.list.iter().filter(|r| !r.complete()).count();
        format!(
            "every value is from a run that did not finish ({n} run{} with a summary not ok, or none); --include-partial counts them",
            if n == 1 { "" } else { "s" }
        )
    } else {
        "the records hold no values to show".to_string()
    }
}
