//! The bandwidth probes: passes over buffers of at least 4x the last-level cache, so that
//! every pass streams from memory. One operation is one pass; its bytes are the buffer's
//! (for a copy, the bytes copied, as `perf bench mem memcpy` counts them). The buffers are
//! written once before the first pass, so no pass pays a page fault; huge pages follow the
//! system's setting (named in begin).

use super::{Op, since};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::io;
use std::time::Instant;

/// What a pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Copy,
}

#[derive(Debug)]
pub struct Stream {
    kind: Kind,
    src: Vec<u64>,
    dst: Vec<u64>,
    pass: u64,
}

/// A buffer of `bytes` (rounded down to whole words), every page written.
fn buffer(bytes: u64, seed: u64) -> io::Result<Vec<u64>> {
    let words = usize::try_from(bytes / 8).map_err(io::Error::other)?;
    let mut v = Vec::new();
    v.try_reserve_exact(words).map_err(|e| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("a buffer of {bytes} bytes: {e}"),
        )
    })?;
    v.extend((0..words as u64).map(|i| i ^ seed));
    Ok(v)
}

impl Stream {
    pub fn new(kind: Kind, bytes: u64) -> io::Result<Self> {
        let src = buffer(bytes, 0x5a5a)?;
        let dst = if kind == Kind::Copy {
            buffer(bytes, 0xa5a5)?
        } else {
            Vec::new()
        };
        Ok(Stream {
            kind,
            src,
            dst,
            pass: 0,
        })
    }

    /// One pass.
    fn pass(&mut self) {
        self.pass += 1;
        match self.kind {
            // Wrapping adds vectorize: the loads, not the sum, are the limit.
            Kind::Read => {
                let sum = black_box(&self.src[..])
                    .iter()
                    .fold(0u64, |a, &x| a.wrapping_add(x));
                black_box(sum);
            }
            // A value the compiler cannot see, so the loop stays plain stores (no memset,
            // which may choose non-temporal stores for a large buffer).
            Kind::Write => {
                let v = black_box(self.pass);
                for (i, w) in self.src.iter_mut().enumerate() {
                    *w = v ^ i as u64;
                }
                black_box(&mut self.src[..]);
            }
            Kind::Copy => {
                self.dst.copy_from_slice(black_box(&self.src[..]));
                black_box(&mut self.dst[..]);
            }
        }
    }
}

impl Op for Stream {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let t0 = Instant::now();
        for _ in 0..n {
            self.pass();
        }
        Ok(since(t0))
    }

    fn bytes_per_op(&self) -> u64 {
        self.src.len() as u64 * 8
    }

    fn info(&self) -> Map<String, Value> {
        let how = match self.kind {
            Kind::Read => "sum of 8-byte words",
            Kind::Write => "8-byte stores",
            Kind::Copy => "memcpy",
        };
        measure::parts::info(json!({"buffer_bytes": self.bytes_per_op(), "access": how}))
    }
}
