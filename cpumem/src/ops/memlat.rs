//! The memory latency probe: a random cyclic pointer chase over 64-byte lines of a buffer
//! far beyond the caches and the TLB's reach, in 4 KiB pages (MADV_NOHUGEPAGE), so that
//! each load misses the caches and, mostly, the TLB: the page walk (nested in a VM) counts
//! in the latency. Each load's address is the value the last one read, so no two overlap.

use super::{Op, since};
use memmap2::{Advice, MmapMut};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::io;
use std::time::Instant;

/// Bytes between the chase's nodes: one cache line each.
const LINE: usize = 64;

#[derive(Debug)]
pub struct Chase {
    buf: MmapMut,
    at: usize,
    hugepage_advice: bool,
}

/// A small fast generator for the shuffle (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

fn read_at(buf: &[u8], off: usize) -> usize {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[off..off + 8]);
    u64::from_ne_bytes(w) as usize
}

impl Chase {
    /// Links every line of a `bytes` buffer into one random cycle (Sattolo's shuffle).
    pub fn new(bytes: u64) -> io::Result<Self> {
        let nodes = usize::try_from(bytes).map_err(io::Error::other)? / LINE;
        if nodes < 2 {
            return Err(io::Error::other(
                "the chase buffer holds fewer than 2 lines",
            ));
        }
        let mut buf = MmapMut::map_anon(nodes * LINE)?;
        let hugepage_advice = buf.advise(Advice::NoHugePage).is_ok();
        let mut order: Vec<u32> = (0..nodes as u32).collect();
        let mut rng = Rng(measure::parts::random_u64() | 1);
        for i in (1..nodes).rev() {
            order.swap(i, rng.below(i));
        }
        for (k, &from) in order.iter().enumerate() {
            let to = order[(k + 1) % nodes] as usize * LINE;
            let off = from as usize * LINE;
            buf[off..off + 8].copy_from_slice(&(to as u64).to_ne_bytes());
        }
        Ok(Chase {
            buf,
            at: 0,
            hugepage_advice,
        })
    }
}

impl Op for Chase {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let buf = &self.buf[..];
        let mut p = self.at;
        let t0 = Instant::now();
        for _ in 0..n {
            p = read_at(buf, p);
        }
        let t = since(t0);
        self.at = black_box(p);
        Ok(t)
    }

    fn info(&self) -> Map<String, Value> {
        measure::parts::info(json!({
            "buffer_bytes": self.buf.len(),
            "stride_bytes": LINE,
            "madv_nohugepage": self.hugepage_advice,
        }))
    }
}
