//! The second step from argv to a plan: what was given (args.rs) checked where clap cannot
//! check it, with the defaults that depend on other flags, made into the plans. A function
//! of the arguments alone, except that it resolves host names and asks the kernel whether
//! it has the congestion control named.

use crate::addr::{self, Family};
use crate::args::{MeasureArgs, NetcatArgs};
use crate::netcat::NcPlan;
use crate::plan::{Endpoint, Plan, Plans, Role, SendMethod};
use crate::sock::SockOpts;
use measure::Exit;
use measure::Failure;
use std::net::{Ipv6Addr, SocketAddr};
use std::time::Duration;

/// The plans of `send` or `recv` (both directions) and the run's default name.
pub fn measuring(m: &MeasureArgs) -> Result<(Plans, String), Failure> {
    let role = m.role;
    let fam = m.family;
    let endpoint = endpoint(m, fam)?;
    let bind = m
        .bind
        .as_deref()
        .map(|b| addr::parse_bind(b, fam))
        .transpose()
        .map_err(Failure::usage)?;
    let idle = match m.idle_timeout {
        Some(d) if d.is_zero() => None,
        Some(d) => Some(d),
        None => Some(Duration::from_secs(30)),
    };
    if m.time.is_some_and(|d| d.is_zero()) {
        return Err(Failure::usage(
            "--time 0: give a positive duration such as 10 or 500ms",
        ));
    }
    if m.bytes == Some(0) {
        return Err(Failure::usage(
            "--bytes 0 asks to move nothing: give a positive size such as --bytes 1G, or leave --bytes out to move data until EOF or Ctrl-C",
        ));
    }
    if m.interval.is_some_and(|d| d < Duration::from_millis(10)) {
        return Err(Failure::usage(
            "--interval: give at least 10ms, e.g. 1 or 500ms",
        ));
    }
    let udp = m.udp;
    if udp {
        udp_checks(m)?;
    }
    let method = match m.send_method.as_deref() {
        Some("splice") => SendMethod::Splice,
        Some("sendfile") => SendMethod::Sendfile,
        _ => SendMethod::Copy,
    };
    let plan = Plan {
        role,
        bind,
        v6_only: fam == Family::V6,
        bytes: m.bytes,
        time: m.time,
        omit: m.omit.unwrap_or(Duration::ZERO),
        interval: m.interval,
        parallel: m.parallel.map(usize::from),
        idle,
        connect_timeout: m.connect_timeout,
        keep_open: m.keep_open,
        block: if udp {
            udp_size(m)?
        } else {
            block_size(m, role, method)?
        },
        random: m.pattern.as_deref() == Some("random"),
        method,
        opts: SockOpts {
            window: window(m.window)?,
            no_delay: m.no_delay,
            congestion: congestion(m.congestion.as_deref())?,
            mss: m.mss,
        },
        endpoint,
        udp,
        rate: m.rate,
        bidir: m.bidir,
        token: token(m)?,
    };
    let name = default_name(&plan);
    Ok((Plans::new(plan), name))
}

fn endpoint(m: &MeasureArgs, fam: Family) -> Result<Endpoint, Failure> {
    if let Some(l) = &m.listen {
        Ok(Endpoint::Listen(
            addr::parse_listen(l, fam).map_err(Failure::usage)?,
            l.clone(),
        ))
    } else if let Some(c) = &m.connect {
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

/// `--token`, else the NETPIPE_TOKEN environment variable (which no `ps` shows): 16 to 48
/// printable characters without spaces. A shorter one is refused: it can be guessed.
fn token(m: &MeasureArgs) -> Result<Option<crate::wire::Key>, Failure> {
    let (t, from) = match (&m.token, &m.token_env) {
        (Some(t), _) => (t, "--token"),
        (None, Some(t)) => (t, "NETPIPE_TOKEN"),
        (None, None) => return Ok(None),
    };
    match crate::wire::Key::new(t.as_bytes()) {
        Some(k) => Ok(Some(k)),
        None => Err(Failure::usage(format!(
            "{from}: give {} to {} printable characters without spaces ({}): a shorter token can be guessed, a 2-character one in seconds; e.g. 128 random bits, `od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'`",
            crate::wire::MIN_KEY,
            crate::wire::MAX_KEY,
            if (crate::wire::MIN_KEY..=crate::wire::MAX_KEY).contains(&t.len()) {
                "this one has a space or a control character".to_string()
            } else {
                format!("this one has {}", t.len())
            }
        ))),
    }
}

/// The flags that mean nothing for UDP are refused with it, by name. None of them has a
/// default, so each is given exactly when it is set.
fn udp_checks(m: &MeasureArgs) -> Result<(), Failure> {
    for (given, flag) in [
        (m.parallel.is_some(), "-P/--parallel"),
        (m.keep_open, "--keep-open"),
        (m.congestion.is_some(), "-C/--congestion"),
        (m.mss.is_some(), "-M/--mss"),
        (m.omit.is_some(), "-O/--omit"),
        (m.interval.is_some(), "-i/--interval"),
        (m.no_delay, "--no-delay"),
        (m.bidir, "--bidir"),
    ] {
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
fn udp_size(m: &MeasureArgs) -> Result<usize, Failure> {
    match m.bs {
        Some(b) if !(24..=65507).contains(&b) => Err(Failure::usage(
            "--bs with --udp is the datagram size: give 24 .. 65507 bytes, e.g. 1460",
        )),
        Some(b) => Ok(b as usize),
        None => Ok(1460),
    }
}

/// `-b/--bs`, or the default for the role and the send method.
fn block_size(m: &MeasureArgs, role: Role, method: SendMethod) -> Result<usize, Failure> {
    Ok(match m.bs {
        Some(b) if b == 0 || b > (1 << 30) => {
            return Err(Failure::usage("--bs: give 1 byte .. 1G, e.g. 128k"));
        }
        Some(b) => b as usize,
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
fn congestion(c: Option<&str>) -> Result<Option<String>, Failure> {
    let Some(c) = c else {
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
    Ok(Some(c.to_string()))
}

fn msg_tail(e: &str) -> String {
    e.split_once(": ").map_or(e, |(_, t)| t).to_string()
}

/// `--window`, in both modes.
fn window(w: Option<u64>) -> Result<Option<usize>, Failure> {
    match w {
        Some(w) if !(1024..=(1 << 31)).contains(&w) => Err(Failure::usage(
            "--window: give 1k .. 2G, e.g. 4M (the kernel doubles it and caps it at net.core.rmem_max/wmem_max)",
        )),
        Some(w) => Ok(Some(w as usize)),
        None => Ok(None),
    }
}

/// The plan of netcat mode and the run's default name.
pub fn netcat(m: &NetcatArgs) -> Result<(NcPlan, String), Failure> {
    let fam = m.family;
    let nc_w = m.nc_timeout;
    let plan = NcPlan {
        listen: None,
        target: String::new(),
        addrs: vec![],
        bind: None,
        v6_only: fam == Family::V6,
        keep_open: false,
        no_stdin: m.no_stdin,
        idle: m.idle_timeout.or(nc_w).filter(|d| !d.is_zero()),
        connect_timeout: m.connect_timeout.or(nc_w),
        connect_flag: if m.connect_timeout.is_none() && nc_w.is_some() {
            "-w"
        } else {
            "--connect-timeout"
        },
        opts: SockOpts {
            window: window(m.window)?,
            no_delay: m.no_delay,
            ..SockOpts::default()
        },
    };
    if m.listen {
        nc_listen(m, fam, plan)
    } else {
        nc_connect(m, fam, plan)
    }
}

/// `-l [-s ADDR] [-p] PORT` or `-l [ADDR] PORT`.
fn nc_listen(m: &NetcatArgs, fam: Family, plan: NcPlan) -> Result<(NcPlan, String), Failure> {
    let source = m.source.as_deref();
    let (host, port) = match (m.positionals.as_slice(), &m.port) {
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
        keep_open: m.keep,
        ..plan
    };
    Ok((plan, name))
}

/// `[-s ADDR] [-p PORT] HOST PORT`.
fn nc_connect(m: &NetcatArgs, fam: Family, plan: NcPlan) -> Result<(NcPlan, String), Failure> {
    let [host, port] = m.positionals.as_slice() else {
        return Err(Failure::usage(
            "give HOST PORT to connect (netpipe host 2222 < file), -l PORT to listen, or a subcommand: send, recv (see --help)",
        ));
    };
    if m.keep {
        return Err(Failure::usage("-k only goes with -l"));
    }
    let port = addr::parse_port(port, "port").map_err(Failure::usage)?;
    let addrs = addr::resolve(host, port, fam, "host")
        .map_err(|e| Failure::new(Exit::MeasuredFailure, host, msg_tail(&e)))?;
    let src_port = m
        .port
        .as_deref()
        .map(|p| addr::parse_port(p, "-p"))
        .transpose()
        .map_err(Failure::usage)?;
    let bind = match (&m.source, src_port) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The first step on `a` (after the program name): a subcommand's arguments.
    fn given(a: &[&str]) -> MeasureArgs {
        let argv = std::iter::once("netpipe").chain(a.iter().copied());
        let m = crate::cli::command().try_get_matches_from(argv).unwrap();
        let (name, sub) = m.subcommand().unwrap();
        crate::args::measuring(name, sub)
    }

    #[test]
    fn both_directions_are_planned_up_front() {
        let a = given(&[
            "send",
            "--connect",
            "127.0.0.1:9",
            "--bidir",
            "--send-method",
            "splice",
            "--pattern",
            "random",
        ]);
        let (plans, name) = measuring(&a).unwrap();
        assert_eq!(name, "tcp send to 127.0.0.1");
        let f = &plans.fwd;
        assert_eq!(
            (f.role, f.block, f.method, f.random),
            (Role::Send, 64 << 10, SendMethod::Splice, true)
        );
        let r = &plans.rev;
        assert_eq!(
            (r.role, r.block, r.method, r.random),
            (Role::Recv, 4 << 20, SendMethod::Copy, false)
        );
        assert!(r.bidir && r.parallel.is_none());
    }

    #[test]
    fn udp_refuses_the_tcp_flags_by_name() {
        let a = given(&["recv", "--listen", "0", "--udp", "--no-delay"]);
        let e = measuring(&a).unwrap_err();
        assert_eq!(e.code, Exit::Cannot);
        assert!(format!("{e:?}").contains("--no-delay is for TCP"), "{e:?}");
        let a = given(&["recv", "--listen", "0", "--udp", "-b", "1000"]);
        assert_eq!(measuring(&a).unwrap().0.fwd.block, 1000);
    }
}
