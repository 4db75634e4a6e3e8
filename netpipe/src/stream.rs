//! One measured connection: the send loop (from a pre-generated buffer) and the discarding
//! receive loop (recv with MSG_TRUNC: the kernel drops the bytes without copying them).

use crate::sock::{self, TcpInfo};
use socket2::Socket;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const NONE: u64 = u64::MAX;

/// What the streams of one session share: the clock, the stop flag, the byte budget and
/// the time limit.
#[derive(Debug)]
pub struct Ctl {
    pub base: Instant,
    pub stop: AtomicBool,
    /// Bytes left to move in the session (`--bytes`); `None` is unlimited.
    budget: Option<AtomicU64>,
    /// Nanoseconds after `base` of the session's first byte (`NONE` until then).
    first_ns: AtomicU64,
    /// How long the session moves data after its first byte (`--omit` + `--time`).
    run_for: Option<Duration>,
    pub idle: Option<Duration>,
    /// The thread that made the session (its supervisor), woken when a stream ends so that
    /// the process does not wait out its polling tick after the last byte.
    supervisor: std::thread::Thread,
}

impl Ctl {
    pub fn new(budget: Option<u64>, run_for: Option<Duration>, idle: Option<Duration>) -> Self {
        Ctl {
            base: Instant::now(),
            stop: AtomicBool::new(false),
            budget: budget.map(AtomicU64::new),
            first_ns: AtomicU64::new(NONE),
            run_for,
            idle,
            supervisor: std::thread::current(),
        }
    }

    /// Marks a stream done, at `end_ns` (its last byte moved, if any), and wakes the
    /// supervisor.
    fn finish(&self, prog: &Progress, end_ns: Option<u64>) {
        prog.end_ns.store(end_ns.unwrap_or(NONE), Ordering::Release);
        prog.done.store(true, Ordering::Release);
        self.supervisor.unpark();
    }

    pub fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    pub fn now_ns(&self) -> u64 {
        self.ns(Instant::now())
    }

    fn mark_first(&self, ns: u64) {
        self.first_ns.fetch_min(ns, Ordering::AcqRel);
    }

    /// The session's first byte, in nanoseconds after `base`.
    pub fn first_ns(&self) -> Option<u64> {
        match self.first_ns.load(Ordering::Acquire) {
            NONE => None,
            n => Some(n),
        }
    }

    /// Whether the session's --time (after --omit) is over at `now_ns`.
    pub fn past_deadline(&self, now_ns: u64) -> bool {
        match (self.run_for, self.first_ns()) {
            (Some(d), Some(f)) => now_ns >= f.saturating_add(d.as_nanos() as u64),
            _ => false,
        }
    }

    /// Takes up to `want` bytes from the budget; 0 when it is spent.
    fn claim(&self, want: u64) -> u64 {
        let Some(b) = &self.budget else {
            return want;
        };
        let mut cur = b.load(Ordering::Acquire);
        // Bounded: each failed exchange means another stream took bytes, and the budget
        // only shrinks.
        loop {
            let take = cur.min(want);
            if take == 0 {
                return 0;
            }
            match b.compare_exchange_weak(cur, cur - take, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return take,
                Err(now) => cur = now,
            }
        }
    }

    fn give_back(&self, n: u64) {
        if let (Some(b), true) = (&self.budget, n > 0) {
            b.fetch_add(n, Ordering::AcqRel);
        }
    }
}

/// A stream's progress, read by the main thread for intervals.
#[derive(Debug)]
pub struct Progress {
    pub bytes: AtomicU64,
    pub done: AtomicBool,
    /// When the stream's last byte moved (nanoseconds after the session's base), once done.
    end_ns: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Progress {
            bytes: AtomicU64::new(0),
            done: AtomicBool::new(false),
            end_ns: AtomicU64::new(NONE),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// When a finished stream moved its last byte (as its sample has it).
    pub fn end_ns(&self) -> Option<u64> {
        match self.end_ns.load(Ordering::Acquire) {
            NONE => None,
            n => Some(n),
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// The peer closed its side: the normal end for a receiver.
    Eof,
    /// The byte budget or the time limit was reached: the normal end for a sender.
    Limit,
    /// Ctrl-C.
    Stopped,
    /// Nothing moved for the idle timeout.
    Idle(Duration),
    /// The peer reset or vanished.
    PeerGone(String),
    Failed(String),
}

impl End {
    pub fn is_clean(&self) -> bool {
        matches!(self, End::Eof | End::Limit)
    }

    /// A short word for records.
    pub fn word(&self) -> &'static str {
        match self {
            End::Eof => "eof",
            End::Limit => "limit",
            End::Stopped => "interrupted",
            End::Idle(_) => "idle-timeout",
            End::PeerGone(_) => "peer-gone",
            End::Failed(_) => "error",
        }
    }

    /// The text people read.
    pub fn describe(&self) -> String {
        match self {
            End::Eof => "the peer closed the connection".into(),
            End::Limit => "the limit was reached".into(),
            End::Stopped => "interrupted".into(),
            End::Idle(d) => format!(
                "nothing arrived or left for {} (--idle-timeout)",
                measure::units::format_seconds(d.as_secs_f64())
            ),
            End::PeerGone(s) | End::Failed(s) => s.clone(),
        }
    }
}

/// What one stream did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub end: End,
    pub bytes: u64,
    /// First and last byte moved, in nanoseconds after the session's base.
    pub first_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// The sender's view of the connection when it finished.
    pub tcp: Option<TcpInfo>,
    /// Whether the peer closed after the sender's half-close (all data consumed).
    pub peer_closed: bool,
    /// How the sender moved its bytes (`splice` or `copy`); empty for a receiver.
    pub method: &'static str,
}

fn classify(e: &io::Error) -> End {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) => End::PeerGone("connection reset by peer".into()),
        Some(libc::EPIPE) => End::PeerGone("the peer closed the connection".into()),
        Some(libc::ETIMEDOUT) => End::PeerGone("the peer stopped answering (TCP timeout)".into()),
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) => {
            End::PeerGone(format!("the peer became unreachable: {e}"))
        }
        _ => End::Failed(e.to_string()),
    }
}

/// How many pipes of pattern pages a splicing sender cycles through.
const RING: usize = 8;

/// Where a sender's bytes come from.
pub enum Source {
    /// send() from a buffer, cycled: one copy into the kernel per byte.
    Copy { buf: Vec<u8>, off: usize },
    /// The buffer's pages are put into a ring of pipes `a` once (vmsplice); each round
    /// tee()s the references of the next one into pipe `b` and splices `b` into the socket:
    /// no byte is copied. The ring spreads the page reference counts that the sending and
    /// the freeing CPUs update over more pages.
    Splice {
        /// The ring (read end, write end) holding the pattern; pipe b carries it onward.
        a: Vec<(OwnedFd, OwnedFd)>,
        next: usize,
        b: (OwnedFd, OwnedFd),
        cap: usize,
        in_b: usize,
        /// The pattern's memory; declared last so that the pipes go before it does.
        _buf: Vec<u8>,
    },
    /// sendfile() from a memfd written once with the pattern: the socket takes references
    /// to the file's pages, no byte is copied, and the pages never change.
    Sendfile { file: OwnedFd, len: u64, off: u64 },
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl Source {
    /// A copying source of `len` bytes.
    pub fn copy(len: usize, random: bool) -> Source {
        Source::Copy {
            buf: pattern(len, random),
            off: 0,
        }
    }

    /// A splicing source holding up to `len` bytes (the pipe size caps it), or `None` when
    /// the kernel refuses pipes, vmsplice or tee.
    pub fn splice(len: usize, random: bool) -> Option<Source> {
        let page = 4096usize;
        let (rb, wb) = pipe()?;
        let want = len.clamp(page, 1 << 20) as libc::c_int;
        // SAFETY: F_SETPIPE_SZ/F_GETPIPE_SZ on a pipe we own; the kernel may round or
        // refuse the size, and we read back what it chose.
        let cap = unsafe {
            libc::fcntl(wb.as_raw_fd(), libc::F_SETPIPE_SZ, want);
            libc::fcntl(wb.as_raw_fd(), libc::F_GETPIPE_SZ)
        };
        if cap <= 0 {
            return None;
        }
        let cap = cap as usize;
        let buf = pattern(cap * RING + page, random);
        let start = buf.as_ptr().align_offset(page);
        if start + cap * RING > buf.len() {
            return None;
        }
        let mut ring = Vec::with_capacity(RING);
        for i in 0..RING {
            let (ra, wa) = pipe()?;
            // SAFETY: as above, on a pipe we own.
            let got = unsafe {
                libc::fcntl(wa.as_raw_fd(), libc::F_SETPIPE_SZ, cap as libc::c_int);
                libc::fcntl(wa.as_raw_fd(), libc::F_GETPIPE_SZ)
            };
            if got < cap as libc::c_int {
                return None;
            }
            let base = start + i * cap;
            let mut put = 0usize;
            // Bounded: each pass adds bytes to the pipe or gives up.
            while put < cap {
                let iov = libc::iovec {
                    // SAFETY: base + put < start + cap * RING <= buf.len(): in bounds.
                    iov_base: unsafe { buf.as_ptr().add(base + put) } as *mut libc::c_void,
                    iov_len: cap - put,
                };
                // SAFETY: one iovec into our buffer, which lives as long as the pipes (all
                // are in the returned Source) and is never written again.
                let n = unsafe { libc::vmsplice(wa.as_raw_fd(), &iov, 1, libc::SPLICE_F_NONBLOCK) };
                if n <= 0 {
                    return None;
                }
                put += n as usize;
            }
            ring.push((ra, wa));
        }
        Some(Source::Splice {
            a: ring,
            next: 0,
            b: (rb, wb),
            cap,
            in_b: 0,
            _buf: buf,
        })
    }

    /// A sendfile source: a memfd of `len` bytes of the pattern, or `None` when the kernel
    /// has no memfd or the file cannot be written.
    pub fn sendfile(len: usize, random: bool) -> Option<Source> {
        let name = c"netpipe-pattern";
        // SAFETY: memfd_create with a NUL-terminated name; returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: fd was just created and belongs to nobody else.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let buf = pattern(len, random);
        use std::io::Write;
        (&file).write_all(&buf).ok()?;
        Some(Source::Sendfile {
            file: file.into(),
            len: buf.len() as u64,
            off: 0,
        })
    }

    pub fn word(&self) -> &'static str {
        match self {
            Source::Copy { .. } => "copy",
            Source::Splice { .. } => "splice",
            Source::Sendfile { .. } => "sendfile",
        }
    }

    /// The most bytes one call moves.
    fn chunk(&self) -> u64 {
        match self {
            Source::Copy { buf, .. } => buf.len() as u64,
            Source::Splice { cap, .. } => *cap as u64,
            Source::Sendfile { len, .. } => *len,
        }
    }

    /// Moves up to `want` bytes into socket `fd`; returns how many the socket took.
    fn push(&mut self, fd: i32, want: usize) -> io::Result<usize> {
        match self {
            Source::Copy { buf, off } => {
                let len = want.min(buf.len() - *off);
                // SAFETY: buf[off..off+len] is in bounds and stays alive during the call.
                let rc = unsafe {
                    libc::send(fd, buf.as_ptr().add(*off).cast(), len, libc::MSG_NOSIGNAL)
                };
                if rc < 0 {
                    return Err(io::Error::last_os_error());
                }
                *off = (*off + rc as usize) % buf.len();
                Ok(rc as usize)
            }
            Source::Splice {
                a,
                next,
                b,
                cap,
                in_b,
                ..
            } => {
                if *in_b == 0 {
                    let src = a[*next].0.as_raw_fd();
                    *next = (*next + 1) % a.len();
                    // SAFETY: tee between two pipes we own.
                    let t = unsafe { libc::tee(src, b.1.as_raw_fd(), want.min(*cap), 0) };
                    if t <= 0 {
                        return Err(if t == 0 {
                            io::Error::other("tee moved nothing")
                        } else {
                            io::Error::last_os_error()
                        });
                    }
                    *in_b = t as usize;
                }
                // SAFETY: splice from our pipe into the socket, no offsets.
                let n = unsafe {
                    libc::splice(
                        b.0.as_raw_fd(),
                        std::ptr::null_mut(),
                        fd,
                        std::ptr::null_mut(),
                        (*in_b).min(want),
                        libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
                    )
                };
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                *in_b -= n as usize;
                Ok(n as usize)
            }
            Source::Sendfile { file, len, off } => {
                let mut o = *off as libc::off_t;
                let n = want.min((*len - *off) as usize);
                // SAFETY: sendfile from our memfd at offset o into the socket.
                let rc = unsafe { libc::sendfile(fd, file.as_raw_fd(), &mut o, n) };
                if rc < 0 {
                    return Err(io::Error::last_os_error());
                }
                *off = (*off + rc as u64) % *len;
                Ok(rc as usize)
            }
        }
    }
}

/// Sends from `src` until the budget, the time limit, Ctrl-C or a fault; then half-closes
/// and waits for the peer to close, so that the end time covers delivery.
pub fn send(s: &Socket, ctl: &Ctl, prog: &Progress, src: &mut Source) -> Outcome {
    let fd = s.as_raw_fd();
    let start = ctl.now_ns();
    ctl.mark_first(start);
    let mut claimed = 0u64;
    let mut last_move = Instant::now();
    let mut sent = 0u64;
    let chunk = src.chunk();
    // Ends on the limit, Ctrl-C, the idle timeout or an error; each pass waits a tick at most.
    let end = loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break End::Stopped;
        }
        let now = Instant::now();
        if ctl.past_deadline(ctl.ns(now)) {
            break End::Limit;
        }
        if claimed == 0 {
            claimed = ctl.claim(chunk);
            if claimed == 0 {
                break End::Limit;
            }
        }
        match src.push(fd, claimed as usize) {
            Ok(n) => {
                claimed -= n as u64;
                sent += n as u64;
                prog.bytes.fetch_add(n as u64, Ordering::AcqRel);
                last_move = now;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if sock::is_tick(&e) => {
                if let Some(idle) = ctl.idle
                    && last_move.elapsed() >= idle
                {
                    break End::Idle(idle);
                }
            }
            Err(e) => break classify(&e),
        }
    };
    let mut end_ns = ctl.now_ns();
    let mut tcp = sock::tcp_info(fd);
    let mut peer_closed = false;
    let mut end = end;
    if end.is_clean() {
        let _ = s.shutdown(std::net::Shutdown::Write);
        match drain_until_close(s, ctl) {
            Ok(()) => {
                peer_closed = true;
                end_ns = ctl.now_ns();
            }
            Err(Some(e)) => end = e,
            Err(None) => {}
        }
        tcp = sock::tcp_info(fd).or(tcp);
    } else if end == End::Stopped {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let end_ns = (sent > 0).then_some(end_ns);
    ctl.finish(prog, end_ns);
    Outcome {
        end,
        bytes: sent,
        first_ns: (sent > 0).then_some(start),
        end_ns,
        tcp,
        peer_closed,
        method: src.word(),
    }
}

/// After the half-close, reads (and drops) until the peer closes: that is when the peer has
/// everything. Gives up after the idle timeout (10 s without one) or on Ctrl-C.
fn drain_until_close(s: &Socket, ctl: &Ctl) -> Result<(), Option<End>> {
    let fd = s.as_raw_fd();
    let limit = ctl.idle.unwrap_or(Duration::from_secs(10));
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    // Bounded by `limit` and Ctrl-C; each pass waits a tick at most.
    loop {
        if ctl.stop.load(Ordering::Relaxed) || started.elapsed() >= limit {
            return Err(None);
        }
        // SAFETY: buf is a writable buffer of buf.len() bytes.
        let rc = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) };
        if rc == 0 {
            return Ok(());
        }
        if rc < 0 {
            let e = io::Error::last_os_error();
            if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return match classify(&e) {
                // A reset after everything was sent and acknowledged is how some peers close.
                End::PeerGone(_) => Err(None),
                other => Err(Some(other)),
            };
        }
    }
}

/// Receives and drops everything until EOF, the budget, the time limit, Ctrl-C or a fault.
/// `buf` is only a landing area for the fallback copy; with MSG_TRUNC nothing is copied.
pub fn recv(s: &Socket, ctl: &Ctl, prog: &Progress, buf: &mut [u8]) -> Outcome {
    let fd = s.as_raw_fd();
    let mut first: Option<u64> = None;
    let mut got = 0u64;
    let mut last_move = Instant::now();
    let mut end_ns = None;
    let mut flags = libc::MSG_TRUNC;
    let mut lowat = Lowat::new();
    // Ends on EOF, the limit, Ctrl-C, the idle timeout or an error; each pass waits a tick
    // at most.
    let end = loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break End::Stopped;
        }
        let want = ctl.claim(buf.len() as u64);
        if want == 0 {
            break End::Limit;
        }
        // SAFETY: buf is writable for buf.len() >= want bytes; with MSG_TRUNC the kernel
        // writes nothing to it.
        let rc = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), want as usize, flags) };
        let now = Instant::now();
        if rc > 0 {
            let n = rc as u64;
            ctl.give_back(want - n.min(want));
            let ns = ctl.ns(now);
            if first.is_none() {
                first = Some(ns);
                ctl.mark_first(ns);
            }
            got += n;
            prog.bytes.fetch_add(n, Ordering::AcqRel);
            end_ns = Some(ns);
            last_move = now;
            if let Some(f) = first {
                lowat.tune(s, got, ns.saturating_sub(f));
            }
            if ctl.past_deadline(ns) {
                break End::Limit;
            }
            continue;
        }
        ctl.give_back(want);
        if rc == 0 {
            end_ns = Some(ctl.ns(now));
            break End::Eof;
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if sock::is_tick(&e) {
            if ctl.past_deadline(ctl.ns(now)) {
                break End::Limit;
            }
            if let Some(idle) = ctl.idle
                && last_move.elapsed() >= idle
            {
                break End::Idle(idle);
            }
            continue;
        }
        if e.raw_os_error() == Some(libc::EINVAL) && flags != 0 {
            // No MSG_TRUNC discard on this socket: copy into the buffer instead.
            flags = 0;
            continue;
        }
        break classify(&e);
    };
    // Done first, then close at once so that a sender waiting for our close sees it now:
    // whoever stops a --keep-open listener after the sender has ended (a script's Ctrl-C)
    // must find this stream finished, not cut short.
    let end_ns = if got > 0 { end_ns } else { None };
    ctl.finish(prog, end_ns);
    let _ = s.shutdown(std::net::Shutdown::Both);
    Outcome {
        end,
        bytes: got,
        first_ns: first,
        end_ns,
        tcp: None,
        peer_closed: false,
        method: "",
    }
}

/// The receive low-water mark (SO_RCVLOWAT) of a discarding receiver: how much data wakes it.
///
/// Left at the kernel's 1 byte, a receiver that drops bytes as fast as they come wakes for
/// almost every segment, and each wake-up costs both ends (on loopback most of what a
/// transfer costs, across CPUs an interprocessor interrupt each). Raised to about a
/// millisecond of data at the rate seen so far, the receiver takes the bytes in fewer, larger
/// gulps and its clock loses nothing that matters: the first byte is taken at the default
/// mark (the mark is raised only after it), the end is the peer's FIN (which wakes the
/// receiver whatever the mark), and the bytes of an interval, the --time limit and the
/// idle and tick timeouts are late by a millisecond's worth at most (a timeout returns what
/// has arrived). The mark stays at a quarter of the receive buffer or below, so the kernel
/// never grows the buffer or clamps the window for it (tcp_set_rcvlowat does when the mark
/// needs more room than the buffer has): autotuning, or --window, stays in charge.
struct Lowat {
    /// The mark as set; 1 is the kernel's default.
    set: usize,
    /// When (nanoseconds after the first byte) and at what byte count the mark was last
    /// looked at: the rate it follows is the rate since then.
    last: (u64, u64),
    /// `false` once the kernel refused the mark.
    on: bool,
}

impl Lowat {
    /// The highest mark: beyond it the gain ends (loopback, 2 CPUs: 1M moved 54-65 Gb/s,
    /// 2M 63-68, 4M 64-67).
    const MAX: usize = 2 << 20;
    /// The time's worth of data the mark aims at.
    const SPAN_NS: u64 = 1_000_000;
    /// How often the mark follows the rate.
    const EVERY_NS: u64 = 10_000_000;

    fn new() -> Self {
        Lowat {
            set: 1,
            last: (0, 0),
            on: true,
        }
    }

    /// Follows the rate: `got` bytes by `since_first_ns` after the first byte.
    fn tune(&mut self, s: &Socket, got: u64, since_first_ns: u64) {
        let (t0, b0) = self.last;
        if !self.on || since_first_ns < t0 + Self::EVERY_NS {
            return;
        }
        self.last = (since_first_ns, got);
        let per_span = (u128::from(got - b0) * u128::from(Self::SPAN_NS)
            / u128::from(since_first_ns - t0)) as usize;
        // SO_RCVBUF: the kernel's sk_rcvbuf, as autotuned or set by --window.
        let Ok(rcvbuf) = s.recv_buffer_size() else {
            self.on = false;
            return;
        };
        let want = per_span.min(Self::MAX).min(rcvbuf / 4).max(1);
        // Only a change of more than an eighth is worth a call.
        if want.abs_diff(self.set) <= self.set / 8 {
            return;
        }
        let v = want as libc::c_int;
        // SAFETY: setsockopt reads one c_int from a valid pointer of the given length.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            self.set = want;
        } else {
            self.on = false;
        }
    }
}

fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and belong to nobody else.
    Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The data a sender sends: zeros, or an incompressible pattern (xorshift64*, seeded from
/// the kernel's randomness) so that compression on the path cannot flatter the figure.
pub fn pattern(len: usize, random: bool) -> Vec<u8> {
    let mut buf = vec![0u8; len.max(1)];
    if random {
        let mut x = measure::writer::random_u64() | 1;
        for chunk in buf.chunks_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_shared_exactly() {
        let c = Ctl::new(Some(10), None, None);
        assert_eq!(c.claim(4), 4);
        assert_eq!(c.claim(4), 4);
        assert_eq!(c.claim(4), 2);
        assert_eq!(c.claim(4), 0);
        c.give_back(3);
        assert_eq!(c.claim(9), 3);
        let u = Ctl::new(None, None, None);
        assert_eq!(u.claim(7), 7);
    }

    fn lowat_of(s: &Socket) -> i32 {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most len bytes into v.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        v
    }

    #[test]
    fn lowat_follows_the_rate_within_the_buffer() {
        use socket2::{Domain, Type};
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.set_recv_buffer_size(1 << 20).unwrap();
        let buf = s.recv_buffer_size().unwrap();
        let mut l = Lowat::new();
        let ms = 1_000_000u64;
        // Not before 10 ms of data.
        l.tune(&s, 1 << 30, 9 * ms);
        assert_eq!(lowat_of(&s), 1);
        // 1000 bytes a millisecond: a mark of 1000.
        l.tune(&s, 10_000, 10 * ms);
        assert_eq!(lowat_of(&s), 1000);
        // A small change is not worth a call; the rate is the latest 10 ms's.
        l.tune(&s, 10_000 + 10_500, 20 * ms);
        assert_eq!(lowat_of(&s), 1000);
        // Fast: capped at a quarter of the receive buffer (here below Lowat::MAX).
        l.tune(&s, 1 << 33, 30 * ms);
        assert_eq!(lowat_of(&s) as usize, (buf / 4).min(Lowat::MAX));
        assert_eq!(
            s.recv_buffer_size().unwrap(),
            buf,
            "the buffer is left alone"
        );
        // Slow again: down it comes.
        l.tune(&s, (1 << 33) + 5_000, 40 * ms);
        assert_eq!(lowat_of(&s), 500);
    }

    #[test]
    fn random_pattern_is_not_zeros() {
        let p = pattern(1001, true);
        assert_eq!(p.len(), 1001);
        assert!(p.iter().filter(|&&b| b == 0).count() < 50);
        assert!(pattern(16, false).iter().all(|&b| b == 0));
    }
}
