//! The page fault probe: the first write to each page of a fresh anonymous mapping. The
//! mapping asks for no huge pages (MADV_NOHUGEPAGE) and is not prefaulted, so each page
//! costs one fault: the trap, the page's allocation and zeroing, the page table update (in
//! a VM, the nested or shadow page tables' too). mmap, madvise and munmap are not timed.

use super::{Op, since};
use memmap2::{Advice, MmapMut};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::io;
use std::time::Instant;

/// Pages per mapping at most (64 MiB of 4 KiB pages): a batch of more maps several in turn.
const CHUNK_PAGES: u64 = 16384;

#[derive(Debug)]
pub struct Fault {
    page: usize,
    hugepage_advice: bool,
}

impl Default for Fault {
    fn default() -> Self {
        Fault {
            page: rustix::param::page_size(),
            hugepage_advice: true,
        }
    }
}

impl Fault {
    /// Maps `pages` fresh pages, writes one byte to each, and returns the seconds the writes took.
    fn touch(&mut self, pages: u64) -> io::Result<f64> {
        let len = pages as usize * self.page;
        let mut m = MmapMut::map_anon(len)?;
        if m.advise(Advice::NoHugePage).is_err() {
            // A kernel without transparent huge pages has none to refuse.
            self.hugepage_advice = false;
        }
        let t0 = Instant::now();
        for off in (0..len).step_by(self.page) {
            m[off] = 1;
        }
        black_box(&mut m[..]);
        let t = since(t0);
        drop(m);
        Ok(t)
    }
}

impl Op for Fault {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let mut left = n;
        let mut t = 0.0;
        while left > 0 {
            let pages = left.min(CHUNK_PAGES);
            t += self.touch(pages)?;
            left -= pages;
        }
        Ok(t)
    }

    fn info(&self) -> Map<String, Value> {
        measure::parts::info(json!({
            "page_bytes": self.page,
            "madv_nohugepage": self.hugepage_advice,
            "access": "write",
        }))
    }
}
