//! Netcat mode: `netpipe -l [-p] PORT > file` and `netpipe HOST PORT < file`. stdout carries
//! the payload only; records go to stderr or -o FILE. Data moves with splice/sendfile where
//! the kernel allows it, else through a buffer.

use crate::addr;
use crate::cpu::Cpu;
use crate::session::{eprintln_human, human};
use crate::sock::{self, SockOpts, WaitEnd};
use measure::Failure;
use measure::Status;
use measure::cli::exit;
use measure::writer::{Reporter, Summary, Values, info};
use serde_json::{Map, Value, json};
use socket2::Socket;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHUNK: usize = 1 << 20;

/// What netcat mode was asked to do.
#[derive(Clone, Debug)]
pub struct NcPlan {
    /// Listen on this address, or connect to `target`.
    pub listen: Option<SocketAddr>,
    pub target: String,
    pub addrs: Vec<SocketAddr>,
    pub bind: Option<SocketAddr>,
    pub v6_only: bool,
    pub keep_open: bool,
    /// -d: never read stdin.
    pub no_stdin: bool,
    pub idle: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    pub opts: SockOpts,
}

/// What one connection moved.
#[derive(Debug, Default)]
struct Moved {
    rx: u64,
    tx: u64,
    rx_first: Option<Instant>,
    rx_end: Option<Instant>,
    tx_first: Option<Instant>,
    tx_end: Option<Instant>,
    /// When the peer's EOF arrived.
    eof_at: Option<Instant>,
    error: Option<String>,
    interrupted: bool,
    stdout_gone: bool,
}

#[derive(Debug, Default)]
struct Totals {
    conns: u64,
    rx: u64,
    tx: u64,
    rate_bytes: u64,
    rate_s: f64,
    cpu: Cpu,
    active_s: f64,
    errors: Vec<String>,
    interrupted: bool,
    direction: Option<&'static str>,
}

/// Runs netcat mode; returns the exit code.
pub fn run(plan: NcPlan, rep: &mut Reporter) -> Result<u8, Failure> {
    let mut begin = info(json!({
        "mode": "netcat",
        "role": if plan.listen.is_some() { "listen" } else { "connect" },
        "target": plan.target,
        "bind": plan.bind.map(|b| addr::show(&b)),
        "keep_open": plan.keep_open,
        "idle_timeout_s": plan.idle.map(|d| d.as_secs_f64()),
        "connect_timeout_s": plan.connect_timeout.map(|d| d.as_secs_f64()),
        "window_bytes": plan.opts.window,
        "no_delay": plan.opts.no_delay,
    }));
    begin.insert(
        "machine".into(),
        Value::Object(measure::envfacts::Probe::system().machine()),
    );
    let mut tot = Totals::default();
    let result = match plan.listen {
        Some(a) => match sock::listen_any(a, plan.v6_only, &plan.opts) {
            Ok(l) => {
                if let Some(b) = l.local_addr().ok().and_then(|x| x.as_socket()) {
                    begin.insert("listen".into(), json!(addr::show(&b)));
                }
                rep.begin(begin).map_err(|e| Failure::io("records", &e))?;
                serve(&plan, &l, rep, &mut tot)
            }
            Err(e) => {
                rep.begin(begin).map_err(|e| Failure::io("records", &e))?;
                Err(Failure::new(
                    exit::CANNOT,
                    format!("cannot listen on {}", addr::show(&a)),
                    e,
                ))
            }
        },
        None => {
            rep.begin(begin).map_err(|e| Failure::io("records", &e))?;
            client(&plan, rep, &mut tot)
        }
    };
    if let Err(f) = result {
        summary(rep, &tot, Status::Failed, f.message.clone())?;
        return Err(f);
    }
    let (status, err, code) = if tot.interrupted {
        let st = if tot.rx + tot.tx > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        (
            st,
            Some(format!(
                "interrupted after {} bytes received, {} sent",
                tot.rx, tot.tx
            )),
            exit::INTERRUPTED,
        )
    } else if let Some(e) = tot.errors.first() {
        let st = if tot.rx + tot.tx > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        (st, Some(e.clone()), exit::MEASURED_FAILURE)
    } else {
        (Status::Ok, None, exit::OK)
    };
    summary(rep, &tot, status, err.clone())?;
    if let Some(e) = &err {
        eprintln_human(&format!("netpipe: {e}"));
    } else if tot.rate_s > 0.0 {
        human(&format!(
            "received {}, sent {}; {} ({})",
            measure::units::format_bytes(tot.rx as f64),
            measure::units::format_bytes(tot.tx as f64),
            measure::units::format_bits_per_s(tot.rate_bytes as f64 * 8.0 / tot.rate_s),
            tot.direction.unwrap_or("")
        ));
    }
    Ok(code)
}

fn summary(
    rep: &mut Reporter,
    t: &Totals,
    status: Status,
    error: Option<String>,
) -> Result<(), Failure> {
    let mut v = Values::new();
    if t.rate_s > 0.0 && t.rate_bytes > 0 {
        v.set(
            "throughput_bits_per_s",
            t.rate_bytes as f64 * 8.0 / t.rate_s,
        );
        v.set("duration_s", t.rate_s);
    }
    v.set_count("received_bytes", t.rx);
    v.set_count("sent_bytes", t.tx);
    v.set_count("connection_count", t.conns);
    v.set("cpu_user_s", t.cpu.user_s);
    v.set("cpu_sys_s", t.cpu.sys_s);
    if t.active_s > 0.0 {
        v.set("cpu_seconds_per_s", t.cpu.total_s() / t.active_s);
    }
    let i = info(json!({
        "mode": "netcat",
        "measured_by": match t.direction { Some("sent") => "sender", _ => "receiver" },
        "direction": t.direction,
        "errors": t.errors,
    }));
    rep.summary(Summary {
        status,
        error,
        headline: Some("throughput_bits_per_s".into()),
        values: v,
        info: i,
    })
    .map_err(|e| Failure::io("records", &e))
}

fn serve(plan: &NcPlan, l: &Socket, rep: &mut Reporter, tot: &mut Totals) -> Result<(), Failure> {
    let mut first = true;
    // Bounded by Ctrl-C, and without -k by one connection.
    loop {
        let (s, peer) = match sock::accept(l, None) {
            Ok(x) => x,
            Err(WaitEnd::Interrupted) => {
                tot.interrupted = true;
                return Ok(());
            }
            Err(WaitEnd::TimedOut) => continue,
            Err(WaitEnd::Failed(e)) => return Err(Failure::new(exit::CANNOT, "accept", e)),
        };
        human(&format!("connection from {}", addr::show(&peer)));
        // stdin goes to the first connection only; later ones (-k) only send to us.
        connection(plan, s, peer, true, first && !plan.no_stdin, rep, tot)?;
        first = false;
        if !plan.keep_open || tot.interrupted {
            return Ok(());
        }
    }
}

fn client(plan: &NcPlan, rep: &mut Reporter, tot: &mut Totals) -> Result<(), Failure> {
    match sock::connect(&plan.addrs, plan.bind, &plan.opts, plan.connect_timeout) {
        Ok(s) => {
            let peer = s
                .peer_addr()
                .ok()
                .and_then(|a| a.as_socket())
                .unwrap_or(plan.addrs[0]);
            connection(plan, s, peer, false, !plan.no_stdin, rep, tot)
        }
        Err(WaitEnd::Interrupted) => {
            tot.interrupted = true;
            Ok(())
        }
        Err(e) => {
            let msg = format!(
                "cannot connect to {}: {}",
                plan.target,
                sock::describe(&e, plan.connect_timeout)
            );
            rep.sample_failed(&msg, info(json!({"target": plan.target})))
                .map_err(|e| Failure::io("records", &e))?;
            tot.errors.push(msg);
            Ok(())
        }
    }
}

fn connection(
    plan: &NcPlan,
    s: Socket,
    peer: SocketAddr,
    listener: bool,
    with_stdin: bool,
    rep: &mut Reporter,
    tot: &mut Totals,
) -> Result<(), Failure> {
    plan.opts
        .apply_stream(&s)
        .map_err(|e| Failure::new(exit::CANNOT, "socket options", e))?;
    let local = s.local_addr().ok().and_then(|a| a.as_socket());
    let cpu0 = Cpu::now();
    let t0 = Instant::now();
    let m = transfer(Arc::new(s), listener, with_stdin, plan.idle);
    let cpu = Cpu::now().since(cpu0);
    tot.cpu = tot.cpu.plus(cpu);
    tot.active_s += t0.elapsed().as_secs_f64();
    tot.conns += 1;
    tot.rx += m.rx;
    tot.tx += m.tx;
    if m.interrupted {
        tot.interrupted = true;
    }
    // The figure: the receive direction when anything arrived, else the send direction.
    let (dir, bytes, span) = if m.rx > 0 {
        ("received", m.rx, m.rx_first.zip(m.rx_end))
    } else {
        // The sender's figure ends when the peer closed, if it did after our last byte.
        let end = match (m.tx_end, m.eof_at) {
            (Some(t), Some(e)) if e > t => Some(e),
            (t, _) => t,
        };
        ("sent", m.tx, m.tx_first.zip(end))
    };
    let mut v = Values::new();
    v.set_count("received_bytes", m.rx);
    v.set_count("sent_bytes", m.tx);
    if let Some((a, b)) = span {
        let secs = b.saturating_duration_since(a).as_secs_f64();
        if secs > 0.0 {
            v.set("duration_s", secs);
            v.set("throughput_bits_per_s", bytes as f64 * 8.0 / secs);
            tot.rate_bytes += bytes;
            tot.rate_s += secs;
            tot.direction.get_or_insert(dir);
        }
    }
    let mut i: Map<String, Value> = info(json!({
        "peer": addr::show(&peer),
        "local": local.map(|a| addr::show(&a)),
        "direction": dir,
        "measured_by": if dir == "received" { "receiver" } else { "sender" },
        "stdout_closed": m.stdout_gone,
    }));
    if let Some(e) = &m.error {
        let msg = format!("{}: {e}", addr::show(&peer));
        i.insert("error".into(), json!(e));
        tot.errors.push(msg);
    }
    if m.rx + m.tx == 0 && m.error.is_some() {
        rep.sample_failed(m.error.as_deref().unwrap_or("failed"), i)
    } else {
        rep.sample(v, i)
    }
    .map_err(|e| Failure::io("records", &e))
}

/// Kind of file behind a descriptor, for choosing splice, sendfile or copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FdKind {
    Pipe,
    Regular,
    Other,
}

fn fd_kind(fd: RawFd) -> FdKind {
    // SAFETY: stat is plain old data; fstat fills it for a valid descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable stat.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return FdKind::Other;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => FdKind::Pipe,
        libc::S_IFREG => FdKind::Regular,
        _ => FdKind::Other,
    }
}

fn is_append(fd: RawFd) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_APPEND != 0
}

fn is_dev_null(fd: RawFd) -> bool {
    // SAFETY: as in fd_kind.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable stat.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == libc::makedev(1, 3)
}

/// Both directions of one connection. Returns when the socket reached EOF (and, for a
/// client, stdin has been sent), on a fault, or on Ctrl-C.
fn transfer(s: Arc<Socket>, listener: bool, with_stdin: bool, idle: Option<Duration>) -> Moved {
    let (tx_done, rx_done) =
        mpsc::channel::<(u64, Option<Instant>, Option<Instant>, Option<String>)>();
    let sent_any = Arc::new(AtomicBool::new(false));
    if with_stdin {
        let s2 = Arc::clone(&s);
        let flag = Arc::clone(&sent_any);
        let spawned = std::thread::Builder::new()
            .name("netpipe-stdin".into())
            .spawn(move || {
                let r = stdin_to_socket(&s2, listener, &flag);
                let _ = tx_done.send(r);
            });
        if spawned.is_err() {
            return Moved {
                error: Some("cannot start the stdin thread".into()),
                ..Moved::default()
            };
        }
    } else {
        drop(tx_done);
    }
    let mut m = Moved::default();
    let r = socket_to_stdout(&s, idle, &mut m);
    if let Err(e) = r {
        m.error.get_or_insert(e);
    }
    // The stdin side: a client finishes sending stdin after the peer's half-close (as nc
    // does); a listener is done at the peer's EOF (as nc -l is).
    let wait_stdin = with_stdin
        && m.error.is_none()
        && !m.interrupted
        && !m.stdout_gone
        && !measure::cli::is_terminal(0)
        && (!listener || fd_kind(0) == FdKind::Regular || sent_any.load(Ordering::Acquire));
    // Bounded by Ctrl-C and, when stdin is a terminal, by not waiting at all.
    loop {
        match rx_done.recv_timeout(sock::TICK) {
            Ok((n, first, end, err)) => {
                m.tx = n;
                m.tx_first = first;
                m.tx_end = end;
                if let Some(e) = err {
                    m.error.get_or_insert(e);
                }
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if !wait_stdin {
                    break;
                }
                if measure::cli::interrupted() {
                    m.interrupted = true;
                    break;
                }
            }
        }
    }
    let _ = s.shutdown(Shutdown::Both);
    m
}

/// Sends stdin to the socket, then half-closes (a client always; a listener only when it
/// sent something, so that a listener with an empty stdin never cuts a client short).
fn stdin_to_socket(
    s: &Socket,
    listener: bool,
    sent_any: &AtomicBool,
) -> (u64, Option<Instant>, Option<Instant>, Option<String>) {
    let fd = s.as_raw_fd();
    let mut sent = 0u64;
    let mut first = None;
    let mut last = None;
    let mut mode = fd_kind(0);
    if mode == FdKind::Pipe {
        grow_pipe(0);
    }
    let mut buf: Vec<u8> = Vec::new();
    let err: Option<String> = 'outer: loop {
        if measure::cli::interrupted() {
            break Some("interrupted".into());
        }
        let rc: isize = match mode {
            // SAFETY: splice between two valid descriptors, no offsets.
            FdKind::Pipe => unsafe {
                libc::splice(
                    0,
                    std::ptr::null_mut(),
                    fd,
                    std::ptr::null_mut(),
                    CHUNK,
                    libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
                )
            },
            // SAFETY: sendfile from stdin's current offset into the socket.
            FdKind::Regular => unsafe { libc::sendfile(fd, 0, std::ptr::null_mut(), CHUNK) },
            FdKind::Other => {
                if buf.is_empty() {
                    buf = vec![0u8; 256 << 10];
                }
                // SAFETY: buf is writable for buf.len() bytes.
                let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    break Some(format!("reading stdin: {e}"));
                }
                if n == 0 {
                    break None;
                }
                let mut off = 0usize;
                while off < n as usize {
                    // SAFETY: buf[off..n] is initialised and in bounds.
                    let w = unsafe {
                        libc::send(
                            fd,
                            buf.as_ptr().add(off).cast(),
                            n as usize - off,
                            libc::MSG_NOSIGNAL,
                        )
                    };
                    if w < 0 {
                        let e = io::Error::last_os_error();
                        if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted {
                            if measure::cli::interrupted() {
                                break 'outer Some("interrupted".into());
                            }
                            continue;
                        }
                        break 'outer Some(net_error(&e));
                    }
                    off += w as usize;
                    sent += w as u64;
                    sent_any.store(true, Ordering::Release);
                    let now = Instant::now();
                    first.get_or_insert(now);
                    last = Some(now);
                }
                continue;
            }
        };
        if rc > 0 {
            sent += rc as u64;
            sent_any.store(true, Ordering::Release);
            let now = Instant::now();
            first.get_or_insert(now);
            last = Some(now);
            continue;
        }
        if rc == 0 {
            break None;
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted || sock::is_tick(&e) {
            continue;
        }
        if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) && sent == 0 {
            mode = FdKind::Other;
            continue;
        }
        break Some(net_error(&e));
    };
    if err.is_none() && (!listener || sent > 0) {
        let _ = s.shutdown(Shutdown::Write);
    }
    (sent, first, last, err)
}

fn net_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) => "connection reset by peer".into(),
        Some(libc::EPIPE) => "the peer closed the connection before all was sent".into(),
        _ => e.to_string(),
    }
}

/// Copies the socket to stdout until EOF: splice straight into a stdout pipe, through a
/// pipe into a file or /dev/null, else through a buffer. (For /dev/null, splice through a pipe
/// beat recv with MSG_TRUNC: `dd bs=1M count=2048 | netpipe` took 0.70-0.82 s against
/// 0.97-1.11 s on loopback, the same machine, three runs each.)
fn socket_to_stdout(s: &Socket, idle: Option<Duration>, m: &mut Moved) -> Result<(), String> {
    let fd = s.as_raw_fd();
    let out_kind = fd_kind(1);
    let spliceable = match out_kind {
        FdKind::Pipe => true,
        FdKind::Regular => !is_append(1),
        FdKind::Other => is_dev_null(1),
    };
    if out_kind == FdKind::Pipe {
        grow_pipe(1);
    }
    let mid = if spliceable && out_kind != FdKind::Pipe {
        make_pipe()
    } else {
        None
    };
    let mut use_splice = spliceable && (out_kind == FdKind::Pipe || mid.is_some());
    let mut buf: Vec<u8> = Vec::new();
    let mut last_move = Instant::now();
    // Ends on EOF, a fault, the idle timeout or Ctrl-C; each pass waits a tick at most.
    loop {
        if measure::cli::interrupted() {
            m.interrupted = true;
            return Ok(());
        }
        let rc: isize = if use_splice {
            let target = mid.as_ref().map_or(1, |(r, w)| {
                let _ = r;
                w.as_raw_fd()
            });
            // SAFETY: splice between two valid descriptors, no offsets.
            unsafe {
                libc::splice(
                    fd,
                    std::ptr::null_mut(),
                    target,
                    std::ptr::null_mut(),
                    CHUNK,
                    libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
                )
            }
        } else {
            if buf.is_empty() {
                buf = vec![0u8; 256 << 10];
            }
            // SAFETY: buf is writable for buf.len() bytes.
            unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) }
        };
        let now = Instant::now();
        if rc > 0 {
            let n = rc as usize;
            let written = if use_splice {
                match &mid {
                    Some((r, _)) => drain_pipe(r.as_raw_fd(), n),
                    None => Ok(()),
                }
            } else {
                write_all(1, &buf[..n])
            };
            if let Err(e) = written {
                if e.kind() == io::ErrorKind::BrokenPipe {
                    m.stdout_gone = true;
                    m.rx += n as u64;
                    return Ok(());
                }
                return Err(format!("writing stdout: {e}"));
            }
            m.rx += n as u64;
            m.rx_first.get_or_insert(now);
            m.rx_end = Some(now);
            last_move = now;
            continue;
        }
        if rc == 0 {
            if m.rx > 0 {
                m.rx_end = Some(now);
            }
            m.eof_at = Some(now);
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if sock::is_tick(&e) {
            if let Some(d) = idle
                && last_move.elapsed() >= d
            {
                return Err(format!(
                    "nothing arrived for {} (idle timeout)",
                    measure::units::format_seconds(d.as_secs_f64())
                ));
            }
            continue;
        }
        if use_splice && e.raw_os_error() == Some(libc::EINVAL) {
            use_splice = false;
            continue;
        }
        if e.raw_os_error() == Some(libc::EPIPE) && out_kind == FdKind::Pipe {
            m.stdout_gone = true;
            return Ok(());
        }
        return Err(net_error(&e));
    }
}

/// Asks for a 1 MiB pipe behind `fd` (stdin or stdout), so that the process on the other end
/// and we trade fewer, larger turns; the kernel may refuse, which only costs speed.
fn grow_pipe(fd: RawFd) {
    // SAFETY: F_SETPIPE_SZ on a descriptor that fstat says is a pipe; failure is harmless.
    unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
}

fn make_pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_SETPIPE_SZ on our own pipe; failure leaves the default size, which works.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
    Some((r, w))
}

/// Moves exactly `n` bytes from the pipe `r` to stdout.
fn drain_pipe(r: RawFd, mut n: usize) -> io::Result<()> {
    // Bounded: every pass moves at least one byte or returns an error.
    while n > 0 {
        // SAFETY: splice between two valid descriptors, no offsets.
        let rc = unsafe {
            libc::splice(
                r,
                std::ptr::null_mut(),
                1,
                std::ptr::null_mut(),
                n,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
            )
        };
        if rc > 0 {
            n -= rc as usize;
            continue;
        }
        if rc == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "stdout took nothing",
            ));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if e.raw_os_error() == Some(libc::EINVAL) {
            // stdout refuses splice after all: copy what is in the pipe.
            let mut buf = vec![0u8; n.min(CHUNK)];
            while n > 0 {
                let want = n.min(buf.len());
                // SAFETY: buf is writable for want bytes.
                let got = unsafe { libc::read(r, buf.as_mut_ptr().cast(), want) };
                if got <= 0 {
                    return Err(io::Error::last_os_error());
                }
                write_all(1, &buf[..got as usize])?;
                n -= got as usize;
            }
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

fn write_all(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    // Bounded: every pass writes at least one byte or returns an error.
    while !b.is_empty() {
        // SAFETY: b is a valid initialised slice.
        let rc = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "stdout took nothing",
            ));
        }
        b = &b[rc as usize..];
    }
    Ok(())
}
