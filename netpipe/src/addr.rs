//! Addresses: parsing `[ADDR:]PORT` and `HOST:PORT`, resolving them with the -4/-6 choice.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Which address families a run may use (-4, -6, or either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Any,
    V4,
    V6,
}

impl Family {
    pub fn admits(self, a: &SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        }
    }
}

/// Parses a port number, naming the flag on error.
pub fn parse_port(s: &str, what: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|_| format!("{what} {s:?}: expected a TCP port number 0..65535 (e.g. 2222)"))
}

/// Splits `HOST:PORT`, `[V6]:PORT` or `V6ADDR:PORT`-less forms into host and port text.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        let port = tail.strip_prefix(':')?;
        return Some((host, port));
    }
    let (host, port) = s.rsplit_once(':')?;
    if host.contains(':') {
        // A bare IPv6 address with a port needs brackets.
        return None;
    }
    Some((host, port))
}

/// A listening address from `[ADDR:]PORT`; without ADDR it is the wildcard of the family
/// (`[::]` taking IPv4 too, unless -4 or -6 says otherwise).
pub fn parse_listen(s: &str, fam: Family) -> Result<SocketAddr, String> {
    let s = s.trim();
    if s.chars().all(|c| c.is_ascii_digit()) && !s.is_empty() {
        let port = parse_port(s, "--listen")?;
        return Ok(wildcard(port, fam));
    }
    let Some((host, port)) = split_host_port(s) else {
        return Err(format!(
            "--listen {s:?}: expected [ADDR:]PORT, e.g. 2222, 0.0.0.0:2222 or [::1]:2222"
        ));
    };
    let port = parse_port(port, "--listen")?;
    resolve_one(host, port, fam, "--listen")
}

/// What a failed listen says: `cannot listen on ADDR (as typed)` and the cause with what to
/// do about it; `typed` is the option as the user gave it (`--listen 2222`, `-l 2222`).
pub fn listen_failed(a: &SocketAddr, typed: &str, e: &std::io::Error) -> (String, String) {
    use std::io::ErrorKind;
    let port = a.port();
    let flag = typed.split(' ').next().unwrap_or(typed);
    let hint = match e.kind() {
        ErrorKind::AddrInUse => format!(
            "is port {port} taken by another program (ss -ltnp 'sport = :{port}' shows it)? \
             stop it, or pick another port with {flag}"
        ),
        ErrorKind::AddrNotAvailable => format!(
            "{} is not an address of this host: give one of its addresses, or only the port, with {flag}",
            a.ip()
        ),
        ErrorKind::PermissionDenied if port < 1024 => {
            format!("ports below 1024 need root: pick port 1024 or above with {flag}")
        }
        _ => String::new(),
    };
    let shown = show(a);
    let what = if typed.ends_with(&format!(" {shown}")) {
        format!("cannot listen on {shown}")
    } else {
        format!("cannot listen on {shown} ({typed})")
    };
    let why = if hint.is_empty() {
        e.to_string()
    } else {
        format!("{e}: {hint}")
    };
    (what, why)
}

/// The wildcard address for a listener on `port`.
pub fn wildcard(port: u16, fam: Family) -> SocketAddr {
    match fam {
        Family::V4 => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port),
        _ => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port),
    }
}

/// The addresses of `HOST:PORT` (for --connect), in resolver order, filtered by family.
pub fn parse_connect(s: &str, fam: Family) -> Result<Vec<SocketAddr>, String> {
    let Some((host, port)) = split_host_port(s.trim()) else {
        return Err(format!(
            "--connect {s:?}: expected HOST:PORT, e.g. 10.0.0.1:2222 or [fd00::1]:2222"
        ));
    };
    let port = parse_port(port, "--connect")?;
    resolve(host, port, fam, "--connect")
}

/// Resolves `host` (a name or an address) with `port`, keeping the family asked for.
pub fn resolve(host: &str, port: u16, fam: Family, what: &str) -> Result<Vec<SocketAddr>, String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(format!("{what}: the host is empty"));
    }
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("{what} {host}: cannot resolve the host name: {e}"))?
        .filter(|a| fam.admits(a))
        .collect();
    if found.is_empty() {
        return Err(format!(
            "{what} {host}: no {} address for this host",
            match fam {
                Family::V4 => "IPv4",
                Family::V6 => "IPv6",
                Family::Any => "usable",
            }
        ));
    }
    Ok(found)
}

/// The first address of `host` and `port`.
pub fn resolve_one(host: &str, port: u16, fam: Family, what: &str) -> Result<SocketAddr, String> {
    resolve(host, port, fam, what).map(|v| v[0])
}

/// Parses a local bind address (`ADDR` or `ADDR:PORT`) for a connecting side.
pub fn parse_bind(s: &str, fam: Family) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(ip) = s
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Ok(SocketAddr::new(ip, 0));
    }
    if let Some((host, port)) = split_host_port(s) {
        let port = parse_port(port, "--bind")?;
        return resolve_one(host, port, fam, "--bind");
    }
    resolve_one(s, 0, fam, "--bind")
}

/// An address as people write it: `127.0.0.1:2222`, `[::1]:2222`; v4-mapped v6 shown as v4.
pub fn show(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => format!("{v4}:{}", v6.port()),
            None => a.to_string(),
        },
        SocketAddr::V4(_) => a.to_string(),
    }
}

/// A host as a row name shows it: the address without its port, nothing for a wildcard.
pub fn host_of(a: &SocketAddr) -> Option<String> {
    if a.ip().is_unspecified() {
        return None;
    }
    let shown = show(a);
    Some(match shown.rsplit_once(':') {
        Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']').to_string(),
        None => shown,
    })
}

/// The host part of a typed `HOST:PORT` (`[V6]:PORT` gives `V6`).
pub fn host_part(target: &str) -> String {
    match split_host_port(target.trim()) {
        Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']').to_string(),
        None => target.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_forms() {
        assert_eq!(
            parse_listen("2222", Family::Any).unwrap(),
            "[::]:2222".parse().unwrap()
        );
        assert_eq!(
            parse_listen("2222", Family::V4).unwrap(),
            "0.0.0.0:2222".parse().unwrap()
        );
        assert_eq!(
            parse_listen("127.0.0.1:9", Family::Any).unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        assert_eq!(
            parse_listen("[::1]:9", Family::Any).unwrap(),
            "[::1]:9".parse().unwrap()
        );
        assert!(parse_listen("::1", Family::Any).is_err());
        assert!(parse_listen("99999", Family::Any).is_err());
        assert!(
            parse_listen("127.0.0.1:9", Family::V6)
                .unwrap_err()
                .contains("IPv6")
        );
    }

    #[test]
    fn connect_forms() {
        assert_eq!(
            parse_connect("127.0.0.1:5", Family::Any).unwrap()[0],
            "127.0.0.1:5".parse().unwrap()
        );
        assert_eq!(
            parse_connect("[::1]:5", Family::Any).unwrap()[0],
            "[::1]:5".parse().unwrap()
        );
        assert!(parse_connect("127.0.0.1", Family::Any).is_err());
        assert!(
            parse_connect("h:x", Family::Any)
                .unwrap_err()
                .contains("port")
        );
    }

    #[test]
    fn bind_and_show() {
        assert_eq!(
            parse_bind("127.0.0.2", Family::Any).unwrap(),
            "127.0.0.2:0".parse().unwrap()
        );
        assert_eq!(
            parse_bind("127.0.0.2:7", Family::Any).unwrap(),
            "127.0.0.2:7".parse().unwrap()
        );
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:80".parse().unwrap();
        assert_eq!(show(&mapped), "127.0.0.1:80");
    }
}
