//! The options applied to an ICMP socket once it is open: kernel stamps, the ICMP filter,
//! TTL or hop limit, receive buffer, interface and source address; and a raw socket's filter
//! of other pingers' echo replies.

use super::{IcmpSocket, Kind};
use crate::packet::Family;
use nix::sys::socket::{TimestampingFlag, setsockopt, sockopt};
use socket2::{SockAddr, SockFilter, Socket};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;

/// The options applied to a socket after it is opened.
#[derive(Clone, Debug, Default)]
pub struct SocketOptions {
    pub ttl: Option<u32>,
    pub source: Option<IpAddr>,
    pub interface: Option<String>,
    pub tx_stamps: bool,
}

/// `ICMP_FILTER` (level `SOL_RAW`) and `ICMP6_FILTER` (level `IPPROTO_ICMPV6`) share number 1.
const FILTER: libc::c_int = 1;

/// Sets a raw socket's ICMP type filter (`ICMP_FILTER`, `ICMP6_FILTER`), a bit mask in which
/// a set bit drops that type. Neither socket2 nor nix offers these two options.
fn set_filter<T: Copy>(sock: &Socket, level: libc::c_int, filter: &T) -> io::Result<()> {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `filter` points to a live, initialised T of `len` bytes, which setsockopt only
    // reads during the call; the descriptor is open for as long as `sock` lives.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            FILTER,
            (filter as *const T).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What an option error says, as the standard library words an OS error.
fn os(e: nix::Error) -> io::Error {
    io::Error::from(e)
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
        let _ = self.sock.set_recv_buffer_size(1 << 20);
        if let Some(ifname) = &o.interface {
            self.bind_device(ifname)?;
        }
        self.bind_source(o.source)
    }

    /// Kernel software stamps: receive always; transmit when asked, both the driver's
    /// (TX_SOFTWARE, as the packet leaves for the device: the send time) and the scheduler's
    /// (TX_SCHED, at the device queue's entry: the send time where a driver stamps none).
    /// Without SO_TIMESTAMPING, SO_TIMESTAMPNS gives receive stamps.
    fn enable_stamps(&mut self, tx_stamps: bool) -> Result<(), String> {
        let mut flags = TimestampingFlag::SOF_TIMESTAMPING_RX_SOFTWARE
            | TimestampingFlag::SOF_TIMESTAMPING_SOFTWARE;
        if tx_stamps {
            flags |= TimestampingFlag::SOF_TIMESTAMPING_TX_SOFTWARE
                | TimestampingFlag::from_bits_retain(libc::SOF_TIMESTAMPING_TX_SCHED)
                | TimestampingFlag::SOF_TIMESTAMPING_OPT_TSONLY;
        }
        if setsockopt(&self.sock, sockopt::Timestamping, &flags).is_ok() {
            self.timestamping = true;
            self.tx_stamps = tx_stamps;
            return Ok(());
        }
        setsockopt(&self.sock, sockopt::ReceiveTimestampns, &true)
            .map_err(|e| format!("cannot enable kernel receive timestamps: {}", os(e)))
    }

    /// IPv4: the TTL of replies and errors on the error queue (datagram), or the ICMP filter
    /// (raw); the TTL of the requests.
    fn v4_options(&self, ttl: Option<u32>) -> Result<(), String> {
        if self.kind == Kind::Dgram {
            // A raw socket reads the TTL from the IPv4 header it receives.
            setsockopt(&self.sock, sockopt::Ipv4RecvTtl, &true)
                .map_err(|e| format!("IP_RECVTTL: {}", os(e)))?;
            setsockopt(&self.sock, sockopt::Ipv4RecvErr, &true)
                .map_err(|e| format!("IP_RECVERR: {}", os(e)))?;
        } else {
            // Keep echo reply (0), unreachable (3), source quench (4), time exceeded (11)
            // and parameter problem (12).
            let keep: u32 = (1 << 0) | (1 << 3) | (1 << 4) | (1 << 11) | (1 << 12);
            let _ = set_filter(&self.sock, libc::SOL_RAW, &!keep);
        }
        if let Some(ttl) = ttl {
            self.sock
                .set_ttl_v4(ttl)
                .map_err(|e| format!("cannot set the TTL to {ttl}: {e}"))?;
        }
        Ok(())
    }

    /// IPv6: the hop limit of replies, errors on the error queue (datagram) or the ICMPv6
    /// filter (raw); the hop limit of the requests.
    fn v6_options(&self, ttl: Option<u32>) -> Result<(), String> {
        self.sock
            .set_recv_hoplimit_v6(true)
            .map_err(|e| format!("IPV6_RECVHOPLIMIT: {e}"))?;
        if self.kind == Kind::Dgram {
            setsockopt(&self.sock, sockopt::Ipv6RecvErr, &true)
                .map_err(|e| format!("IPV6_RECVERR: {}", os(e)))?;
        } else {
            // Pass unreachable (1), too big (2), time exceeded (3), parameter problem (4)
            // and echo reply (129); block the rest.
            let mut filt = [u32::MAX; 8];
            for t in [1u32, 2, 3, 4, 129] {
                filt[(t >> 5) as usize] &= !(1 << (t & 31));
            }
            let _ = set_filter(&self.sock, libc::IPPROTO_ICMPV6, &filt);
        }
        if let Some(ttl) = ttl {
            self.sock
                .set_unicast_hops_v6(ttl)
                .map_err(|e| format!("cannot set the hop limit to {ttl}: {e}"))?;
        }
        Ok(())
    }

    /// Sends and receives only through the interface `ifname` (SO_BINDTODEVICE).
    fn bind_device(&self, ifname: &str) -> Result<(), String> {
        self.sock.bind_device(Some(ifname.as_bytes())).map_err(|e| {
            format!(
                "-I {ifname}: cannot bind to that interface: {e} (is it an interface name? see `ip link`)"
            )
        })
    }

    /// Binds to `source`; a datagram socket is bound in any case, because it gets its
    /// identifier (its "port") when bound, and the identifier must be known before the
    /// first probe.
    fn bind_source(&self, source: Option<IpAddr>) -> Result<(), String> {
        let bind_to = source.or(match (self.kind, self.family) {
            (Kind::Dgram, Family::V4) => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
            (Kind::Dgram, Family::V6) => Some(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
            _ => None,
        });
        let Some(src) = bind_to else {
            return Ok(());
        };
        self.sock
            .bind(&SockAddr::from(SocketAddr::new(src, 0)))
            .map_err(|e| {
                format!(
                    "-I {src}: cannot use it as the source address: {e} (is it an address of this host? see `ip addr`)"
                )
            })
    }

    /// A raw socket gets every echo reply of its namespace, other pingers' too: at a high
    /// rate (two floods at once) theirs fill its receive buffer and ours are dropped. This
    /// classic BPF program keeps only echo replies carrying identifier `id` and every other
    /// ICMP type the type filter passed (errors quote our probe; the tracker checks them).
    /// A datagram socket needs none: the kernel hands it only its own identifier's replies.
    pub fn keep_only_ident(&self, id: u16) -> io::Result<()> {
        if self.kind != Kind::Raw {
            return Ok(());
        }
        let st = |code: u16, k: u32| SockFilter::new(code, 0, 0, k);
        let jeq = |k: u32, jf: u8| {
            SockFilter::new(
                (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                0,
                jf,
                k,
            )
        };
        let (ld_b, ld_h) = match self.family {
            // An IPv4 raw socket reads the IP header first: X = its length, loads relative
            // to X.
            Family::V4 => (
                (libc::BPF_LD | libc::BPF_B | libc::BPF_IND) as u16,
                (libc::BPF_LD | libc::BPF_H | libc::BPF_IND) as u16,
            ),
            // An ICMPv6 raw socket reads from the ICMPv6 header.
            Family::V6 => (
                (libc::BPF_LD | libc::BPF_B | libc::BPF_ABS) as u16,
                (libc::BPF_LD | libc::BPF_H | libc::BPF_ABS) as u16,
            ),
        };
        let echo_reply = match self.family {
            Family::V4 => 0,
            Family::V6 => 129,
        };
        let ret = (libc::BPF_RET | libc::BPF_K) as u16;
        let program = [
            // X = 4 * (the IPv4 header's IHL); unused for IPv6.
            st((libc::BPF_LDX | libc::BPF_B | libc::BPF_MSH) as u16, 0),
            st(ld_b, 0),
            // Not an echo reply: keep (to 5).
            jeq(echo_reply, 2),
            st(ld_h, 4),
            // Our identifier: keep (5), else drop (6).
            jeq(u32::from(id), 1),
            st(ret, u32::MAX),
            st(ret, 0),
        ];
        let program = if self.family == Family::V4 {
            &program[..]
        } else {
            &program[1..]
        };
        // socket2's attach_filter makes the same setsockopt(SO_ATTACH_FILTER) call behind a
        // safe slice: the kernel copies the program during the call.
        self.sock.attach_filter(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::echo_request;
    use crate::socket::{SocketChoice, wait};
    use std::time::{Duration, Instant};

    /// The (type, identifier) of an ICMP message read from a raw socket of `family` (an
    /// IPv4 one starts with the IP header).
    fn type_and_id(family: Family, buf: &[u8]) -> Option<(u8, u16)> {
        let at = match family {
            Family::V4 => usize::from(buf.first()? & 0x0f) * 4,
            Family::V6 => 0,
        };
        let icmp = buf.get(at..at + 6)?;
        Some((icmp[0], u16::from_be_bytes([icmp[4], icmp[5]])))
    }

    /// Sends an echo request with another identifier, then one with ours, to loopback, and
    /// returns how many replies carrying the other identifier came in before ours (None when
    /// ours did not come within 5 s). Replies on loopback come in the order of the requests.
    fn foreign_replies_before_ours(family: Family, filtered: bool) -> Option<usize> {
        let (to, reply): (IpAddr, u8) = match family {
            Family::V4 => (Ipv4Addr::LOCALHOST.into(), 0),
            Family::V6 => (Ipv6Addr::LOCALHOST.into(), 129),
        };
        let sock = IcmpSocket::open(family, SocketChoice::Raw).ok()?;
        let ours = (std::process::id() as u16) | 1;
        let theirs = ours ^ 0x8000;
        if filtered {
            sock.keep_only_ident(ours).expect("attach the filter");
        }
        let dest = SockAddr::from(SocketAddr::new(to, 0));
        for id in [theirs, ours] {
            sock.send_to(&echo_request(family, id, 1, b"filter"), &dest)
                .ok()?;
        }
        let mut foreign = 0;
        let mut buf = [0u8; 512];
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            let (readable, _) = wait(&sock, Some(100_000_000)).ok()?;
            if !readable {
                continue;
            }
            let Ok(got) = sock.recv(&mut buf, false) else {
                continue;
            };
            match type_and_id(family, &buf[..got.len]) {
                Some((t, id)) if t == reply && id == ours => return Some(foreign),
                Some((t, id)) if t == reply && id == theirs => foreign += 1,
                _ => {}
            }
        }
        None
    }

    #[test]
    fn the_ident_filter_drops_other_identifiers_echo_replies() {
        if !testkit::need_root("a raw ICMP socket") {
            return;
        }
        for family in [Family::V4, Family::V6] {
            // Without the filter the other reply is seen, so the probe can tell.
            match foreign_replies_before_ours(family, false) {
                Some(n) => assert_eq!(n, 1, "{family:?}: unfiltered, the other reply comes"),
                None => {
                    testkit::skip(&format!("{family:?}: no echo reply on loopback"));
                    continue;
                }
            }
            assert_eq!(
                foreign_replies_before_ours(family, true),
                Some(0),
                "{family:?}: filtered, only our identifier's reply comes"
            );
        }
    }
}
