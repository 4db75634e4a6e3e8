//! What the flags ask for: the command line, the runs, the helpers, the redirections.

use crate::spawn::{Stdin, Stdout};
use clap::ArgMatches;
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::time::Duration;

/// What the flags ask for.
#[derive(Debug)]
pub struct Plan {
    pub argv: Vec<OsString>,
    /// The command as one line: the default row name.
    pub display: String,
    pub shell: Option<String>,
    pub runs: u64,
    pub warmup: u64,
    pub setup: Option<String>,
    pub prepare: Option<String>,
    pub cleanup: Option<String>,
    pub time_limit: Option<Duration>,
    pub ignore_failure: bool,
    pub stdout: Stdout,
    pub input: Stdin,
    /// The signals that timecmd's parent set to be ignored (`nohup`, `cmd &` in a script),
    /// which stay ignored (the lifecycle leaves them so) for timecmd and its runs.
    pub ignored: Vec<Signal>,
    /// GNU time's report after each measured run (-p, -v, -f, -o in its form).
    pub gnu: Option<crate::gnutime::GnuTime>,
}

impl Plan {
    /// The plan from the parsed flags.
    pub fn from_matches(m: &ArgMatches) -> Plan {
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
            stdout: m
                .get_one::<Stdout>("stdout")
                .cloned()
                .unwrap_or(Stdout::Inherit),
            input: m
                .get_one::<Stdin>("input")
                .cloned()
                .unwrap_or(Stdin::Inherit),
            ignored: crate::reap::ignored_signals(),
            gnu: crate::gnuargs::from_matches(m),
        }
    }

    /// The shell for --prepare and --cleanup.
    pub fn helper_shell(&self) -> &str {
        self.shell.as_deref().unwrap_or("sh")
    }
}
