//! `collate --times`: how long each measurement took in each suite run, from the records' own
//! times (a tool run's begin to its summary), its share of the run, and the time between the
//! tools (the run less the union of the spans; overlapping spans said apart). The main job
//! prints it after a run and estimates the next run's steps from it.

use crate::collect::{Batch, SEP};
use crate::dims::Dim;
use crate::escape::visible;
use crate::read::{self, OnInvalid};
use crate::render::Format;
use crate::render::csv::{csv_field, float};
use measure::{Exit, Failure, Kind};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::SystemTime;

/// One measurement (a record name) in one suite run: when its first and last records were
/// written, by how many tool runs, with how many samples.
#[derive(Debug)]
struct Span {
    label: String,
    /// The suite invocation, or the tool run's own id for a tool run by hand.
    unit: String,
    name: String,
    first: SystemTime,
    last: SystemTime,
    runs: HashSet<String>,
    samples: u64,
}

/// The spans by (unit, name, label), in order of first appearance.
#[derive(Debug, Default)]
struct Spans {
    index: HashMap<(String, String, String), usize>,
    list: Vec<Span>,
}

impl Spans {
    /// Counts record `i` of `b` into its span.
    fn add(&mut self, b: &Batch, i: usize) {
        let r = b.get(i);
        let Ok(at) = humantime::parse_rfc3339(r.at) else {
            return;
        };
        let mut parts = r.group.split(SEP);
        let name = parts.next().unwrap_or("").to_string();
        let label = parts.next().unwrap_or("").to_string();
        let unit = r.invocation.unwrap_or(r.run).to_string();
        let key = (unit, name, label);
        let n = match self.index.get(&key) {
            Some(&n) => n,
            None => {
                let (unit, name, label) = key.clone();
                self.list.push(Span {
                    label,
                    unit,
                    name,
                    first: at,
                    last: at,
                    runs: HashSet::new(),
                    samples: 0,
                });
                self.index.insert(key, self.list.len() - 1);
                self.list.len() - 1
            }
        };
        let s = &mut self.list[n];
        s.first = s.first.min(at);
        s.last = s.last.max(at);
        if !s.runs.contains(r.run) {
            s.runs.insert(r.run.to_string());
        }
        if r.kind == Kind::Sample {
            s.samples += 1;
        }
    }
}

/// One suite run: its label, id, span of time and measurements in order of start.
struct SuiteRun<'a> {
    label: &'a str,
    unit: &'a str,
    first: SystemTime,
    last: SystemTime,
    spans: Vec<&'a Span>,
}

/// Reads the inputs and prints, per suite run (oldest first; with `latest` only each label's
/// newest), each measurement's seconds and share of the run.
pub fn run(
    files: &[String],
    on_invalid: OnInvalid,
    format: Format,
    latest: bool,
) -> Result<Exit, Failure> {
    if !matches!(format, Format::Text | Format::Csv) {
        return Err(Failure::usage(
            "--times prints text or csv: give -f text or -f csv",
        ));
    }
    let mut spans = Spans::default();
    read::read_all(files, on_invalid, &[Dim::Name, Dim::Label], |b| {
        for i in 0..b.len() {
            if !b.is_repeat(i) {
                spans.add(b, i);
            }
        }
        Ok(())
    })?;
    if spans.list.is_empty() {
        return Err(Failure::new(
            Exit::MeasuredFailure,
            "no records",
            "--times found no begin, sample or summary records with a time",
        ));
    }
    let suites = suite_runs(&spans.list, latest);
    crate::render::print(&match format {
        Format::Csv => csv(&suites),
        _ => text(&suites),
    })
}

/// The spans grouped by suite run, oldest run first, each run's spans in order of start.
fn suite_runs(list: &[Span], latest: bool) -> Vec<SuiteRun<'_>> {
    let mut runs: Vec<SuiteRun<'_>> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::new();
    for s in list {
        let n = *at.entry((&s.label, &s.unit)).or_insert_with(|| {
            runs.push(SuiteRun {
                label: &s.label,
                unit: &s.unit,
                first: s.first,
                last: s.last,
                spans: Vec::new(),
            });
            runs.len() - 1
        });
        let r = &mut runs[n];
        r.first = r.first.min(s.first);
        r.last = r.last.max(s.last);
        r.spans.push(s);
    }
    runs.sort_by_key(|r| r.first);
    for r in &mut runs {
        r.spans.sort_by_key(|s| s.first);
    }
    if latest {
        let mut newest: HashMap<&str, SystemTime> = HashMap::new();
        for r in &runs {
            let e = newest.entry(r.label).or_insert(r.first);
            *e = (*e).max(r.first);
        }
        runs.retain(|r| newest.get(r.label) == Some(&r.first));
    }
    runs
}

/// Seconds from `a` to `b` (0 when `b` is earlier).
fn secs(a: SystemTime, b: SystemTime) -> f64 {
    b.duration_since(a).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// `part` as a share of `whole`, 0..1 (0 for a whole of no length).
fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// A span's share of its suite run's whole time, 0..1 (0 for a run of no length).
fn share(s: &Span, r: &SuiteRun<'_>) -> f64 {
    ratio(secs(s.first, s.last), secs(r.first, r.last))
}

/// How a suite run's time is covered by its spans: the seconds no span covers (between the
/// tools: the script's own work, a guest's boot steps, waits) and the seconds more than one
/// span covers at once. The uncovered time is the whole run less the union of the spans,
/// never negative: where spans overlap (the suite alternates the runs of two measurements,
/// so each one's first-to-last span holds the other's runs; a listener's span around its
/// peer's), the overlap is counted once in the union and said apart.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Coverage {
    whole: f64,
    between: f64,
    overlap: f64,
}

impl Coverage {
    fn of(r: &SuiteRun<'_>) -> Coverage {
        // A sweep over the spans' ends: +1 where one starts, -1 where one ends; at one
        // instant the ends come before the starts, so spans that only touch never overlap.
        let mut edges: Vec<(f64, i32)> = Vec::with_capacity(2 * r.spans.len());
        for s in &r.spans {
            let (a, b) = (secs(r.first, s.first), secs(r.first, s.last));
            if b > a {
                edges.push((a, 1));
                edges.push((b, -1));
            }
        }
        edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let (mut depth, mut at, mut covered, mut overlap) = (0i32, 0.0f64, 0.0f64, 0.0f64);
        for (t, step) in edges {
            let d = t - at;
            if depth >= 1 {
                covered += d;
            }
            if depth >= 2 {
                overlap += d;
            }
            depth += step;
            at = t;
        }
        let whole = secs(r.first, r.last);
        Coverage {
            whole,
            between: (whole - covered).max(0.0),
            overlap,
        }
    }
}

/// The tidy table: a header, then a line per measurement of each suite run, each with its
/// run's whole seconds, the seconds and share between the tools and the overlapping seconds.
fn csv(runs: &[SuiteRun<'_>]) -> String {
    let mut out = String::from(
        "label,run,start,name,tool_runs,samples,seconds,share,\
         run_seconds,between_seconds,between_share,overlap_seconds\n",
    );
    for r in runs {
        let c = Coverage::of(r);
        for s in &r.spans {
            let start = humantime::format_rfc3339_micros(s.first);
            let _ = writeln!(
                out,
                "{},{},{start},{},{},{},{},{},{},{},{},{}",
                csv_field(&s.label),
                csv_field(&s.unit),
                csv_field(&s.name),
                s.runs.len(),
                s.samples,
                float(secs(s.first, s.last)),
                float(share(s, r)),
                float(c.whole),
                float(c.between),
                float(ratio(c.between, c.whole)),
                float(c.overlap),
            );
        }
    }
    out
}

/// For a person: a heading per suite run, each measurement's seconds and share, the time
/// between the tools and, where spans overlap, the overlapping seconds.
fn text(runs: &[SuiteRun<'_>]) -> String {
    let mut out = String::new();
    for (i, r) in runs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let start = humantime::format_rfc3339_seconds(r.first);
        let _ = writeln!(
            out,
            "{} {} ({start}): {:.1} s from its first record to its last",
            visible(r.label),
            visible(r.unit),
            secs(r.first, r.last)
        );
        for s in &r.spans {
            let tools = s.runs.len();
            let _ = writeln!(
                out,
                "{:>8.1} s {:>4.0}%  {}  ({tools} tool run{}, {} sample{})",
                secs(s.first, s.last),
                100.0 * share(s, r),
                visible(&s.name),
                if tools == 1 { "" } else { "s" },
                s.samples,
                if s.samples == 1 { "" } else { "s" }
            );
        }
        let c = Coverage::of(r);
        let _ = writeln!(
            out,
            "  between the tools {:.1} s ({:.0}%)",
            c.between,
            100.0 * ratio(c.between, c.whole)
        );
        if c.overlap > 0.0 {
            let _ = writeln!(
                out,
                "  overlapping spans {:.1} s (covered by more than one measurement's span: runs that alternate or ran at once)",
                c.overlap
            );
        }
    }
    out
}
