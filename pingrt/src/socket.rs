//! ICMP sockets (socket2): raw or unprivileged datagram, with kernel timestamps and the
//! error queue, and a message that names the exact fix when neither kind may be opened.

mod denied;
mod options;
mod poll;
mod recvmsg;
mod rxstamps;

pub use options::SocketOptions;
pub use poll::wait;
pub use recvmsg::Received;
pub use rxstamps::wait_for_rx_stamps;

use crate::packet::Family;
use denied::{dgram_fix, is_permission, raw_fix};
use recvmsg::recv_msg;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

/// Which socket kind to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketChoice {
    /// A raw socket when permitted, else the datagram ICMP socket.
    Auto,
    Raw,
    Dgram,
}

/// The socket kind actually open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Raw,
    Dgram,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Raw => "raw",
            Kind::Dgram => "dgram",
        }
    }
}

/// An open ICMP or ICMPv6 socket.
#[derive(Debug)]
pub struct IcmpSocket {
    sock: Socket,
    pub family: Family,
    pub kind: Kind,
    /// `SO_TIMESTAMPING` (software receive and, when asked, scheduler transmit stamps) is on;
    /// otherwise `SO_TIMESTAMPNS` gives receive stamps.
    pub timestamping: bool,
    /// Kernel transmit stamps were requested.
    pub tx_stamps: bool,
}

impl AsFd for IcmpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}

impl IcmpSocket {
    /// Opens a socket of `family` as `choice` says; the error text says how to get permission.
    pub fn open(family: Family, choice: SocketChoice) -> Result<IcmpSocket, String> {
        let (domain, proto) = match family {
            Family::V4 => (Domain::IPV4, Protocol::ICMPV4),
            Family::V6 => (Domain::IPV6, Protocol::ICMPV6),
        };
        let open = |kind: Kind| {
            let ty = match kind {
                Kind::Raw => Type::RAW,
                Kind::Dgram => Type::DGRAM,
            };
            Socket::new(domain, ty, Some(proto)).map(|sock| IcmpSocket {
                sock,
                family,
                kind,
                timestamping: false,
                tx_stamps: false,
            })
        };
        let fam = match family {
            Family::V4 => "ICMP",
            Family::V6 => "ICMPv6",
        };
        let other = |kind: Kind, e: io::Error| {
            let hint = if matches!(e.raw_os_error(), Some(libc::EAFNOSUPPORT)) {
                " (is IPv6 disabled on this host?)"
            } else {
                ""
            };
            format!("cannot open a {} {fam} socket: {e}{hint}", kind.as_str())
        };
        match choice {
            SocketChoice::Raw => open(Kind::Raw).map_err(|e| {
                if is_permission(&e) {
                    format!(
                        "cannot open a raw {fam} socket ({e}): {}; or use --socket dgram",
                        raw_fix()
                    )
                } else {
                    other(Kind::Raw, e)
                }
            }),
            SocketChoice::Dgram => open(Kind::Dgram).map_err(|e| {
                if is_permission(&e) {
                    format!("cannot open a datagram {fam} socket ({e}): {}", dgram_fix())
                } else {
                    other(Kind::Dgram, e)
                }
            }),
            SocketChoice::Auto => match open(Kind::Raw) {
                Ok(s) => Ok(s),
                Err(e) if is_permission(&e) => open(Kind::Dgram).map_err(|e2| {
                    if is_permission(&e2) {
                        format!(
                            "cannot open an {fam} socket: {}; or {}",
                            raw_fix(),
                            dgram_fix()
                        )
                    } else {
                        other(Kind::Dgram, e2)
                    }
                }),
                Err(e) => Err(other(Kind::Raw, e)),
            },
        }
    }

    /// The identifier the kernel gave a datagram socket (its local "port").
    pub fn dgram_id(&self) -> Option<u16> {
        let local = self.sock.local_addr().ok()?;
        local.as_socket().map(|a| a.port())
    }

    /// Sends `buf` to `to`.
    pub fn send_to(&self, buf: &[u8], to: &SockAddr) -> io::Result<()> {
        self.sock.send_to(buf, to).map(|_| ())
    }

    /// One `recvmsg` without blocking, from the error queue when `errqueue`.
    pub fn recv(&self, buf: &mut [u8], errqueue: bool) -> io::Result<Received> {
        recv_msg(&self.sock, buf, errqueue)
    }

    /// Clears a pending socket error (set after an ICMP error on a datagram socket).
    pub fn take_error(&self) -> Option<io::Error> {
        self.sock.take_error().ok().flatten()
    }
}
