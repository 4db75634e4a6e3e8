//! The options applied to an ICMP socket once it is open: kernel stamps, the ICMP filter,
//! TTL or hop limit, receive buffer, interface and source address.

use super::sockaddr::sockaddr;
use super::{IcmpSocket, Kind, setsockopt};
use crate::packet::Family;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The options applied to a socket after it is opened.
#[derive(Clone, Debug, Default)]
pub struct SocketOptions {
    pub ttl: Option<u32>,
    pub source: Option<IpAddr>,
    pub interface: Option<String>,
    pub tx_stamps: bool,
}

impl IcmpSocket {
    /// Applies timestamps, filters, TTL, source address and interface.
    pub fn configure(&mut self, o: &SocketOptions) -> Result<(), String> {
        self.enable_stamps(o.tx_stamps)?;
        match self.family {
            Family::V4 => self.v4_options(o.ttl)?,
            Family::V6 => self.v6_options(o.ttl)?,
        }
        // A larger receive buffer so a flood's replies are not dropped by the socket.
        let rcv: libc::c_int = 1 << 20;
        let _ = setsockopt(self.fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, &rcv);
        if let Some(ifname) = &o.interface {
            self.bind_device(ifname)?;
        }
        self.bind_source(o.source)
    }

    /// Kernel software stamps: receive always; transmit at the device queue when asked.
    /// Without SO_TIMESTAMPING, SO_TIMESTAMPNS gives receive stamps.
    fn enable_stamps(&mut self, tx_stamps: bool) -> Result<(), String> {
        let fd = self.fd();
        let one: libc::c_int = 1;
        // Kernel software stamps: receive always; transmit at the device queue when asked.
        let mut flags = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
        if tx_stamps {
            flags |= libc::SOF_TIMESTAMPING_TX_SCHED | libc::SOF_TIMESTAMPING_OPT_TSONLY;
        }
        match setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, &flags) {
            Ok(()) => {
                self.timestamping = true;
                self.tx_stamps = tx_stamps;
            }
            Err(_) => {
                setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one)
                    .map_err(|e| format!("cannot enable kernel receive timestamps: {e}"))?;
            }
        }
        Ok(())
    }

    /// IPv4: the TTL of replies and errors on the error queue (datagram), or the ICMP filter
    /// (raw); the TTL of the requests.
    fn v4_options(&self, ttl: Option<u32>) -> Result<(), String> {
        let fd = self.fd();
        let one: libc::c_int = 1;
        {
            {
                if self.kind == Kind::Dgram {
                    // A raw socket reads the TTL from the IPv4 header it receives.
                    setsockopt(fd, libc::IPPROTO_IP, libc::IP_RECVTTL, &one)
                        .map_err(|e| format!("IP_RECVTTL: {e}"))?;
                    setsockopt(fd, libc::IPPROTO_IP, libc::IP_RECVERR, &one)
                        .map_err(|e| format!("IP_RECVERR: {e}"))?;
                } else {
                    // ICMP_FILTER: a set bit drops that type. Keep echo reply and errors.
                    let keep: u32 = (1 << 0) | (1 << 3) | (1 << 4) | (1 << 11) | (1 << 12);
                    let mask: u32 = !keep;
                    let _ = setsockopt(fd, libc::SOL_RAW, 1, &mask);
                }
                if let Some(ttl) = ttl {
                    let v = ttl as libc::c_int;
                    setsockopt(fd, libc::IPPROTO_IP, libc::IP_TTL, &v)
                        .map_err(|e| format!("cannot set the TTL to {ttl}: {e}"))?;
                }
            }
        }
        Ok(())
    }

    /// IPv6: the hop limit of replies, errors on the error queue (datagram) or the ICMPv6
    /// filter (raw); the hop limit of the requests.
    fn v6_options(&self, ttl: Option<u32>) -> Result<(), String> {
        let fd = self.fd();
        let one: libc::c_int = 1;
        {
            {
                setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVHOPLIMIT, &one)
                    .map_err(|e| format!("IPV6_RECVHOPLIMIT: {e}"))?;
                if self.kind == Kind::Dgram {
                    setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVERR, &one)
                        .map_err(|e| format!("IPV6_RECVERR: {e}"))?;
                } else {
                    // ICMP6_FILTER: a set bit blocks that type. Pass echo reply and errors.
                    let mut filt = [u32::MAX; 8];
                    for t in [1u32, 2, 3, 4, 129] {
                        filt[(t >> 5) as usize] &= !(1 << (t & 31));
                    }
                    let _ = setsockopt(fd, libc::IPPROTO_ICMPV6, 1, &filt);
                }
                if let Some(ttl) = ttl {
                    let v = ttl as libc::c_int;
                    setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_UNICAST_HOPS, &v)
                        .map_err(|e| format!("cannot set the hop limit to {ttl}: {e}"))?;
                }
            }
        }
        Ok(())
    }

    /// Sends and receives only through the interface `ifname` (SO_BINDTODEVICE).
    fn bind_device(&self, ifname: &str) -> Result<(), String> {
        let fd = self.fd();
        {
            let mut name = ifname.as_bytes().to_vec();
            name.push(0);
            // SAFETY: name is a NUL-terminated buffer of the length passed.
            let rc = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_BINDTODEVICE,
                    name.as_ptr().cast(),
                    name.len() as libc::socklen_t,
                )
            };
            if rc != 0 {
                let e = io::Error::last_os_error();
                return Err(format!(
                    "-I {ifname}: cannot bind to that interface: {e} (is it an interface name? see `ip link`)"
                ));
            }
        }
        Ok(())
    }

    /// Binds to `source`; a datagram socket is bound in any case. A datagram socket gets
    /// its identifier (its "port") when bound; bind it now so the
    /// identifier is known before the first probe.
    fn bind_source(&self, source: Option<IpAddr>) -> Result<(), String> {
        let fd = self.fd();
        let bind_to = source.or(match (self.kind, self.family) {
            (Kind::Dgram, Family::V4) => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
            (Kind::Dgram, Family::V6) => Some(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
            _ => None,
        });
        if let Some(src) = bind_to {
            let (ss, len) = sockaddr(&SocketAddr::new(src, 0));
            // SAFETY: ss holds a sockaddr of length len.
            let rc = unsafe { libc::bind(fd, (&ss as *const libc::sockaddr_storage).cast(), len) };
            if rc != 0 {
                let e = io::Error::last_os_error();
                return Err(format!(
                    "-I {src}: cannot use it as the source address: {e} (is it an address of this host? see `ip addr`)"
                ));
            }
        }
        Ok(())
    }
}
