//! One `recvmsg`: the packet, its sender, and the control messages pingrt asks for (kernel
//! stamps, TTL or hop limit, extended errors from the error queue).

use super::sockaddr::from_sockaddr;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::IpAddr;
use std::os::fd::RawFd;

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
    pub offender: Option<IpAddr>,
}

/// One `recvmsg` on `fd` without blocking, from the error queue when `errqueue`, with the
/// control messages pingrt asks for decoded.
pub(super) fn recv_msg(fd: RawFd, buf: &mut [u8], errqueue: bool) -> io::Result<Received> {
    // Control space for a timestamping cmsg (3 timespecs, 64 bytes with its header), a TTL
    // (24) and an extended error with its offender address (64), with room to spare. The
    // kernel fills it; only what it reports filled (msg_controllen) is read.
    let mut control = std::mem::MaybeUninit::<[u64; 32]>::uninit();
    // SAFETY: all-zero is a valid sockaddr_storage, iovec and msghdr.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: as above.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (&mut ss as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; 32]>();
    let flags = libc::MSG_DONTWAIT | if errqueue { libc::MSG_ERRQUEUE } else { 0 };
    // SAFETY: msg points to live buffers of the lengths it states.
    let n = unsafe { libc::recvmsg(fd, &mut msg, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut r = Received {
        len: n as usize,
        from: if msg.msg_namelen > 0 {
            from_sockaddr(&ss).map(|a| a.ip())
        } else {
            None
        },
        ..Received::default()
    };
    decode_cmsgs(&msg, &mut r);
    Ok(r)
}

/// Decodes the control messages of `msg`, which the kernel just filled, into `r`.
fn decode_cmsgs(msg: &libc::msghdr, r: &mut Received) {
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled, bounded by
    // msg_controllen; each payload is read unaligned with the size its type implies.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            let data = libc::CMSG_DATA(c);
            let room = h.cmsg_len as usize - (data as usize - c as usize);
            match (h.cmsg_level, h.cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPING)
                    if room >= size_of::<libc::timespec>() =>
                {
                    let ts: libc::timespec = std::ptr::read_unaligned(data.cast());
                    if ts.tv_sec != 0 || ts.tv_nsec != 0 {
                        r.stamp_ns = Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec);
                    }
                }
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS)
                    if room >= size_of::<libc::timespec>() =>
                {
                    let ts: libc::timespec = std::ptr::read_unaligned(data.cast());
                    r.stamp_ns = Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec);
                }
                (libc::IPPROTO_IP, libc::IP_TTL) | (libc::IPPROTO_IPV6, libc::IPV6_HOPLIMIT)
                    if room >= size_of::<libc::c_int>() =>
                {
                    let v: libc::c_int = std::ptr::read_unaligned(data.cast());
                    r.ttl = u8::try_from(v).ok();
                }
                (libc::IPPROTO_IP, libc::IP_RECVERR) | (libc::IPPROTO_IPV6, libc::IPV6_RECVERR)
                    if room >= size_of::<libc::sock_extended_err>() =>
                {
                    let e: libc::sock_extended_err = std::ptr::read_unaligned(data.cast());
                    let off_room = room - size_of::<libc::sock_extended_err>();
                    let mut off: libc::sockaddr_storage = zeroed();
                    let copy = off_room.min(size_of::<libc::sockaddr_storage>());
                    std::ptr::copy_nonoverlapping(
                        data.add(size_of::<libc::sock_extended_err>()),
                        (&mut off as *mut libc::sockaddr_storage).cast::<u8>(),
                        copy,
                    );
                    r.ext_err = Some(ExtErr {
                        origin: e.ee_origin,
                        icmp_type: e.ee_type,
                        icmp_code: e.ee_code,
                        offender: if copy >= 2 {
                            from_sockaddr(&off).map(|a| a.ip())
                        } else {
                            None
                        },
                    });
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
}
