//! The summary record, the human summary and warnings on stderr, and the exit status.

use crate::clock::own_peak_rss_bytes;
use crate::exit::{EXIT_OWN_FAILURE, EXIT_TIMED_OUT};
use crate::exit::{Exit, signal_name};
use crate::human;
use crate::plan::Plan;
use crate::series::{Outcome, Stop};
use crate::stats::{self, Outliers};
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::record::Status;
use serde_json::json;
use std::io::Write;

/// Statistics of one field over the counted runs into `v` as `<name>_mean_s` etc.
fn put_stats(v: &mut Values, name: &str, xs: &[f64]) -> Option<stats::Stats> {
    let s = stats::stats(xs)?;
    v.set(&format!("{name}_mean_s"), s.mean);
    v.set(&format!("{name}_median_s"), s.median);
    if let Some(sd) = s.stddev {
        v.set(&format!("{name}_stddev_s"), sd);
    }
    v.set(&format!("{name}_min_s"), s.min);
    v.set(&format!("{name}_max_s"), s.max);
    Some(s)
}

/// The figures of the counted runs that the human summary shows.
struct Figures {
    wall: Option<stats::Stats>,
    user: Option<stats::Stats>,
    sys: Option<stats::Stats>,
    max_rss: Option<u64>,
    cpu_ratio: Option<f64>,
    outliers: Outliers,
}

/// The summary's values over the counted runs, and the figures for the human summary.
fn figures(o: &Outcome) -> (Values, Figures) {
    let wall: Vec<f64> = o.counted.iter().map(|u| u.wall_s).collect();
    let user: Vec<f64> = o.counted.iter().map(|u| u.user_s).collect();
    let sys: Vec<f64> = o.counted.iter().map(|u| u.sys_s).collect();
    let mut v = Values::new();
    v.set_count("runs_count", o.counted.len() as u64);
    v.set_count("failed_runs_count", o.failed);
    v.set_count("timed_out_runs_count", o.timed_out);
    let wall_stats = put_stats(&mut v, "wall", &wall);
    let user_stats = put_stats(&mut v, "user", &user);
    let sys_stats = put_stats(&mut v, "sys", &sys);
    let max_rss = o.counted.iter().map(|u| u.max_rss_bytes).max();
    if let Some(r) = max_rss {
        v.set_count("max_rss_bytes", r);
        let rss: Vec<f64> = o.counted.iter().map(|u| u.max_rss_bytes as f64).collect();
        if let Some(med) = stats::median(&rss) {
            v.set_count("max_rss_median_bytes", med.round() as u64);
        }
    }
    let cpu_ratio = wall_stats.as_ref().filter(|w| w.median > 0.0).map(|w| {
        (user_stats.map_or(0.0, |s| s.median) + sys_stats.map_or(0.0, |s| s.median)) / w.median
    });
    if let Some(r) = cpu_ratio {
        v.set("cpu_median_ratio", r);
    }
    let outliers = stats::outliers(&wall);
    v.set_count("outlier_count", outliers.count as u64);
    let fig = Figures {
        wall: wall_stats,
        user: user_stats,
        sys: sys_stats,
        max_rss,
        cpu_ratio,
        outliers,
    };
    (v, fig)
}

/// Why the series stopped, in words.
fn stop_text(plan: &Plan, o: &Outcome) -> Option<String> {
    o.stop.as_ref().map(|s| match s {
        Stop::Interrupted(sig) => format!(
            "interrupted by SIG{} after {} of {} runs",
            signal_name(*sig),
            o.counted.len(),
            plan.runs
        ),
        Stop::Spawn(e) => e.message.clone(),
        Stop::Own(m) => m.clone(),
        Stop::RunFailed(m) => {
            if o.measured < plan.runs || o.counted.is_empty() && plan.warmup > 0 {
                format!("{m}; the series stopped (--ignore-failure keeps going)")
            } else {
                m.clone()
            }
        }
    })
}

/// Writes the summary and the human text; returns the exit status.
pub fn finish(plan: &Plan, s: &mut Session, o: &Outcome, handoff: bool) -> Result<u8, Failure> {
    let (values, fig) = figures(o);
    let stop_text = stop_text(plan, o);
    let status = if o.counted.is_empty() {
        Status::Failed
    } else if o.stop.is_none() && o.counted.len() as u64 == plan.runs {
        Status::Ok
    } else {
        Status::Partial
    };
    let error = match (&status, &stop_text) {
        (Status::Ok, _) => None,
        (_, Some(t)) => Some(t.clone()),
        (_, None) => Some(format!("{} of {} runs failed", o.failed, plan.runs)),
    };
    let mut inf = info(json!({
        "runs_requested": plan.runs,
        "runs_measured": o.measured,
        "warmup": plan.warmup,
        "rss_floor_bytes": own_peak_rss_bytes(),
        "terminal_handoff": handoff,
    }));
    if let Some(e) = o.last_exit {
        inf.insert("last_exit_status".into(), json!(e.shell_code()));
    }
    if let Some(c) = &o.cleanup_error {
        inf.insert("cleanup_error".into(), json!(c));
    }
    let warnings = outlier_warnings(&fig.outliers);
    if !warnings.is_empty() {
        inf.insert("warnings".into(), json!(warnings));
    }
    s.summary(Summary {
        status,
        error: error.clone(),
        headline: Some("wall_median_s".into()),
        headlines: Vec::new(),
        values,
        info: inf,
    })?;
    let said = Said {
        stop: stop_text.as_deref(),
        error: error.as_deref(),
        warnings: &warnings,
    };
    human_text(plan, s, o, &fig, &said);
    Ok(exit_code(o))
}

/// What the summary says in words.
struct Said<'a> {
    /// Why the series stopped, if it stopped early.
    stop: Option<&'a str>,
    /// The summary's error.
    error: Option<&'a str>,
    warnings: &'a [String],
}

/// Text for people on stderr. The errors (why the series stopped, a failed --cleanup) are
/// always said; a person watching (a terminal, no -q) gets them in the human summary, with
/// the outlier warnings and the figures, or with the summary's error when no run counted.
fn human_text(plan: &Plan, s: &mut Session, o: &Outcome, fig: &Figures, said: &Said<'_>) {
    // A failing last run speaks for itself (as under time(1)); say so only when it cut the
    // series short.
    let cut_short = match &o.stop {
        Some(Stop::RunFailed(_)) => o.measured < plan.runs || o.last_timed_out,
        Some(_) => true,
        None => false,
    };
    let mut text = String::new();
    if let Some(t) = said.stop.filter(|_| cut_short) {
        text.push_str(&format!("timecmd: {t}\n"));
    }
    if let Some(c) = &o.cleanup_error {
        text.push_str(&format!("timecmd: warning: {c}\n"));
    }
    if !s.human().on() {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
    for w in said.warnings {
        text.push_str(&format!("timecmd: warning: {w}\n"));
    }
    if plan.gnu.is_some() {
        // GNU time's report, written after each run, is the summary a person reads.
    } else if let (Some(w), Some(u), Some(sy), Some(r)) =
        (&fig.wall, &fig.user, &fig.sys, fig.max_rss)
    {
        let cpu = fig.cpu_ratio.unwrap_or(0.0);
        text.push_str(&human::summary(&plan.display, w, u, sy, cpu, r));
    } else if let Some(e) = said.error.filter(|_| !cut_short) {
        text.push_str(&format!("timecmd: {}: {e}\n", plan.display));
    }
    // Printed only when a person watches; the lifecycle then adds no summary of its own.
    s.human().summary(&text);
}

/// The exit status: the signal's 128+N after an interrupt, env(1)'s codes for timecmd's own
/// failures, 124 after a time limit, else the last run's status.
fn exit_code(o: &Outcome) -> u8 {
    match &o.stop {
        Some(Stop::Interrupted(sig)) => Exit::Signal(*sig).shell_code(),
        Some(Stop::Spawn(e)) => e.code,
        Some(Stop::Own(_)) => EXIT_OWN_FAILURE,
        _ if o.last_timed_out => EXIT_TIMED_OUT,
        _ => o.last_exit.map_or(EXIT_OWN_FAILURE, Exit::shell_code),
    }
}

/// hyperfine's wording, for the outliers found.
fn outlier_warnings(o: &Outliers) -> Vec<String> {
    let mut w = Vec::new();
    if o.slow_first {
        w.push(
            "the first run was much slower than the rest: caches were probably cold; \
             use --warmup, or --prepare to make every run start cold"
                .to_string(),
        );
    } else if o.count > 0 {
        w.push(format!(
            "{} statistical outlier(s) among the runs: re-run on a quiet system, \
             or use --warmup or --prepare",
            o.count
        ));
    }
    w
}
