//! The `./benchmatrix` script's command line as a clap Command, the source of its man page
//! (benchmatrix.1) and completions, made from the one definition: the script's own usage text
//! (its `--help`), read from the script when this crate is built. The script parses its
//! options in sh; tests/integration/script_cli.rs checks that its parser takes exactly these.

use crate::docs::Section;
use clap::{Arg, ArgAction, Command, ValueHint};
use std::sync::OnceLock;

/// The script, as this crate was built with it.
const SCRIPT: &str = include_str!("../../benchmatrix");

/// The script's usage text: the here-document of its `usage()`.
pub fn usage() -> &'static str {
    SCRIPT
        .split_once("usage() {\n    cat <<'EOF'\n")
        .and_then(|(_, rest)| rest.split_once("\nEOF\n"))
        .map(|(text, _)| text)
        .expect("the script's usage() here-document")
}

/// The lines of the usage text under the heading `title` ("Options:"), up to the next
/// heading.
pub fn block<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The entries of a usage list: (term, description), a description's continuation lines
/// (indented deeper than the two spaces of a term) joined to it with single spaces.
pub fn entries(lines: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in lines {
        let term_line = line.starts_with("  ") && !line.starts_with("   ");
        match out.last_mut() {
            Some((_, desc)) if !term_line => {
                desc.push(' ');
                desc.push_str(line.trim());
            }
            _ => {
                let (term, desc) = line.trim().split_once("  ").unwrap_or((line.trim(), ""));
                out.push((term.to_string(), desc.trim().to_string()));
            }
        }
    }
    out
}

/// An option's term split: "-f, --format FMT" is (Some('f'), "format", Some("FMT")).
pub fn term_parts(term: &str) -> (Option<char>, String, Option<String>) {
    let (short, rest) = match term.split_once(", ") {
        Some((short, rest)) => (short.strip_prefix('-').and_then(|c| c.chars().next()), rest),
        None => (None, term),
    };
    let (long, value) = match rest.split_once(' ') {
        Some((long, value)) => (long, Some(value.to_string())),
        None => (rest, None),
    };
    (short, long.trim_start_matches("--").to_string(), value)
}

/// Leaks `s` for the Command and the man page sections, which want `'static` text (made once
/// per process).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// One option of the usage text as a clap Arg; what the text cannot say (completion hints,
/// the format's values, which it lists in its description) is added here.
fn arg(term: &str, desc: &str) -> Arg {
    let (short, long, value) = term_parts(term);
    let long = leak(long);
    let mut a = Arg::new(long).long(long).help(leak(desc.to_string()));
    if let Some(c) = short {
        a = a.short(c);
    }
    a = match (value, long) {
        (_, "help") => a.action(ArgAction::Help),
        (None, _) => a.action(ArgAction::SetTrue),
        (Some(v), _) => a.value_name(leak(v)).action(ArgAction::Set),
    };
    match long {
        "peer" => a.value_hint(ValueHint::Hostname),
        // The steps and workloads the description lists ("...: net,icmp,tar (...)", "add a
        // workload's steps to the run: kernel (...)"): the values a completion offers.
        "only" | "workload" => {
            let list = desc
                .split_once(": ")
                .and_then(|(_, r)| r.split_once(" ("))
                .map(|(l, _)| l)
                .expect("--only and --workload list their values after a colon");
            let values: Vec<&'static str> = list.split(',').map(|v| leak(v.to_string())).collect();
            let a = a.value_parser(values).hide_possible_values(true);
            // --only takes several, comma-separated.
            if long == "only" {
                a.value_delimiter(',')
            } else {
                a
            }
        }
        "dir" | "results" => a.value_hint(ValueHint::DirPath),
        "format" => {
            let list = desc
                .split_once('(')
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(l, _)| l)
                .expect("--format lists its formats in parentheses");
            let values: Vec<&'static str> = list.split(", ").map(|v| leak(v.to_string())).collect();
            a.value_parser(values).hide_possible_values(true)
        }
        _ => a,
    }
}

/// The script's options, in the order of its `--help`, with its description and examples.
pub fn command() -> Command {
    let text = usage();
    let about: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| *l != "Options:")
        .collect();
    let examples: Vec<&str> = text.lines().skip_while(|l| *l != "Examples:").collect();
    let mut cmd = Command::new("benchmatrix")
        .about("Run the classic environment-comparison suite on this machine and print the matrix")
        .long_about(leak(about.join("\n").trim().to_string()))
        .after_help(leak(examples.join("\n")))
        .disable_help_flag(true);
    for (term, desc) in entries(&block(text, "Options:")) {
        cmd = cmd.arg(arg(&term, &desc));
    }
    cmd
}

/// The environment variables of the usage text: (name, description).
pub fn environment() -> &'static [(&'static str, &'static str)] {
    static ENV: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    ENV.get_or_init(|| {
        entries(&block(usage(), "Environment:"))
            .into_iter()
            .map(|(name, desc)| (leak(name), leak(desc)))
            .collect()
    })
}

/// The man page's sections beyond the Command: the environment, the files, the exit status.
pub fn sections() -> Vec<Section> {
    let mut out = vec![Section {
        title: "ENVIRONMENT",
        items: environment(),
    }];
    out.extend(MORE.iter().map(|s| Section {
        title: s.title,
        items: s.items,
    }));
    out
}

/// The man page's sections that the script's usage text does not hold.
const MORE: &[Section] = &[
    Section {
        title: "FILES",
        items: &[(
            "results/LABEL.jsonl",
            "the records of every run with that label, appended (a / or a space in the label \
             becomes _); --results names another folder",
        )],
    },
    Section {
        title: "EXIT STATUS",
        items: &[
            (
                "0",
                "every step ran (a step left out for a missing program, such as bzip2 or a C \
                 compiler, says so and is not a failure); --serve: served for --serve-time",
            ),
            (
                "1",
                "a step failed: the others ran, their records are kept and the matrix is printed; --serve: a listener ended on its own",
            ),
            (
                "2",
                "could not do the job: a bad option (checked before anything runs), tools that could not be built or found, a folder it could not write, a --peer that does not serve, or ports --serve cannot listen on",
            ),
            (
                "130, 143",
                "ended by Ctrl-C (SIGINT) or SIGTERM; the scratch files are removed, --serve's listeners stopped",
            ),
        ],
    },
];
