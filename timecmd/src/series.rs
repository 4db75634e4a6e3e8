//! The series: setup, then prepare and run for every warm-up and measured run, then cleanup;
//! a sample record per measured run.

use crate::clock::now_ns;
use crate::exit::EXIT_OWN_FAILURE;
use crate::exit::{Exit, signal_name};
use crate::gnutime;
use crate::human;
use crate::plan::Plan;
use crate::reap::{Reaped, Signals};
use crate::spawn::{SpawnError, Spawner, Stdin, Stdout};
use crate::usage::RunUsage;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::info;
use serde_json::{Map, Value, json};

/// Why the series ended before its last run.
#[derive(Debug, Clone)]
pub enum Stop {
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
pub struct Outcome {
    /// The runs the statistics count (successful ones, and failed ones with --ignore-failure).
    pub counted: Vec<RunUsage>,
    /// Measured runs started (not warm-ups).
    pub measured: u64,
    pub failed: u64,
    pub timed_out: u64,
    /// The last run's (warm-up or measured) status and whether it timed out.
    pub last_exit: Option<Exit>,
    pub last_timed_out: bool,
    pub stop: Option<Stop>,
    pub cleanup_error: Option<String>,
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
        e => Err((
            format!("{what} '{cmd}' {}", describe_exit(e)),
            e == Exit::Signal(libc::SIGINT) && signals.hands_off_terminal(),
        )),
    }
}

/// Why a failed --setup or --prepare stops the series: an interrupt timecmd got (or the
/// Ctrl-C the helper got with the terminal), else the helper's own failure.
fn helper_stop(signals: &Signals, error: String, ctrl_c: bool) -> Stop {
    match signals.interrupted() {
        Some(sig) => Stop::Interrupted(sig),
        None if ctrl_c => Stop::Interrupted(libc::SIGINT),
        None => Stop::Own(error),
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
    let code = match exit {
        Exit::Code(c) => json!(c),
        Exit::Signal(_) => Value::Null,
    };
    let mut m = info(json!({
        "run": index,
        "ok": exit.success(),
        "exit_code": code,
        "exit_status": exit.shell_code(),
        "pid": pid,
    }));
    if let Exit::Signal(s) = exit {
        m.insert("signal".into(), json!(s));
        m.insert(
            "signal_name".into(),
            json!(format!("SIG{}", signal_name(s))),
        );
    }
    m
}

/// One run of the series: a warm-up or a measured one, its 1-based index among the measured
/// runs, and its name in messages.
struct Run {
    warm: bool,
    index: u64,
    which: String,
}

impl Run {
    /// The `i`-th (0-based) run of the series, warm-ups first.
    fn nth(plan: &Plan, i: u64) -> Run {
        let warm = i < plan.warmup;
        let index = i.saturating_sub(plan.warmup) + 1;
        let which = if warm {
            format!("warm-up run {} of {}", i + 1, plan.warmup)
        } else {
            format!("run {index} of {}", plan.runs)
        };
        Run { warm, index, which }
    }
}

/// Runs the series, writing a sample per measured run; the outcome feeds the summary.
pub fn series(
    plan: &Plan,
    s: &mut Session,
    signals: &mut Signals,
    sp: &mut Spawner,
) -> Result<Outcome, Failure> {
    let mut out = Outcome::default();
    // GNU time opens -o FILE (truncating it unless -a) before the command runs.
    let mut sink = match &plan.gnu {
        Some(g) => Some(gnutime::Sink::open(g).map_err(|e| {
            let file = g.output.as_deref().unwrap_or(std::path::Path::new("-"));
            Failure::new(EXIT_OWN_FAILURE, format!("-o {}", file.display()), e)
        })?),
        None => None,
    };
    if let Some(c) = &plan.setup
        && let Err((e, ctrl_c)) = helper(signals, plan.helper_shell(), "--setup", c, true)
    {
        out.stop = Some(helper_stop(signals, e, ctrl_c));
        return Ok(out);
    }
    for i in 0..plan.warmup + plan.runs {
        let run = Run::nth(plan, i);
        out.stop = before_run(plan, signals, &run);
        if out.stop.is_none() {
            out.stop = measure_run(plan, s, (signals, sp, &mut sink), &run, &mut out)?;
        }
        if out.stop.is_some() {
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

/// Before a run: an interrupt that came stops the series, else --prepare runs.
fn before_run(plan: &Plan, signals: &mut Signals, run: &Run) -> Option<Stop> {
    if let Some(sig) = signals.poll_interrupt() {
        return Some(Stop::Interrupted(sig));
    }
    if let Some(p) = &plan.prepare {
        if let Err((e, ctrl_c)) = helper(signals, plan.helper_shell(), "--prepare", p, true) {
            let e = format!("before {}: {e}", run.which);
            return Some(helper_stop(signals, e, ctrl_c));
        }
        if let Some(sig) = signals.poll_interrupt() {
            return Some(Stop::Interrupted(sig));
        }
    }
    None
}

/// Spawns, waits for and records one run; says why the series stops after it, if it does.
fn measure_run(
    plan: &Plan,
    s: &mut Session,
    (signals, sp, sink): (&mut Signals, &mut Spawner, &mut Option<gnutime::Sink>),
    run: &Run,
    out: &mut Outcome,
) -> Result<Option<Stop>, Failure> {
    sp.prepare_output();
    let deadline = plan.time_limit.map(|l| l.as_nanos() as u64);
    // The measured span: from right before the spawn to right after the reaping.
    let start = now_ns();
    let pid = match sp.spawn() {
        Ok(pid) => pid,
        Err(e) => {
            if !run.warm {
                out.measured += 1;
                out.failed += 1;
                s.sample_failed(&e.message, info(json!({"run": run.index, "ok": false})))?;
            }
            return Ok(Some(Stop::Spawn(e)));
        }
    };
    let reaped: Reaped = signals
        .wait(pid, deadline.map(|d| start + d), sp.drain(), true)
        .map_err(|e| Failure::new(EXIT_OWN_FAILURE, format!("waiting for {}", run.which), e))?;
    let exit = Exit::from_status(reaped.status);
    let usage = RunUsage::new(start, reaped.end_ns, &reaped.usage);
    if let (Some(g), Some(sink), false) = (&plan.gnu, sink.as_mut(), run.warm) {
        let f = gnutime::Figures {
            usage: &usage,
            rusage: &reaped.usage,
            exit,
            command: &plan.argv,
        };
        let written = sink.report(g, s.quiet(), &f);
        if let (Err(e), Some(p)) = (written, &g.output) {
            return Err(Failure::new(
                EXIT_OWN_FAILURE,
                format!("writing GNU time's report to {}", p.display()),
                e,
            ));
        }
    }
    out.last_exit = Some(exit);
    out.last_timed_out = reaped.timed_out;
    if !run.warm {
        out.measured += 1;
    }
    // The run that had the terminal died of Ctrl-C: the user meant timecmd too.
    let interrupt = reaped.interrupt.or_else(|| {
        (signals.hands_off_terminal() && exit == Exit::Signal(libc::SIGINT)).then_some(libc::SIGINT)
    });
    let ended = Ended { exit, pid, usage };
    if let Some(sig) = interrupt {
        record_interrupted(s, run, &ended, sig, out)?;
        Ok(Some(Stop::Interrupted(sig)))
    } else if reaped.timed_out {
        record_timed_out(plan, s, run, &ended, out)
    } else {
        record_ended(plan, s, run, &ended, out)
    }
}

/// How a reaped run ended and what it measured.
struct Ended {
    exit: Exit,
    pid: libc::pid_t,
    usage: RunUsage,
}

/// A run cut short by an interrupt: a failed sample.
fn record_interrupted(
    s: &mut Session,
    run: &Run,
    e: &Ended,
    sig: i32,
    out: &mut Outcome,
) -> Result<(), Failure> {
    if run.warm {
        return Ok(());
    }
    out.failed += 1;
    let mut inf = run_info(run.index, e.exit, e.pid);
    inf.insert("interrupted".into(), json!(true));
    let msg = format!(
        "interrupted by SIG{} after {:.3} s: the run was cut short",
        signal_name(sig),
        e.usage.wall_s
    );
    s.sample_failed(&msg, inf)
}

/// A run killed at --time-limit: a failed sample; the series stops unless --ignore-failure.
fn record_timed_out(
    plan: &Plan,
    s: &mut Session,
    run: &Run,
    e: &Ended,
    out: &mut Outcome,
) -> Result<Option<Stop>, Failure> {
    let limit = plan.time_limit.map_or(0.0, |d| d.as_secs_f64());
    let msg = format!(
        "{} timed out after {} (--time-limit): killed its process group",
        run.which,
        human::secs(limit)
    );
    if !run.warm {
        out.failed += 1;
        out.timed_out += 1;
        let mut inf = run_info(run.index, e.exit, e.pid);
        inf.insert("timed_out".into(), json!(true));
        inf.insert("time_limit_s".into(), json!(limit));
        s.sample_failed(&msg, inf)?;
    }
    Ok((!plan.ignore_failure).then_some(Stop::RunFailed(msg)))
}

/// A run that ended by itself: a sample, counted when it succeeded or with --ignore-failure;
/// a failure stops the series unless --ignore-failure.
fn record_ended(
    plan: &Plan,
    s: &mut Session,
    run: &Run,
    e: &Ended,
    out: &mut Outcome,
) -> Result<Option<Stop>, Failure> {
    let ok = e.exit.success();
    if !run.warm {
        if !ok {
            out.failed += 1;
        }
        s.sample(e.usage.values(), run_info(run.index, e.exit, e.pid))?;
        if ok || plan.ignore_failure {
            out.counted.push(e.usage);
        }
    }
    Ok((!ok && !plan.ignore_failure)
        .then(|| Stop::RunFailed(format!("{} {}", run.which, describe_exit(e.exit)))))
}
