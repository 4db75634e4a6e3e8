//! The clap command table: the one source of --help, the man page and the completions.

use clap::builder::PossibleValue;
use clap::{Arg, ArgAction, ArgGroup, Command};

const ABOUT: &str = "TCP sink and source, netcat-compatible, that measures throughput like iperf3";

const LONG_ABOUT: &str = "\
netpipe replaces both ends of the classic throughput test, `nc -l -p 2222 >/dev/null` on one \
host and `dd if=/dev/zero bs=512M count=10 | nc host 2222` on the other, and reports JSON lines \
(benchmatrix/1 records: begin, interval, one sample per connection, summary).

Netcat mode is a drop-in for nc: `netpipe -l [-p] PORT > file` listens and writes what it \
receives to stdout; `netpipe HOST PORT < file` connects, sends stdin, half-closes (what \
`nc -N` does) and ends when the peer closes. stdout is payload only; records go to stderr \
when it is not a terminal, else to -o FILE or nowhere, and a terminal gets a summary to read. \
It interoperates byte for byte with netcat-openbsd and socat on either end.

Measuring mode needs no pipe and no disk: `netpipe recv --listen PORT` drops what arrives \
without copying it (recv with MSG_TRUNC) and `netpipe send --connect HOST:PORT` sends a \
pre-generated buffer (zero bytes, or --pattern random). Either side may listen, so both directions \
of a link are measured without swapping who listens. Records go to stdout when it is a pipe \
or a file (or with --json), and -o FILE appends them; on a terminal a person gets a line per \
interval (-i) or a progress line, and a summary, as from iperf3, instead of JSON. The summary's \
headline, throughput_bits_per_s, is the receiver's: its own clock from the first byte to EOF. \
The sender reports its own figure (first byte written until the peer closed) and says so.

Exit status: 0 ok; 1 the run worked but measured a failure (refused, reset, timeout, a short \
transfer, nothing moved); 2 could not do the job (usage, cannot listen); 130 after Ctrl-C, summary written.";

const AFTER_HELP: &str = "\
EXAMPLES
  Instead of `nc -l -p 2222 > file` and `nc -N host 2222 < file`:
      netpipe -l -p 2222 > file                 (records on stderr)
      netpipe host 2222 < file -o records.jsonl

  Instead of `nc -l -p 2222 >/dev/null` and `dd if=/dev/zero bs=512M count=10 | nc host 2222`:
      netpipe recv --listen 2222                     # on the receiving host
      netpipe send --connect host:2222 --bytes 5G    # on the sending host

  The other direction without swapping who listens (like iperf3 -R):
      netpipe send --listen 2222 --keep-open         # serves data to each client
      netpipe recv --connect host:2222 --time 10

  Like iperf3 -c host -t 10 -i 1 -P 4 -O 2:
      netpipe send --connect host:2222 --time 10 -i 1 -P 4 --omit 2

  A labelled run for collate:
      netpipe recv --listen 2222 --label para/lvm/san >> results.jsonl";

/// The one source of --help and the man page.
pub fn command() -> Command {
    let cmd = Command::new("netpipe")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .long_about(LONG_ABOUT)
        .after_help(AFTER_HELP)
        .args_conflicts_with_subcommands(true)
        .subcommand_negates_reqs(true);
    let cmd = netcat_quiet(common(netcat(cmd), true))
        .subcommand(measuring(
            "send",
            "Send generated data (zeros or random) and measure (the source, like iperf3 -c)",
        ))
        .subcommand(measuring(
            "recv",
            "Receive and discard without copying, and measure (the sink, like iperf3 -s)",
        ));
    measure::flags::record(cmd)
        .mut_arg("output", |a| {
            a.help("Append the records to FILE instead of stderr (- is stdout, which carries the payload: avoid)")
        })
        .mut_arg("json", |a| {
            a.help("Records on stderr even when it is a terminal (stdout carries the payload)")
        })
}

/// Netcat mode's --quiet, without nc's -q (which takes a value there).
fn netcat_quiet(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("quiet")
            .long("quiet")
            .action(ArgAction::SetTrue)
            .help("No human summary on stderr, even on a terminal"),
    )
}

/// Netcat mode's flags: nc's own letters.
fn netcat(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("listen")
            .short('l')
            .action(ArgAction::SetTrue)
            .help("Listen for a connection and write what arrives to stdout (nc -l)"),
    )
    .arg(
        Arg::new("port")
            .short('p')
            .value_name("PORT")
            .help("With -l: the port to listen on; else the local source port (nc -p)"),
    )
    .arg(
        Arg::new("source")
            .short('s')
            .value_name("ADDR")
            .help("Local address to bind (nc -s); with -l, the address to listen on"),
    )
    .arg(
        Arg::new("keep")
            .short('k')
            .action(ArgAction::SetTrue)
            .help("With -l: accept one connection after another (nc -k); stdin goes to the first"),
    )
    .arg(
        Arg::new("nc-timeout")
            .short('w')
            .value_name("SECS")
            .value_parser(|s: &str| measure::units::parse_seconds(s))
            .help("Connect and idle timeout (nc -w), e.g. 5 or 500ms"),
    )
    .arg(
        Arg::new("no-stdin")
            .short('d')
            .action(ArgAction::SetTrue)
            .help("Do not read stdin (nc -d): only receive"),
    )
    .arg(
        Arg::new("nc-N")
            .short('N')
            .action(ArgAction::SetTrue)
            .help("Accepted for nc compatibility: netpipe always half-closes after stdin EOF"),
    )
    .arg(
        Arg::new("nc-n")
            .short('n')
            .action(ArgAction::SetTrue)
            .help("Accepted for nc compatibility (numeric addresses are never looked up anyway)"),
    )
    .arg(
        Arg::new("nc-v").short('v').action(ArgAction::SetTrue).help(
            "Accepted for nc compatibility: the human summary shows when stderr is a terminal",
        ),
    )
    .arg(window())
    .arg(no_delay())
    .arg(
        Arg::new("args")
            .value_name("[HOST] PORT")
            .num_args(0..=2)
            .help("Connect to HOST PORT; with -l: [ADDR] PORT to listen on"),
    )
}

/// Flags both modes share.
fn common(cmd: Command, netcat: bool) -> Command {
    cmd
        .arg(
            Arg::new("ipv4")
                .short('4')
                .action(ArgAction::SetTrue)
                .conflicts_with("ipv6")
                .help("IPv4 only"),
        )
        .arg(
            Arg::new("ipv6")
                .short('6')
                .action(ArgAction::SetTrue)
                .help("IPv6 only"),
        )
        .arg(
            Arg::new("connect-timeout")
                .long("connect-timeout")
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("Give up a connect after this long, e.g. 3 or 500ms (default: the kernel's)"),
        )
        .arg(
            Arg::new("idle-timeout")
                .long("idle-timeout")
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help(if netcat {
                    "End a connection on which nothing arrives for this long (default: wait forever, like nc)"
                } else {
                    "End a stream on which nothing moves for this long; 0 waits forever [default: 30]"
                }),
        )
}

fn measuring(name: &'static str, about: &'static str) -> Command {
    let cmd = Command::new(name)
        .about(about)
        .arg(
            Arg::new("listen")
                .long("listen")
                .value_name("[ADDR:]PORT")
                .help("Listen for the peer on PORT (all addresses) or ADDR:PORT"),
        )
        .arg(
            Arg::new("connect")
                .long("connect")
                .value_name("HOST:PORT")
                .help("Connect to the peer at HOST:PORT ([V6ADDR]:PORT for IPv6)"),
        )
        .group(
            ArgGroup::new("endpoint")
                .args(["listen", "connect"])
                .required(true),
        )
        .arg(
            Arg::new("bytes")
                .long("bytes")
                .value_name("SIZE")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Move SIZE bytes in all (4k = 4096, 5G, 1.5GiB; 5GB = 5e9; not 0), then close (default: until EOF / Ctrl-C)"),
        )
        .arg(
            Arg::new("time")
                .long("time")
                .short('t')
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("Move data for this long after the warm-up, e.g. 10 or 10s (default: until EOF / Ctrl-C)"),
        )
        .arg(
            measure::flags::interval()
                .help("Write an interval record this often, e.g. 1 or 500ms (default: none)"),
        )
        .arg(
            Arg::new("parallel")
                .long("parallel")
                .short('P')
                .value_name("N")
                .value_parser(clap::value_parser!(u16).range(1..=128))
                .help("Streams: a connecting side opens N; a listener takes N per session (default: 1 to connect; a listener takes all that join)"),
        )
        .arg(
            Arg::new("bidir")
                .long("bidir")
                .action(ArgAction::SetTrue)
                .requires("connect")
                .help("With --connect: both directions at once, as many streams each way (-P), one figure per direction (the summary's reverse_ values); the netpipe listener takes the other role on the reverse streams"),
        )
        .arg(
            Arg::new("udp")
                .long("udp")
                .action(ArgAction::SetTrue)
                .help("UDP datagrams instead of a TCP stream: the receiver reports loss_ratio, jitter_s (RFC 3550), reordered and duplicate datagrams, and stray_count: datagrams from others than the sender (the first address whose start datagram proves the --token, or any start without one), or not netpipe's, ignored; -b is the datagram size [default: 1460]"),
        )
        .arg(
            Arg::new("token")
                .long("token")
                .value_name("TOKEN")
                .help("A listener takes only netpipe clients that give this TOKEN (16 to 48 printable characters: a shorter one can be guessed; e.g. 128 random bits in hex). Others are refused (told which listener refused them: its pid), logged on stderr and counted as refused_count, and each refusal makes the next connection from the same address wait longer (100 ms, doubling, at most 5 s); other addresses are served at once. A client gives it after its hello; with --udp the sender's start datagram and a connecting receiver's hello carry it, and a datagram without it is a stray. Default: the NETPIPE_TOKEN environment variable, which ps does not show (--token is on the command line, which any local user reads)"),
        )
        .arg(
            Arg::new("omit")
                .long("omit")
                .short('O')
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("Leave the first DURATION (TCP slow start) out of the result, e.g. 2"),
        );
    measure::flags::record(common(tuning(cmd, name), false).arg(measure::flags::quiet()))
}

/// `--window SIZE`, in both modes.
fn window() -> Arg {
    Arg::new("window")
        .long("window")
        .value_name("SIZE")
        .value_parser(|s: &str| measure::units::parse_size(s))
        .help("Socket send and receive buffers, e.g. 4M (default: the kernel's autotuning)")
}

/// `--no-delay`, in both modes.
fn no_delay() -> Arg {
    Arg::new("no-delay")
        .long("no-delay")
        .action(ArgAction::SetTrue)
        .help("Disable Nagle's algorithm (TCP_NODELAY)")
}

/// Socket, TCP and buffer flags of the measuring subcommands.
fn tuning(cmd: Command, name: &str) -> Command {
    let cmd = cmd
        .arg(window())
        .arg(no_delay())
        .arg(
            Arg::new("congestion")
                .long("congestion")
                .short('C')
                .value_name("ALGO")
                .help("TCP congestion control, e.g. cubic or bbr (see /proc/sys/net/ipv4/tcp_available_congestion_control)"),
        )
        .arg(
            Arg::new("mss")
                .long("mss")
                .short('M')
                .value_name("BYTES")
                .value_parser(clap::value_parser!(u32).range(88..=65535))
                .help("TCP maximum segment size (TCP_MAXSEG), e.g. 1400"),
        )
        .arg(
            Arg::new("bind")
                .long("bind")
                .short('B')
                .value_name("ADDR")
                .help("Local address (ADDR or ADDR:PORT) to connect from"),
        )
        .arg(
            Arg::new("keep-open")
                .long("keep-open")
                .action(ArgAction::SetTrue)
                .requires("listen")
                .help("With --listen: serve clients until Ctrl-C, several at once, each its own session (a netpipe client's -P streams together); a bad or vanished client holds up no other"),
        )
        .arg(
            Arg::new("bs")
                .short('b')
                .long("bs")
                .alias("block-size")
                .value_name("SIZE")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Bytes per send or receive call [default: 1M to send with copy or sendfile (the memfd's size); 64k with splice (the pipe size, at most 1M), 4M to receive]"),
        );
    if name == "send" { send_only(cmd) } else { cmd }
}

/// The sender's own flags: how it hands data to the kernel, and what data.
fn send_only(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("rate")
            .long("rate")
            .value_name("RATE")
            .requires("udp")
            .value_parser(|s: &str| parse_rate(s))
            .help("With --udp: send at RATE bits per second, paced evenly, e.g. 100M (k, M, G are 1000-based, as iperf3 -b) [default: 1M]"),
    )
    .arg(
            Arg::new("send-method")
                .long("send-method")
                .value_name("METHOD")
                .value_parser(["sendfile", "splice", "copy"])
                .default_value("copy")
                .help("copy: send() from a 1M buffer (iperf3 copies from 128k); sendfile: sendfile() from a memfd holding the pattern, no copy (like iperf3 -Z); splice: tee+splice the buffer's pages into the socket, no copy (both fall back to copy)"),
        )
        .arg(
            Arg::new("pattern")
                .long("pattern")
                .value_name("PATTERN")
                .value_parser([
                    PossibleValue::new("zero").alias("zeros"),
                    PossibleValue::new("random"),
                ])
                .default_value("zero")
                .help("Data to send: zero bytes, or random (incompressible)"),
        )
}

/// A rate in bits per second: a number with an optional k, M, G or T (powers of 1000) and
/// an optional `bit/s`, `b/s` or `bps`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = ["bit/s", "b/s", "bps"]
        .iter()
        .find_map(|u| t.strip_suffix(u))
        .unwrap_or(t);
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && (v * mult).is_finite() => Ok(v * mult),
        _ => Err(format!(
            "{s:?} is not a rate: give bits per second, e.g. 100M, 1.5G or 800k"
        )),
    }
}
