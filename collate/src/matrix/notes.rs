//! The notes under the matrix: what ± is, what the deltas are against and what `~` and `?`
//! mean, and which rows come from summaries rather than samples.

use super::table::{Delta, Row};
use super::{ALPHA, CONFIDENCE, Options};
use crate::stats;

/// The notes for `rows`; `any_ci` says whether a cell shows a confidence interval, `any_few`
/// whether a cell has too few values for the baseline comparison.
pub(super) fn notes(o: &Options, rows: &[Row], any_ci: bool, any_few: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(q) = o.stat.quantile()
        && o.show_ci
        && any_ci
    {
        let min = stats::ci_min_samples(q, CONFIDENCE);
        let what = if q == 0.5 {
            "median".to_string()
        } else {
            o.stat.name()
        };
        notes.push(format!(
            "± is the 95% confidence interval of the {what} (order statistics, binomial distribution); a cell shows it with at least {min} values."
        ));
    }
    if let Some(b) = &o.baseline {
        let mut n = format!(
            "Deltas are against {b}, where a Mann-Whitney U test finds a difference at p < {ALPHA}; ~ means no significant difference."
        );
        let any_diff = rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .any(|c| matches!(c.delta, Some(Delta::Diff { .. })));
        if any_diff {
            n.push_str(" Where the baseline is 0 a change is the difference in the row's unit (+3.0 ms), as no percentage of 0 exists.");
        }
        if any_few {
            n.push_str(" ? means too few values to tell: even values entirely apart could not reach p < 0.05 (4 against 4 can).");
        }
        notes.push(n);
    }
    let summary_rows: Vec<&str> = rows
        .iter()
        .filter(|r| r.source == "summaries")
        .map(|r| r.title.as_str())
        .collect();
    if !summary_rows.is_empty() && summary_rows.len() < rows.len() {
        notes.push(format!(
            "From summaries (one value per run): {}.",
            summary_rows.join("; ")
        ));
    } else if !summary_rows.is_empty() {
        notes.push("Every cell is over summaries (one value per run).".into());
    }
    notes
}
