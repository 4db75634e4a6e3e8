//! ingest's command line: `ingest [FORMAT] [FILE]`, the one source for --help, the man page
//! and the completions.

use crate::detect::Format;
use clap::{Arg, ArgMatches, Command, value_parser};
use measure::Failure;
use std::path::PathBuf;

const LONG_ABOUT: &str = "\
Reads the output of a classic benchmarking tool and writes it as benchmatrix/1 records, so \
that years of iperf3, fio, hyperfine and ping results join the matrix next to the records \
of benchmatrix's own tools (collate reads only records and needs to know no tool).

Formats (told from the content, or named by the first word):
  iperf3     iperf3 -J (TCP and UDP, -P, -R, --bidir) and iperf3 --json-stream: a sample per \
run, its headline throughput_bits_per_s the receiver's end.sum_received.bits_per_second; \
received and sent bytes, the sender's bits/s, retransmits, UDP jitter_s, lost_count and \
loss_ratio, CPU seconds per second (its CPU percentages / 100); with --bidir the reverse direction as reverse_* keys; an interval \
record per reported interval (and direction).
  fio        fio --output-format=json or json+ (fio 2.x and 3.x): a sample per job and \
direction: reads_per_s, writes_per_s or trims_per_s (fio's iops), throughput_bytes_per_s \
(bw_bytes), io_bytes, runtime_s, completion latency mean, min, max, stddev and percentiles \
(latency_p99_9_s) in seconds; the \"0.00\": 0 entries fio 2.x to 3.1 pad the list with are \
no percentile. Text fio prints before its JSON is skipped; text after it is \
named in the summary's info.warning.
  hyperfine  hyperfine --export-json: each command a run of its own, named by the command \
(hyperfine's --command-name; a parameter the name does not show is added, as in \
build (compiler = gcc)): a sample per timed run (wall_s, its exit code) and a summary with \
hyperfine's mean, median, stddev, min, max, user and system time, the headline \
wall_median_s. A repeated command is a row of its own (sleep 1 #2) and a command without \
times gives a summary without samples, each with a warning (info.warnings and stderr).
  ping       iputils ping text (with or without -D time stamps, -O, -p; BSD's and macOS's \
ping and ping6, busybox's too): an rtt_s sample per probe's first reply (time= in ms, us or s; \
a time<1 ms reply has no rtt_s, its bound in info.rtt_below_s), a failed sample per error or \
unanswered probe (a BSD error's header dump is skipped), a further reply for the same \
icmp_seq (DUP! or not) a duplicate; ping's loss (loss_ratio from the percentage it printed, \
beside sent_count and received_count), min/avg/max/mdev and pipe in the summary. A \
reply outside ping's own min/max, beyond what printing to the last digit explains (older \
iputils cut a reply of 23.359 ms to time=23.3), is refused.
  fping      fping -C, -c and -e text: each host a run of its own (row ping HOST): an rtt_s \
sample per reply, a failed sample per lost probe (from the counts of -c -q too), and a \
summary with its sent and received counts, loss_ratio and fping's min/avg/max as printed \
(with -C, the exact mean of the printed times). The outputs of several fping runs one \
after the other stay several runs (info.fping_run), where a host's lines start over. A \
host without a reply fails its run, and ingest exits 1 as fping does.
  figures    any other tool's figures, named by this word only (ingest figures --tool dd \
--tool-version 9.1 FILE): each line a sample of KEY=VALUE pairs, every KEY with its unit \
suffix and every VALUE a number >= 0 in that unit (throughput_bytes_per_s=268435456 \
elapsed_s=2.1), # comments and blank lines skipped; the summary holds each key's median over \
the samples, its headline the first line's first key. For figures picked out of a tool's \
text with awk or sed (dd's rate, perf bench's usecs/op).

Figures are carried over exactly: a headline equals the source's number to the last digit; \
only unit changes (milliseconds and nanoseconds to seconds, percent to a ratio, fio 2.x's KiB \
to bytes) are computed, each rounded once from the digits the source wrote. A byte order mark, \
terminal escapes (a shell's ESC[?1034h) and the ^C a terminal echoes before the output are \
skipped, both to tell the format and to read it; UTF-16 text with a byte order mark (Windows \
tools) is decoded, and without one refused with the iconv line that converts it. In ping \
text, a ^C line is skipped, and lines before the PING line (a prompt, the command line) are \
skipped with a warning. tool and version are the source tool's (version unknown where its output \
does not say), info.converted_by is ingest, and the source's own time stamps become at \
(iperf3's start time plus each interval's end, fio's timestamp, ping -D's); where there are \
none, at is the time of the conversion. Several series in one source (fio jobs and \
directions, hyperfine commands, fping hosts) get a row name each: the default (fio JOB \
DIRECTION, the command, ping HOST), or --name followed by it.

Refused, exit 2, nothing but a failed summary written: input that is not what the format \
needs, named as FILE:LINE with what was expected (never a silent skip). A source cut short \
(an interrupted iperf3 -J or --json-stream, ping text without its statistics) gives what could \
be read and a partial summary, and exit 1; a source that measured a failure (iperf3's \
error, ping without a reply, as one stopped by Ctrl-C before any) a failed summary, and exit 1.

Reading: the source is read whole, and at most --max-input bytes of it (256M by default) are \
held; a larger one is refused, exit 2, naming the limit. A wait for input (a FIFO no writer \
opened yet, a silent pipe) ends on SIGTERM, SIGHUP or SIGINT with nothing converted, a partial \
summary and exit 130. Ctrl-C in a pipeline (ping HOST | ingest) reaches the writer too, which \
ends by printing its last lines (ping its statistics): so a SIGINT after the pipe gave its \
first bytes lets ingest read on to the pipe's end and convert it all; SIGTERM ends it at once.";

const EXAMPLES: &str = "\
EXAMPLES:
  iperf3 -c 10.0.0.1 -J > run.json; ingest --label para/lvm run.json >> results.jsonl
  fio --name=w --rw=randwrite --output-format=json+ | ingest -o results.jsonl
  hyperfine --export-json hf.json 'make -j8'; ingest hyperfine hf.json -o results.jsonl
  ping -D -c 100 10.0.0.1 | ingest ping --label para/lvm > ping.jsonl
  fping -C 20 -q 10.0.0.1 10.0.0.2 2>&1 | ingest fping -o results.jsonl
  dd if=/dev/zero of=f bs=1M count=512 conv=fsync 2>&1 | awk '/copied/ { printf \"throughput_bytes_per_s=%d\\n\", $1 / $(NF-3) }' \\
      | ingest figures --tool dd -o results.jsonl
  collate results.jsonl";

/// The FILE argument, of the command and of every format's subcommand.
fn file() -> Arg {
    Arg::new("file")
        .value_name("FILE")
        .value_parser(value_parser!(PathBuf))
        .help("The tool's output; - or none reads stdin")
}

/// `--max-input SIZE`, of the command and of every format's subcommand.
fn max_input() -> Arg {
    Arg::new("max-input")
        .long("max-input")
        .value_name("SIZE")
        .value_parser(|s: &str| measure::units::parse_size(s))
        .default_value("256M")
        .help("Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory")
}

/// A subcommand naming the format.
fn format(name: &'static str, about: &'static str) -> Command {
    let cmd = Command::new(name)
        .about(about)
        .arg(file())
        .arg(max_input())
        .arg(measure::flags::quiet());
    measure::flags::record(cmd)
}

/// The `figures` subcommand: KEY=VALUE lines of a tool that it names.
fn figures() -> Command {
    format(
        "figures",
        "KEY=VALUE lines, a sample each, of the tool --tool names",
    )
    .arg(
        Arg::new("tool")
            .long("tool")
            .value_name("NAME")
            .required(true)
            .help("The tool that made the figures: the records' tool"),
    )
    .arg(
        Arg::new("tool-version")
            .long("tool-version")
            .value_name("VERSION")
            .help("Its version (default: unknown)"),
    )
}

pub fn command() -> Command {
    let cmd = Command::new("ingest")
        .version(env!("CARGO_PKG_VERSION"))
        .about("iperf3, fio, hyperfine, ping and fping output (and any tool's figures) -> benchmatrix/1 records")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .args_conflicts_with_subcommands(true)
        .arg(file())
        .arg(max_input())
        .arg(measure::flags::quiet())
        .subcommand(format("iperf3", "iperf3 -J or --json-stream output"))
        .subcommand(format("fio", "fio --output-format=json or json+ output"))
        .subcommand(format("hyperfine", "hyperfine --export-json output"))
        .subcommand(format("ping", "ping text (iputils, BSD, busybox)"))
        .subcommand(format("fping", "fping -C, -c or -e text"))
        .subcommand(figures());
    measure::flags::record(cmd)
}

/// The formats by their subcommand's word.
const FORMATS: [Format; 6] = [
    Format::Iperf3,
    Format::Fio,
    Format::Hyperfine,
    Format::Ping,
    Format::Fping,
    Format::Figures,
];

/// What one invocation converts.
#[derive(Debug)]
pub struct Options {
    /// The format given as the first word, else told from the content.
    pub format: Option<Format>,
    /// The source; `None` (or `-`) is stdin.
    pub file: Option<PathBuf>,
    /// For `figures`: the tool that made them (`--tool`, `--tool-version`).
    pub source: crate::figures::Source,
    /// The most bytes of the source held in memory (`--max-input`).
    pub max_input: u64,
}

/// The options from the matches of the command or of the format's subcommand `sub` (the
/// lifecycle hands over the innermost ones, and names the subcommand).
pub fn options(m: &ArgMatches, sub: Option<&str>) -> Result<Options, Failure> {
    let format = match sub {
        None => None,
        Some(word) => Some(
            FORMATS
                .into_iter()
                .find(|f| f.word() == word)
                .ok_or_else(|| Failure::usage(format!("no format is called {word}")))?,
        ),
    };
    let text = |k: &str| {
        m.try_get_one::<String>(k)
            .ok()
            .flatten()
            .filter(|s| !s.is_empty())
            .cloned()
    };
    let source = match format {
        Some(Format::Figures) => crate::figures::Source {
            tool: text("tool").ok_or_else(|| {
                Failure::usage("--tool: name the tool that made the figures (--tool dd)")
            })?,
            version: text("tool-version"),
        },
        _ => crate::figures::Source::default(),
    };
    Ok(Options {
        format,
        file: m.get_one::<PathBuf>("file").cloned(),
        source,
        max_input: m
            .get_one::<u64>("max-input")
            .copied()
            .unwrap_or(crate::read::DEFAULT_MAX),
    })
}
