//! One `recvmsg` (nix): the packet, its sender, and the control messages pingrt asks for
//! (kernel stamps, TTL or hop limit, extended errors from the error queue).

use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg};
use nix::sys::time::TimeSpec;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::AsRawFd;

/// What one `recvmsg` returned.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub len: usize,
    pub from: Option<IpAddr>,
    /// Kernel receive (or, from the error queue, transmit) stamp, ns since the epoch.
    pub stamp_ns: Option<i64>,
    pub ttl: Option<u8>,
    pub ext_err: Option<ExtErr>,
}

/// A `sock_extended_err` from the error queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtErr {
    pub origin: u8,
    pub icmp_type: u8,
    pub icmp_code: u8,
    /// `ee_info`: for a transmit stamp, which one (`SCM_TSTAMP_SND`, `SCM_TSTAMP_SCHED`).
    pub info: u32,
    pub offender: Option<IpAddr>,
}

/// Control space for a timestamping message (3 timespecs, 64 bytes with its header), a TTL
/// (24) and an extended error with its offender address (64), with room to spare; aligned
/// for the `cmsghdr`s the kernel writes into it.
#[repr(C, align(8))]
struct Control([u8; 256]);

fn ns(t: &TimeSpec) -> i64 {
    t.tv_sec() * 1_000_000_000 + t.tv_nsec()
}

/// The address a `sockaddr` of the kernel's holds, when it is IPv4 or IPv6.
fn ip_of(a: &SockaddrStorage) -> Option<IpAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(IpAddr::V4(v4.ip()));
    }
    a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
}

/// One `recvmsg` on `fd` without blocking, from the error queue when `errqueue`, with the
/// control messages pingrt asks for decoded.
pub(super) fn recv_msg(fd: &impl AsRawFd, buf: &mut [u8], errqueue: bool) -> io::Result<Received> {
    let mut control = Control([0; 256]);
    let mut iov = [IoSliceMut::new(buf)];
    let mut flags = MsgFlags::MSG_DONTWAIT;
    if errqueue {
        flags |= MsgFlags::MSG_ERRQUEUE;
    }
    let msg = recvmsg::<SockaddrStorage>(fd.as_raw_fd(), &mut iov, Some(&mut control.0), flags)
        .map_err(io::Error::from)?;
    let mut r = Received {
        len: msg.bytes,
        from: msg.address.as_ref().and_then(ip_of),
        ..Received::default()
    };
    // A truncated control space (never with the room above) leaves the packet unstamped.
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            decode(c, &mut r);
        }
    }
    Ok(r)
}

/// Takes what `r` needs from one control message.
fn decode(c: ControlMessageOwned, r: &mut Received) {
    match c {
        // The first of the three stamps is the software one, zero when the kernel took none.
        ControlMessageOwned::ScmTimestampsns(ts)
            if ts.system.tv_sec() != 0 || ts.system.tv_nsec() != 0 =>
        {
            r.stamp_ns = Some(ns(&ts.system));
        }
        ControlMessageOwned::ScmTimestampns(ts) => r.stamp_ns = Some(ns(&ts)),
        ControlMessageOwned::Ipv4Ttl(v) | ControlMessageOwned::Ipv6HopLimit(v) => {
            r.ttl = u8::try_from(v).ok();
        }
        ControlMessageOwned::Ipv4RecvErr(e, off) => {
            let offender = off
                .filter(|a| i32::from(a.sin_family) == libc::AF_INET)
                .map(|a| IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))));
            r.ext_err = Some(ext_err(&e, offender));
        }
        ControlMessageOwned::Ipv6RecvErr(e, off) => {
            let offender = off
                .filter(|a| i32::from(a.sin6_family) == libc::AF_INET6)
                .map(|a| IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)));
            r.ext_err = Some(ext_err(&e, offender));
        }
        _ => {}
    }
}

fn ext_err(e: &libc::sock_extended_err, offender: Option<IpAddr>) -> ExtErr {
    ExtErr {
        origin: e.ee_origin,
        icmp_type: e.ee_type,
        icmp_code: e.ee_code,
        info: e.ee_info,
        offender,
    }
}
