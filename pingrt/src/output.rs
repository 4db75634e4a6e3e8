//! Record output for fast probing: lines are batched and flushed every 100 ms (or 256 KiB)
//! instead of one write per line, so the writing does not slow a flood down; the summary is
//! always flushed at once.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a batched line may wait before it is written.
pub const MAX_DELAY: Duration = Duration::from_millis(100);
const MAX_BYTES: usize = 256 * 1024;

/// A writer whose `flush` writes through only every [`MAX_DELAY`], or at once while
/// `eager` is set.
pub struct Batched {
    inner: Box<dyn Write + Send>,
    buf: Vec<u8>,
    last: Instant,
    eager: Arc<AtomicBool>,
}

impl Batched {
    /// Wraps `inner`; setting the returned flag makes every later flush write through.
    pub fn new(inner: Box<dyn Write + Send>) -> (Batched, Arc<AtomicBool>) {
        let eager = Arc::new(AtomicBool::new(false));
        (
            Batched {
                inner,
                buf: Vec::with_capacity(MAX_BYTES),
                last: Instant::now(),
                eager: eager.clone(),
            },
            eager,
        )
    }

    fn write_through(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.last = Instant::now();
        self.inner.flush()
    }
}

impl Write for Batched {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.eager.load(Ordering::Relaxed)
            || self.buf.len() >= MAX_BYTES
            || self.last.elapsed() >= MAX_DELAY
        {
            self.write_through()
        } else {
            Ok(())
        }
    }
}

/// A handle on one [`Batched`] writer that several writers (the Reporter and the fast
/// sample lines) share.
#[derive(Clone)]
pub struct Shared(pub Arc<Mutex<Batched>>);

impl Shared {
    pub fn new(b: Batched) -> Shared {
        Shared(Arc::new(Mutex::new(b)))
    }
}

fn poisoned() -> io::Error {
    io::Error::other("record output lock poisoned")
}

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().map_err(|_| poisoned())?.write(b)
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        self.0.lock().map_err(|_| poisoned())?.write_all(b)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().map_err(|_| poisoned())?.flush()
    }
}

impl Drop for Batched {
    fn drop(&mut self) {
        let _ = self.write_through();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn batches_until_eager_and_on_drop() {
        let sink = Shared::default();
        let (mut w, eager) = Batched::new(Box::new(sink.clone()));
        w.write_all(b"a\n").unwrap();
        w.flush().unwrap();
        // Whether "a" went through depends on the clock; after eager it must have.
        eager.store(true, Ordering::Relaxed);
        w.write_all(b"b\n").unwrap();
        w.flush().unwrap();
        assert_eq!(sink.0.lock().unwrap().as_slice(), b"a\nb\n");
        eager.store(false, Ordering::Relaxed);
        w.write_all(b"c\n").unwrap();
        drop(w);
        assert_eq!(sink.0.lock().unwrap().as_slice(), b"a\nb\nc\n");
    }
}
