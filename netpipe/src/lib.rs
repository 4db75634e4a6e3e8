//! netpipe: a netcat-compatible TCP sink and source that measures throughput like iperf3.
//!
//! Two modes. Netcat mode (`netpipe -l [-p] PORT > file`, `netpipe HOST PORT < file`) moves
//! stdin and stdout byte for byte and reports its records on stderr (or `-o FILE`).
//! Measuring mode (`netpipe recv`, `netpipe send`) discards what it receives and sends a
//! pre-generated buffer, reporting records on stdout.

pub mod addr;
pub mod cpu;
pub mod netcat;
pub mod session;
pub mod sock;
pub mod stream;

use addr::Family;
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use measure::Failure;
use measure::cli::{DefaultOutput, exit};
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

const ABOUT: &str = "TCP sink and source, netcat-compatible, that measures throughput like iperf3";

const LONG_ABOUT: &str = "\
netpipe replaces both ends of the classic throughput test, `nc -l -p 2222 >/dev/null` on one \
host and `dd if=/dev/zero bs=512M count=10 | nc host 2222` on the other, and reports JSON lines \
(benchmatrix/1 records: begin, interval, one sample per connection, summary).

Netcat mode is a drop-in for nc: `netpipe -l [-p] PORT > file` listens and writes what it \
receives to stdout; `netpipe HOST PORT < file` connects, sends stdin, half-closes (what \
`nc -N` does) and ends when the peer closes. stdout is payload only; records go to stderr, \
or to -o FILE. It interoperates byte for byte with netcat-openbsd and socat on either end.

Measuring mode needs no pipe and no disk: `netpipe recv --listen PORT` drops what arrives \
without copying it (recv with MSG_TRUNC) and `netpipe send --connect HOST:PORT` sends a \
pre-generated buffer (zeros, or --pattern random). Either side may listen, so both directions \
of a link are measured without swapping who listens. Records go to stdout. The summary's \
headline, throughput_bits_per_s, is the receiver's: its own clock from the first byte to EOF. \
The sender reports its own figure (first byte written until the peer closed) and says so.

Exit status: 0 ok; 1 the run worked but measured a failure (refused, reset, timeout, a short \
transfer); 2 could not do the job (usage, cannot listen); 130 after Ctrl-C, summary written.";

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
    let cmd =
        Command::new("netpipe")
            .version(env!("CARGO_PKG_VERSION"))
            .about(ABOUT)
            .long_about(LONG_ABOUT)
            .after_help(AFTER_HELP)
            .args_conflicts_with_subcommands(true)
            .subcommand_negates_reqs(true)
            .arg(
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
            .arg(Arg::new("keep").short('k').action(ArgAction::SetTrue).help(
                "With -l: accept one connection after another (nc -k); stdin goes to the first",
            ))
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
                Arg::new("nc-N").short('N').action(ArgAction::SetTrue).help(
                    "Accepted for nc compatibility: netpipe always half-closes after stdin EOF",
                ),
            )
            .arg(Arg::new("nc-n").short('n').action(ArgAction::SetTrue).help(
                "Accepted for nc compatibility (numeric addresses are never looked up anyway)",
            ))
            .arg(Arg::new("nc-v").short('v').action(ArgAction::SetTrue).help(
                "Accepted for nc compatibility: the human summary shows when stderr is a terminal",
            ))
            .arg(
                Arg::new("window")
                    .long("window")
                    .value_name("SIZE")
                    .value_parser(|s: &str| measure::units::parse_size(s))
                    .help("Socket send and receive buffers (default: the kernel's autotuning)"),
            )
            .arg(
                Arg::new("no-delay")
                    .long("no-delay")
                    .action(ArgAction::SetTrue)
                    .help("Disable Nagle's algorithm (TCP_NODELAY)"),
            )
            .arg(
                Arg::new("args")
                    .value_name("[HOST] PORT")
                    .num_args(0..=2)
                    .help("Connect to HOST PORT; with -l: [ADDR] PORT to listen on"),
            );
    let cmd = common(cmd, true)
        .subcommand(measuring(
            "send",
            "Send generated data (zeros or random) and measure (the source, like iperf3 -c)",
        ))
        .subcommand(measuring(
            "recv",
            "Receive and discard without copying, and measure (the sink, like iperf3 -s)",
        ));
    measure::label::args(cmd)
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
        .arg(
            Arg::new("output")
                .short('o')
                .long("output")
                .value_name("FILE")
                .help(if netcat {
                    "Append records to FILE instead of stderr (- is stdout, which carries payload: avoid)"
                } else {
                    "Append records to FILE instead of stdout"
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
                .short('n')
                .value_name("SIZE")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Move SIZE bytes in all (4k = 4096, 5G, 1.5GiB; 5GB = 5e9), then close (default: until EOF / Ctrl-C)"),
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
            Arg::new("interval")
                .long("interval")
                .short('i')
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
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
            Arg::new("omit")
                .long("omit")
                .short('O')
                .value_name("DURATION")
                .value_parser(|s: &str| measure::units::parse_seconds(s))
                .help("Leave the first DURATION (TCP slow start) out of the result, e.g. 2"),
        )
        .arg(
            Arg::new("window")
                .long("window")
                .short('w')
                .value_name("SIZE")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Socket send and receive buffers, e.g. 4M (default: the kernel's autotuning)"),
        )
        .arg(
            Arg::new("no-delay")
                .long("no-delay")
                .short('N')
                .action(ArgAction::SetTrue)
                .help("Disable Nagle's algorithm (TCP_NODELAY)"),
        )
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
                .help("With --listen: serve one client after another until Ctrl-C; a bad client does not end it"),
        )
        .arg(
            Arg::new("block-size")
                .long("block-size")
                .value_name("SIZE")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Bytes per send or receive call [default: 128k to send with copy, 1M with sendfile (the memfd's size), 64k with splice (the pipe size, at most 1M), 4M to receive]"),
        );
    let cmd = if name == "send" {
        cmd.arg(
            Arg::new("send-method")
                .long("send-method")
                .value_name("METHOD")
                .value_parser(["sendfile", "splice", "copy"])
                .default_value("copy")
                .help("copy: send() from a 128k buffer that stays in the CPU cache, as iperf3 does; sendfile: sendfile() from a memfd holding the pattern, no copy (like iperf3 -Z); splice: tee+splice the buffer's pages into the socket, no copy (both fall back to copy)"),
        )
        .arg(
            Arg::new("pattern")
                .long("pattern")
                .value_name("PATTERN")
                .value_parser(["zeros", "random"])
                .default_value("zeros")
                .help("Data to send: zeros, or random (incompressible)"),
        )
    } else {
        cmd
    };
    measure::label::args(common(cmd, false))
}

fn family(m: &ArgMatches) -> Family {
    if m.get_flag("ipv4") {
        Family::V4
    } else if m.get_flag("ipv6") {
        Family::V6
    } else {
        Family::Any
    }
}

fn dur(m: &ArgMatches, id: &str) -> Option<Duration> {
    m.get_one::<Duration>(id).copied()
}

/// Runs netpipe with `args` (the first is the program name).
pub fn run(args: Vec<OsString>) -> Result<ExitCode, Failure> {
    let m = measure::cli::parse(command(), args)?;
    measure::cli::install_interrupt_handler()
        .map_err(|e| Failure::new(exit::CANNOT, "installing the Ctrl-C handler", e))?;
    let code = match m.subcommand() {
        Some((name, sub)) => run_measuring(name, sub)?,
        None => run_netcat(&m)?,
    };
    Ok(ExitCode::from(code))
}

fn run_measuring(name: &str, m: &ArgMatches) -> Result<u8, Failure> {
    let role = if name == "send" {
        session::Role::Send
    } else {
        session::Role::Recv
    };
    let fam = family(m);
    let endpoint = if let Some(l) = m.get_one::<String>("listen") {
        session::Endpoint::Listen(addr::parse_listen(l, fam).map_err(Failure::usage)?)
    } else if let Some(c) = m.get_one::<String>("connect") {
        session::Endpoint::Connect(
            c.clone(),
            addr::parse_connect(c, fam)
                .map_err(|e| Failure::new(exit::CANNOT, "--connect", msg_tail(&e)))?,
        )
    } else {
        return Err(Failure::usage(
            "give --listen [ADDR:]PORT or --connect HOST:PORT",
        ));
    };
    let bind = m
        .get_one::<String>("bind")
        .map(|b| addr::parse_bind(b, fam))
        .transpose()
        .map_err(Failure::usage)?;
    let idle = match dur(m, "idle-timeout") {
        Some(d) if d.is_zero() => None,
        Some(d) => Some(d),
        None => Some(Duration::from_secs(30)),
    };
    if dur(m, "time").is_some_and(|d| d.is_zero()) {
        return Err(Failure::usage(
            "--time 0: give a positive duration such as 10 or 500ms",
        ));
    }
    if dur(m, "interval").is_some_and(|d| d < Duration::from_millis(10)) {
        return Err(Failure::usage(
            "--interval: give at least 10ms, e.g. 1 or 500ms",
        ));
    }
    let send_method = match m
        .try_get_one::<String>("send-method")
        .ok()
        .flatten()
        .map(String::as_str)
    {
        Some("splice") => session::SendMethod::Splice,
        Some("sendfile") => session::SendMethod::Sendfile,
        _ => session::SendMethod::Copy,
    };
    let send_copy = send_method == session::SendMethod::Copy;
    let block = match m.get_one::<u64>("block-size") {
        Some(&b) if b == 0 || b > (1 << 30) => {
            return Err(Failure::usage("--block-size: give 1 byte .. 1G, e.g. 128k"));
        }
        Some(&b) => b as usize,
        // Measured on loopback, alternating with iperf3 (1 GiB, 6 rounds each): copy from 128k
        // had a median of 43 Gb/s (iperf3: 30); splice from 1M pipes 16-20, from 128k 17-25,
        // from 64k 27-60 Gb/s: the fastest at times, the least steady. With the receiver's
        // rate-following SO_RCVLOWAT (2 s runs, medians of 4-5): copy from 128k 64-67 Gb/s,
        // 256k 60-73 (within noise of 128k), 512k 60, 1M 66, but 192k 29-32 and 224k 36
        // (BBR's pacing falls back; powers of two stay clear of it); sendfile from a 1M memfd
        // 47, from 128k and 4M lower; splice 52; send with MSG_ZEROCOPY 34 (loopback copies
        // zero-copy pages on delivery anyway).
        None if role == session::Role::Send && send_copy => 128 << 10,
        None if role == session::Role::Send && send_method == session::SendMethod::Sendfile => {
            1 << 20
        }
        None if role == session::Role::Send => 64 << 10,
        None => 4 << 20,
    };
    let window = window(m)?;
    let plan = session::Plan {
        role,
        bind,
        v6_only: fam == Family::V6,
        bytes: m.get_one::<u64>("bytes").copied(),
        time: dur(m, "time"),
        omit: dur(m, "omit").unwrap_or(Duration::ZERO),
        interval: dur(m, "interval"),
        parallel: m.get_one::<u16>("parallel").map(|&p| p as usize),
        idle,
        connect_timeout: dur(m, "connect-timeout"),
        keep_open: m.get_flag("keep-open"),
        block,
        random: m
            .try_get_one::<String>("pattern")
            .ok()
            .flatten()
            .is_some_and(|p| p == "random"),
        method: send_method,
        opts: sock::SockOpts {
            window,
            no_delay: m.get_flag("no-delay"),
            congestion: congestion(m)?,
            mss: m.get_one::<u32>("mss").copied(),
        },
        endpoint,
    };
    let default_name = match (&plan.endpoint, role) {
        (session::Endpoint::Connect(t, _), session::Role::Send) => format!("tcp send to {t}"),
        (session::Endpoint::Connect(t, _), session::Role::Recv) => format!("tcp recv from {t}"),
        (session::Endpoint::Listen(a), session::Role::Send) => {
            format!("tcp send on {}", addr::show(a))
        }
        (session::Endpoint::Listen(a), session::Role::Recv) => {
            format!("tcp recv on {}", addr::show(a))
        }
    };
    let env = measure::label::envelope("netpipe", env!("CARGO_PKG_VERSION"), m, &default_name)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("output").map(String::as_str),
        DefaultOutput::Stdout,
    )?;
    let mut rep = measure::Reporter::new(env, out);
    session::run(plan, &mut rep)
}

/// `--congestion`, tried on a scratch socket so that a name the kernel lacks is a usage error.
fn congestion(m: &ArgMatches) -> Result<Option<String>, Failure> {
    let Some(c) = m.get_one::<String>("congestion") else {
        return Ok(None);
    };
    let probe = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
        .and_then(|s| s.set_tcp_congestion(c.as_bytes()));
    if let Err(e) = probe {
        let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .unwrap_or_default();
        return Err(Failure::usage(format!(
            "--congestion {c}: {e}; this kernel offers: {}",
            avail.trim()
        )));
    }
    Ok(Some(c.clone()))
}

fn msg_tail(e: &str) -> String {
    e.split_once(": ").map_or(e, |(_, t)| t).to_string()
}

fn window(m: &ArgMatches) -> Result<Option<usize>, Failure> {
    match m.get_one::<u64>("window") {
        Some(&w) if !(1024..=(1 << 31)).contains(&w) => Err(Failure::usage(
            "--window: give 1k .. 2G, e.g. 4M (the kernel doubles it and caps it at net.core.rmem_max/wmem_max)",
        )),
        Some(&w) => Ok(Some(w as usize)),
        None => Ok(None),
    }
}

fn run_netcat(m: &ArgMatches) -> Result<u8, Failure> {
    let fam = family(m);
    let listen = m.get_flag("listen");
    let pos: Vec<&String> = m.get_many::<String>("args").into_iter().flatten().collect();
    let port_flag = m.get_one::<String>("port");
    let source = m.get_one::<String>("source");
    let nc_w = dur(m, "nc-timeout");
    let idle = dur(m, "idle-timeout").or(nc_w).filter(|d| !d.is_zero());
    let connect_timeout = dur(m, "connect-timeout").or(nc_w);
    let opts = sock::SockOpts {
        window: window(m)?,
        no_delay: m.get_flag("no-delay"),
        ..sock::SockOpts::default()
    };
    let (plan, name) = if listen {
        let (host, port) = match (pos.as_slice(), port_flag) {
            ([], Some(p)) => (source.map(String::as_str), p.as_str()),
            ([p], None) => (source.map(String::as_str), p.as_str()),
            ([h], Some(p)) => (Some(h.as_str()), p.as_str()),
            ([h, p], None) => (Some(h.as_str()), p.as_str()),
            _ => {
                return Err(Failure::usage(
                    "-l: give the port once, as `netpipe -l -p 2222` or `netpipe -l 2222`",
                ));
            }
        };
        let port = addr::parse_port(port, "port").map_err(Failure::usage)?;
        let a = match host {
            Some(h) => addr::resolve_one(h, port, fam, "listen address")
                .map_err(|e| Failure::new(exit::CANNOT, "-l", msg_tail(&e)))?,
            None => addr::wildcard(port, fam),
        };
        let name = format!("nc listen {}", addr::show(&a));
        (
            netcat::NcPlan {
                listen: Some(a),
                target: addr::show(&a),
                addrs: vec![],
                bind: None,
                v6_only: fam == Family::V6,
                keep_open: m.get_flag("keep"),
                no_stdin: m.get_flag("no-stdin"),
                idle,
                connect_timeout,
                opts,
            },
            name,
        )
    } else {
        let [host, port] = pos.as_slice() else {
            return Err(Failure::usage(
                "give HOST PORT to connect (netpipe host 2222 < file), -l PORT to listen, or a subcommand: send, recv (see --help)",
            ));
        };
        if m.get_flag("keep") {
            return Err(Failure::usage("-k only goes with -l"));
        }
        let port = addr::parse_port(port, "port").map_err(Failure::usage)?;
        let addrs = addr::resolve(host, port, fam, "host")
            .map_err(|e| Failure::new(exit::MEASURED_FAILURE, host, msg_tail(&e)))?;
        let src_port = port_flag
            .map(|p| addr::parse_port(p, "-p"))
            .transpose()
            .map_err(Failure::usage)?;
        let bind = match (source, src_port) {
            (Some(s), p) => {
                let mut b = addr::parse_bind(s, fam).map_err(Failure::usage)?;
                if let Some(p) = p {
                    b.set_port(p);
                }
                Some(b)
            }
            (None, Some(p)) => Some(match addrs[0] {
                std::net::SocketAddr::V4(_) => std::net::SocketAddr::from(([0, 0, 0, 0], p)),
                std::net::SocketAddr::V6(_) => {
                    std::net::SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, p))
                }
            }),
            (None, None) => None,
        };
        let target = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let name = format!("nc to {target}");
        (
            netcat::NcPlan {
                listen: None,
                target,
                addrs,
                bind,
                v6_only: fam == Family::V6,
                keep_open: false,
                no_stdin: m.get_flag("no-stdin"),
                idle,
                connect_timeout,
                opts,
            },
            name,
        )
    };
    let env = measure::label::envelope("netpipe", env!("CARGO_PKG_VERSION"), m, &name)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("output").map(String::as_str),
        DefaultOutput::Stderr,
    )?;
    let mut rep = measure::Reporter::new(env, out);
    netcat::run(plan, &mut rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_valid() {
        command().debug_assert();
    }

    #[test]
    fn usage_errors() {
        let r = |a: &[&str]| {
            let mut v: Vec<OsString> = vec!["netpipe".into()];
            v.extend(a.iter().map(OsString::from));
            run(v)
        };
        assert_eq!(r(&[]).unwrap_err().code, exit::CANNOT);
        assert_eq!(r(&["send"]).unwrap_err().code, exit::CANNOT);
        assert_eq!(
            r(&["recv", "--listen", "x:y:z"]).unwrap_err().code,
            exit::CANNOT
        );
        assert_eq!(r(&["-l", "99999"]).unwrap_err().code, exit::CANNOT);
        assert_eq!(
            r(&["send", "--connect", "127.0.0.1:1", "--time", "0"])
                .unwrap_err()
                .code,
            exit::CANNOT
        );
    }
}
