//! What is written where: the data pool (zeros or seeded random bytes, made before timing),
//! which pool slot each block takes, and the order of blocks (sequential or a seeded
//! permutation, so every block is written exactly once, as fio's random map does).

use memmap2::MmapMut;

use std::io;

/// The most random data generated up front; blocks repeat it every `pool / bs` blocks.
const POOL_BYTES: u64 = 16 << 20;

/// The data written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Zero,
    Random,
}

impl Pattern {
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Zero => "zero",
            Pattern::Random => "random",
        }
    }
}

/// One step of splitmix64: a fast, well-mixed 64-bit generator (Steele, Lea, Flood 2014).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix(*state)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Fills `buf` with the random stream of `seed` (the same seed gives the same bytes): word
/// `i` is splitmix64's output for counter `i`, so words are independent and the loop runs at
/// memory speed.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let base = seed ^ 0x6A09_E667_F3BC_C908;
    let word = |i: usize| mix(base.wrapping_add(GAMMA.wrapping_mul(i as u64 + 1))).to_le_bytes();
    let mut chunks = buf.chunks_exact_mut(8);
    let mut i = 0;
    for c in &mut chunks {
        c.copy_from_slice(&word(i));
        i += 1;
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&word(i)[..n]);
}

/// The data pool: `slots` page-aligned blocks of `bs` bytes each, in one anonymous map.
pub struct Pool {
    map: MmapMut,
    bs: u64,
    /// Distance between slots: `bs` rounded up to a page, so every slot is page-aligned.
    stride: u64,
    pub slots: u64,
}

impl Pool {
    /// How many slots a pool for `blocks` blocks of `bs` bytes holds.
    pub fn slots_for(bs: u64, blocks: u64, pattern: Pattern) -> u64 {
        match pattern {
            Pattern::Zero => 1,
            Pattern::Random => (POOL_BYTES / stride(bs)).clamp(1, blocks.max(1)),
        }
    }

    /// Builds and fills the pool; every page is touched here so no page fault falls in timing.
    pub fn new(bs: u64, blocks: u64, pattern: Pattern, seed: u64) -> io::Result<Pool> {
        let slots = Self::slots_for(bs, blocks, pattern);
        let stride = stride(bs);
        let len = usize::try_from(stride * slots)
            .map_err(|_| io::Error::other("block size too large for memory"))?;
        let mut map = memmap2::MmapOptions::new()
            .len(len.max(1))
            .populate()
            .map_anon()?;
        match pattern {
            Pattern::Zero => map.fill(0),
            Pattern::Random => {
                // Two threads halve the wait on a large pool; the bytes do not depend on
                // the split.
                let fill = |part: &mut [u8], first: usize| {
                    for (k, chunk) in part.chunks_mut(stride as usize).enumerate() {
                        let i = (first + k) as u64;
                        fill_random(&mut chunk[..bs as usize], seed.wrapping_add(mix(i + 1)));
                    }
                };
                let half = (slots / 2) as usize;
                if half > 0 && len >= 8 << 20 {
                    let (a, b) = map.split_at_mut(half * stride as usize);
                    std::thread::scope(|s| {
                        s.spawn(|| fill(a, 0));
                        fill(b, half);
                    });
                } else {
                    fill(&mut map, 0);
                }
            }
        }
        Ok(Pool {
            map,
            bs,
            stride,
            slots,
        })
    }

    /// Buffers to read into: `slots` page-aligned slots of `bs` bytes, zeroed, every page
    /// touched now so that no page fault falls in timing.
    pub fn buffers(bs: u64, slots: u64) -> io::Result<Pool> {
        let stride = stride(bs);
        let len = usize::try_from(stride * slots.max(1))
            .map_err(|_| io::Error::other("block size too large for memory"))?;
        let mut map = memmap2::MmapOptions::new().len(len).populate().map_anon()?;
        map.fill(0);
        Ok(Pool {
            map,
            bs,
            stride,
            slots: slots.max(1),
        })
    }

    /// The start of the pool, for the kernel to read into (io_uring); the caller holds the
    /// pool mutably for as long as the pointer is used.
    pub fn base_mut(&mut self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// Slot `slot`, to read into.
    pub fn slot_mut(&mut self, slot: u64) -> &mut [u8] {
        let start = (slot % self.slots * self.stride) as usize;
        &mut self.map[start..start + self.bs as usize]
    }

    /// The distance between slots (`bs` rounded up to a page).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// The bytes block `block` holds (its first `len` bytes are written).
    pub fn block(&self, block: u64) -> &[u8] {
        let start = (block % self.slots * self.stride) as usize;
        &self.map[start..start + self.bs as usize]
    }

    /// The whole pool (for registering with io_uring).
    pub fn as_slice(&self) -> &[u8] {
        &self.map
    }
}

/// `bs` rounded up to the page size (4096; larger pages are multiples of it).
fn stride(bs: u64) -> u64 {
    bs.max(1).div_ceil(4096) * 4096
}

/// The order blocks are written in.
#[derive(Clone, Debug)]
pub enum Order {
    Sequential,
    /// A seeded bijection on `0..n`: a 4-round Feistel network on the smallest even number
    /// of bits that covers `n`, with cycle walking to stay below `n`.
    Random {
        n: u64,
        half_bits: u32,
        keys: [u64; 4],
    },
}

impl Order {
    /// The order of `n` blocks: random (seeded) with --random, else sequential.
    pub fn chosen(random: bool, n: u64, seed: u64) -> Order {
        if random {
            Order::random(n, seed)
        } else {
            Order::Sequential
        }
    }

    pub fn random(n: u64, seed: u64) -> Order {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut st = seed ^ 0xBB67_AE85_84CA_A73B;
        let keys = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Order::Random { n, half_bits, keys }
    }

    /// The block written `i`-th.
    pub fn block(&self, i: u64) -> u64 {
        self.block_in_pass(i, 0)
    }

    /// The block taken `i`-th in pass `pass` over all of them: sequential passes repeat, a
    /// random order takes another permutation each pass (its keys mixed with the pass), the
    /// first pass being [`Order::block`]'s.
    pub fn block_in_pass(&self, i: u64, pass: u64) -> u64 {
        match self {
            Order::Sequential => i,
            Order::Random { n, half_bits, keys } => {
                let salt = mix(pass);
                let mask = (1u64 << half_bits) - 1;
                let mut x = i;
                loop {
                    let (mut l, mut r) = (x >> half_bits, x & mask);
                    for k in keys {
                        let f = mix(r ^ k ^ salt) & mask;
                        (l, r) = (r, l ^ f);
                    }
                    x = (l << half_bits) | r;
                    if x < *n {
                        return x;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_covers_every_block_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let o = Order::random(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let b = o.block(i);
                assert!(b < n);
                assert!(!seen[b as usize], "block {b} twice for n={n}");
                seen[b as usize] = true;
            }
        }
        let a: Vec<u64> = (0..100).map(|i| Order::random(100, 1).block(i)).collect();
        let b: Vec<u64> = (0..100).map(|i| Order::random(100, 2).block(i)).collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn each_pass_is_another_permutation_the_first_the_same() {
        let o = Order::random(1000, 9);
        let pass = |p: u64| (0..1000).map(|i| o.block_in_pass(i, p)).collect::<Vec<_>>();
        assert_eq!(pass(0), (0..1000).map(|i| o.block(i)).collect::<Vec<_>>());
        let (one, two) = (pass(1), pass(2));
        assert_ne!(one, pass(0));
        assert_ne!(one, two);
        for p in [one, two] {
            let mut sorted = p.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..1000).collect::<Vec<_>>(),
                "every block once a pass"
            );
        }
        assert_eq!(Order::Sequential.block_in_pass(5, 3), 5);
    }

    #[test]
    fn pool_is_seeded_and_distinct_per_slot() {
        let p = Pool::new(4096, 10, Pattern::Random, 7).unwrap();
        let q = Pool::new(4096, 10, Pattern::Random, 7).unwrap();
        assert_eq!(p.slots, 10);
        assert_eq!(p.block(3), q.block(3));
        assert_ne!(p.block(3), p.block(4));
        assert_eq!(p.block(13), p.block(3));
        let z = Pool::new(4096, 10, Pattern::Zero, 7).unwrap();
        assert!(z.block(5).iter().all(|&b| b == 0));
        assert_eq!(Pool::slots_for(4 << 20, 1000, Pattern::Random), 4);
        assert_eq!(Pool::slots_for(512 << 20, 4, Pattern::Random), 1);
        assert_eq!(Pool::slots_for(512, 1 << 20, Pattern::Random), 4096);
    }

    #[test]
    fn odd_lengths_fill() {
        let mut b = vec![0u8; 13];
        fill_random(&mut b, 1);
        assert!(b.iter().any(|&x| x != 0));
    }
}
