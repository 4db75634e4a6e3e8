//! Runs of every tool for the signal tests (signal_rule, stopped): one started as `nohup` does
//! (SIGHUP ignored) or as a background job of `sh -c '... &'` (SIGINT ignored), what the
//! kernel says of its signals (/proc/PID/status), and how it ended.

use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a run may take to set up its signals, and then to end.
const LIMIT: Duration = Duration::from_secs(60);

/// A background job of a non-interactive shell (SIGINT and SIGQUIT ignored, as POSIX says):
/// the tool's pid first, its status last. Paths come in the environment, the tool and its
/// arguments as the script's arguments.
const BACKGROUND: &str =
    r#""$@" <"$SIG_IN" >"$SIG_OUT" 2>"$SIG_ERR" & echo "$!"; wait "$!"; echo "rc=$?""#;

/// One tool's invocation: its binary, its arguments, and what it reads on stdin.
pub struct Case {
    pub what: String,
    pub bin: PathBuf,
    pub args: Vec<String>,
    /// Given on stdin after the signals, then stdin is closed (ingest, collate); `None`: stdin
    /// is /dev/null.
    pub feed: Option<Vec<u8>>,
    /// Where the records go (`-o`); `None` for collate, which writes none.
    pub records: Option<PathBuf>,
}

impl Case {
    /// `bin` (a release binary) with `args`, writing its records to `records` when given.
    pub fn new(bin: &str, args: &[&str], records: Option<&Path>) -> Case {
        // `-o FILE` after a subcommand (netpipe's), before a command (timecmd's `--`).
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if let Some(r) = records {
            let at = args.iter().position(|a| *a == "--").unwrap_or(args.len());
            all.splice(at..at, ["-o".to_string(), r.display().to_string()]);
        }
        Case {
            what: format!("{bin} {}", args.join(" ")),
            bin: testkit::release::bin(bin),
            args: all,
            feed: None,
            records: records.map(Path::to_path_buf),
        }
    }

    /// The same, with `feed` on stdin.
    pub fn fed(mut self, feed: Vec<u8>) -> Case {
        self.feed = Some(feed);
        self
    }
}

/// How the run is started.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// `nohup TOOL ...`: SIGHUP ignored.
    Nohup,
    /// `sh -c 'TOOL ... &'`: SIGINT ignored.
    Background,
    /// Directly, nothing ignored.
    Plain,
}

/// A tool that runs.
pub struct Run {
    pub what: String,
    /// The process started: the tool itself, or the shell whose job it is.
    child: Child,
    /// The tool's pid.
    pub pid: i32,
    /// The shell's stdout (the job's status comes last), for a background job.
    lines: Option<std::io::Lines<BufReader<ChildStdout>>>,
    stdin: Option<File>,
    out: PathBuf,
    err: PathBuf,
    records: Option<PathBuf>,
    feed: Option<Vec<u8>>,
}

/// The bit of signal `sig` in a /proc/PID/status mask.
fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

/// A signal mask of /proc/PID/status (`SigIgn`, `SigCgt`, `SigBlk`), or its `State` letter
/// as a number; `None` once the process is gone.
fn status_field(pid: i32, field: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// The mask `field` of process `pid`.
pub fn mask(pid: i32, field: &str) -> Option<u64> {
    u64::from_str_radix(&status_field(pid, field)?, 16).ok()
}

/// The file `dir/name` as a FIFO.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    // mknodat with a FIFO type is what mkfifo does.
    let mode = rustix::fs::Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, &p, rustix::fs::FileType::Fifo, mode, 0)
        .unwrap_or_else(|e| panic!("mkfifo {p:?}: {e}"));
    p
}

impl Run {
    /// Starts `case` as `how` says; its stdout and stderr go to files in `dir`.
    pub fn start(case: &Case, how: Start, dir: &Path) -> Run {
        let tag = format!("{}-{}", case.what.len(), unique());
        let out = dir.join(format!("out-{tag}"));
        let err = dir.join(format!("err-{tag}"));
        let mut cmd = match how {
            Start::Nohup => {
                let mut c = Command::new("nohup");
                c.arg(&case.bin);
                c
            }
            Start::Plain => Command::new(&case.bin),
            Start::Background => {
                let mut c = Command::new("sh");
                c.args(["-c", BACKGROUND, "sh"]).arg(&case.bin);
                c
            }
        };
        cmd.args(&case.args);
        let fed = case.feed.is_some();
        let input = fed.then(|| fifo(dir, &format!("in-{tag}")));
        if how == Start::Background {
            let null = PathBuf::from("/dev/null");
            cmd.env("SIG_IN", input.as_ref().unwrap_or(&null))
                .env("SIG_OUT", &out)
                .env("SIG_ERR", &err)
                .stdin(Stdio::null())
                .stdout(Stdio::piped());
        } else {
            let file = |p: &Path| File::create(p).expect("an output file");
            cmd.stdin(if fed { Stdio::piped() } else { Stdio::null() })
                .stdout(file(&out))
                .stderr(file(&err));
        }
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{}: {e}", case.what));
        let mut run = Run {
            what: case.what.clone(),
            pid: child.id() as i32,
            stdin: child
                .stdin
                .take()
                .map(|s| File::from(std::os::fd::OwnedFd::from(s))),
            lines: child.stdout.take().map(|s| BufReader::new(s).lines()),
            child,
            out,
            err,
            records: case.records.clone(),
            feed: case.feed.clone(),
        };
        if how == Start::Background {
            run.pid = run.next_line().trim().parse().expect("the job's pid");
            if let Some(p) = input {
                run.stdin = Some(open_writer(&p));
            }
        }
        run
    }

    /// The shell's next line of output.
    fn next_line(&mut self) -> String {
        match self.lines.as_mut().and_then(Iterator::next) {
            Some(Ok(l)) => l,
            other => panic!("{}: the shell said {other:?}", self.what),
        }
    }

    /// Waits until the tool has set up its signals: it handles SIGPIPE (every tool does,
    /// last), as /proc/PID/status shows.
    pub fn ready(&mut self) {
        let end = Instant::now() + LIMIT;
        while mask(self.pid, "SigCgt").is_none_or(|m| m & bit(libc::SIGPIPE) == 0) {
            assert!(
                self.alive(),
                "{} ended before it set up its signals: {}",
                self.what,
                self.stderr()
            );
            assert!(Instant::now() < end, "{}: no SIGPIPE handler", self.what);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether the kernel has `sig` ignored for the tool.
    pub fn ignores(&self, sig: i32) -> bool {
        mask(self.pid, "SigIgn").is_some_and(|m| m & bit(sig) != 0)
    }

    /// Whether the tool still runs (neither gone nor a zombie).
    pub fn alive(&self) -> bool {
        status_field(self.pid, "State").is_some_and(|s| !s.starts_with('Z'))
    }

    /// Whether the tool ends within [`LIMIT`] (a zombie has ended).
    pub fn ends(&self) -> bool {
        let end = Instant::now() + LIMIT;
        while self.alive() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        !self.alive()
    }

    /// Sends `sig` to the tool, by its pid; false when it is gone.
    pub fn signal(&self, sig: i32) -> bool {
        testkit::signal(self.pid as u32, sig)
    }

    /// Stops the tool (SIGSTOP), waits until the kernel shows it stopped, and continues it.
    pub fn stop_and_continue(&self) {
        assert!(self.signal(libc::SIGSTOP), "{}: kill -STOP", self.what);
        let end = Instant::now() + LIMIT;
        while !status_field(self.pid, "State").is_some_and(|s| s.starts_with('T')) {
            assert!(Instant::now() < end, "{} never stopped", self.what);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(self.signal(libc::SIGCONT), "{}: kill -CONT", self.what);
    }

    /// Gives the tool its input and closes its stdin.
    pub fn feed(&mut self) {
        if let (Some(mut w), Some(feed)) = (self.stdin.take(), self.feed.take()) {
            w.write_all(&feed).expect("the tool's input");
        }
    }

    /// Waits for the end: the tool's exit status (the shell's word for a background job,
    /// 128+N after signal N) and its records (or its stdout, for collate).
    pub fn finish(mut self) -> Ended {
        self.feed();
        drop(self.stdin.take());
        let end = Instant::now() + LIMIT;
        let code = loop {
            match self.child.try_wait().expect("wait") {
                Some(st) => break st.code().unwrap_or(-1),
                None if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
                None => {
                    let _ = self.child.kill();
                    panic!("{} still runs after {LIMIT:?}", self.what);
                }
            }
        };
        let code = match self.lines.is_some() {
            true => (self.next_line().strip_prefix("rc=").map(str::to_string))
                .and_then(|c| c.parse().ok())
                .expect("the job's status"),
            false => code,
        };
        let text =
            std::fs::read_to_string(self.records.as_ref().unwrap_or(&self.out)).unwrap_or_default();
        Ended {
            what: self.what.clone(),
            code,
            records: text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            text,
            stderr: self.stderr(),
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = testkit::signal(self.pid as u32, libc::SIGKILL);
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Opens FIFO `p` for writing once the job opened it for reading (a bounded wait).
fn open_writer(p: &Path) -> File {
    let end = Instant::now() + LIMIT;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
        {
            Ok(f) => return f,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) && Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("{p:?}: {e}"),
        }
    }
}

/// A number of this test process, new at each call.
fn unique() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// How a run ended.
pub struct Ended {
    pub what: String,
    pub code: i32,
    pub records: Vec<Value>,
    /// The records as written, or collate's stdout.
    pub text: String,
    pub stderr: String,
}

impl Ended {
    /// The last summary record.
    pub fn summary(&self) -> &Value {
        self.records
            .iter()
            .rev()
            .find(|r| r["type"] == "summary")
            .unwrap_or_else(|| panic!("{}: no summary: {}", self.what, self.stderr))
    }

    /// The summary's status.
    pub fn status(&self) -> &str {
        self.summary()["status"].as_str().unwrap_or("")
    }
}
