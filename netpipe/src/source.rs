//! Where a sender's bytes come from: a buffer to copy from, pipes of pattern pages to
//! splice, or a memfd to sendfile; and the pattern itself (zeros or random).

use rustix::fs::{MemfdFlags, memfd_create, sendfile};
use rustix::pipe::{
    IoSliceRaw, PipeFlags, SpliceFlags, fcntl_getpipe_size, fcntl_setpipe_size, pipe_with, splice,
    tee, vmsplice,
};
use socket2::Socket;
use std::io;
use std::os::fd::OwnedFd;

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
        // The kernel may round or refuse the size: what it chose is read back.
        let _ = fcntl_setpipe_size(&wb, len.clamp(page, 1 << 20));
        let cap = fcntl_getpipe_size(&wb).ok().filter(|&c| c > 0)?;
        let buf = pattern(cap * RING + page, random);
        let start = buf.as_ptr().align_offset(page);
        if start + cap * RING > buf.len() {
            return None;
        }
        let mut ring = Vec::with_capacity(RING);
        for i in 0..RING {
            let (ra, wa) = pipe()?;
            let _ = fcntl_setpipe_size(&wa, cap);
            if fcntl_getpipe_size(&wa).ok()? < cap {
                return None;
            }
            fill(&wa, &buf[start + i * cap..start + (i + 1) * cap])?;
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
        let fd = memfd_create(c"netpipe-pattern", MemfdFlags::CLOEXEC).ok()?;
        let file = std::fs::File::from(fd);
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

    /// Moves up to `want` bytes into socket `s`; returns how many the socket took.
    pub fn push(&mut self, s: &Socket, want: usize) -> io::Result<usize> {
        match self {
            Source::Copy { buf, off } => {
                let len = want.min(buf.len() - *off);
                let n = s.send_with_flags(&buf[*off..*off + len], libc::MSG_NOSIGNAL)?;
                *off = (*off + n) % buf.len();
                Ok(n)
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
                    let src = &a[*next].0;
                    *next = (*next + 1) % a.len();
                    match tee(src, &b.1, want.min(*cap), SpliceFlags::empty()) {
                        Ok(0) => return Err(io::Error::other("tee moved nothing")),
                        Ok(t) => *in_b = t,
                        Err(e) => return Err(e.into()),
                    }
                }
                let flags = SpliceFlags::MOVE | SpliceFlags::MORE;
                let n = splice(&b.0, None, s, None, (*in_b).min(want), flags)?;
                *in_b -= n;
                Ok(n)
            }
            Source::Sendfile { file, len, off } => {
                let mut o = *off;
                let n = sendfile(s, &*file, Some(&mut o), want.min((*len - *off) as usize))?;
                *off = (*off + n as u64) % *len;
                Ok(n)
            }
        }
    }
}

/// Puts the pages of `part` into the pipe `w`, whole.
fn fill(w: &OwnedFd, part: &[u8]) -> Option<()> {
    let mut put = 0usize;
    // Bounded: each pass adds bytes to the pipe or gives up.
    while put < part.len() {
        let iov = [IoSliceRaw::from_slice(&part[put..])];
        // SAFETY: `w` is the pipe's write end, so the kernel only reads the pages; they belong
        // to the pattern buffer, which the Source keeps (declared after the pipes, so it is
        // dropped after them) and never writes again. No GIFT: alignment does not matter.
        let n = unsafe { vmsplice(w, &iov, SpliceFlags::NONBLOCK) }.ok()?;
        if n == 0 {
            return None;
        }
        put += n;
    }
    Some(())
}

fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    pipe_with(PipeFlags::CLOEXEC).ok()
}

/// The data a sender sends: zeros, or an incompressible pattern (xorshift64*, seeded from
/// the kernel's randomness) so that compression on the path cannot flatter the figure.
pub fn pattern(len: usize, random: bool) -> Vec<u8> {
    let mut buf = vec![0u8; len.max(1)];
    if random {
        let mut x = measure::parts::random_u64() | 1;
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
