//! The exit status every tool ends with (ARCHITECTURE.md, Exit codes), and the error type that
//! carries it: one enum, one conversion to the process's status.

use std::fmt;
use std::io;

/// How a tool ends. `u8` codes appear only where the process status is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exit {
    /// 0: the run worked (also when the reader of stdout went away).
    Ok,
    /// 1: the run worked but measured a failure (no reply, no records).
    MeasuredFailure,
    /// 2: the tool could not do the job (usage, I/O, permission).
    Cannot,
    /// 130: stopped by Ctrl-C, SIGTERM or SIGHUP, after writing the summary.
    Interrupted,
    /// A code passed on as it is: timecmd ends with its command's status (128+N for signal
    /// N) and with 125/126/127 for its own failures, as env(1) does.
    Code(u8),
}

impl Exit {
    /// The process status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::MeasuredFailure => 1,
            Exit::Cannot => 2,
            Exit::Interrupted => 130,
            Exit::Code(c) => c,
        }
    }

    /// The variant for a process status: 0, 1, 2 and 130 by name, any other as [`Exit::Code`].
    pub fn from_code(c: u8) -> Exit {
        match c {
            0 => Exit::Ok,
            1 => Exit::MeasuredFailure,
            2 => Exit::Cannot,
            130 => Exit::Interrupted,
            c => Exit::Code(c),
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

impl From<u8> for Exit {
    fn from(c: u8) -> Self {
        Exit::from_code(c)
    }
}

/// An error that carries its exit status; the lifecycle prints it as `tool: context: cause`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: Exit,
    /// `context: cause`, or `None` when there is nothing to print (already printed, or a
    /// broken pipe on stdout, which ends a tool quietly).
    pub message: Option<String>,
}

impl Failure {
    /// A failure ending with `code`, printed as `tool: context: cause`.
    pub fn new(
        code: impl Into<Exit>,
        context: impl fmt::Display,
        cause: impl fmt::Display,
    ) -> Self {
        Failure {
            code: code.into(),
            message: Some(format!("{context}: {cause}")),
        }
    }

    /// A usage error (exit 2) with a message that says what was wrong and how to fix it.
    pub fn usage(msg: impl fmt::Display) -> Self {
        Failure {
            code: Exit::Cannot,
            message: Some(msg.to_string()),
        }
    }

    /// An I/O error in `context`; a broken pipe becomes a quiet exit 0.
    pub fn io(context: impl fmt::Display, e: &io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::quiet(Exit::Ok);
        }
        Failure::new(Exit::Cannot, context, e)
    }

    /// Ends with `code` and prints nothing.
    pub fn quiet(code: impl Into<Exit>) -> Self {
        Failure {
            code: code.into(),
            message: None,
        }
    }

    /// The same failure ending with `code` instead.
    pub fn with_code(self, code: Exit) -> Self {
        Failure { code, ..self }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => f.write_str(m),
            None => write!(f, "exit {}", self.code.code()),
        }
    }
}

impl std::error::Error for Failure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in [0u8, 1, 2, 125, 126, 127, 130, 137, 255] {
            assert_eq!(Exit::from_code(c).code(), c);
        }
        assert_eq!(Exit::from_code(130), Exit::Interrupted);
        assert_eq!(Exit::from_code(137), Exit::Code(137));
    }

    #[test]
    fn broken_pipe_is_quiet_success() {
        let f = Failure::io("stdout", &io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(f, Failure::quiet(Exit::Ok));
        let f = Failure::io("stdout", &io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(f.code, Exit::Cannot);
        assert!(f.to_string().starts_with("stdout: "));
    }
}
