//! The three timed phases: create every file in order, stat them all in a random order, unlink
//! them all in another; each operation timed into a histogram, one sample per 1/16 of a
//! phase's time (slices.rs), and Ctrl-C or SIGTERM looked at between operations.

use crate::cli::Opts;
use crate::scratch::{Scratch, retry};
use crate::slices::{Progress, Slice};
use hdrhistogram::Histogram;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Values, info};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde_json::json;
use std::time::{Duration, Instant};

/// Samples per phase (equal-time slices): enough values for a cell's confidence interval
/// (6 and more).
pub const BATCHES: u32 = 16;

/// One of the three phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Create,
    Stat,
    Unlink,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Create, Phase::Stat, Phase::Unlink];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Stat => "stat",
            Phase::Unlink => "unlink",
        }
    }

    /// The key of the phase's rate in values.
    pub fn rate_key(self) -> &'static str {
        match self {
            Phase::Create => "creates_per_s",
            Phase::Stat => "stats_per_s",
            Phase::Unlink => "unlinks_per_s",
        }
    }

    /// The phase's operation in a sentence ("after 10 of 100 creates").
    pub fn plural(self) -> &'static str {
        match self {
            Phase::Create => "creates",
            Phase::Stat => "stats",
            Phase::Unlink => "unlinks",
        }
    }
}

/// What a run works with: the options and the bytes each file gets.
pub struct Job<'a> {
    pub o: &'a Opts,
    pub data: Vec<u8>,
}

/// One phase's figures: the operations done, their time, each one's latency.
pub struct Done {
    pub phase: Phase,
    pub count: u32,
    pub secs: f64,
    pub hist: Histogram<u64>,
}

/// Why a phase ended.
#[derive(Debug)]
pub enum Stop {
    /// Every file done.
    Done,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// An operation failed: on file `at`, with the system's error or a finding of fsmeta's.
    Failed {
        at: u32,
        errno: Option<Errno>,
        what: String,
    },
}

/// An operation that failed: the system's error, or what fsmeta found wrong.
enum OpError {
    Sys(Errno),
    Odd(String),
}

impl From<Errno> for OpError {
    fn from(e: Errno) -> Self {
        OpError::Sys(e)
    }
}

fn new_hist() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits (0.1% resolution); longer operations saturate.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("fixed bounds and precision are valid for a histogram")
}

/// Runs `phase` over the files in `order` (file numbers; `None` is 0..N), then writes a sample
/// per equal-time slice of it, and says how far it got and why it ended.
pub fn run_phase(
    s: &mut Session,
    sc: &mut Scratch,
    job: &Job,
    phase: Phase,
    order: Option<&[u32]>,
) -> Result<(Done, Stop), Failure> {
    let n = job.o.files;
    let shown = n.div_ceil(BATCHES).max(1);
    let mut done = Done {
        phase,
        count: 0,
        secs: 0.0,
        hist: new_hist(),
    };
    let mut name = String::new();
    let mut curve = Progress::new(n);
    let start = Instant::now();
    let mut stop = Stop::Done;
    for k in 0..n {
        if measure::signal::interrupted() {
            stop = Stop::Interrupted;
            break;
        }
        let i = order.map_or(k, |o| o[k as usize]);
        Scratch::name(i, &mut name);
        let t0 = Instant::now();
        let r = op(sc, job, phase, i, &name);
        let lat = t0.elapsed();
        if let Err(e) = r {
            stop = match e {
                OpError::Sys(Errno::INTR) if measure::signal::interrupted() => Stop::Interrupted,
                OpError::Sys(e) => Stop::Failed {
                    at: i,
                    errno: Some(e),
                    what: std::io::Error::from(e).to_string(),
                },
                OpError::Odd(what) => Stop::Failed {
                    at: i,
                    errno: None,
                    what,
                },
            };
            break;
        }
        done.hist.saturating_record(nanos(lat).max(1));
        done.count += 1;
        curve.note(done.count, (t0 - start + lat).as_secs_f64());
        if done.count.is_multiple_of(shown) || k + 1 == n {
            progress(s, phase, k + 1, n);
        }
    }
    done.secs = start.elapsed().as_secs_f64();
    for (i, sl) in curve
        .slices(BATCHES, done.count, done.secs)
        .iter()
        .enumerate()
    {
        sample(s, phase, i, sl)?;
    }
    Ok((done, stop))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One slice's sample: its rate, keyed for the phase's row; its place in the phase and its
/// (interpolated) count of files in info.
fn sample(s: &mut Session, phase: Phase, slice: usize, sl: &Slice) -> Result<(), Failure> {
    let round = |x: f64, k: f64| (x * k).round() / k;
    s.sample(
        Values::new().with(phase.rate_key(), sl.rate),
        info(json!({
            "phase": phase.as_str(),
            "slice": slice,
            "start_s": round(sl.start_s, 1e6),
            "span_s": round(sl.secs, 1e6),
            "files": round(sl.ops, 10.0),
        })),
    )
}

/// The progress line a person watching sees.
fn progress(s: &mut Session, phase: Phase, k: u32, n: u32) {
    if s.human().on() {
        s.human()
            .progress(&format!("fsmeta: {} {k}/{n}", phase.as_str()));
    }
}

/// One operation on file `i` (`name` in its directory).
fn op(sc: &mut Scratch, job: &Job, phase: Phase, i: u32, name: &str) -> Result<(), OpError> {
    let dir = sc.dir_of(i).ok_or(Errno::BADF)?;
    match phase {
        Phase::Create => {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = retry(|| rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600)))?;
            // It exists from here on, even if a write below fails: the removal must find it.
            sc.set_present(i, true);
            fill(&fd, job)?;
            if job.o.fsync {
                retry(|| rustix::fs::fsync(&fd))?;
            }
            drop(fd);
        }
        Phase::Stat => {
            let st = retry(|| rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW))?;
            let regular = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile;
            if !regular || st.st_size as u64 != job.o.size {
                return Err(OpError::Odd(format!(
                    "{} is not the file fsmeta made ({} bytes of a {:?}, not {} bytes of a regular file): something else changed the private directory",
                    sc.shown(i),
                    st.st_size,
                    FileType::from_raw_mode(st.st_mode),
                    job.o.size
                )));
            }
        }
        Phase::Unlink => {
            retry(|| rustix::fs::unlinkat(dir, name, AtFlags::empty()))?;
            sc.set_present(i, false);
        }
    }
    Ok(())
}

/// Writes the file's --size bytes, from the job's data, again and again.
fn fill(fd: &OwnedFd, job: &Job) -> Result<(), Errno> {
    let mut left = job.o.size;
    while left > 0 {
        let len = left.min(job.data.len() as u64) as usize;
        let n = retry(|| rustix::io::write(fd, &job.data[..len]))?;
        if n == 0 {
            return Err(Errno::NOSPC);
        }
        left -= n as u64;
    }
    Ok(())
}

/// The bytes a file gets: --size of them, at most 1 MiB held, not zeros (compressing or
/// deduplicating storage would store zeros for free).
pub fn data(size: u64) -> Vec<u8> {
    let len = size.min(1 << 20) as usize;
    let mut state = 0x5eed_f11e_u64;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let z = (state ^ (state >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        v.extend_from_slice(&(z ^ (z >> 29)).to_le_bytes());
    }
    v.truncate(len);
    v
}
