//! The smallest tool on the lifecycle, for measure's lifecycle tests (a binary, so that cargo
//! builds it for them) and the model a tool follows: `lifecycle_demo [-c N] [--fail] [--no-summary] [--payload] [RECORD FLAGS]`.

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use measure::lifecycle::{Session, Stdout, Tool};
use measure::parts::{Values, info};
use measure::{Exit, Failure};
use serde_json::json;
use std::io::Write;

/// The demo's options.
struct Opts {
    count: u64,
    fail: bool,
    no_summary: bool,
    payload: bool,
    wait: bool,
}

struct Demo;

impl Tool for Demo {
    const NAME: &'static str = "lifecycle_demo";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = Opts;

    fn command() -> Command {
        let cmd = Command::new("lifecycle_demo")
            .about("Writes N samples of a made-up measurement")
            .arg(
                measure::flags::count()
                    .default_value("3")
                    .value_parser(value_parser!(u64)),
            )
            .arg(Arg::new("fail").long("fail").action(ArgAction::SetTrue))
            .arg(
                Arg::new("no-summary")
                    .long("no-summary")
                    .action(ArgAction::SetTrue),
            )
            .arg(
                Arg::new("payload")
                    .long("payload")
                    .action(ArgAction::SetTrue),
            )
            .arg(Arg::new("wait").long("wait").action(ArgAction::SetTrue))
            .arg(measure::flags::quiet());
        measure::flags::record(cmd)
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<Opts, Failure> {
        let count = m.get_one::<u64>("count").copied().unwrap_or(3);
        if count == 0 {
            return Err(Failure::usage("-c 0: give at least 1"));
        }
        Ok(Opts {
            count,
            fail: m.get_flag("fail"),
            no_summary: m.get_flag("no-summary"),
            payload: m.get_flag("payload"),
            wait: m.get_flag("wait"),
        })
    }

    fn name(o: &Opts) -> String {
        format!("demo x{}", o.count)
    }

    fn stdout(o: &Opts) -> Stdout {
        if o.payload {
            Stdout::Payload
        } else {
            Stdout::Records
        }
    }

    fn run(o: Opts, s: &mut Session) -> Result<Exit, Failure> {
        s.begin(info(json!({"count": o.count})))?;
        if o.payload {
            let _ = writeln!(std::io::stdout(), "payload");
        }
        for i in 0..o.count {
            s.human().line(&format!("sample {i}"));
            s.sample(
                Values::new().with("op_s", 0.001 * (i + 1) as f64),
                info(json!({"i": i})),
            )?;
        }
        if o.wait {
            // Until Ctrl-C or SIGTERM, for at most 20 s.
            let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !measure::signal::interrupted() && std::time::Instant::now() < end {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if measure::signal::interrupted() {
                return Ok(Exit::Interrupted);
            }
        }
        if o.fail {
            return Err(Failure::new(Exit::Cannot, "demo", "failed on purpose"));
        }
        if !o.no_summary {
            s.ok(
                "op_s",
                Values::new()
                    .with("op_s", 0.002)
                    .with_count("op_count", o.count),
                Default::default(),
            )?;
        }
        Ok(Exit::Ok)
    }
}

fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<Demo>()
}
