//! The one flag vocabulary: the flags every record-writing tool shares (added by
//! [`record`]), and the table of what each short flag means in every tool, with the classic
//! tools' flags that a drop-in keeps. benchmatrix(7) lists the table and a test holds every
//! tool's command to it.

use clap::{Arg, ArgAction, Command, value_parser};

/// Adds the record flags to a tool's command: `-o/--output FILE` (append records),
/// `--json` (records on stdout even on a terminal), `--label`, `--name` and `--tag`.
pub fn record(cmd: Command) -> Command {
    let cmd = cmd
        .arg(
            Arg::new("output")
                .short('o')
                .long("output")
                .value_name("FILE")
                .help_heading("Record")
                .help("Append the records to FILE (- is stdout); a terminal still gets the human lines"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help_heading("Record")
                .help("Records on stdout even when it is a terminal (no human lines then)"),
        );
    crate::label::args(cmd)
}

/// The largest `--seed`: 2^53 - 1, the largest integer every JSON reader (jq too) holds
/// exactly, so that the seed a begin record reports runs the same order again.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// `--seed N`, 0 to [`MAX_SEED`]; `what` says what the seed orders (`Seed for the random
/// offsets`), the range and the default are said after it.
pub fn seed(what: &str) -> Arg {
    Arg::new("seed")
        .long("seed")
        .value_name("N")
        .value_parser(value_parser!(u64).range(0..=MAX_SEED))
        .help(format!(
            "{what}, 0 to 2^53 - 1 so that every JSON reader (jq too) holds it exactly (default: a fresh one each run, reported in begin)"
        ))
}

/// A fresh seed for a run without `--seed`: random, within [`MAX_SEED`].
pub fn fresh_seed() -> u64 {
    crate::parts::random_u64() & MAX_SEED
}

/// `-i/--interval DURATION` (the vocabulary's time between probes or progress records), its
/// value in seconds (`500ms`, `2s`, a bare number is seconds); each tool adds its help and
/// default.
pub fn interval() -> Arg {
    Arg::new("interval")
        .short('i')
        .long("interval")
        .value_name("DURATION")
        .value_parser(|s: &str| crate::units::parse_seconds(s))
}

/// `-c/--count N` (the vocabulary's how many); each tool adds its range, help and default.
pub fn count() -> Arg {
    Arg::new("count").short('c').long("count").value_name("N")
}

/// `-q/--quiet`: no human lines on stderr, even on a terminal.
pub fn quiet() -> Arg {
    Arg::new("quiet")
        .short('q')
        .long("quiet")
        .action(ArgAction::SetTrue)
        .help("No human lines on stderr, even on a terminal")
}

/// One short flag of the vocabulary: the letter, the long name it stands for, what it means.
#[derive(Clone, Copy, Debug)]
pub struct Short {
    pub flag: char,
    pub long: &'static str,
    pub meaning: &'static str,
}

/// What each short flag means wherever it is used outside a classic tool's set.
pub const VOCABULARY: &[Short] = &[
    Short {
        flag: 'c',
        long: "count",
        meaning: "how many (probes, blocks)",
    },
    Short {
        flag: 'i',
        long: "interval",
        meaning: "time between probes or progress records",
    },
    Short {
        flag: 's',
        long: "size",
        meaning: "how much, a size (4k = 4096, 4kB = 4000)",
    },
    Short {
        flag: 't',
        long: "time",
        meaning: "how long, a duration (a bare number is seconds)",
    },
    Short {
        flag: 'o',
        long: "output",
        meaning: "append the records to FILE",
    },
    Short {
        flag: 'q',
        long: "quiet",
        meaning: "no human lines",
    },
    Short {
        flag: 'b',
        long: "bs",
        meaning: "block size of each read, write or send",
    },
    Short {
        flag: 'r',
        long: "runs",
        meaning: "measured runs of a command",
    },
    Short {
        flag: 'f',
        long: "format",
        meaning: "output format",
    },
    Short {
        flag: 'P',
        long: "parallel",
        meaning: "parallel streams",
    },
    Short {
        flag: 'O',
        long: "omit",
        meaning: "leave out the first DURATION (warm-up)",
    },
    Short {
        flag: 'C',
        long: "congestion",
        meaning: "TCP congestion control",
    },
    Short {
        flag: 'M',
        long: "mss",
        meaning: "TCP maximum segment size",
    },
    Short {
        flag: 'B',
        long: "bind",
        meaning: "local address to bind",
    },
    Short {
        flag: '4',
        long: "",
        meaning: "IPv4 only",
    },
    Short {
        flag: '6',
        long: "",
        meaning: "IPv6 only",
    },
];

/// A classic tool's short flags that a drop-in keeps with the classic meaning.
#[derive(Clone, Copy, Debug)]
pub struct Classic {
    /// The tool (and mode) that is the drop-in, as `command` or `command subcommand`.
    pub tool: &'static str,
    /// The classic tool it replaces.
    pub classic: &'static str,
    /// The short flags kept with their classic meaning.
    pub flags: &'static str,
}

/// The drop-ins and the classic flags they keep.
pub const CLASSIC: &[Classic] = &[
    Classic {
        tool: "pingrt",
        classic: "ping",
        flags: "cistWwfInqDO46",
    },
    Classic {
        tool: "netpipe",
        classic: "nc",
        flags: "lpskwdNnv46",
    },
    Classic {
        tool: "timecmd",
        classic: "time",
        flags: "pvfa",
    },
    Classic {
        tool: "fsmeta",
        classic: "fs_mark",
        flags: "n",
    },
];

/// The meaning of `flag` in `tool`: the classic tool's where `tool` keeps it, else the
/// vocabulary's long name; `None` when the vocabulary has no such letter.
pub fn meaning(tool: &str, flag: char) -> Option<&'static str> {
    if let Some(c) = CLASSIC
        .iter()
        .find(|c| c.tool == tool && c.flags.contains(flag))
    {
        return Some(c.classic);
    }
    VOCABULARY.iter().find(|s| s.flag == flag).map(|s| s.long)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_seed_is_within_the_flags_range() {
        for _ in 0..1000 {
            assert!(fresh_seed() <= MAX_SEED);
        }
        let m = Command::new("t").arg(seed("Seed")).try_get_matches_from([
            "t",
            "--seed",
            "9007199254740991",
        ]);
        assert_eq!(
            m.map(|m| m.get_one::<u64>("seed").copied()).ok().flatten(),
            Some(MAX_SEED)
        );
        let over = Command::new("t").arg(seed("Seed")).try_get_matches_from([
            "t",
            "--seed",
            "9007199254740992",
        ]);
        assert!(over.is_err(), "2^53 is refused");
    }

    #[test]
    fn letters_are_defined_once() {
        for (i, a) in VOCABULARY.iter().enumerate() {
            assert!(
                VOCABULARY[i + 1..].iter().all(|b| b.flag != a.flag),
                "-{} twice",
                a.flag
            );
        }
        assert_eq!(meaning("pingrt", 'w'), Some("ping"));
        assert_eq!(meaning("timecmd", 'r'), Some("runs"));
        assert_eq!(meaning("timecmd", 'w'), None);
    }

    #[test]
    fn record_flags_parse() {
        let m = record(Command::new("t"))
            .try_get_matches_from(["t", "-o", "r.jsonl", "--json", "--label", "a/b"])
            .unwrap();
        assert_eq!(
            m.get_one::<String>("output").map(String::as_str),
            Some("r.jsonl")
        );
        assert!(m.get_flag("json"));
    }
}
