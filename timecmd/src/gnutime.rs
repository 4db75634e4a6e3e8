//! GNU time's and POSIX time's reports (`-p`, `-v`, `-f FORMAT`, `-o FILE`, `-a`): after each
//! measured run, the run's figures in the format GNU time 1.9 prints, on stderr or in FILE,
//! so that `/usr/bin/time -v make` becomes `timecmd -v make` and a script that reads time's
//! lines reads the same lines.

use crate::exit::Exit;
use crate::usage::RunUsage;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

/// GNU time's default format (no -p, -v or -f).
pub const DEFAULT_FORMAT: &str = "%Uuser %Ssystem %Eelapsed %PCPU (%Xavgtext+%Davgdata %Mmaxresident)k\n%Iinputs+%Ooutputs (%Fmajor+%Rminor)pagefaults %Wswaps";

/// POSIX time's format (`-p`).
pub const POSIX_FORMAT: &str = "real %e\nuser %U\nsys %S";

/// GNU time's verbose format (`-v`).
pub const VERBOSE_FORMAT: &str = "\tCommand being timed: \"%C\"\n\tUser time (seconds): %U\n\tSystem time (seconds): %S\n\tPercent of CPU this job got: %P\n\tElapsed (wall clock) time (h:mm:ss or m:ss): %E\n\tAverage shared text size (kbytes): %X\n\tAverage unshared data size (kbytes): %D\n\tAverage stack size (kbytes): %p\n\tAverage total size (kbytes): %K\n\tMaximum resident set size (kbytes): %M\n\tAverage resident set size (kbytes): %t\n\tMajor (requiring I/O) page faults: %F\n\tMinor (reclaiming a frame) page faults: %R\n\tVoluntary context switches: %w\n\tInvoluntary context switches: %c\n\tSwaps: %W\n\tFile system inputs: %I\n\tFile system outputs: %O\n\tSocket messages sent: %s\n\tSocket messages received: %r\n\tSignals delivered: %k\n\tPage size (bytes): %Z\n\tExit status: %x";

/// What GNU time's flags asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GnuTime {
    pub format: String,
    /// `-p`: POSIX's format, and no line about a failed command (as GNU time).
    pub posix: bool,
    /// `-o FILE` in GNU time's form: the report to FILE instead of stderr.
    pub output: Option<PathBuf>,
    /// `-a`: append to FILE instead of truncating it.
    pub append: bool,
}

/// One run's figures as GNU time reads them.
pub struct Figures<'a> {
    pub usage: &'a RunUsage,
    pub rusage: &'a libc::rusage,
    pub exit: Exit,
    pub command: &'a [OsString],
}

/// Seconds as GNU time prints them: whole seconds and hundredths, cut (not rounded).
fn secs(s: f64) -> String {
    let cs = (s.max(0.0) * 100.0) as u64;
    format!("{}.{:02}", cs / 100, cs % 100)
}

/// Elapsed time as `h:mm:ss` from an hour, else `m:ss.cc`.
fn elapsed(s: f64) -> String {
    let cs = (s.max(0.0) * 100.0) as u64;
    let whole = cs / 100;
    let (h, m, sec) = (whole / 3600, whole / 60 % 60, whole % 60);
    if h > 0 {
        format!("{h}:{m:02}:{sec:02}")
    } else {
        format!("{m}:{sec:02}.{:02}", cs % 100)
    }
}

fn count(v: libc::c_long) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A kilobyte integral (ru_ixrss...) averaged over the CPU time in clock ticks, 0 without.
fn average(kib: libc::c_long, f: &Figures) -> u64 {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let ticks = ((f.usage.user_s + f.usage.sys_s) * hz) as u64;
    count(kib).checked_div(ticks).unwrap_or(0)
}

/// The value of `%c` for one run; `None` for a letter GNU time does not know.
fn specifier(c: char, f: &Figures) -> Option<String> {
    let r = f.rusage;
    let u = f.usage;
    Some(match c {
        'e' => secs(u.wall_s),
        'E' => elapsed(u.wall_s),
        'U' => secs(u.user_s),
        'S' => secs(u.sys_s),
        'P' => {
            // CPU over wall time in whole percent, in microseconds (as GNU time 1.9).
            let cpu_us = ((u.user_s + u.sys_s) * 1e6) as u64;
            match (cpu_us * 100).checked_div((u.wall_s * 1e6) as u64) {
                Some(p) => format!("{p}%"),
                None => "?%".into(),
            }
        }
        'M' => count(r.ru_maxrss).to_string(),
        't' => average(r.ru_idrss, f).to_string(),
        'K' => average(r.ru_idrss + r.ru_isrss + r.ru_ixrss, f).to_string(),
        'D' => average(r.ru_idrss + r.ru_isrss, f).to_string(),
        'p' => average(r.ru_isrss, f).to_string(),
        'X' => average(r.ru_ixrss, f).to_string(),
        'Z' => nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .unwrap_or(4096)
            .to_string(),
        'F' => count(r.ru_majflt).to_string(),
        'R' => count(r.ru_minflt).to_string(),
        'W' => count(r.ru_nswap).to_string(),
        'c' => count(r.ru_nivcsw).to_string(),
        'w' => count(r.ru_nvcsw).to_string(),
        'I' => count(r.ru_inblock).to_string(),
        'O' => count(r.ru_oublock).to_string(),
        'r' => count(r.ru_msgrcv).to_string(),
        's' => count(r.ru_msgsnd).to_string(),
        'k' => count(r.ru_nsignals).to_string(),
        'C' => f
            .command
            .iter()
            .map(|w| w.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        'x' => match f.exit {
            Exit::Code(n) => n.to_string(),
            Exit::Signal(_) => "0".into(),
        },
        _ => return None,
    })
}

/// `format` with its specifiers and escapes replaced, as GNU time does: an unknown `%X` is
/// `?X`, an unknown `\X` is `?\X`, and a newline ends the report.
pub fn render(format: &str, f: &Figures) -> String {
    let mut out = String::new();
    let mut it = format.chars();
    while let Some(c) = it.next() {
        match c {
            '%' => match it.next() {
                Some('%') => out.push('%'),
                Some(x) => match specifier(x, f) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('?');
                        out.push(x);
                    }
                },
                None => out.push('%'),
            },
            '\\' => match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('\\') => out.push('\\'),
                Some(x) => {
                    out.push_str("?\\");
                    out.push(x);
                }
                None => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// The line GNU time writes before the report when the command failed (not with -p or
/// `quiet`, `-q`, which the lifecycle reads and the session tells).
fn status_line(g: &GnuTime, quiet: bool, exit: Exit) -> String {
    if g.posix || quiet {
        return String::new();
    }
    match exit {
        Exit::Code(0) => String::new(),
        Exit::Code(n) => format!("Command exited with non-zero status {n}\n"),
        Exit::Signal(s) => format!("Command terminated by signal {s}\n"),
    }
}

/// Where the reports go: stderr, or the FILE of `-o`, opened once (truncated unless -a).
pub enum Sink {
    Stderr,
    File(File),
}

impl Sink {
    /// Opens `-o FILE` as GNU time does, before the command runs.
    pub fn open(g: &GnuTime) -> std::io::Result<Sink> {
        match &g.output {
            None => Ok(Sink::Stderr),
            Some(p) => OpenOptions::new()
                .create(true)
                .write(true)
                .append(g.append)
                .truncate(!g.append)
                .open(p)
                .map(Sink::File),
        }
    }

    /// Writes one run's report; `quiet` (`-q`) drops the failure line.
    pub fn report(&mut self, g: &GnuTime, quiet: bool, f: &Figures) -> std::io::Result<()> {
        let text = format!("{}{}", status_line(g, quiet, f.exit), render(&g.format, f));
        match self {
            Sink::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
            Sink::File(file) => file.write_all(text.as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<T>(exit: Exit, check: impl FnOnce(&Figures) -> T) -> T {
        // A real rusage (timecmd's own), with the fields under test set.
        let mut ru = *nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
            .unwrap()
            .as_ref();
        ru.ru_maxrss = 1548;
        ru.ru_minflt = 87;
        ru.ru_majflt = 0;
        ru.ru_utime = libc::timeval {
            tv_sec: 1,
            tv_usec: 239_000,
        };
        ru.ru_stime = libc::timeval {
            tv_sec: 0,
            tv_usec: 10_000,
        };
        let u = RunUsage::new(0, 3_723_456_000_000, &ru);
        let cmd = [
            OsString::from("sh"),
            OsString::from("-c"),
            OsString::from("exit 3"),
        ];
        check(&Figures {
            usage: &u,
            rusage: &ru,
            exit,
            command: &cmd,
        })
    }

    #[test]
    fn specifiers_as_gnu_time() {
        with(Exit::Code(3), |f| {
            assert_eq!(
                render("%e %U %S %M %R %x %C", f),
                "3723.45 1.23 0.01 1548 87 3 sh -c exit 3\n"
            );
            assert_eq!(render("%E", f), "1:02:03\n");
            assert_eq!(render("%Q \\q %% \\t|\\n", f), "?Q ?\\q % \t|\n\n");
            assert!(render("%P", f).starts_with("0%"));
        });
        with(Exit::Signal(15), |f| assert_eq!(render("%x", f), "0\n"));
        assert_eq!(elapsed(61.5), "1:01.50");
        assert_eq!(secs(0.009), "0.00");
    }

    #[test]
    fn the_failure_line_as_gnu_time() {
        let mut g = GnuTime {
            format: DEFAULT_FORMAT.into(),
            posix: false,
            output: None,
            append: false,
        };
        assert_eq!(
            status_line(&g, false, Exit::Code(2)),
            "Command exited with non-zero status 2\n"
        );
        assert_eq!(
            status_line(&g, false, Exit::Signal(9)),
            "Command terminated by signal 9\n"
        );
        assert_eq!(status_line(&g, false, Exit::Code(0)), "");
        assert_eq!(status_line(&g, true, Exit::Code(2)), "", "-q");
        g.posix = true;
        assert_eq!(status_line(&g, false, Exit::Code(2)), "");
    }
}
