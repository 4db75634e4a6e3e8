//! How a run ended: the wait status as an exit code or a signal, and the shell's 128+N;
//! and timecmd's own exit codes, as env(1) and timeout(1) give them.

/// timecmd's own failure, as env(1) reports it.
pub const EXIT_OWN_FAILURE: u8 = 125;
/// The command was found but could not be executed.
pub const EXIT_NOT_EXECUTABLE: u8 = 126;
/// The command was not found.
pub const EXIT_NOT_FOUND: u8 = 127;
/// The last run was killed by `--time-limit`, as timeout(1) reports it.
pub const EXIT_TIMED_OUT: u8 = 124;

/// What the wait status says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    pub fn from_status(status: libc::c_int) -> Exit {
        if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Code(libc::WEXITSTATUS(status))
        }
    }

    /// The shell's convention: the exit code, or 128+N for signal N.
    pub fn shell_code(self) -> u8 {
        match self {
            Exit::Code(c) => (c & 0xff) as u8,
            Exit::Signal(s) => (128 + s).clamp(0, 255) as u8,
        }
    }

    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

/// The signal's name without SIG (`INT`), or its number.
pub fn signal_name(sig: i32) -> String {
    let names = [
        (libc::SIGHUP, "HUP"),
        (libc::SIGINT, "INT"),
        (libc::SIGQUIT, "QUIT"),
        (libc::SIGILL, "ILL"),
        (libc::SIGTRAP, "TRAP"),
        (libc::SIGABRT, "ABRT"),
        (libc::SIGBUS, "BUS"),
        (libc::SIGFPE, "FPE"),
        (libc::SIGKILL, "KILL"),
        (libc::SIGUSR1, "USR1"),
        (libc::SIGSEGV, "SEGV"),
        (libc::SIGUSR2, "USR2"),
        (libc::SIGPIPE, "PIPE"),
        (libc::SIGALRM, "ALRM"),
        (libc::SIGTERM, "TERM"),
        (libc::SIGCHLD, "CHLD"),
        (libc::SIGXCPU, "XCPU"),
        (libc::SIGXFSZ, "XFSZ"),
        (libc::SIGSYS, "SYS"),
    ];
    names
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| sig.to_string(), |(_, s)| (*s).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_codes() {
        assert_eq!(Exit::Code(3).shell_code(), 3);
        assert_eq!(Exit::Signal(libc::SIGKILL).shell_code(), 137);
        assert_eq!(Exit::Signal(libc::SIGINT).shell_code(), 130);
        assert!(Exit::Code(0).success());
        assert!(!Exit::Signal(9).success());
        assert_eq!(signal_name(libc::SIGTERM), "TERM");
        assert_eq!(signal_name(64), "64");
    }
}
