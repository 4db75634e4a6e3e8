//! collate's command line: the clap `command()` (the one source for --help, the man page and
//! the completions) and [`Opts`], the checked options it gives.

use crate::collect::{MetricChoice, Spec};
use crate::dims::Dim;
use crate::filter::Filter;
use crate::matrix::Options;
use crate::read::OnInvalid;
use crate::render::Format;
use crate::stats::Stat;
use clap::{Arg, ArgAction, ArgMatches, Command};
use measure::Failure;

const LONG_ABOUT: &str = "\
Reads benchmatrix JSON lines (from FILEs, or stdin, or -) written by any mix of tools and
hosts, and prints the comparison matrix: one row per thing measured (the record's name and
its headline metric), one column per environment (the label, whose / levels become stacked
header rows with merged cells), each cell the median of the samples that fall in it (or of
the summaries, for a metric that only summaries carry), in a unit chosen per row. A
headline that aggregates a per-sample metric (wall_median_s over the runs' wall_s,
rtt_mean_s over the probes' rtt_s) is shown from those samples, so that every run counts.

Every line is checked strictly (measure's reader): a line that is not JSON, not a record,
of an unknown schema or with a key twice in one object (which of the two would count?)
stops collate with FILE:LINE: what is wrong, and exit 2, because a
dropped line would silently move a median; --skip-invalid skips such lines, counts them and
says so on stderr. Blank lines are skipped. A record read twice (the same run, type and
seq, host, label and values: collate f f, cat f f | collate) counts once, with a warning
naming both places; a different record under one (run, type, seq), such as another
environment's that reused a run id, is kept as well (another environment's as a run of its
own, RUN/2), with a warning naming both places. The
input is read once, streaming; memory holds the cells' values and a few distinct values of
each column's environment facts, nothing else of begin and interval lines. A sample without values (nor an error) is left out with a warning; a
--rows or --cols key that no record has is an error.

Statistics follow benchstat: ± is the 95% confidence interval of the median from order
statistics (shown from 6 values on); a row whose headline names the mean (samples that are
equal-time slices of a rate, as fsmeta's) shows the mean, ± a 95% bootstrap interval, unless
--stat asks for another statistic; --baseline compares every cell with the baseline
column of its row by a Mann-Whitney U test and shows the change of the statistic (+20%,
-3.1%) where p < 0.05, ~ where the difference is not significant, and ? where there are too
few values to tell; against a baseline of 0 a significant change is the difference in the
row's unit (+3.0 ms, +0.5%). Each row says which way is better, from its unit (times,
sizes, counts and ratios lower: ↓; rates higher: ↑), and a significant change reads better
or worse (coloured in html and svg). With --baseline an overall line gives per column the
geometric mean of its direction-aware ratios to the baseline (above 1 is better), a 95%
bootstrap interval (fixed seed: the same input gives the same interval) and the rows
better/worse/same. Missing cells show as -, never as 0.

Only runs that finished count: a run whose summary status is not ok (partial, failed), or
that has no summary at all (a killed tool), stays out of every cell, and the note under the
matrix says how many values of which runs and why; rows and columns keep the order of the
first value that counts. --include-partial puts them in, marked *. A cell that pools several
runs shows ×N, where a run is a suite invocation (the records' invocation field: every tool
run of one ./benchmatrix) or, without one, one tool run; where its runs of at least 3 values differ from each other (Kruskal-Wallis, p
< 0.05: a drifting machine, not a spread) it shows ×N! and the note names the runs;
--latest keeps each cell's newest run. A cell whose values fall in two modes apart (sorted, on
a log scale when positive, the widest gap leaving at least 3 values and a tenth on each side
is over twice either cluster's range) shows ‖, and the note names its two modes: its median
is neither's, as a pipe round trip's is when its processes share a CPU in some batches only.

A cell with values of runs on a busy machine shows † and the note names those runs and why:
a run is busy when its 1-minute load average or its tasks runnable besides the tool (at begin
or at the end) exceed the CPU count, or its steal exceeds 5% of the CPUs' time (the load
facts every tool's begin and summary carry). Records without those facts mark nothing.
A cell with values of runs on a drifting clock shows ‡ and the note names those runs and
their ratio: a guest's begin gives the ratio of its clock to its host's among the facts a
wrapper gives (given.guest_clock_ratio, measured by fleet/local-envs's guests), and a
ratio more than 2% from 1 means the run's times and rates are off by as much.

Under the header, the facts that differ between the columns explain them: the environment
facts of the begin records (virtualization, the cgroup limits, namespaces, clocksource,
kernel, CPU, mitigations, the file system and block stack of a disk target) that at least
two columns name with different values, and only those; a column whose runs saw several
values shows them joined by |. When a column had a busy run, a load line follows: per column
busy or quiet, its CPUs, and the highest load average, runnable tasks and steal of its runs
(the load of quiet runs varies from run to run and explains nothing, so it shows no line). Text, Markdown and DokuWiki show them as rows above the
measurements, html as a table of its own with each cell that is not the baseline's (else
the first column's) marked, json as each column's facts, csv as fact_KEY columns, svg and
a transposed matrix as a note.

-f csv is tidy: a header line, then one line per cell (row, label or label_1... down to the
deepest label's level, the other column keys, unit in base units, n, value, ci_low, ci_high,
excluded; busy, the values of runs on a busy machine, where a cell has any; drift, the
values of runs on a drifting clock, where a cell has any; with --baseline
ratio, p_value, verdict), every number a float; a text field a
spreadsheet would take for a formula (starting with =, +, -, @, a tab or a carriage return)
starts with ' instead. -f html is one self-contained page: the matrix, then a chart per row
(a bar to each cell's statistic, its CI as a whisker, every value as a dot, the baseline's CI \
shaded); -f svg is those charts. Control characters and non-characters in labels, names,
hosts, tags, facts and errors show escaped (\\n, \\x1b, \\u{fffe}); values beyond 1e15 or below 1e-9 show with an exponent.

--history prints, instead of the matrix, each row of each column (a series: one per row and
label, or per --cols value) as its runs in order of time: a run as above (a suite invocation,
or a tool run by hand), placed at its records' first time, its point the run's statistic
(--stat) with its 95% CI. The runs where a row's level shifted are found by e-divisive means
(Matteson and James 2014, as Hunter and Apache Otava do): split the series where the energy
distance between its two sides is largest, keep the split where a permutation test (exact
up to 12 runs, else drawn from a fixed seed: the same input gives the same changes) gives
p < --change-alpha (0.01) with at least --change-min-runs (3) runs a side, and search both
sides again. It assumes no distribution (no normality) and finds several changes; alpha is
the chance that a series without a shift shows one. It sees each run's statistic, not the
spread within runs, no change closer to either end than the smallest segment, and none in a
series shorter than 10 runs at the defaults; a slow drift shows as a staircase of changes. Each change lists the environment facts
that differ between the runs before and after it. -f text draws a sparkline per series
with ^ under each change, html and svg a line chart, json the series with points, CIs and
changes, csv a line per row, label and run; --filter, --metric, --stat, --rows, --cols and
--include-partial apply.

Keys for --rows, --cols and --filter: name, label, label.N (a level of the label, from 1),
host, tool, version, run, type, metric (the key in values), unit, tag.KEY (or a bare KEY).

Exit status: 0 matrix printed; 1 no samples or summaries (or none that match); 2 bad input
or usage.";

const AFTER_HELP: &str = "\
EXAMPLES
  Collate what every environment wrote (instead of typing the wiki table by hand):
    collate results/*.jsonl
  The DokuWiki table for the wiki page, header levels merged with ^^:
    collate -f dokuwiki results/*.jsonl > matrix.txt
  Compare every environment with bare metal (Mann-Whitney U, alpha 0.05):
    collate --baseline bare/xfs/disc results/*.jsonl
  Compare by a tag instead of the label (benchstat's -col):
    collate --cols tag.disk --baseline disk=lvm results/*.jsonl
  Only the paravirtualized columns, the 99th percentile, every metric:
    collate --filter 'label:para/*' --stat p99 --metric all results/*.jsonl
  Environments as rows (transposed), as Markdown:
    collate --transpose -f markdown results/*.jsonl
  A tidy CSV for a spreadsheet, and the HTML report with a chart per row:
    collate -f csv --baseline bare/xfs/disc results/*.jsonl > matrix.csv
    collate -f html --baseline bare/xfs/disc results/*.jsonl > report.html
  Only each cell's newest run, runs that did not finish included (marked *):
    collate --latest --include-partial results/*.jsonl
  Pipe straight from a tool:
    pingrt -c 100 10.0.0.1 | collate -f markdown
  How long each step of the newest ./benchmatrix run took, and its share of the run:
    collate --times --latest results/*.jsonl
  Each label's runs in order of time, with the runs where a row's level shifted:
    collate --history results/*.jsonl
    collate --history -f html results/*.jsonl > history.html";

/// The command line (the one source for --help and the man page).
pub fn command() -> Command {
    Command::new("collate")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Collate benchmatrix JSON lines into a comparison matrix with statistics")
        .long_about(LONG_ABOUT)
        .after_help(AFTER_HELP)
        .arg(
            Arg::new("files")
                .value_name("FILE")
                .num_args(0..)
                .action(ArgAction::Append)
                .help("JSON lines files; - or none reads stdin"),
        )
        .arg(
            Arg::new("format")
                .short('f')
                .long("format")
                .value_name("FORMAT")
                .default_value("text")
                .value_parser(Format::NAMES)
                .help("Output format"),
        )
        .arg(
            Arg::new("metric")
                .long("metric")
                .value_name("KEY[,KEY...]|all")
                .help("Metrics to show (keys in values, e.g. rtt_s); default: each measurement's headline"),
        )
        .arg(
            Arg::new("rows")
                .long("rows")
                .value_name("KEYS")
                .default_value("name,metric")
                .help("What makes a row (comma-separated keys)"),
        )
        .arg(
            Arg::new("cols")
                .long("cols")
                .value_name("KEYS")
                .default_value("label")
                .help("What makes a column (comma-separated keys; the label stacks its / levels)"),
        )
        .arg(
            Arg::new("filter")
                .long("filter")
                .value_name("EXPR")
                .help("Only records that match, e.g. 'label:para/* -host:dom0' (benchstat's syntax)"),
        )
        .arg(
            Arg::new("columns")
                .long("columns")
                .value_name("COLUMN,...")
                .action(ArgAction::Append)
                .help("Show these columns (labels), in this order"),
        )
        .arg(
            Arg::new("transpose")
                .long("transpose")
                .action(ArgAction::SetTrue)
                .help("Swap rows and columns (text, dokuwiki, markdown, html, json)"),
        )
        .arg(
            Arg::new("stat")
                .long("stat")
                .value_name("STAT")
                .default_value("median")
                .help("Cell statistic: median, mean, min, max or pNN (p90, p99.9)"),
        )
        .arg(
            Arg::new("baseline")
                .long("baseline")
                .value_name("COLUMN|KEY=VALUE")
                .help("Compare each cell with this column (or, per column, the one where KEY is VALUE)"),
        )
        .arg(
            Arg::new("no-ci")
                .long("no-ci")
                .action(ArgAction::SetTrue)
                .help("Do not show the ± confidence interval"),
        )
        .arg(
            Arg::new("include-partial")
                .long("include-partial")
                .action(ArgAction::SetTrue)
                .help("Count the values of runs that did not finish (summary not ok, or none), marked *"),
        )
        .arg(
            Arg::new("latest")
                .long("latest")
                .action(ArgAction::SetTrue)
                .help("Keep only each cell's newest run (by the records' time)"),
        )
        .arg(
            Arg::new("verbose")
                .long("verbose")
                .action(ArgAction::SetTrue)
                .help("Under the text matrix, each note's detail too: which runs were left out and why, which runs differ, which rows a column's newest run lacks (html shows it folded, the other formats always); and each fact whole (the text matrix cuts one over 32 characters with …)"),
        )
        .arg(
            Arg::new("times")
                .long("times")
                .action(ArgAction::SetTrue)
                .help("Instead of the matrix, how long each measurement took in each suite run (its records' first time to its last) and its share of the run, then the time between the tools (the run less the union of the spans, never negative) and, where spans overlap, the seconds covered by more than one; -f text or csv (each line also gives its run's run_seconds, between_seconds, between_share and overlap_seconds), --latest for each label's newest run"),
        )
        .arg(
            Arg::new("history")
                .long("history")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["baseline", "latest", "transpose", "columns", "times"])
                .help("Instead of the matrix, each row of each label as its runs in order of time (a point per run: its statistic and 95% CI), with the runs where the level shifted (e-divisive means, a permutation test) and the facts that differ around each; -f text (sparklines), html or svg (a chart per row and label), json or csv; --filter, --metric, --stat, --rows, --cols (what a series is, default label) and --include-partial apply"),
        )
        .arg(
            Arg::new("change-alpha")
                .long("change-alpha")
                .value_name("P")
                .requires("history")
                .help("With --history: keep a change where its permutation p-value is below P (default 0.01)"),
        )
        .arg(
            Arg::new("change-min-runs")
                .long("change-min-runs")
                .value_name("N")
                .requires("history")
                .help("With --history: the fewest runs on each side of a change (default 3, at least 2)"),
        )
        .arg(
            Arg::new("skip-invalid")
                .long("skip-invalid")
                .action(ArgAction::SetTrue)
                .help("Skip lines that are not valid records (counted on stderr) instead of stopping"),
        )
}

/// What the command line asks for, checked.
pub struct Opts {
    pub format: Format,
    /// What to group by, filter and show.
    pub spec: Spec,
    pub matrix: Options,
    /// The inputs; none means stdin.
    pub files: Vec<String>,
    pub on_invalid: OnInvalid,
    pub transpose: bool,
    /// `--times`: the time each measurement took, not the matrix.
    pub times: bool,
    /// `--history`: each row of each label as a series of runs, not the matrix.
    pub history: bool,
    /// How `--history` looks for changes.
    pub change: crate::changepoint::Params,
}

impl Opts {
    /// The options from parsed arguments; a usage failure for values that do not fit.
    pub fn from_matches(m: &ArgMatches) -> Result<Opts, Failure> {
        let get = |k: &str| m.get_one::<String>(k).map(String::as_str);
        let format = get("format")
            .and_then(Format::parse)
            .ok_or_else(|| Failure::usage("--format: unknown format"))?;
        let rows = Dim::parse_list(get("rows").unwrap_or("name,metric"), "--rows")
            .map_err(Failure::usage)?;
        let cols =
            Dim::parse_list(get("cols").unwrap_or("label"), "--cols").map_err(Failure::usage)?;
        if let Some(d) = rows.iter().find(|d| cols.contains(d)) {
            return Err(Failure::usage(format!(
                "{} is in both --rows and --cols: a key goes in one of them",
                d.key()
            )));
        }
        if m.get_flag("transpose") && matches!(format, Format::Svg | Format::Csv) {
            return Err(Failure::usage(format!(
                "--transpose with -f {}: {}; leave --transpose out, or swap --rows and --cols",
                get("format").unwrap_or(""),
                if format == Format::Svg {
                    "the chart draws a panel per row and a bar per column, and a transposed row would mix units"
                } else {
                    "the CSV is tidy, one line per cell, the same either way"
                }
            )));
        }
        let filter = Filter::parse(get("filter").unwrap_or("")).map_err(Failure::usage)?;
        let metrics = metric_choice(get("metric"))?;
        let stat = Stat::parse(get("stat").unwrap_or("median")).map_err(Failure::usage)?;
        let columns: Option<Vec<String>> = m.get_many::<String>("columns").map(|v| {
            v.flat_map(|s| s.split(','))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        Ok(Opts {
            format,
            spec: Spec {
                rows,
                cols,
                filter,
                metrics,
            },
            matrix: Options {
                stat,
                baseline: get("baseline").map(str::to_string),
                columns,
                show_ci: !m.get_flag("no-ci"),
                include_partial: m.get_flag("include-partial"),
                latest: m.get_flag("latest"),
                verbose: m.get_flag("verbose"),
            },
            files: m
                .get_many::<String>("files")
                .map(|v| v.cloned().collect())
                .unwrap_or_default(),
            on_invalid: if m.get_flag("skip-invalid") {
                OnInvalid::Skip
            } else {
                OnInvalid::Fail
            },
            transpose: m.get_flag("transpose"),
            times: m.get_flag("times"),
            history: m.get_flag("history"),
            change: change_params(get("change-alpha"), get("change-min-runs"))?,
        })
    }
}

/// `--change-alpha` (in (0, 0.5]) and `--change-min-runs` (at least 2), else the defaults.
fn change_params(
    alpha: Option<&str>,
    min: Option<&str>,
) -> Result<crate::changepoint::Params, Failure> {
    let mut p = crate::changepoint::Params::default();
    if let Some(a) = alpha {
        p.alpha = a
            .parse::<f64>()
            .ok()
            .filter(|a| *a > 0.0 && *a <= 0.5)
            .ok_or_else(|| {
                Failure::usage(format!(
                    "--change-alpha {a}: a significance level above 0 and at most 0.5, e.g. 0.01"
                ))
            })?;
    }
    if let Some(n) = min {
        p.min_size = n.parse::<usize>().ok().filter(|n| *n >= 2).ok_or_else(|| {
            Failure::usage(format!(
                "--change-min-runs {n}: a whole number of runs, at least 2"
            ))
        })?;
    }
    Ok(p)
}

/// `--metric`: absent is the headline rule, `all` every metric, else a list of keys that
/// each carry a unit suffix.
fn metric_choice(arg: Option<&str>) -> Result<MetricChoice, Failure> {
    let list = match arg {
        None => return Ok(MetricChoice::Headline),
        Some("all") => return Ok(MetricChoice::All),
        Some(list) => list,
    };
    let keys: Vec<String> = list
        .split(',')
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    if let Some(bad) = keys.iter().find(|k| !measure::record::has_unit_suffix(k)) {
        return Err(Failure::usage(format!(
            "--metric {bad}: a metric is a key in values with its unit suffix, e.g. rtt_s or throughput_bits_per_s"
        )));
    }
    if keys.is_empty() {
        return Err(Failure::usage("--metric: name at least one key, or all"));
    }
    Ok(MetricChoice::Keys(keys))
}
