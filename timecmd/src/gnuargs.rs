//! GNU time's flags beside timecmd's: their clap arguments, and the one rewrite clap cannot
//! do. `-o FILE` is timecmd's records file (as in every tool) unless GNU time's form is asked
//! for (`-p`, `-v`, `-f`, `-a` or their long names among timecmd's flags): then `-o` and
//! `--output` are GNU time's (its report to FILE) and the records take `--records FILE`.

use crate::gnutime::{self, GnuTime};
use clap::{Arg, ArgAction, ArgMatches, Command};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;

/// The flag `-o` becomes in GNU time's form.
const TIME_OUTPUT: &str = "--time-output";

/// GNU time's flags, added to timecmd's command.
pub fn args(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("portability")
            .short('p')
            .long("portability")
            .action(ArgAction::SetTrue)
            .conflicts_with_all(["verbose", "format"])
            .help_heading("GNU time")
            .help("POSIX time's report after each run: real, user and sys seconds (time -p)"),
    )
    .arg(
        Arg::new("verbose")
            .short('v')
            .long("verbose")
            .action(ArgAction::SetTrue)
            .conflicts_with("format")
            .help_heading("GNU time")
            .help("GNU time -v's report after each run: every rusage field, one a line"),
    )
    .arg(
        Arg::new("format")
            .short('f')
            .long("format")
            .value_name("FORMAT")
            .help_heading("GNU time")
            .help("GNU time -f's report after each run: %e %E %U %S %P %M %t %K %D %p %X %Z %F %R %W %c %w %I %O %r %s %k %C %x, \\n \\t \\\\ and %%"),
    )
    .arg(
        Arg::new("append")
            .short('a')
            .long("append")
            .action(ArgAction::SetTrue)
            .requires("time_output")
            .help_heading("GNU time")
            .help("With -o FILE in GNU time's form: append the report instead of truncating FILE"),
    )
    .arg(
        Arg::new("time_output")
            .long("time-output")
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .help_heading("GNU time")
            .help("GNU time's report to FILE (truncated before the first run, unless -a) instead of stderr; with -p, -v, -f or -a given, -o and --output mean this, and the records take --records FILE"),
    )
}

/// What GNU time's flags asked for; `None` when none was given (timecmd's own summary).
pub fn from_matches(m: &ArgMatches) -> Option<GnuTime> {
    let format = if m.get_flag("portability") {
        gnutime::POSIX_FORMAT.to_string()
    } else if m.get_flag("verbose") {
        gnutime::VERBOSE_FORMAT.to_string()
    } else if let Some(f) = m.get_one::<String>("format") {
        f.clone()
    } else if m.contains_id("time_output") {
        gnutime::DEFAULT_FORMAT.to_string()
    } else {
        return None;
    };
    Some(GnuTime {
        format,
        posix: m.get_flag("portability"),
        output: m.get_one::<PathBuf>("time_output").cloned(),
        append: m.get_flag("append"),
    })
}

/// The spellings of timecmd's flags that take their value as the next argument.
fn valued(cmd: &Command) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in cmd.get_arguments() {
        if a.is_positional() || !a.get_action().takes_values() || a.is_require_equals_set() {
            continue;
        }
        out.extend(a.get_short().map(|c| format!("-{c}")));
        for l in a
            .get_long()
            .into_iter()
            .chain(a.get_all_aliases().into_iter().flatten())
        {
            out.insert(format!("--{l}"));
        }
    }
    out
}

/// timecmd's own arguments split into single flags (`-pvo F` is `-p -v -o F`), the command
/// and its arguments left as they are.
fn split(cmd: &Command, args: Vec<OsString>) -> Vec<OsString> {
    let valued = valued(cmd);
    let mut out = Vec::new();
    let mut it = args.into_iter();
    out.extend(it.next());
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        if s == "--" || !s.starts_with('-') || s == "-" {
            // The command starts here.
            out.push(arg);
            out.extend(it);
            break;
        }
        if s.starts_with("--") {
            let bare = !s.contains('=');
            out.push(arg);
            if bare && valued.contains(&s) {
                out.extend(it.next());
            }
            continue;
        }
        let letters: Vec<char> = s.chars().skip(1).collect();
        for (i, c) in letters.iter().enumerate() {
            let flag = format!("-{c}");
            out.push(flag.clone().into());
            if valued.contains(&flag) {
                let rest: String = letters[i + 1..].iter().collect();
                if rest.is_empty() {
                    out.extend(it.next());
                } else {
                    out.push(rest.into());
                }
                break;
            }
        }
    }
    out
}

/// GNU time's flags, by spelling: any of them among timecmd's asks for GNU time's form.
const GNU_FLAGS: &[&str] = &[
    "-p",
    "-v",
    "-f",
    "-a",
    "--portability",
    "--verbose",
    "--format",
    "--append",
];

/// Rewrites `-o`/`--output` into `--time-output` when GNU time's form is asked for.
pub fn rewrite(cmd: &Command, args: Vec<OsString>) -> Vec<OsString> {
    let valued = valued(cmd);
    let mut args = split(cmd, args);
    // timecmd's own flags (and the places of their values), up to the command.
    let mut flags = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let s = args[i].to_string_lossy().into_owned();
        if s == "--" || !s.starts_with('-') || s == "-" {
            break;
        }
        flags.push(i);
        i += if !s.contains('=') && valued.contains(&s) {
            2
        } else {
            1
        };
    }
    let name = |a: &OsString| {
        let s = a.to_string_lossy();
        s.split('=').next().unwrap_or_default().to_string()
    };
    if !flags
        .iter()
        .any(|&i| GNU_FLAGS.contains(&name(&args[i]).as_str()))
    {
        return args;
    }
    for i in flags {
        let s = args[i].to_string_lossy().into_owned();
        if s == "-o" || s == "--output" {
            args[i] = TIME_OUTPUT.into();
        } else if let Some(v) = s.strip_prefix("--output=") {
            args[i] = format!("{TIME_OUTPUT}={v}").into();
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(args: &[&str]) -> Vec<String> {
        let args = std::iter::once("timecmd")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        rewrite(&crate::command(), args)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn o_is_gnu_times_only_in_its_form() {
        assert_eq!(
            rw(&["-o", "r.jsonl", "make"]),
            ["timecmd", "-o", "r.jsonl", "make"]
        );
        assert_eq!(
            rw(&["-f", "%e %M", "-o", "F", "-a", "make", "-o", "x"]),
            [
                "timecmd",
                "-f",
                "%e %M",
                "--time-output",
                "F",
                "-a",
                "make",
                "-o",
                "x"
            ]
        );
        assert_eq!(
            rw(&["-avoF", "--records", "r", "ls"]),
            [
                "timecmd",
                "-a",
                "-v",
                "--time-output",
                "F",
                "--records",
                "r",
                "ls"
            ]
        );
        assert_eq!(
            rw(&["-p", "--output=F", "--", "ls"]),
            ["timecmd", "-p", "--time-output=F", "--", "ls"]
        );
        // After the command's first word nothing is timecmd's.
        assert_eq!(
            rw(&["ls", "-v", "-o", "x"]),
            ["timecmd", "ls", "-v", "-o", "x"]
        );
    }
}
