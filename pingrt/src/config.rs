//! The parsed and checked options of one run, and the target address.

use crate::packet::Family;
use crate::socket::SocketChoice;
use measure::Failure;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Below this interval only root may probe: ping's classic limit for other users.
pub const MIN_USER_INTERVAL: Duration = Duration::from_millis(200);
/// ping's default payload.
pub const DEFAULT_SIZE: usize = 56;
/// How long a probe waits for its reply without -W.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// In flood mode without -i, a probe goes out at least this often (ping -f: 100 per second).
pub const FLOOD_GAP: Duration = Duration::from_millis(10);

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct Config {
    pub host: String,
    pub target: SocketAddr,
    pub family: Family,
    /// 0: no limit (until the deadline or Ctrl-C).
    pub count: u64,
    pub interval: Duration,
    pub timeout: Duration,
    pub timeout_given: bool,
    pub deadline: Option<Duration>,
    pub size: usize,
    pub ttl: Option<u32>,
    pub source: Option<IpAddr>,
    pub interface: Option<String>,
    pub flood: bool,
    pub socket: SocketChoice,
    pub kernel_tx: bool,
    /// -D: each probe's line starts with the time, as ping -D.
    pub timestamps: bool,
    /// -O: a line for a probe still unanswered when the next one goes out, as ping -O.
    pub outstanding: bool,
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Resolves `host` to one address of the wanted family (`-4`/`-6`), else the first one.
pub fn resolve(host: &str, want: Option<Family>) -> Result<IpAddr, Failure> {
    let fam_ok = |a: &IpAddr| match want {
        Some(Family::V4) => a.is_ipv4(),
        Some(Family::V6) => a.is_ipv6(),
        None => true,
    };
    if let Ok(a) = host.parse::<IpAddr>() {
        if !fam_ok(&a) {
            let flag = if a.is_ipv4() { "-6" } else { "-4" };
            return Err(Failure::usage(format!(
                "{host} is an {} address but {flag} was given: drop {flag} or give a name that has such an address",
                if a.is_ipv4() { "IPv4" } else { "IPv6" }
            )));
        }
        return Ok(a);
    }
    let addrs: Vec<IpAddr> = (host, 0)
        .to_socket_addrs()
        .map_err(|e| Failure::new(2, format!("cannot resolve {host}"), e))?
        .map(|s| s.ip())
        .collect();
    addrs.iter().copied().find(fam_ok).ok_or_else(|| {
        Failure::new(
            2,
            format!("cannot resolve {host}"),
            "no address of the family asked for (-4/-6)",
        )
    })
}

/// The interval between probes, checked as ping checks it: below
/// [`MIN_USER_INTERVAL`] only for root (a flood with a longer interval is fine for anyone).
fn interval(m: &clap::ArgMatches, flood: bool) -> Result<Duration, Failure> {
    let interval_given = m.contains_id("interval")
        && m.value_source("interval") == Some(clap::parser::ValueSource::CommandLine);
    let interval = match m.get_one::<Duration>("interval") {
        Some(d) if interval_given => *d,
        _ if flood => Duration::ZERO,
        _ => Duration::from_secs(1),
    };
    if interval < MIN_USER_INTERVAL && !is_root() {
        let what = if flood && !interval_given {
            "--flood".to_string()
        } else {
            format!(
                "-i {}",
                measure::units::format_seconds(interval.as_secs_f64())
            )
        };
        return Err(Failure::usage(format!(
            "{what}: only root may probe more often than every {} ms (as ping); use -i 0.2 or more, or run as root",
            MIN_USER_INTERVAL.as_millis()
        )));
    }
    Ok(interval)
}

/// The count and the deadline: with -w and no -c, probing goes on until the deadline.
fn count_and_deadline(m: &clap::ArgMatches) -> Result<(u64, Option<Duration>), Failure> {
    let count_given = m.value_source("count") == Some(clap::parser::ValueSource::CommandLine);
    let deadline = m.get_one::<Duration>("deadline").copied();
    if deadline.is_some_and(|d| d.is_zero()) {
        return Err(Failure::usage(
            "-w 0: the deadline must be above zero, e.g. -w 5",
        ));
    }
    let mut count = m.get_one::<u64>("count").copied().unwrap_or(10);
    if deadline.is_some() && !count_given {
        count = 0;
    }
    Ok((count, deadline))
}

/// The payload size, at most what one ICMP echo can carry over `family`.
fn size(m: &clap::ArgMatches, family: Family) -> Result<usize, Failure> {
    let size = m
        .get_one::<u64>("size")
        .copied()
        .unwrap_or(DEFAULT_SIZE as u64);
    let max = match family {
        Family::V4 => 65_507,
        Family::V6 => 65_527,
    };
    if size > max {
        return Err(Failure::usage(format!(
            "-s {size}: an ICMP echo payload can be at most {max} bytes over {}",
            if family == Family::V4 { "IPv4" } else { "IPv6" }
        )));
    }
    Ok(size as usize)
}

/// `-I`: a source address of the target's family, else an interface name.
fn source_or_interface(
    m: &clap::ArgMatches,
    ip: IpAddr,
) -> Result<(Option<IpAddr>, Option<String>), Failure> {
    match m.get_one::<String>("interface") {
        None => Ok((None, None)),
        Some(s) => match s.parse::<IpAddr>() {
            Ok(a) if a.is_ipv4() == ip.is_ipv4() => Ok((Some(a), None)),
            Ok(a) => Err(Failure::usage(format!(
                "-I {a}: the source address is not of the target's family ({ip})"
            ))),
            Err(_) => Ok((None, Some(s.clone()))),
        },
    }
}

/// The target address; an IPv6 target gets the scope of the interface `-I` names.
fn target(ip: IpAddr, interface: Option<&str>) -> Result<SocketAddr, Failure> {
    let mut target = SocketAddr::new(ip, 0);
    if let (SocketAddr::V6(t), Some(ifname)) = (&mut target, interface) {
        if ifname.contains('\0') {
            return Err(Failure::usage(
                "-I: an interface name cannot hold a NUL byte",
            ));
        }
        let idx = nix::net::if_::if_nametoindex(ifname).map_err(|_| {
            Failure::usage(format!(
                "-I {ifname}: no such interface (see `ip link`), and it is not an address"
            ))
        })?;
        t.set_scope_id(idx);
    }
    Ok(target)
}

impl Config {
    /// Builds the configuration from parsed flags, checking what ping checks.
    pub fn from_matches(m: &clap::ArgMatches) -> Result<Config, Failure> {
        let host = m
            .get_one::<String>("host")
            .cloned()
            .ok_or_else(|| Failure::usage("no HOST given: write e.g. pingrt 127.0.0.1"))?;
        let want = if m.get_flag("ipv4") {
            Some(Family::V4)
        } else if m.get_flag("ipv6") {
            Some(Family::V6)
        } else {
            None
        };
        let flood = m.get_flag("flood");
        let interval = interval(m, flood)?;
        let (count, deadline) = count_and_deadline(m)?;
        let timeout_given =
            m.value_source("timeout") == Some(clap::parser::ValueSource::CommandLine);
        let timeout = m
            .get_one::<Duration>("timeout")
            .copied()
            .unwrap_or(DEFAULT_TIMEOUT);
        let ip = resolve(&host, want)?;
        let family = if ip.is_ipv4() { Family::V4 } else { Family::V6 };
        let size = size(m, family)?;
        let (source, interface) = source_or_interface(m, ip)?;
        let target = target(ip, interface.as_deref())?;
        let socket = match m.get_one::<String>("socket").map(String::as_str) {
            Some("raw") => SocketChoice::Raw,
            Some("dgram") => SocketChoice::Dgram,
            _ => SocketChoice::Auto,
        };
        // auto: the kernel's stamp, except in flood mode, where the extra error-queue read
        // per probe would cost rate (ping's method there; --tx-stamp kernel forces it).
        let kernel_tx = match m.get_one::<String>("tx_stamp").map(String::as_str) {
            Some("user") => false,
            Some("kernel") => true,
            _ => !flood,
        };
        Ok(Config {
            host,
            target,
            family,
            count,
            interval,
            timeout,
            timeout_given,
            deadline,
            size,
            ttl: m.get_one::<u32>("ttl").copied(),
            source,
            interface,
            flood,
            socket,
            kernel_tx,
            timestamps: m.get_flag("timestamps"),
            outstanding: m.get_flag("outstanding"),
        })
    }
}
