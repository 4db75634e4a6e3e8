//! pingrt: ICMP and ICMPv6 echo round-trip times with kernel timestamps, reported as
//! benchmatrix JSON lines (a sample per probe and a summary), replacing `ping`.

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod human;
pub(crate) mod packet;
pub(crate) mod prefault;
mod probing;
mod receive;
pub(crate) mod records;
pub(crate) mod session;
pub(crate) mod socket;
pub(crate) mod stats;
mod summary;
pub(crate) mod tracker;

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use measure::{Exit, Failure};
use std::ffi::OsString;

const LONG_ABOUT: &str = "\
Sends ICMP (IPv4) or ICMPv6 echo requests to HOST and reports every probe and a summary as
benchmatrix JSON lines, like ping but with honest statistics. Records go to stdout when it is a
pipe or a file (or with --json), and are appended to -o FILE. On a terminal without -o, a person
gets ping's lines instead: one per probe (a row of dots for the unanswered ones with --flood)
and ping's summary, on stderr, and no JSON.

Timing: the receive time is the kernel's software stamp (SO_TIMESTAMPING, else SO_TIMESTAMPNS),
taken as the reply enters the stack; the send time is the kernel's software stamp taken in the
driver as the request leaves for the device (SO_TIMESTAMPING TX_SOFTWARE), the point nearest the
wire, when the kernel gives one inside the sendto call; else the stamp taken as the request
entered the device queue (TX_SCHED: before the queue discipline and the kernel's work for the
stamp itself, about 2 us early across a veth pair); else the time taken right before sendto
(--tx-stamp user always uses that, as ping does; so does --flood unless --tx-stamp kernel is
given). Each sample's tx_stamp says which: kernel, kernel-sched or user. Send times are kept in memory by sequence number and never read
back from the echoed payload.

Sockets: a raw ICMP socket when permitted (root or CAP_NET_RAW), else the unprivileged datagram
ICMP socket (net.ipv4.ping_group_range); --socket forces one. When neither opens, the message
names the sysctl or capability that would fix it.

Replies are checked: identifier, sequence number, checksum, source address and payload. Duplicates,
late replies (after their probe timed out), out-of-order replies and replies to an older probe
with the same 16-bit sequence number (after wrap-around) are counted, never taken as valid.
ICMP errors (unreachable, TTL exceeded) are reported per probe.

Records: `begin` (parameters, socket, machine facts); one `sample` per probe with values.rtt_s,
or a top-level error (timeout, unreachable, ttl_exceeded, ...) and info icmp_seq, probe, ttl,
bytes, from; `summary` with sent/received/duplicate/late/error counts, loss_ratio and RTT min,
mean, max, mdev (iputils' definition), stddev (sample), p50, p90, p99; headline rtt_mean_s.
Ctrl-C still writes the summary.

Exit status: 0 when any reply came, 1 when none did, 2 on errors (usage, permission, socket);
130 after Ctrl-C or SIGTERM with a count or deadline set (with -c 0 and no -w, Ctrl-C is the
normal end and the status follows the replies). ping's lines go to stderr whenever it is a
terminal and the records do not go to it (not with -q).

Output: each record is flushed as it is written; where probes come fast (--flood, or -i below
10ms) records are batched and reach the output within about 0.25s, and the summary flushes all.";

const AFTER_HELP: &str = "\
EXAMPLES
  ping -c 10 10.0.0.1                 ->  pingrt 10.0.0.1
  ping -c 100 -i 0.2 -s 1400 host     ->  pingrt -c 100 -i 0.2 -s 1400 host
  ping -6 -c 5 -W 1 ::1               ->  pingrt -6 -c 5 -W 1 ::1
  ping -w 30 host                     ->  pingrt -w 30 host      (probes until the deadline)
  sudo ping -f -c 10000 host          ->  sudo pingrt -f -c 10000 -q host
  ping -I eth1 -t 3 host              ->  pingrt -I eth1 -t 3 host
  pingrt --label xen/domu --name 'icmp domU<->dom0' -c 100 10.0.0.1 -o results.jsonl
  pingrt -c 20 ::1 | jq -c 'select(.type==\"summary\") | .values'";

/// The command line, the one source for --help and the man page.
pub fn command() -> Command {
    let cmd = Command::new("pingrt")
        .version(env!("CARGO_PKG_VERSION"))
        .about("ICMP/ICMPv6 echo round-trip times with kernel timestamps, as JSON lines (replaces ping)")
        .long_about(LONG_ABOUT)
        .after_help(AFTER_HELP)
        .arg(
            Arg::new("host")
                .value_name("HOST")
                .required(true)
                .help("Name or address to probe"),
        )
        .arg(
            measure::flags::count()
                .default_value("10")
                .value_parser(value_parser!(u64))
                .help("Probes to send; 0: until the deadline or Ctrl-C. With -w: replies to wait for"),
        )
        .arg(
            measure::flags::interval()
                .default_value("1s")
                .help("Time between probes; a bare number is seconds (0.2 = 200ms). Below 200ms only for root"),
        )
        .arg(
            Arg::new("timeout")
                .short('W')
                .long("timeout")
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("How long each probe waits for its reply (default 10s; 0: for ever); a bare number is seconds"),
        )
        .arg(
            Arg::new("deadline")
                .short('w')
                .long("deadline")
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("Stop after this long whatever was sent or received; a bare number is seconds"),
        )
        .arg(
            Arg::new("size")
                .short('s')
                .long("size")
                .value_name("BYTES")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Payload bytes after the 8-byte ICMP header (default 56, as ping)"),
        )
        .arg(
            Arg::new("ttl")
                .short('t')
                .long("ttl")
                .value_name("TTL")
                .value_parser(value_parser!(u32).range(1..=255))
                .help("IPv4 time to live or IPv6 hop limit of the requests"),
        )
        .arg(
            Arg::new("ipv4")
                .short('4')
                .action(ArgAction::SetTrue)
                .conflicts_with("ipv6")
                .help("Use IPv4 (ICMP) only"),
        )
        .arg(
            Arg::new("ipv6")
                .short('6')
                .action(ArgAction::SetTrue)
                .help("Use IPv6 (ICMPv6) only"),
        )
        .arg(
            Arg::new("interface")
                .short('I')
                .long("interface")
                .value_name("ADDR|IFACE")
                .help("Source address, or interface name to send from (SO_BINDTODEVICE)"),
        )
        .arg(
            Arg::new("flood")
                .short('f')
                .long("flood")
                .action(ArgAction::SetTrue)
                .help("Send the next probe as soon as the reply came, or every 10ms (with -i: every interval); root only below -i 0.2"),
        )
        .arg(
            Arg::new("socket")
                .long("socket")
                .value_name("KIND")
                .value_parser(["auto", "raw", "dgram"])
                .default_value("auto")
                .help("Socket kind: raw (needs CAP_NET_RAW), dgram (net.ipv4.ping_group_range) or auto"),
        )
        .arg(
            Arg::new("tx_stamp")
                .long("tx-stamp")
                .value_name("SOURCE")
                .value_parser(["auto", "kernel", "user"])
                .default_value("auto")
                .help("Send time: kernel (the driver's software stamp, else the device queue's, else user), user (time before sendto, as ping); auto: kernel, but user with --flood"),
        )
        .arg(
            Arg::new("timestamps")
                .short('D')
                .long("timestamps")
                .action(ArgAction::SetTrue)
                .help("Start each probe's line with the time it is printed, [UNIX seconds.microseconds], as ping -D"),
        )
        .arg(
            Arg::new("outstanding")
                .short('O')
                .long("report-outstanding")
                .action(ArgAction::SetTrue)
                .help("Say \"no answer yet for icmp_seq=N\" when the next probe goes out before probe N's reply came, as ping -O"),
        )
        .arg(measure::flags::quiet())
        .arg(
            Arg::new("numeric")
                .short('n')
                .action(ArgAction::SetTrue)
                .hide(true)
                .help("Accepted for ping compatibility: pingrt never looks names up in reverse"),
        );
    measure::flags::record(cmd)
}

/// pingrt on the invocation lifecycle: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl measure::Tool for Tool {
    const NAME: &'static str = "pingrt";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = config::Config;

    fn command() -> Command {
        command()
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<config::Config, Failure> {
        config::Config::from_matches(m)
    }

    fn name(o: &config::Config) -> String {
        format!("ping {}", o.host)
    }

    fn run(o: config::Config, s: &mut measure::Session) -> Result<Exit, Failure> {
        session::run(o, s)
    }
}

/// Runs pingrt with `args` (the program name first), as the binary does.
pub fn run(args: Vec<OsString>) -> Exit {
    measure::lifecycle::run::<Tool>(args)
}
