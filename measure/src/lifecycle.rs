//! The invocation lifecycle every tool runs through, written once: parse the flags, build
//! the envelope, open the output by the output policy, install Ctrl-C/SIGTERM handling
//! ([`crate::signal`]: a signal ignored at start stays ignored; a stop is watched for), let
//! the tool's engine measure (it writes begin, samples and intervals through the
//! [`Session`]), guarantee the summary on every path, print the human summary where a person
//! watches, and map the outcome to an [`Exit`].
//!
//! A tool supplies a type implementing [`Tool`]: its `command()` (the one source for --help,
//! the man page and the completions; it adds the shared flags with
//! [`crate::flags::record`]), its options type built from the matches, its default row
//! name, and its engine. Its binary is one line:
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     measure::lifecycle::main::<pingrt::Tool>()
//! }
//! ```
//!
//! # The output policy (ARCHITECTURE.md, Output policy)
//!
//! | stdout carries | `-o FILE` | records go to | human lines (stderr) |
//! |---|---|---|---|
//! | records | given (`-` = stdout) | FILE, appended | when stderr is a terminal |
//! | records | none, stdout a pipe or file, or `--json` | stdout | when stderr is a terminal and stdout is not |
//! | records | none, stdout a terminal | nowhere | yes |
//! | payload (netcat mode, timecmd's command) | given | FILE, appended | when stderr is a terminal |
//! | payload | none, stderr not a terminal, or `--json` | stderr | no |
//! | payload | none, stderr a terminal | nowhere | yes |
//!
//! `-q/--quiet` turns the human lines off. Human lines are the tool's own (per probe, per
//! interval, a progress line) through [`Session::human`]; the final human summary is the
//! tool's own when it prints one with [`Human::summary`], else one made from the summary
//! record ([`crate::human::summary_text`]).
//!
//! # The summary on every path
//!
//! The engine writes begin (with its parameters; [`Session::begin`] adds the machine facts
//! flat) and its summary. When it returns without one, the lifecycle writes it: a failed
//! summary with the error's message after an `Err` (and a begin first if none was written,
//! unless begin would describe a source that was never read: [`Tool::BEGIN_IS_THIS_MACHINE`]),
//! a partial one after an `Ok`. A tool that reads records and writes none (collate) runs on
//! the `reading` module instead.

use crate::envfacts::Probe;
use crate::exit::{Exit, Failure};
use crate::human::{Human, summary_text};
use crate::label;
use crate::linefile;
use crate::parts::{Envelope, Summary, Values};
use crate::record::Status;
use crate::reporter::Reporter;
use clap::{ArgMatches, Command};
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, IsTerminal, Write};

/// What a tool's stdout carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdout {
    /// The records (the usual case).
    Records,
    /// The tool's payload (netcat mode's data, timecmd's command's output).
    Payload,
}

/// What a tool supplies to the lifecycle.
pub trait Tool {
    /// The tool's name, as in the records' `tool` and in error messages.
    const NAME: &'static str;
    /// The tool's version (`env!("CARGO_PKG_VERSION")`).
    const VERSION: &'static str;
    /// The exit status of the tool's own failures (usage, I/O): 2, or 125 for a tool that
    /// passes a command's status on (timecmd, as env(1)).
    const CANNOT: Exit = Exit::Cannot;
    /// Whether begin describes this machine (every measuring tool), or a source the tool
    /// reads (ingest: the machine the source ran on). A run of the latter that fails before
    /// its engine wrote begin writes the failed summary alone: no begin of facts it never read.
    /// A tool that measures this machine also has its summary marked partial when it was
    /// stopped and continued during the run ([`crate::signal::watch_stops`]).
    const BEGIN_IS_THIS_MACHINE: bool = true;

    /// The typed options the engine runs with.
    type Options;

    /// The command line: the one source for --help, the man page and the completions.
    fn command() -> Command;

    /// The options from the parsed flags: `m` holds the innermost subcommand's flags when
    /// one was given, and `sub` names it (`None`: the command's own). A usage error here
    /// writes no records.
    fn options(m: &ArgMatches, sub: Option<&str>) -> Result<Self::Options, Failure>;

    /// The row name when `--name` is not given.
    fn name(o: &Self::Options) -> String;

    /// The arguments (the program name first) as the tool's command reads them: a drop-in
    /// rewrites its classic tool's syntax that clap cannot read (dd's `of=F bs=4M` operands,
    /// GNU time's `-o` next to `-v`) into its own flags here. An error is a usage error.
    fn args(args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
        Ok(args)
    }

    /// What stdout carries with these options.
    fn stdout(_o: &Self::Options) -> Stdout {
        Stdout::Records
    }

    /// The files this run measures or writes payload to (blkwrite's target, the file a
    /// command's output goes to): `-o` naming one of them is refused before anything is
    /// written.
    fn guarded(_o: &Self::Options) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Measures: writes begin, samples, intervals and the summary through `s`, and says how
    /// the run ended.
    fn run(o: Self::Options, s: &mut Session) -> Result<Exit, Failure>;
}

/// One invocation's records and human lines, handed to the engine.
#[derive(Debug)]
pub struct Session {
    rep: Reporter,
    human: Human,
    begun: bool,
    name_given: bool,
    /// `--name`, when given.
    given: String,
    begin_on_failure: bool,
    /// `-q/--quiet` was given: read once, here, for the tools that act on it beyond the
    /// human lines (timecmd's GNU-time report drops its failure line).
    quiet: bool,
}

impl Session {
    /// A session writing records to `out` (or nowhere), with human lines when `human`.
    pub fn new(env: Envelope, out: Option<Box<dyn Write + Send>>, human: bool) -> Self {
        let rep = match out {
            Some(o) => Reporter::new(env, o),
            None => Reporter::discarding(env),
        };
        Session {
            rep,
            human: Human::new(human),
            begun: false,
            name_given: false,
            given: String::new(),
            begin_on_failure: true,
            quiet: false,
        }
    }

    /// Whether `-q/--quiet` was given. The lifecycle is the flag's one reader: a tool that
    /// does more with it than drop the human lines asks here, not the matches.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// The record writer, for engines that write through it directly.
    pub fn reporter(&mut self) -> &mut Reporter {
        &mut self.rep
    }

    /// The human lines.
    pub fn human(&mut self) -> &mut Human {
        &mut self.human
    }

    /// The record writer and the human lines at once (an engine's loop uses both).
    pub fn parts(&mut self) -> (&mut Reporter, &mut Human) {
        (&mut self.rep, &mut self.human)
    }

    /// Whether `--name` was given (then [`Session::set_name`] changes nothing).
    pub fn name_given(&self) -> bool {
        self.name_given
    }

    /// The row name for the records that follow, unless `--name` chose it.
    pub fn set_name(&mut self, name: &str) {
        if !self.name_given {
            self.rep.set_name(name);
        }
    }

    /// Names the records that follow for one part of a run of `several` (fio's jobs,
    /// hyperfine's commands, a ping's hosts): `--name`, else `prefix`, then the part, as
    /// `NAME PART`; a run of one part (or a record of none) is named `--name`, else `whole`.
    /// `--name` always leads: a tool names its rows through this or [`Session::set_name`].
    pub fn name_part(&mut self, whole: &str, prefix: &str, part: Option<&str>, several: bool) {
        let given = self.name_given.then(|| self.given.clone());
        let name = match (part, several) {
            (Some(p), true) => {
                let base = given.unwrap_or_else(|| prefix.to_string());
                if base.is_empty() {
                    p.to_string()
                } else {
                    format!("{base} {p}")
                }
            }
            _ => given.unwrap_or_else(|| whole.to_string()),
        };
        self.rep.set_name(&name);
    }

    /// The row name.
    pub fn name(&self) -> &str {
        &self.rep.envelope().name
    }

    /// Writes begin once: `info` (the tool's parameters and target facts) with this
    /// machine's facts added flat (kernel, CPU, memory, virtualization) and its load now
    /// (`load_1m`, `procs_running_count`) and the facts `BENCHMATRIX_FACTS` gives
    /// ([`crate::givenfacts`]); the summary then adds the load over the run
    /// ([`Reporter::watch_load`]).
    pub fn begin(&mut self, mut info: Map<String, Value>) -> Result<(), Failure> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        let probe = Probe::system();
        for (k, v) in probe.machine() {
            info.entry(k).or_insert(v);
        }
        crate::givenfacts::add_to(&mut info);
        let load = probe.load_now();
        for (k, v) in load.begin_facts() {
            info.entry(k).or_insert(v);
        }
        self.rep.watch_load(load);
        self.rep.begin(info).map_err(output_failure)
    }

    /// Writes begin once with `info` as it is, without this machine's facts: a converter's
    /// begin describes the machine its source ran on, as far as the source says.
    pub fn begin_as_is(&mut self, info: Map<String, Value>) -> Result<(), Failure> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        self.rep.begin(info).map_err(output_failure)
    }

    /// Starts another run after this one's summary ([`Reporter::next_run`]): a fresh run id,
    /// and begin to write again.
    pub fn next_run(&mut self) {
        self.rep.next_run();
        self.begun = false;
    }

    /// Whether begin has been written.
    pub fn begun(&self) -> bool {
        self.begun
    }

    pub fn sample(&mut self, values: Values, info: Map<String, Value>) -> Result<(), Failure> {
        self.rep.sample(values, info).map_err(output_failure)
    }

    /// A sample that failed: no values, the reason in `error`.
    pub fn sample_failed(&mut self, error: &str, info: Map<String, Value>) -> Result<(), Failure> {
        self.rep.sample_failed(error, info).map_err(output_failure)
    }

    pub fn interval(&mut self, values: Values, info: Map<String, Value>) -> Result<(), Failure> {
        self.rep.interval(values, info).map_err(output_failure)
    }

    pub fn summary(&mut self, s: Summary) -> Result<(), Failure> {
        self.rep.summary(s).map_err(output_failure)
    }

    /// An ok summary with `headline` among `values`.
    pub fn ok(
        &mut self,
        headline: &str,
        values: Values,
        info: Map<String, Value>,
    ) -> Result<(), Failure> {
        self.summary(Summary {
            status: Status::Ok,
            error: None,
            headline: Some(headline.to_string()),
            headlines: Vec::new(),
            values,
            info,
        })
    }

    /// An ok summary that headlines several figures, each a row named "NAME: ROLE" (the
    /// first is `headline`); those not among `values` are left out.
    pub fn ok_rows(
        &mut self,
        headlines: Vec<crate::record::Headline>,
        values: Values,
        info: Map<String, Value>,
    ) -> Result<(), Failure> {
        self.summary(Summary {
            status: Status::Ok,
            error: None,
            headline: None,
            headlines,
            values,
            info,
        })
    }

    /// A summary that is not ok (`Partial` or `Failed`) and says why.
    pub fn not_ok(
        &mut self,
        status: Status,
        error: &str,
        values: Values,
        info: Map<String, Value>,
    ) -> Result<(), Failure> {
        self.summary(Summary {
            status,
            error: Some(error.to_string()),
            headline: None,
            headlines: Vec::new(),
            values,
            info,
        })
    }

    /// Writes the summary the engine left unwritten, then flushes what is held back.
    fn finish(&mut self, result: &Result<Exit, Failure>) -> Result<(), Failure> {
        if !self.rep.summary_written() {
            let (status, error) = match result {
                Ok(Exit::Interrupted) => (Status::Partial, "interrupted".to_string()),
                Ok(_) => (Status::Partial, "ended without a summary".to_string()),
                Err(f) if f.code == Exit::Interrupted => (Status::Partial, f.to_string()),
                Err(f) => (
                    Status::Failed,
                    f.message.clone().unwrap_or_else(|| f.to_string()),
                ),
            };
            if !self.begun && self.begin_on_failure {
                self.begin(Map::new())?;
            }
            self.not_ok(status, &error, Values::new(), Map::new())?;
        }
        self.rep.flush().map_err(output_failure)
    }
}

/// A failed write of records: a broken pipe ends quietly with 0, anything else exit 2.
fn output_failure(e: io::Error) -> Failure {
    Failure::io("writing the records", &e)
}

/// Runs tool `T` with the process's arguments and ends with its status.
pub fn main<T: Tool>() -> std::process::ExitCode {
    run::<T>(std::env::args_os().collect()).into()
}

/// Runs tool `T` with `args` (the program name first); prints a failure as `tool: message`.
pub fn run<T: Tool>(args: Vec<OsString>) -> Exit {
    match invoke::<T>(args) {
        Ok(code) => code,
        Err(f) => {
            if let Some(m) = &f.message {
                let _ = writeln!(io::stderr(), "{}: {m}", T::NAME);
            }
            f.code
        }
    }
}

/// The lifecycle without the final message: what [`run`] prints.
pub fn invoke<T: Tool>(args: Vec<OsString>) -> Result<Exit, Failure> {
    let own = |f: Failure| {
        if f.code == Exit::Cannot {
            f.with_code(T::CANNOT)
        } else {
            f
        }
    };
    let args = T::args(args).map_err(own)?;
    let m = parse(T::command(), args).map_err(own)?;
    let (sub, leaf) = leaf(&m);
    let opts = T::options(leaf, sub).map_err(own)?;
    crate::signal::install().map_err(|e| {
        own(Failure::new(
            Exit::Cannot,
            "installing the Ctrl-C handler",
            e,
        ))
    })?;
    if T::BEGIN_IS_THIS_MACHINE {
        crate::signal::watch_stops()
            .map_err(|e| own(Failure::new(Exit::Cannot, "blocking SIGCONT", e)))?;
    }
    let mut s = open::<T>(leaf, &opts).map_err(own)?;
    let result = T::run(opts, &mut s);
    let finished = s.finish(&result);
    // After an error the `tool: message` line says it all; a made-up summary would repeat it.
    let said_by_error = matches!(&result, Err(f) if f.message.is_some());
    if s.human.on()
        && !s.human.summary_shown()
        && !said_by_error
        && let Some(w) = s.rep.written_summary()
    {
        let text = summary_text(s.name(), w);
        s.human.summary(&text);
    } else if s.human.on()
        && let Some(w) = s.rep.written_summary()
        && w.error
            .as_deref()
            .is_some_and(|e| e.contains(crate::signal::STOPPED))
    {
        // The tool's own summary shows its figures; this says what they are worth.
        let text = format!("{}: {}", s.name(), crate::signal::STOPPED);
        s.human.summary(&text);
    }
    s.human.clear();
    let code = result.map_err(own)?;
    finished.map_err(own)?;
    Ok(code)
}

/// The innermost subcommand given, by name, and its matches (where its flags are); the
/// command's own matches when none was.
fn leaf(m: &ArgMatches) -> (Option<&str>, &ArgMatches) {
    let mut name = None;
    let mut m = m;
    while let Some((n, sub)) = m.subcommand() {
        name = Some(n);
        m = sub;
    }
    (name, m)
}

/// Parses arguments with clap; `--help` and `--version` print and end with 0, a usage error
/// prints clap's message (naming the flag and the fix) and ends with 2.
pub fn parse(cmd: Command, args: Vec<OsString>) -> Result<ArgMatches, Failure> {
    cmd.try_get_matches_from(args).map_err(|e| {
        let _ = e.print();
        Failure::quiet(if e.use_stderr() {
            Exit::Cannot
        } else {
            Exit::Ok
        })
    })
}

/// A flag's value, when the command has the flag at all.
fn flag<'a>(m: &'a ArgMatches, id: &str) -> Option<&'a str> {
    m.try_get_one::<String>(id)
        .ok()
        .flatten()
        .map(String::as_str)
}

/// Whether a switch is given, when the command has it at all.
fn switch(m: &ArgMatches, id: &str) -> bool {
    m.try_get_one::<bool>(id)
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false)
}

/// The session by the output policy: the envelope from the shared flags, the records'
/// destination, and whether a person gets human lines.
fn open<T: Tool>(m: &ArgMatches, opts: &T::Options) -> Result<Session, Failure> {
    let (env, name_given) = label::envelope(T::NAME, T::VERSION, m, &T::name(opts))?;
    if let Ok(v) = std::env::var(crate::parts::INVOCATION_VAR)
        && !v.is_empty()
        && env.invocation.is_none()
    {
        return Err(Failure::usage(format!(
            "{}={v:?} is not a suite invocation id: use 1 to 64 letters, digits, '.', '_', ':' or '-', or unset it",
            crate::parts::INVOCATION_VAR
        )));
    }
    crate::givenfacts::from_env().map_err(Failure::usage)?;
    let quiet = switch(m, "quiet");
    let stderr_tty = io::stderr().is_terminal();
    let stdout_tty = io::stdout().is_terminal();
    let payload = T::stdout(opts) == Stdout::Payload;
    if let Some(path) = flag(m, "output").filter(|p| *p != "-") {
        crate::overlap::check_output(path, &T::guarded(opts), payload)?;
    } else if payload && !stderr_tty {
        crate::overlap::check_stderr()?;
    }
    let records_on_stdout =
        !payload && (flag(m, "output") == Some("-") || flag(m, "output").is_none());
    crate::overlap::check_streams(&T::guarded(opts), records_on_stdout)?;
    let (out, human): (Option<Box<dyn Write + Send>>, bool) =
        match (flag(m, "output"), T::stdout(opts)) {
            (Some("-"), _) => (Some(linefile::stdout()), stderr_tty && !stdout_tty),
            (Some(path), _) => (Some(linefile::records_to(append(path)?)), stderr_tty),
            (None, Stdout::Records) if switch(m, "json") || !stdout_tty => {
                (Some(linefile::stdout()), stderr_tty && !stdout_tty)
            }
            (None, Stdout::Records) => (None, true),
            (None, Stdout::Payload) if switch(m, "json") || !stderr_tty => {
                (Some(linefile::stderr()), false)
            }
            (None, Stdout::Payload) => (None, true),
        };
    let mut s = Session::new(env, out, human && !quiet);
    s.name_given = name_given;
    if name_given {
        s.given = s.name().to_string();
    }
    s.begin_on_failure = T::BEGIN_IS_THIS_MACHINE;
    s.quiet = quiet;
    Ok(s)
}

/// Opens `-o FILE` for appending (records stand alone, so appending keeps every earlier
/// line and its meaning; [`linefile`] keeps the lines whole).
fn append(path: &str) -> Result<std::fs::File, Failure> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Failure::new(Exit::Cannot, format!("-o {path}"), e))
}
