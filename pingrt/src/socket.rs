//! ICMP sockets through libc: raw or unprivileged datagram, with kernel timestamps and the
//! error queue, and a message that names the exact fix when neither kind may be opened.

mod denied;
mod options;
mod poll;
mod recvmsg;
mod rxstamps;
mod sockaddr;

pub use denied::ping_group_range;
pub use options::SocketOptions;
pub use poll::wait;
pub use recvmsg::{ExtErr, Received};
pub use rxstamps::wait_for_rx_stamps;
pub use sockaddr::{from_sockaddr, sockaddr};

use crate::packet::Family;
use denied::{dgram_fix, is_permission, raw_fix};
use recvmsg::recv_msg;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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
    fd: OwnedFd,
    pub family: Family,
    pub kind: Kind,
    /// `SO_TIMESTAMPING` (software receive and, when asked, scheduler transmit stamps) is on;
    /// otherwise `SO_TIMESTAMPNS` gives receive stamps.
    pub timestamping: bool,
    /// Kernel transmit stamps were requested.
    pub tx_stamps: bool,
}

pub(crate) fn setsockopt<T>(fd: RawFd, level: i32, name: i32, val: &T) -> io::Result<()> {
    // SAFETY: val points to a live T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn raw_socket(domain: i32, ty: i32, proto: i32) -> io::Result<OwnedFd> {
    // SAFETY: socket takes no pointers.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by socket and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl IcmpSocket {
    /// Opens a socket of `family` as `choice` says; the error text says how to get permission.
    pub fn open(family: Family, choice: SocketChoice) -> Result<IcmpSocket, String> {
        let (domain, proto) = match family {
            Family::V4 => (libc::AF_INET, libc::IPPROTO_ICMP),
            Family::V6 => (libc::AF_INET6, libc::IPPROTO_ICMPV6),
        };
        let open = |kind: Kind| {
            let ty = match kind {
                Kind::Raw => libc::SOCK_RAW,
                Kind::Dgram => libc::SOCK_DGRAM,
            };
            raw_socket(domain, ty, proto).map(|fd| IcmpSocket {
                fd,
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

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The identifier the kernel gave a datagram socket (its local "port").
    pub fn dgram_id(&self) -> Option<u16> {
        // SAFETY: getsockname writes at most len bytes into ss, which we own.
        let (ss, rc) = unsafe {
            let mut ss: libc::sockaddr_storage = zeroed();
            let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            let rc = libc::getsockname(
                self.fd(),
                (&mut ss as *mut libc::sockaddr_storage).cast(),
                &mut len,
            );
            (ss, rc)
        };
        if rc != 0 {
            return None;
        }
        from_sockaddr(&ss).map(|a| a.port())
    }

    /// Sends `buf` to an address already in kernel form (from [`sockaddr`]).
    pub fn send_to(
        &self,
        buf: &[u8],
        (ss, len): &(libc::sockaddr_storage, libc::socklen_t),
    ) -> io::Result<()> {
        // SAFETY: buf and ss are live for the call; len is the size of the address in ss.
        let n = unsafe {
            libc::sendto(
                self.fd(),
                buf.as_ptr().cast(),
                buf.len(),
                0,
                (ss as *const libc::sockaddr_storage).cast(),
                *len,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// One `recvmsg` without blocking, from the error queue when `errqueue`.
    pub fn recv(&self, buf: &mut [u8], errqueue: bool) -> io::Result<Received> {
        recv_msg(self.fd(), buf, errqueue)
    }

    /// Clears a pending socket error (set after an ICMP error on a datagram socket).
    pub fn take_error(&self) -> Option<io::Error> {
        let mut v: libc::c_int = 0;
        let mut len = size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes one int into v.
        let rc = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if rc == 0 && v != 0 {
            Some(io::Error::from_raw_os_error(v))
        } else {
            None
        }
    }
}
