//! ICMP sockets through libc: raw or unprivileged datagram, with kernel timestamps and the
//! error queue, and a message that names the exact fix when neither kind may be opened.

use crate::packet::Family;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

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

/// The options applied to a socket after it is opened.
#[derive(Clone, Debug, Default)]
pub struct SocketOptions {
    pub ttl: Option<u32>,
    pub source: Option<IpAddr>,
    pub interface: Option<String>,
    pub tx_stamps: bool,
}

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

/// The current CLOCK_REALTIME in ns, the clock the kernel's software stamps use.
pub fn now_ns() -> i64 {
    // SAFETY: clock_gettime writes one timespec that we own.
    let ts = unsafe {
        let mut ts: libc::timespec = zeroed();
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        ts
    };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn setsockopt<T>(fd: RawFd, level: i32, name: i32, val: &T) -> io::Result<()> {
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

fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

/// The current `net.ipv4.ping_group_range`, as the kernel shows it.
pub fn ping_group_range() -> Option<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
        .ok()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn raw_fix() -> String {
    "a raw ICMP socket needs CAP_NET_RAW: run as root, or grant it with \
     `setcap cap_net_raw+ep $(command -v pingrt)`"
        .to_string()
}

fn dgram_fix() -> String {
    // SAFETY: getegid takes no arguments and cannot fail.
    let gid = unsafe { libc::getegid() };
    let range = ping_group_range().unwrap_or_else(|| "unknown".to_string());
    format!(
        "the unprivileged ICMP datagram socket is refused: group id {gid} is outside \
         net.ipv4.ping_group_range (now \"{range}\"); allow it with \
         `sysctl -w net.ipv4.ping_group_range=\"{gid} {gid}\"` (or \"0 2147483647\" for every group)"
    )
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

    /// Applies timestamps, filters, TTL, source address and interface.
    pub fn configure(&mut self, o: &SocketOptions) -> Result<(), String> {
        let fd = self.fd();
        let one: libc::c_int = 1;
        // Kernel software stamps: receive always; transmit at the device queue when asked.
        let mut flags = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
        if o.tx_stamps {
            flags |= libc::SOF_TIMESTAMPING_TX_SCHED | libc::SOF_TIMESTAMPING_OPT_TSONLY;
        }
        match setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, &flags) {
            Ok(()) => {
                self.timestamping = true;
                self.tx_stamps = o.tx_stamps;
            }
            Err(_) => {
                setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one)
                    .map_err(|e| format!("cannot enable kernel receive timestamps: {e}"))?;
            }
        }
        match (self.family, self.kind) {
            (Family::V4, kind) => {
                if kind == Kind::Dgram {
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
                if let Some(ttl) = o.ttl {
                    let v = ttl as libc::c_int;
                    setsockopt(fd, libc::IPPROTO_IP, libc::IP_TTL, &v)
                        .map_err(|e| format!("cannot set the TTL to {ttl}: {e}"))?;
                }
            }
            (Family::V6, kind) => {
                setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVHOPLIMIT, &one)
                    .map_err(|e| format!("IPV6_RECVHOPLIMIT: {e}"))?;
                if kind == Kind::Dgram {
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
                if let Some(ttl) = o.ttl {
                    let v = ttl as libc::c_int;
                    setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_UNICAST_HOPS, &v)
                        .map_err(|e| format!("cannot set the hop limit to {ttl}: {e}"))?;
                }
            }
        }
        // A larger receive buffer so a flood's replies are not dropped by the socket.
        let rcv: libc::c_int = 1 << 20;
        let _ = setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcv);
        if let Some(ifname) = &o.interface {
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
        // A datagram socket gets its identifier (its "port") when bound; bind it now so the
        // identifier is known before the first probe.
        let bind_to = o.source.or(match (self.kind, self.family) {
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

/// One `recvmsg` on `fd` without blocking, from the error queue when `errqueue`, with the
/// control messages pingrt asks for decoded.
fn recv_msg(fd: RawFd, buf: &mut [u8], errqueue: bool) -> io::Result<Received> {
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
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled, bounded by
    // msg_controllen; each payload is read unaligned with the size its type implies.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
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
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(r)
}

/// Backs the spare capacity of `v` with memory now, in one call (MADV_POPULATE_WRITE, Linux
/// 5.14), rather than a page fault at a time as it fills: a flood's tables then fill without
/// stopping the probe loop. Where the kernel does not know the advice, nothing happens.
pub fn populate<T>(v: &mut Vec<T>) {
    // SAFETY: sysconf takes no pointers.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let spare = v.spare_capacity_mut();
    let start = spare.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(spare);
    let (from, to) = (start.next_multiple_of(page), end / page * page);
    if to > from {
        // SAFETY: [from, to) lies inside the vector's own allocation (its unused capacity);
        // MADV_POPULATE_WRITE only maps pages in, it neither reads nor changes their contents.
        unsafe {
            libc::madvise(
                from as *mut libc::c_void,
                to - from,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
}

/// Waits until the kernel stamps the packets it receives, at most `limit`; whether it does.
///
/// The first socket that asks for receive stamps turns stamping on for the whole stack a
/// moment later, from a work queue (a deferred static key); packets that arrive before that
/// carry no stamp. A datagram sent to ourselves on 127.0.0.1 shows when stamping is on: it
/// comes back with a software receive stamp. Without a usable loopback (down in a network
/// namespace) this waits the whole `limit`, as a plain sleep would.
pub fn wait_for_rx_stamps(limit: Duration) -> bool {
    let start = Instant::now();
    let check = LoopbackCheck::open().ok();
    loop {
        if check.as_ref().is_some_and(LoopbackCheck::stamped) {
            return true;
        }
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            return false;
        }
        let pause = if check.is_some() {
            Duration::from_micros(200)
        } else {
            left
        };
        std::thread::sleep(left.min(pause));
    }
}

/// A UDP socket bound to 127.0.0.1 that sends itself a byte and looks at its receive stamp.
struct LoopbackCheck {
    sock: std::net::UdpSocket,
    addr: SocketAddr,
}

impl LoopbackCheck {
    fn open() -> io::Result<LoopbackCheck> {
        let sock = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        sock.set_nonblocking(true)?;
        let flags = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
        setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            &flags,
        )?;
        let addr = sock.local_addr()?;
        Ok(LoopbackCheck { sock, addr })
    }

    /// Whether a datagram sent now comes back stamped (false when it does not come back).
    fn stamped(&self) -> bool {
        if self.sock.send_to(&[0], self.addr).is_err() {
            return false;
        }
        let mut buf = [0u8; 8];
        let mut stamped = false;
        // Read what is queued (an earlier datagram may have come late): the last one counts.
        for _ in 0..64 {
            match recv_msg(self.sock.as_raw_fd(), &mut buf, false) {
                Ok(r) => stamped = r.stamp_ns.is_some(),
                Err(_) => break,
            }
        }
        stamped
    }
}

/// A `sockaddr_storage` and its length for `a`.
pub fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            let sin = unsafe {
                &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>()
            };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = v4.port().to_be();
            sin.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
            (ss, size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(v6) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            let sin6 = unsafe {
                &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = v6.port().to_be();
            sin6.sin6_addr.s6_addr = v6.ip().octets();
            sin6.sin6_scope_id = v6.scope_id();
            (ss, size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// The address in a `sockaddr_storage` the kernel filled.
pub fn from_sockaddr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(ss.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(sin.sin_port)))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::new(
                IpAddr::V6(ip),
                u16::from_be(sin6.sin6_port),
            ))
        }
        _ => None,
    }
}

/// Waits up to `timeout_ns` (`None`: without limit) for input or an error-queue entry;
/// returns (readable, error queue ready).
pub fn wait(fd: RawFd, timeout_ns: Option<i64>) -> io::Result<(bool, bool)> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = timeout_ns.map(|ns| {
        let ns = ns.max(0);
        libc::timespec {
            tv_sec: ns / 1_000_000_000,
            tv_nsec: ns % 1_000_000_000,
        }
    });
    let tp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: p is one live pollfd; tp is null or points to a live timespec.
    let rc = unsafe { libc::ppoll(&mut p, 1, tp, std::ptr::null()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((
        p.revents & libc::POLLIN != 0,
        p.revents & libc::POLLERR != 0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_round_trip() {
        for a in ["127.0.0.1:7", "[::1]:9", "[fd00::1]:0"] {
            let a: SocketAddr = a.parse().unwrap();
            let (ss, _) = sockaddr(&a);
            assert_eq!(from_sockaddr(&ss), Some(a));
        }
    }

    #[test]
    fn receive_stamps_are_seen_on_loopback() {
        if LoopbackCheck::open().is_err() {
            eprintln!("skipped: receive_stamps_are_seen_on_loopback: no usable 127.0.0.1");
            return;
        }
        // The check's own socket asks for stamps, so stamping comes on if it was off.
        assert!(wait_for_rx_stamps(Duration::from_secs(5)));
    }

    #[test]
    fn without_loopback_the_wait_is_a_plain_sleep() {
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: without_loopback_the_wait_is_a_plain_sleep: needs root");
            return;
        }
        let got = std::thread::spawn(|| {
            // SAFETY: unshare takes no pointers; it moves only this thread into a new network
            // namespace (whose loopback is down), which goes away with the thread.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return None;
            }
            let no_loopback = LoopbackCheck::open().map_or(true, |c| !c.stamped());
            Some((no_loopback, wait_for_rx_stamps(Duration::from_millis(20))))
        })
        .join()
        .expect("thread");
        match got {
            Some((no_loopback, stamped)) => {
                assert!(no_loopback);
                assert!(!stamped);
            }
            None => eprintln!("skipped: without_loopback_the_wait_is_a_plain_sleep: unshare"),
        }
    }

    #[test]
    fn populate_keeps_what_is_there() {
        let mut v: Vec<u64> = (0..1000).collect();
        v.reserve_exact(1 << 20);
        populate(&mut v);
        assert!(v.iter().copied().eq(0..1000));
        v.extend(1000..(1 << 20));
        assert_eq!(v[(1 << 20) - 1], (1 << 20) - 1);
        populate(&mut Vec::<u8>::new());
    }

    #[test]
    fn clock_moves() {
        let a = now_ns();
        let b = now_ns();
        assert!(a > 1_600_000_000_000_000_000 && b >= a);
    }
}
