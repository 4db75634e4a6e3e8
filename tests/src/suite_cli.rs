//! The `./benchmatrix` script's command line as a clap Command: the source of its man page
//! (benchmatrix.1) and completions. The script parses its options in sh; tests/integration/script_cli.rs
//! checks that its `--help` and its parser name exactly these options, so the two cannot drift.

use crate::docs::Section;
use clap::{Arg, ArgAction, Command, ValueHint};

const LONG_ABOUT: &str = "\
Runs the classic environment-comparison suite on this machine and prints the matrix of every
results file in the results directory. Run it on each environment with its own --label, copy
the results/*.jsonl files together, and the matrix gets a column per environment. Rows are
named by role (\"network throughput this->peer\", \"latency for icmp this<->loopback\", \"time
make\"), never by host or a machine's parameter, so that every machine's results line up; the
peer's address, make's job count and such are in tags (peer, jobs).

The steps: network throughput both ways (loopback, or --peer HOST), ICMP latency, tar xjf and
make -jN of trees it generates, the CPU and memory costs (cpumem: system call, pipe round trip,
spawn, page fault, memory bandwidth and latency, clock read; a row each), a block file written
buffered+fsync and with O_DIRECT, then read back with O_DIRECT at random (4 KiB, one at a time
and 32 in flight) and in sequence, and 16384 files created, stat'ed and unlinked (part of the
disk step, on the --dir file system). It
builds the tools with cargo build --release first (quick when they are up to date), unless
BENCHMATRIX_BIN names prebuilt ones.

The records go to the results file only, the matrix to stdout. On a terminal each step is
one line: about how long it takes (from this machine's earlier runs in the results file
where there are any, else a guess from typical speeds), a dot per run, then its figures (the
medians of this run's records) and how long it took; the tools are quiet, and what they still
say (a warning, an error) follows the step's line. Then how long the run took by its records
and the steps that took the most of it (collate --times), and the matrix. -v shows every
tool's own lines instead, and every step's time. A first build shows cargo's progress. Off a
terminal (a pipe, CI, Ansible) the script writes a few progress lines.

With --peer HOST the network steps measure the link to HOST, which runs ./benchmatrix --serve
for the time of the run: that starts the listeners the run needs, says what it listens on and
the run's token, and serves until Ctrl-C, SIGTERM or --serve-time, leaving no process or port
behind; its own records go nowhere, so they never become rows. Its listeners serve only
clients that give the token (--token here, or BENCHMATRIX_TOKEN); any other connection is
refused and logged, and each session is capped by --session-time and --session-bytes.
fleet/playbook.yml does all this on many machines with Ansible.";

/// The examples of `--help`, in the layout the man page's EXAMPLES section reads.
pub const EXAMPLES: &str = "\
Examples:
  Measure this machine as one environment, append to results/para_lvm_san.jsonl, print the matrix:
      ./benchmatrix --label para/lvm/san
  Measure the link to a peer (dom0), which serves for the time of the run:
      ./benchmatrix --serve                                 (on dom0: prints its token)
      ./benchmatrix --label para/lvm/san --peer dom0 --token TOKEN    (here)
  Only the disk steps, a 4G file on the file system under test:
      ./benchmatrix --only disk --disk-size 4G --dir /mnt/san
  A short trial run that keeps its records out of the matrix folder:
      ./benchmatrix --runs 2 --disk-size 64M --results /tmp/trial
  The matrix of every machine's results as a DokuWiki table, against a baseline column:
      collate -f dokuwiki --baseline bare/xfs/disc results/*.jsonl";

/// The environment variables the script reads, as its `--help` lists them.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("BENCH_LABEL", "default for --label"),
    (
        "BENCHMATRIX_TOKEN",
        "default for --token (which ps shows; the variable it does not)",
    ),
    (
        "BENCHMATRIX_INVOCATION",
        "the id every record of this run carries as its invocation (default: the time and 32 random bits); collate pools \
         and tests runs by it",
    ),
    (
        "BENCHMATRIX_BIN",
        "directory of prebuilt tools (netpipe, pingrt, blkwrite, blkread, fsmeta, timecmd, cpumem, collate): use them and \
         build nothing (e.g. BENCHMATRIX_BIN=target/release, as the tests do)",
    ),
    (
        "CARGO_TARGET_DIR",
        "where cargo builds the tools (default: target/ here); they run from its release/",
    ),
    (
        "CC",
        "C compiler for the make step (default: cc, gcc or clang)",
    ),
    (
        "TMPDIR",
        "where the scratch directory for the tar and make trees is made (default: /tmp)",
    ),
];

/// The sections of the man page that the Command cannot carry.
pub const SECTIONS: &[Section] = &[
    Section {
        title: "ENVIRONMENT",
        items: ENVIRONMENT,
    },
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

/// An option that takes a value.
fn valued(name: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .action(ArgAction::Set)
        .help(help)
}

/// The script's options, in the order of its `--help`.
pub fn command() -> Command {
    Command::new("benchmatrix")
        .about("Run the classic environment-comparison suite on this machine and print the matrix")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .disable_help_flag(true)
        .arg(valued("label", "LABEL", "environment label, levels separated by / (default: $BENCH_LABEL, else the host name)"))
        .arg(valued("peer", "HOST", "measure network and ICMP against HOST, which runs ./benchmatrix --serve").value_hint(ValueHint::Hostname))
        .arg(valued("port", "PORT", "first of the two TCP ports of --serve and --peer (default 5301)"))
        .arg(
            Arg::new("serve")
                .long("serve")
                .action(ArgAction::SetTrue)
                .help("serve a --peer run from another machine: listen on PORT and PORT+1 (all addresses, or --bind) until Ctrl-C, SIGTERM or --serve-time; runs no step"),
        )
        .arg(valued("serve-time", "DUR", "with --serve: stop after DUR, e.g. 10m (default: serve until stopped)"))
        .arg(valued("token", "TOKEN", "with --serve: serve only clients that give TOKEN (default: a random one, printed); with --peer: the token the peer's --serve printed (1 to 16 characters, no spaces; default: $BENCHMATRIX_TOKEN)"))
        .arg(valued("bind", "ADDR", "with --serve: listen on this address only (default: all addresses)"))
        .arg(valued("session-time", "DUR", "with --serve: end a client's session after DUR (default 10m)"))
        .arg(valued("session-bytes", "SIZE", "with --serve: end a client's session after SIZE bytes (default 1T)"))
        .arg(valued("net-time", "DUR", "length of each network transfer (default 1s)"))
        .arg(valued("dir", "DIR", "where to write the block file and the metadata step's files, each in a scratch directory made there and removed after (default: the current directory)").value_hint(ValueHint::DirPath))
        .arg(valued("disk-size", "SIZE", "size of the block file (default 256M)"))
        .arg(valued("runs", "N", "repetitions of each network transfer, tar, make and disk measurement (default 6: enough for a 95% CI)"))
        .arg(valued("jobs", "N", "make -jN, recorded in the tag jobs (default: the number of CPUs)"))
        .arg(valued("only", "LIST", "run only these steps: net,icmp,tar,make,cpu,disk (comma-separated)"))
        .arg(valued("results", "DIR", "results directory (default: results)").value_hint(ValueHint::DirPath))
        .arg(
            valued("format", "FMT", "matrix format, passed to collate (text, dokuwiki, markdown, html, csv, json, svg); html is also written to report.html in the results directory")
                .short('f')
                .value_parser(["text", "dokuwiki", "markdown", "html", "csv", "json", "svg"])
                .hide_possible_values(true),
        )
        .arg(valued("baseline", "LABEL", "compare every column with this label's (passed to collate)"))
        .arg(
            Arg::new("no-matrix")
                .long("no-matrix")
                .action(ArgAction::SetTrue)
                .help("do not print the matrix"),
        )
        .arg(
            Arg::new("verbose")
                .short('v')
                .long("verbose")
                .action(ArgAction::SetTrue)
                .help("on a terminal, each tool's own lines (per-run detail) and every step's time"),
        )
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help("print this help"),
        )
}
