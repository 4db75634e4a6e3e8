//! The invocation: flags to plan, the begin record, the series, the summary; the summary is
//! written on every path.

use crate::clock::clock_resolution_s;
use crate::plan::Plan;
use crate::reap::Signals;
use crate::series::{io_fail, series};
use crate::spawn::Spawner;
use crate::summary::finish;
use crate::{EXIT_OWN_FAILURE, own};
use clap::ArgMatches;
use measure::Failure;
use measure::record::Status;
use measure::writer::{Reporter, Summary, Values, info};
use serde_json::json;

/// Reads the flags, runs the series, writes the records, and returns the exit status.
pub fn run(m: &ArgMatches) -> Result<u8, Failure> {
    let plan = Plan::from_matches(m);
    let env = measure::label::envelope("timecmd", env!("CARGO_PKG_VERSION"), m, &plan.display)
        .map_err(own)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("output").map(String::as_str),
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
        "output": plan.stdout.describe(),
        "input": plan.input.describe(),
        "cwd": std::env::current_dir().ok().map(|p| p.display().to_string()),
        "clock": "CLOCK_MONOTONIC",
        "clock_resolution_s": clock_resolution_s(),
        "page_size_bytes": nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE).ok().flatten(),
    }));
    begin.extend(measure::envfacts::Probe::system().machine());
    let spawner = Spawner::new(&plan.argv, &plan.input, &plan.stdout);
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
