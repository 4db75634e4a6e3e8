//! Sockets: listening, accepting and connecting in short ticks (so Ctrl-C and timeouts are
//! seen), socket options, and the kernel's TCP_INFO for a connection.

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

/// A socket error in words a person reads: a reset or a closed peer named as such.
pub fn net_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) => "connection reset by peer".into(),
        Some(libc::EPIPE) => "the peer closed the connection before all was sent".into(),
        _ => e.to_string(),
    }
}

/// How long a blocking call waits before the caller looks at the clock and the Ctrl-C flag.
pub const TICK: Duration = Duration::from_millis(100);

/// Options that shape a data connection.
#[derive(Clone, Debug, Default)]
pub struct SockOpts {
    /// SO_SNDBUF and SO_RCVBUF; `None` leaves the kernel's autotuning alone.
    pub window: Option<usize>,
    pub no_delay: bool,
    /// TCP_CONGESTION, e.g. `cubic` or `bbr` (iperf3 -C).
    pub congestion: Option<String>,
    /// TCP_MAXSEG (iperf3 -M).
    pub mss: Option<u32>,
}

impl SockOpts {
    /// What must be set before listen or connect.
    fn apply_buffers(&self, s: &Socket) -> io::Result<()> {
        if let Some(w) = self.window {
            s.set_send_buffer_size(w)?;
            s.set_recv_buffer_size(w)?;
        }
        if let Some(c) = &self.congestion {
            s.set_tcp_congestion(c.as_bytes())
                .map_err(|e| io::Error::new(e.kind(), format!("congestion control {c:?}: {e}")))?;
        }
        if let Some(m) = self.mss {
            s.set_tcp_mss(m)
                .map_err(|e| io::Error::new(e.kind(), format!("MSS {m}: {e}")))?;
        }
        Ok(())
    }

    /// Options for an established connection, plus the tick timeouts.
    pub fn apply_stream(&self, s: &Socket) -> io::Result<()> {
        if self.no_delay {
            s.set_tcp_nodelay(true)?;
        }
        s.set_read_timeout(Some(TICK))?;
        s.set_write_timeout(Some(TICK))?;
        Ok(())
    }
}

/// Creates a listening socket on `addr`; a wildcard IPv6 listener also takes IPv4 unless
/// `v6_only`. Buffers are set before listen so that the window scale is chosen for them.
pub fn listen(addr: SocketAddr, v6_only: bool, opts: &SockOpts) -> io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        s.set_only_v6(v6_only)?;
    }
    opts.apply_buffers(&s)?;
    s.bind(&SockAddr::from(addr))?;
    s.listen(128)?;
    s.set_read_timeout(Some(TICK))?;
    Ok(s)
}

/// Listens on the wildcard `[::]`, or on `0.0.0.0` where the kernel has no IPv6.
pub fn listen_any(addr: SocketAddr, v6_only: bool, opts: &SockOpts) -> io::Result<Socket> {
    match listen(addr, v6_only, opts) {
        Err(e)
            if addr.is_ipv6()
                && addr.ip().is_unspecified()
                && e.raw_os_error() == Some(libc::EAFNOSUPPORT) =>
        {
            let v4 = SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), addr.port());
            listen(v4, false, opts)
        }
        r => r,
    }
}

/// What ended a wait before it got what it waited for.
#[derive(Debug)]
pub enum WaitEnd {
    Interrupted,
    TimedOut,
    Failed(io::Error),
}

/// Waits for one connection on `l` (whose SO_RCVTIMEO is a tick) until `deadline`, returning
/// early on Ctrl-C.
pub fn accept(l: &Socket, deadline: Option<Instant>) -> Result<(Socket, SocketAddr), WaitEnd> {
    // Bounded: each pass waits at most one tick, and the deadline or Ctrl-C ends it.
    loop {
        if measure::signal::interrupted() {
            return Err(WaitEnd::Interrupted);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(WaitEnd::TimedOut);
        }
        match l.accept() {
            Ok((s, a)) => {
                let peer = a
                    .as_socket()
                    .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
                return Ok((s, peer));
            }
            Err(e) if is_tick(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            // A client that gave up before we accepted it: wait for the next one.
            Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => {}
            Err(e) => return Err(WaitEnd::Failed(e)),
        }
    }
}

/// Takes a connection that is already waiting on `l`, without blocking.
pub fn accept_ready(l: &Socket) -> io::Result<Option<(Socket, SocketAddr)>> {
    if !poll_in(l, Duration::ZERO)? {
        return Ok(None);
    }
    match l.accept() {
        Ok((s, a)) => Ok(a.as_socket().map(|p| (s, p))),
        Err(e) if is_tick(&e) || e.raw_os_error() == Some(libc::ECONNABORTED) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `fd` has something to read within `wait` (EINTR counts as nothing yet).
pub fn poll_in(fd: &impl AsFd, wait: Duration) -> io::Result<bool> {
    poll_one(fd, PollFlags::IN, wait)
}

/// Waits up to `wait` for data or the peer's FIN: `None` for neither yet, else whether the
/// FIN (or an error) came.
pub fn poll_hup(fd: &impl AsFd, wait: Duration) -> io::Result<Option<bool>> {
    let mut p = [PollFd::new(fd, PollFlags::IN | PollFlags::RDHUP)];
    let t = Timespec {
        tv_sec: wait.as_secs().min(i32::MAX as u64) as _,
        tv_nsec: wait.subsec_nanos().into(),
    };
    match rustix::event::poll(&mut p, Some(&t)) {
        Ok(0) | Err(Errno::INTR) => Ok(None),
        Ok(_) => {
            let r = p[0].revents();
            Ok(Some(r.intersects(
                PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR,
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// Whether `fd` is ready for `events` within `wait` (EINTR counts as not yet).
fn poll_one(fd: &impl AsFd, events: PollFlags, wait: Duration) -> io::Result<bool> {
    let mut p = [PollFd::new(fd, events)];
    let t = Timespec {
        tv_sec: wait.as_secs().min(i32::MAX as u64) as _,
        tv_nsec: wait.subsec_nanos().into(),
    };
    match rustix::event::poll(&mut p, Some(&t)) {
        Ok(n) => Ok(n > 0),
        Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether an error is the tick timeout of SO_RCVTIMEO/SO_SNDTIMEO.
pub fn is_tick(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut
}

/// Connects to the first of `addrs` that answers, each attempt bounded by `timeout`,
/// from `bind` when given. Ctrl-C ends the wait.
pub fn connect(
    addrs: &[SocketAddr],
    bind: Option<SocketAddr>,
    opts: &SockOpts,
    timeout: Option<Duration>,
) -> Result<Socket, WaitEnd> {
    let mut last = WaitEnd::Failed(io::Error::new(
        io::ErrorKind::AddrNotAvailable,
        "no address to connect to",
    ));
    for &a in addrs {
        match connect_one(a, bind, opts, timeout) {
            Ok(s) => return Ok(s),
            Err(WaitEnd::Interrupted) => return Err(WaitEnd::Interrupted),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn connect_one(
    a: SocketAddr,
    bind: Option<SocketAddr>,
    opts: &SockOpts,
    timeout: Option<Duration>,
) -> Result<Socket, WaitEnd> {
    let s = Socket::new(Domain::for_address(a), Type::STREAM, Some(Protocol::TCP))
        .map_err(WaitEnd::Failed)?;
    opts.apply_buffers(&s).map_err(WaitEnd::Failed)?;
    if let Some(b) = bind {
        let b = match (b, a) {
            (SocketAddr::V4(v4), SocketAddr::V6(_)) => {
                SocketAddr::new(v4.ip().to_ipv6_mapped().into(), v4.port())
            }
            _ => b,
        };
        s.set_reuse_address(true).map_err(WaitEnd::Failed)?;
        s.bind(&SockAddr::from(b)).map_err(WaitEnd::Failed)?;
    }
    s.set_nonblocking(true).map_err(WaitEnd::Failed)?;
    match s.connect(&SockAddr::from(a)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            let start = Instant::now();
            // Bounded by the timeout and Ctrl-C; each pass waits one tick at most.
            loop {
                if measure::signal::interrupted() {
                    return Err(WaitEnd::Interrupted);
                }
                let waited = start.elapsed();
                if timeout.is_some_and(|t| waited >= t) {
                    return Err(WaitEnd::TimedOut);
                }
                let wait = match timeout {
                    Some(t) => (t - waited).min(TICK),
                    None => TICK,
                };
                if poll_out(&s, wait).map_err(WaitEnd::Failed)? {
                    break;
                }
            }
            if let Some(e) = s.take_error().map_err(WaitEnd::Failed)? {
                return Err(WaitEnd::Failed(e));
            }
        }
        Err(e) => return Err(WaitEnd::Failed(e)),
    }
    s.set_nonblocking(false).map_err(WaitEnd::Failed)?;
    Ok(s)
}

fn poll_out(fd: &impl AsFd, wait: Duration) -> io::Result<bool> {
    poll_one(fd, PollFlags::OUT, wait)
}

/// The parts of TCP_INFO that a sample reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    pub total_retrans: u32,
    pub rtt_s: f64,
    pub rttvar_s: f64,
    pub snd_cwnd_segments: u32,
    pub snd_mss: u32,
    pub pmtu: u32,
    /// Segments sent and not yet acknowledged, and bytes not yet sent.
    pub unacked_segments: u32,
    pub notsent_bytes: u32,
}

impl TcpInfo {
    /// Whether everything written has been acknowledged by the peer's kernel.
    pub fn all_acked(&self) -> bool {
        self.unacked_segments == 0 && self.notsent_bytes == 0
    }

    /// About how many written bytes the peer's kernel has not acknowledged yet.
    pub fn unacked_bytes(&self) -> u64 {
        u64::from(self.unacked_segments) * u64::from(self.snd_mss) + u64::from(self.notsent_bytes)
    }

    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd_segments) * u64::from(self.snd_mss)
    }
}

/// The bytes a TCP socket holds received but unread (FIONREAD, i.e. SIOCINQ); 0 on error.
pub fn unread_bytes(s: &Socket) -> u64 {
    rustix::io::ioctl_fionread(s).unwrap_or(0)
}

/// Reads TCP_INFO of a connected socket (neither socket2 nor rustix reads it).
pub fn tcp_info(s: &Socket) -> Option<TcpInfo> {
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: tcp_info is plain old data, so all-zero is a valid value; getsockopt writes at
    // most `len` bytes into it, and the socket stays open for the call.
    let (rc, ti) = unsafe {
        let mut ti: libc::tcp_info = std::mem::zeroed();
        let rc = libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut ti as *mut libc::tcp_info).cast(),
            &mut len,
        );
        (rc, ti)
    };
    if rc != 0 {
        return None;
    }
    Some(TcpInfo {
        total_retrans: ti.tcpi_total_retrans,
        rtt_s: f64::from(ti.tcpi_rtt) / 1e6,
        rttvar_s: f64::from(ti.tcpi_rttvar) / 1e6,
        snd_cwnd_segments: ti.tcpi_snd_cwnd,
        snd_mss: ti.tcpi_snd_mss,
        pmtu: ti.tcpi_pmtu,
        unacked_segments: ti.tcpi_unacked,
        notsent_bytes: ti.tcpi_notsent_bytes,
    })
}

/// The error text people read for a failed connect; `flag` is the option that set `timeout`,
/// as the user typed it.
pub fn describe(e: &WaitEnd, timeout: Option<Duration>, flag: &str) -> String {
    match e {
        WaitEnd::Interrupted => "interrupted".into(),
        WaitEnd::TimedOut => match timeout {
            Some(t) if t.is_zero() => format!(
                "{flag} 0 leaves no time to connect: give it the seconds to wait, e.g. {flag} 5"
            ),
            Some(t) => format!(
                "no answer within {} ({flag})",
                measure::units::format_seconds(t.as_secs_f64())
            ),
            None => "timed out".into(),
        },
        WaitEnd::Failed(e) => match e.raw_os_error() {
            Some(libc::ECONNREFUSED) => {
                "connection refused (is a listener running on that port?)".into()
            }
            _ => e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_connect_accept_and_tcp_info() {
        let l = listen("127.0.0.1:0".parse().unwrap(), false, &SockOpts::default()).unwrap();
        let addr = l.local_addr().unwrap().as_socket().unwrap();
        let c = connect(
            &[addr],
            None,
            &SockOpts::default(),
            Some(Duration::from_secs(5)),
        )
        .unwrap();
        let (s, peer) = accept(&l, Some(Instant::now() + Duration::from_secs(5))).unwrap();
        assert_eq!(peer, c.local_addr().unwrap().as_socket().unwrap());
        let ti = tcp_info(&c).unwrap();
        assert!(ti.snd_mss > 0);
        drop(s);
        assert!(accept_ready(&l).unwrap().is_none());
    }

    #[test]
    fn refused_connect_says_so() {
        // Bind a port and close it so that nothing listens there.
        let l = listen("127.0.0.1:0".parse().unwrap(), false, &SockOpts::default()).unwrap();
        let addr = l.local_addr().unwrap().as_socket().unwrap();
        drop(l);
        let e = connect(
            &[addr],
            None,
            &SockOpts::default(),
            Some(Duration::from_secs(5)),
        )
        .unwrap_err();
        assert!(describe(&e, None, "-w").contains("refused"), "{e:?}");
    }

    #[test]
    fn a_timeout_is_blamed_on_the_flag_that_set_it() {
        let five = Some(Duration::from_secs(5));
        let msg = describe(&WaitEnd::TimedOut, five, "-w");
        assert!(msg.ends_with("(-w)"), "{msg}");
        let msg = describe(&WaitEnd::TimedOut, five, "--connect-timeout");
        assert!(msg.ends_with("(--connect-timeout)"), "{msg}");
        let msg = describe(&WaitEnd::TimedOut, Some(Duration::ZERO), "-w");
        assert!(msg.starts_with("-w 0 leaves no time to connect"), "{msg}");
    }
}
