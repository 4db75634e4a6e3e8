//! The series: prepare, warm-ups, measured runs, cleanup; a record per run and the summary.

use crate::human;
use crate::reap::{
    Exit, Reaped, Signals, clock_resolution_s, now_ns, own_peak_rss_bytes, signal_name,
};
use crate::spawn::{SpawnError, Spawner, Stdin, Stdout};
use crate::stats::{self, Outliers};
use crate::usage::RunUsage;
use crate::{EXIT_OWN_FAILURE, EXIT_TIMED_OUT};
use clap::ArgMatches;
use measure::Failure;
use measure::record::Status;
use measure::writer::{Reporter, Summary, Values, info};
use serde_json::{Map, Value, json};
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// What the flags ask for.
#[derive(Debug)]
struct Plan {
    argv: Vec<OsString>,
    /// The command as one line: the default row name.
    display: String,
    shell: Option<String>,
    runs: u64,
    warmup: u64,
    setup: Option<String>,
    prepare: Option<String>,
    cleanup: Option<String>,
    time_limit: Option<Duration>,
    ignore_failure: bool,
    output: Stdout,
    input: Stdin,
    quiet: bool,
}

impl Plan {
    fn from_matches(m: &ArgMatches) -> Plan {
        let words: Vec<OsString> = m
            .get_many::<OsString>("command")
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let display = words
            .iter()
            .map(|w| w.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let shell = m.get_one::<String>("shell").cloned();
        let argv = match &shell {
            Some(sh) => vec![sh.into(), "-c".into(), display.clone().into()],
            None => words,
        };
        Plan {
            argv,
            display,
            shell,
            runs: m.get_one::<u64>("runs").copied().unwrap_or(1),
            warmup: m.get_one::<u64>("warmup").copied().unwrap_or(0),
            setup: m.get_one::<String>("setup").cloned(),
            prepare: m.get_one::<String>("prepare").cloned(),
            cleanup: m.get_one::<String>("cleanup").cloned(),
            time_limit: m.get_one::<Duration>("time-limit").copied(),
            ignore_failure: m.get_flag("ignore-failure"),
            output: m
                .get_one::<Stdout>("output")
                .cloned()
                .unwrap_or(Stdout::Inherit),
            input: m
                .get_one::<Stdin>("input")
                .cloned()
                .unwrap_or(Stdin::Inherit),
            quiet: m.get_flag("quiet"),
        }
    }

    /// The shell for --prepare and --cleanup.
    fn helper_shell(&self) -> &str {
        self.shell.as_deref().unwrap_or("sh")
    }
}

/// Why the series ended before its last run.
#[derive(Debug, Clone)]
enum Stop {
    /// timecmd got this signal (or the run that had the terminal died of Ctrl-C).
    Interrupted(i32),
    /// The command could not be started.
    Spawn(SpawnError),
    /// --prepare failed, or something else of timecmd's own.
    Own(String),
    /// A run failed and --ignore-failure was not given.
    RunFailed(String),
}

/// What the series did.
#[derive(Debug, Default)]
struct Outcome {
    /// The runs the statistics count (successful ones, and failed ones with --ignore-failure).
    counted: Vec<RunUsage>,
    /// Measured runs started (not warm-ups).
    measured: u64,
    failed: u64,
    timed_out: u64,
    /// The last run's (warm-up or measured) status and whether it timed out.
    last_exit: Option<Exit>,
    last_timed_out: bool,
    stop: Option<Stop>,
    cleanup_error: Option<String>,
}

/// Writes a record; an I/O failure on the record output ends timecmd (exit 125, or quietly
/// on a broken pipe).
fn io_fail(e: &std::io::Error) -> Failure {
    let f = Failure::io("writing records", e);
    if f.code == measure::exit::CANNOT {
        Failure {
            code: EXIT_OWN_FAILURE,
            message: f.message,
        }
    } else {
        f
    }
}

/// One helper command (--prepare, --cleanup) through the shell, stdout discarded. An error
/// says what went wrong; `Err((_, true))` when it died of the Ctrl-C it got with the terminal.
fn helper(
    signals: &mut Signals,
    shell: &str,
    what: &str,
    cmd: &str,
    stop_if_interrupted: bool,
) -> Result<(), (String, bool)> {
    let mut sp = Spawner::new(&[shell, "-c", cmd], &Stdin::Null, &Stdout::Null)
        .map_err(|e| (format!("{what} '{cmd}': {e}"), false))?;
    let pid = sp
        .spawn()
        .map_err(|e| (format!("{what} '{cmd}': {}", e.message), false))?;
    let r = signals
        .wait(pid, None, None, stop_if_interrupted)
        .map_err(|e| (format!("{what} '{cmd}': waiting for it: {e}"), false))?;
    match Exit::from_status(r.status) {
        Exit::Code(0) => Ok(()),
        Exit::Code(c) => Err((format!("{what} '{cmd}' exited with status {c}"), false)),
        Exit::Signal(s) => Err((
            format!(
                "{what} '{cmd}' was killed by signal {s} (SIG{})",
                signal_name(s)
            ),
            s == libc::SIGINT && signals.hands_off_terminal(),
        )),
    }
}

/// How a run ended, in words.
fn describe_exit(e: Exit) -> String {
    match e {
        Exit::Code(c) => format!("exited with status {c}"),
        Exit::Signal(s) => format!("was killed by signal {s} (SIG{})", signal_name(s)),
    }
}

/// The sample's info for a run that was reaped.
fn run_info(index: u64, exit: Exit, pid: libc::pid_t) -> Map<String, Value> {
    let (code, sig) = match exit {
        Exit::Code(c) => (json!(c), Value::Null),
        Exit::Signal(s) => (Value::Null, json!(s)),
    };
    let mut m = info(json!({
        "run": index,
        "ok": exit.success(),
        "exit_code": code,
        "exit_status": exit.shell_code(),
        "pid": pid,
    }));
    if !sig.is_null() {
        m.insert("signal".into(), sig);
        if let Exit::Signal(s) = exit {
            m.insert(
                "signal_name".into(),
                json!(format!("SIG{}", signal_name(s))),
            );
        }
    }
    m
}

fn series(
    plan: &Plan,
    rep: &mut Reporter,
    signals: &mut Signals,
    sp: &mut Spawner,
) -> Result<Outcome, Failure> {
    let mut out = Outcome::default();
    if let Some(c) = &plan.setup {
        if let Err((e, ctrl_c)) = helper(signals, plan.helper_shell(), "--setup", c, true) {
            out.stop = Some(match signals.interrupted() {
                Some(sig) => Stop::Interrupted(sig),
                None if ctrl_c => Stop::Interrupted(libc::SIGINT),
                None => Stop::Own(e),
            });
            return Ok(out);
        }
    }
    let total = plan.warmup + plan.runs;
    for i in 0..total {
        let warm = i < plan.warmup;
        let index = i.saturating_sub(plan.warmup) + 1;
        let which = if warm {
            format!("warm-up run {} of {}", i + 1, plan.warmup)
        } else {
            format!("run {index} of {}", plan.runs)
        };
        if let Some(sig) = signals.poll_interrupt() {
            out.stop = Some(Stop::Interrupted(sig));
            break;
        }
        if let Some(p) = &plan.prepare {
            if let Err((e, ctrl_c)) = helper(signals, plan.helper_shell(), "--prepare", p, true) {
                out.stop = Some(match signals.interrupted() {
                    Some(sig) => Stop::Interrupted(sig),
                    None if ctrl_c => Stop::Interrupted(libc::SIGINT),
                    None => Stop::Own(format!("before {which}: {e}")),
                });
                break;
            }
            if let Some(sig) = signals.poll_interrupt() {
                out.stop = Some(Stop::Interrupted(sig));
                break;
            }
        }
        sp.prepare_output();
        let deadline = plan.time_limit.map(|l| l.as_nanos() as u64);
        // The measured span: from right before the spawn to right after the reaping.
        let start = now_ns();
        let pid = match sp.spawn() {
            Ok(pid) => pid,
            Err(e) => {
                if !warm {
                    out.measured += 1;
                    out.failed += 1;
                    rep.sample_failed(&e.message, info(json!({"run": index, "ok": false})))
                        .map_err(|e| io_fail(&e))?;
                }
                out.stop = Some(Stop::Spawn(e));
                break;
            }
        };
        let reaped: Reaped = signals
            .wait(pid, deadline.map(|d| start + d), sp.pipe_fd(), true)
            .map_err(|e| Failure::new(EXIT_OWN_FAILURE, format!("waiting for {which}"), e))?;
        let exit = Exit::from_status(reaped.status);
        let usage = RunUsage::new(start, reaped.end_ns, &reaped.usage);
        out.last_exit = Some(exit);
        out.last_timed_out = reaped.timed_out;
        // The run that had the terminal died of Ctrl-C: the user meant timecmd too.
        let interrupt = reaped.interrupt.or_else(|| {
            (signals.hands_off_terminal() && exit == Exit::Signal(libc::SIGINT))
                .then_some(libc::SIGINT)
        });
        if !warm {
            out.measured += 1;
        }
        if let Some(sig) = interrupt {
            if !warm {
                out.failed += 1;
                let mut inf = run_info(index, exit, pid);
                inf.insert("interrupted".into(), json!(true));
                rep.sample_failed(
                    &format!(
                        "interrupted by SIG{} after {:.3} s: the run was cut short",
                        signal_name(sig),
                        usage.wall_s
                    ),
                    inf,
                )
                .map_err(|e| io_fail(&e))?;
            }
            out.stop = Some(Stop::Interrupted(sig));
            break;
        }
        if reaped.timed_out {
            let limit = plan.time_limit.map_or(0.0, |d| d.as_secs_f64());
            let msg = format!(
                "{which} timed out after {} (--time-limit): killed its process group",
                human::secs(limit)
            );
            if !warm {
                out.failed += 1;
                out.timed_out += 1;
                let mut inf = run_info(index, exit, pid);
                inf.insert("timed_out".into(), json!(true));
                inf.insert("time_limit_s".into(), json!(limit));
                rep.sample_failed(&msg, inf).map_err(|e| io_fail(&e))?;
            }
            if !plan.ignore_failure {
                out.stop = Some(Stop::RunFailed(msg));
                break;
            }
            continue;
        }
        let ok = exit.success();
        if !warm {
            if !ok {
                out.failed += 1;
            }
            rep.sample(usage.values(), run_info(index, exit, pid))
                .map_err(|e| io_fail(&e))?;
            if ok || plan.ignore_failure {
                out.counted.push(usage);
            }
        }
        if !ok && !plan.ignore_failure {
            out.stop = Some(Stop::RunFailed(format!("{which} {}", describe_exit(exit))));
            break;
        }
    }
    if let Some(c) = &plan.cleanup
        && let Err((e, _)) = helper(signals, plan.helper_shell(), "--cleanup", c, false)
    {
        out.cleanup_error = Some(e);
    }
    if out.stop.is_none()
        && let Some(sig) = signals.poll_interrupt()
    {
        // Ctrl-C during --cleanup: the runs are complete, but timecmd was told to stop.
        out.stop = Some(Stop::Interrupted(sig));
    }
    Ok(out)
}

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

/// Reads the flags, runs the series, writes the records, and returns the exit status.
pub fn run(m: &ArgMatches) -> Result<ExitCode, Failure> {
    let plan = Plan::from_matches(m);
    let own = |f: Failure| {
        if f.code == measure::exit::CANNOT {
            Failure {
                code: EXIT_OWN_FAILURE,
                message: f.message,
            }
        } else {
            f
        }
    };
    let env = measure::label::envelope("timecmd", env!("CARGO_PKG_VERSION"), m, &plan.display)
        .map_err(own)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("records").map(String::as_str),
        measure::cli::DefaultOutput::Stderr,
    )
    .map_err(own)?;
    let mut rep = Reporter::new(env, out);

    let mut begin = info(json!({
        "command": plan.argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "shell": plan.shell,
        "runs": plan.runs,
        "warmup": plan.warmup,
        "setup": plan.setup,
        "prepare": plan.prepare,
        "cleanup": plan.cleanup,
        "time_limit_s": plan.time_limit.map(|d| d.as_secs_f64()),
        "ignore_failure": plan.ignore_failure,
        "output": plan.output.describe(),
        "input": plan.input.describe(),
        "cwd": std::env::current_dir().ok().map(|p| p.display().to_string()),
        "clock": "CLOCK_MONOTONIC",
        "clock_resolution_s": clock_resolution_s(),
        // SAFETY: sysconf only reads a system constant.
        "page_size_bytes": unsafe { libc::sysconf(libc::_SC_PAGESIZE) },
    }));
    begin.extend(machine_facts());
    let spawner = Spawner::new(&plan.argv, &plan.input, &plan.output);
    if let Ok(sp) = &spawner {
        begin.insert("executable".into(), json!(sp.executable()));
    }
    rep.begin(begin).map_err(|e| io_fail(&e))?;

    let started = spawner
        .map_err(|e| Failure::new(EXIT_OWN_FAILURE, "setting up the command", e))
        .and_then(|sp| {
            Signals::install()
                .map(|sig| (sig, sp))
                .map_err(|e| Failure::new(EXIT_OWN_FAILURE, "blocking signals for the runs", e))
        });
    let result = match started {
        Ok((mut signals, mut sp)) => {
            let r = series(&plan, &mut rep, &mut signals, &mut sp);
            r.map(|o| (o, signals.hands_off_terminal()))
        }
        Err(f) => Err(f),
    };
    let (outcome, handoff) = match result {
        Ok(o) => o,
        Err(f) => {
            let msg = f.message.clone().unwrap_or_default();
            let _ = rep.summary(Summary {
                status: Status::Failed,
                error: Some(msg),
                headline: None,
                values: Values::new(),
                info: info(json!({"runs_requested": plan.runs})),
            });
            return Err(f);
        }
    };
    finish(&plan, &mut rep, &outcome, handoff)
}

/// The machine facts of `Probe::machine`, with each probe made once: `machine` asks for the
/// container and the VM twice, and a single run of a short command feels every 20 us.
fn machine_facts() -> Map<String, Value> {
    let p = measure::envfacts::Probe::system();
    let container = p.container();
    let vm = p.vm();
    let virtualization = container
        .clone()
        .or_else(|| vm.clone())
        .unwrap_or_else(|| "none".into());
    info(json!({
        "hostname": p.hostname(),
        "kernel": p.kernel(),
        "cpu_model": p.cpu_model(),
        "cpu_count": p.cpu_count(),
        "memory_bytes": p.memory_bytes(),
        "virtualization": virtualization,
        "container": container,
        "vm": vm.unwrap_or_else(|| "none".into()),
    }))
}

/// Writes the summary and the human text; returns the exit status.
fn finish(
    plan: &Plan,
    rep: &mut Reporter,
    o: &Outcome,
    handoff: bool,
) -> Result<ExitCode, Failure> {
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
    if let Some(w) = &wall_stats
        && w.median > 0.0
    {
        let cpu: f64 = user_stats.map_or(0.0, |s| s.median) + sys_stats.map_or(0.0, |s| s.median);
        v.set("cpu_median_ratio", cpu / w.median);
    }
    let outl = stats::outliers(&wall);
    v.set_count("outlier_count", outl.count as u64);

    let stop_text = o.stop.as_ref().map(|s| match s {
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
    });
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
    let warnings = outlier_warnings(&outl);
    if !warnings.is_empty() {
        inf.insert("warnings".into(), json!(warnings));
    }
    rep.summary(Summary {
        status,
        error,
        headline: Some("wall_median_s".into()),
        values: v,
        info: inf,
    })
    .map_err(|e| io_fail(&e))?;

    // Human text: errors always; the summary only on a terminal; warnings unless -q.
    let mut err = std::io::stderr().lock();
    // A failing last run speaks for itself (as under time(1)); say so only when it cut the
    // series short.
    let cut_short = match &o.stop {
        Some(Stop::RunFailed(_)) => o.measured < plan.runs || o.last_timed_out,
        Some(_) => true,
        None => false,
    };
    if let Some(t) = stop_text.as_ref().filter(|_| cut_short) {
        let _ = writeln!(err, "timecmd: {t}");
    }
    if let Some(c) = &o.cleanup_error {
        let _ = writeln!(err, "timecmd: warning: {c}");
    }
    if !plan.quiet {
        for w in &warnings {
            let _ = writeln!(err, "timecmd: warning: {w}");
        }
        if measure::cli::is_terminal(2)
            && let (Some(w), Some(u), Some(s), Some(r)) =
                (wall_stats, user_stats, sys_stats, max_rss)
        {
            let _ = err.write_all(human::summary(&plan.display, &w, &u, &s, r).as_bytes());
        }
    }

    let code = match &o.stop {
        Some(Stop::Interrupted(sig)) => (128 + sig).clamp(0, 255) as u8,
        Some(Stop::Spawn(e)) => e.code,
        Some(Stop::Own(_)) => EXIT_OWN_FAILURE,
        _ if o.last_timed_out => EXIT_TIMED_OUT,
        _ => o.last_exit.map_or(EXIT_OWN_FAILURE, Exit::shell_code),
    };
    Ok(ExitCode::from(code))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_facts_match_the_probe() {
        let ours = machine_facts();
        let theirs = measure::envfacts::Probe::system().machine();
        assert_eq!(ours, theirs);
    }
}
