//! The engine: the begin record, the series, the summary; the summary is written on every
//! path (the lifecycle writes one only when an engine left it out).

use crate::clock::clock_resolution_s;
use crate::exit::EXIT_OWN_FAILURE;
use crate::plan::Plan;
use crate::reap::Signals;
use crate::series::series;
use crate::spawn::Spawner;
use crate::summary::finish;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Values, info};
use measure::record::Status;
use serde_json::{Map, Value, json};

/// The begin record's parameters: the plan, the working directory and the clock.
fn begin_info(plan: &Plan) -> Map<String, Value> {
    info(json!({
        "command": plan.argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "shell": plan.shell,
        "runs": plan.runs,
        "warmup": plan.warmup,
        "setup": plan.setup,
        "prepare": plan.prepare,
        "cleanup": plan.cleanup,
        "time_limit_s": plan.time_limit.map(|d| d.as_secs_f64()),
        "ignore_failure": plan.ignore_failure,
        "output": plan.stdout.describe(),
        "input": plan.input.describe(),
        "cwd": std::env::current_dir().ok().map(|p| p.display().to_string()),
        "clock": "CLOCK_MONOTONIC",
        "clock_resolution_s": clock_resolution_s(),
        "page_size_bytes": nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE).ok().flatten(),
    }))
}

/// Runs the series with its records in `s`; returns the exit status.
pub fn run(plan: &Plan, s: &mut Session) -> Result<u8, Failure> {
    let mut begin = begin_info(plan);
    let spawner = Spawner::new(&plan.argv, &plan.input, &plan.stdout);
    if let Ok(sp) = &spawner {
        begin.insert("executable".into(), json!(sp.executable()));
    }
    s.begin(begin)?;

    let started = spawner
        .map_err(|e| Failure::new(EXIT_OWN_FAILURE, "setting up the command", e))
        .and_then(|sp| {
            Signals::install(&plan.ignored)
                .map(|sig| (sig, sp))
                .map_err(|e| Failure::new(EXIT_OWN_FAILURE, "blocking signals for the runs", e))
        });
    let result = started.and_then(|(mut signals, mut sp)| {
        let o = series(plan, s, &mut signals, &mut sp)?;
        Ok((o, signals.hands_off_terminal()))
    });
    match result {
        Ok((outcome, handoff)) => finish(plan, s, &outcome, handoff),
        Err(f) => {
            let msg = f.message.clone().unwrap_or_default();
            // The failure is what timecmd reports, even if this write fails too.
            let _ = s.not_ok(
                Status::Failed,
                &msg,
                Values::new(),
                info(json!({"runs_requested": plan.runs})),
            );
            Err(f)
        }
    }
}
