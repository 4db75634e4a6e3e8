//! Turning parsed matches into plans: checks the values clap cannot, resolves addresses and
//! picks the defaults that depend on other flags.

use crate::addr::{self, Family};
use crate::netcat::NcPlan;
use crate::plan::{Endpoint, Plan, Plans, Role, SendMethod};
use crate::sock::SockOpts;
use clap::ArgMatches;
use measure::Exit;
use measure::Failure;
use std::net::{Ipv6Addr, SocketAddr};
use std::time::Duration;

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

/// A flag of a subcommand that may lack it (`--send-method` and `--pattern` are send's).
fn opt_str<'a>(m: &'a ArgMatches, id: &str) -> Option<&'a str> {
    m.try_get_one::<String>(id)
        .ok()
        .flatten()
        .map(String::as_str)
}

/// The plan of `send` or `recv` (`name`) and the run's default name.
pub fn measuring(name: &str, m: &ArgMatches) -> Result<(Plans, String), Failure> {
    let role = if name == "send" {
        Role::Send
    } else {
        Role::Recv
    };
    let fam = family(m);
    let endpoint = endpoint(m, fam)?;
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
    if m.get_one::<u64>("bytes") == Some(&0) {
        return Err(Failure::usage(
            "--bytes 0 asks to move nothing: give a positive size such as --bytes 1G, or leave --bytes out to move data until EOF or Ctrl-C",
        ));
    }
    if dur(m, "interval").is_some_and(|d| d < Duration::from_millis(10)) {
        return Err(Failure::usage(
            "--interval: give at least 10ms, e.g. 1 or 500ms",
        ));
    }
    let udp = m.get_flag("udp");
    if udp {
        udp_checks(m)?;
    }
    let method = match opt_str(m, "send-method") {
        Some("splice") => SendMethod::Splice,
        Some("sendfile") => SendMethod::Sendfile,
        _ => SendMethod::Copy,
    };
    let plan = Plan {
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
        block: if udp {
            udp_size(m)?
        } else {
            block_size(m, role, method)?
        },
        random: opt_str(m, "pattern") == Some("random"),
        method,
        opts: SockOpts {
            window: window(m)?,
            no_delay: m.get_flag("no-delay"),
            congestion: congestion(m)?,
            mss: m.get_one::<u32>("mss").copied(),
        },
        endpoint,
        udp,
        rate: m.try_get_one::<f64>("rate").ok().flatten().copied(),
        bidir: m.get_flag("bidir"),
        // UDP listeners take no token (--token is refused with --udp, the variable ignored).
        token: if udp { None } else { token(m)? },
    };
    let name = default_name(&plan);
    Ok((Plans::new(plan), name))
}

fn endpoint(m: &ArgMatches, fam: Family) -> Result<Endpoint, Failure> {
    if let Some(l) = m.get_one::<String>("listen") {
        Ok(Endpoint::Listen(
            addr::parse_listen(l, fam).map_err(Failure::usage)?,
            l.clone(),
        ))
    } else if let Some(c) = m.get_one::<String>("connect") {
        Ok(Endpoint::Connect(
            c.clone(),
            addr::parse_connect(c, fam)
                .map_err(|e| Failure::new(Exit::Cannot, "--connect", msg_tail(&e)))?,
        ))
    } else {
        Err(Failure::usage(
            "give --listen [ADDR:]PORT or --connect HOST:PORT",
        ))
    }
}

/// `--token`, else the NETPIPE_TOKEN environment variable (which no `ps` shows): 1 to 16
/// printable characters without spaces.
fn token(m: &ArgMatches) -> Result<Option<[u8; crate::wire::KEY_LEN]>, Failure> {
    let (t, from) = match m.get_one::<String>("token") {
        Some(t) => (t.clone(), "--token"),
        None => match std::env::var("NETPIPE_TOKEN") {
            Ok(t) if !t.is_empty() => (t, "NETPIPE_TOKEN"),
            _ => return Ok(None),
        },
    };
    let fits =
        (1..=crate::wire::KEY_LEN).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_graphic());
    if !fits {
        return Err(Failure::usage(format!(
            "{from}: give 1 to {} printable characters without spaces, e.g. the output of `od -An -N8 -tx8 /dev/urandom | tr -d ' '`",
            crate::wire::KEY_LEN
        )));
    }
    let mut key = [0u8; crate::wire::KEY_LEN];
    key[..t.len()].copy_from_slice(t.as_bytes());
    Ok(Some(key))
}

/// The flags that mean nothing for UDP are refused with it, by name.
fn udp_checks(m: &ArgMatches) -> Result<(), Failure> {
    for (id, flag) in [
        ("parallel", "-P/--parallel"),
        ("keep-open", "--keep-open"),
        ("congestion", "-C/--congestion"),
        ("mss", "-M/--mss"),
        ("omit", "-O/--omit"),
        ("interval", "-i/--interval"),
        ("no-delay", "--no-delay"),
        ("bidir", "--bidir"),
        ("token", "--token"),
    ] {
        let given = m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        if given {
            return Err(Failure::usage(format!(
                "{flag} is for TCP and does not go with --udp: leave it out"
            )));
        }
    }
    Ok(())
}

/// A UDP datagram's size: `-b/--bs`, 24 .. 65507 bytes, default 1460 (as iperf3 -u on
/// Ethernet).
fn udp_size(m: &ArgMatches) -> Result<usize, Failure> {
    match m.get_one::<u64>("bs") {
        Some(&b) if !(24..=65507).contains(&b) => Err(Failure::usage(
            "--bs with --udp is the datagram size: give 24 .. 65507 bytes, e.g. 1460",
        )),
        Some(&b) => Ok(b as usize),
        None => Ok(1460),
    }
}

/// `-b/--bs`, or the default for the role and the send method.
fn block_size(m: &ArgMatches, role: Role, method: SendMethod) -> Result<usize, Failure> {
    Ok(match m.get_one::<u64>("bs") {
        Some(&b) if b == 0 || b > (1 << 30) => {
            return Err(Failure::usage("--bs: give 1 byte .. 1G, e.g. 128k"));
        }
        Some(&b) => b as usize,
        // The defaults, measured on loopback, one stream, the receiver's figure. send() copies
        // from a 1M buffer: each call hands the kernel eight 128k segments' worth, so a
        // sender makes an eighth of the calls and wake-ups per byte that 128k writes (and
        // iperf3's) make. What a wake-up costs is what differs between machines of one kind
        // (a guest's timer and interprocessor-interrupt exits), and BBR multiplies the
        // wake-ups: loopback has no fq qdisc, so TCP paces itself with a timer per burst and
        // the writer sleeps on the send buffer between them. With BBR, 1M writes moved 53-68
        // Gb/s on a machine where 128k moved 20-24 (iperf3 17-20), and 48-54 against 43-45 on
        // another; with cubic, 1M moved 36-68 against 128k's 36-52 (iperf3 9-24, a loaded
        // machine). Sizes that are not powers of two do worse under BBR (192k 29-32, 224k 36
        // where 128k moved 64). sendfile from a 1M memfd moves 47 (128k and 4M less); splice
        // from 64k pipes 52, the least steady (1 GiB runs: 64k 27-60, 128k 17-25, 1M 16-20);
        // send with MSG_ZEROCOPY 34, as loopback copies zero-copy pages on delivery anyway.
        // A receiver takes 4M a call (its SO_RCVLOWAT, lowat.rs, sets how much wakes it).
        None if role == Role::Send && method == SendMethod::Copy => 1 << 20,
        None if role == Role::Send && method == SendMethod::Sendfile => 1 << 20,
        None if role == Role::Send => 64 << 10,
        None => 4 << 20,
    })
}

/// The run's name when --name is not given: what moves, and with which host. No port and
/// no wildcard address, so that runs on different ports are one row (the port is in info).
fn default_name(plan: &Plan) -> String {
    let verb = match plan.role {
        Role::Send => "send",
        Role::Recv => "recv",
    };
    let verb = if plan.udp {
        format!("udp {verb}")
    } else {
        format!("tcp {verb}")
    };
    match &plan.endpoint {
        Endpoint::Connect(t, _) => {
            let dir = if plan.role == Role::Send {
                "to"
            } else {
                "from"
            };
            format!("{verb} {dir} {}", addr::host_part(t))
        }
        Endpoint::Listen(a, _) => match addr::host_of(a) {
            Some(h) => format!("{verb} listening on {h}"),
            None => format!("{verb} listening"),
        },
    }
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

/// The plan of netcat mode and the run's default name.
pub fn netcat(m: &ArgMatches) -> Result<(NcPlan, String), Failure> {
    let fam = family(m);
    let nc_w = dur(m, "nc-timeout");
    let plan = NcPlan {
        listen: None,
        target: String::new(),
        addrs: vec![],
        bind: None,
        v6_only: fam == Family::V6,
        keep_open: false,
        no_stdin: m.get_flag("no-stdin"),
        idle: dur(m, "idle-timeout").or(nc_w).filter(|d| !d.is_zero()),
        connect_timeout: dur(m, "connect-timeout").or(nc_w),
        connect_flag: if dur(m, "connect-timeout").is_none() && nc_w.is_some() {
            "-w"
        } else {
            "--connect-timeout"
        },
        opts: SockOpts {
            window: window(m)?,
            no_delay: m.get_flag("no-delay"),
            ..SockOpts::default()
        },
    };
    if m.get_flag("listen") {
        nc_listen(m, fam, plan)
    } else {
        nc_connect(m, fam, plan)
    }
}

fn positionals(m: &ArgMatches) -> Vec<&String> {
    m.get_many::<String>("args").into_iter().flatten().collect()
}

/// `-l [-s ADDR] [-p] PORT` or `-l [ADDR] PORT`.
fn nc_listen(m: &ArgMatches, fam: Family, plan: NcPlan) -> Result<(NcPlan, String), Failure> {
    let pos = positionals(m);
    let source = m.get_one::<String>("source").map(String::as_str);
    let (host, port) = match (pos.as_slice(), m.get_one::<String>("port")) {
        ([], Some(p)) => (source, p.as_str()),
        ([p], None) => (source, p.as_str()),
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
            .map_err(|e| Failure::new(Exit::Cannot, "-l", msg_tail(&e)))?,
        None => addr::wildcard(port, fam),
    };
    let name = match addr::host_of(&a) {
        Some(h) => format!("nc listen on {h}"),
        None => "nc listen".to_string(),
    };
    let plan = NcPlan {
        listen: Some(a),
        target: addr::show(&a),
        keep_open: m.get_flag("keep"),
        ..plan
    };
    Ok((plan, name))
}

/// `[-s ADDR] [-p PORT] HOST PORT`.
fn nc_connect(m: &ArgMatches, fam: Family, plan: NcPlan) -> Result<(NcPlan, String), Failure> {
    let pos = positionals(m);
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
        .map_err(|e| Failure::new(Exit::MeasuredFailure, host, msg_tail(&e)))?;
    let src_port = m
        .get_one::<String>("port")
        .map(|p| addr::parse_port(p, "-p"))
        .transpose()
        .map_err(Failure::usage)?;
    let bind = match (m.get_one::<String>("source"), src_port) {
        (Some(s), p) => {
            let mut b = addr::parse_bind(s, fam).map_err(Failure::usage)?;
            if let Some(p) = p {
                b.set_port(p);
            }
            Some(b)
        }
        (None, Some(p)) => Some(match addrs[0] {
            SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], p)),
            SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, p)),
        }),
        (None, None) => None,
    };
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let name = format!("nc to {host}");
    let plan = NcPlan {
        target,
        addrs,
        bind,
        ..plan
    };
    Ok((plan, name))
}
