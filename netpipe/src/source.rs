//! Where a sender's bytes come from: a buffer to copy from, pipes of pattern pages to
//! splice, or a memfd to sendfile; and the pattern itself (zeros or random).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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
    pub fn chunk(&self) -> u64 {
        match self {
            Source::Copy { buf, .. } => buf.len() as u64,
            Source::Splice { cap, .. } => *cap as u64,
            Source::Sendfile { len, .. } => *len,
        }
    }

    /// Moves up to `want` bytes into socket `fd`; returns how many the socket took.
    pub fn push(&mut self, fd: i32, want: usize) -> io::Result<usize> {
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
    fn random_pattern_is_not_zeros() {
        let p = pattern(1001, true);
        assert_eq!(p.len(), 1001);
        assert!(p.iter().filter(|&&b| b == 0).count() < 50);
        assert!(pattern(16, false).iter().all(|&b| b == 0));
    }
}
