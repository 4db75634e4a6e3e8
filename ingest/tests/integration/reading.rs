//! Reading a source: a wait for input (a FIFO without a writer, a silent pipe) ends on
//! SIGTERM, SIGINT and SIGHUP with exit 130; Ctrl-C in a pipeline that has given bytes reads
//! on to the end (the writer, ping, got it too and prints its statistics); a source past
//! `--max-input` is refused, naming the limit, with at most the limit held in memory (the
//! peak RSS that the kernel reports to wait4).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::Captured;

const PING: &str = "PING h (10.0.0.2) 56(84) bytes of data.\n\
                    64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.050 ms\n";
const STATS: &str = "\n--- h ping statistics ---\n\
                     1 packets transmitted, 1 received, 0% packet loss, time 0ms\n\
                     rtt min/avg/max/mdev = 0.050/0.050/0.050/0.000 ms\n";

fn mkfifo(path: &Path) {
    // mknodat with a FIFO type is what mkfifo does.
    let mode = rustix::fs::Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, mode, 0)
        .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
}

/// The state letter of /proc/PID/stat (`S`: asleep in a wait).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Waits until the kernel reports `pid` asleep (at most 2000 looks, 5 ms apart).
fn asleep(pid: u32) {
    for _ in 0..2000 {
        if state(pid) == Some('S') {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("ingest ({pid}) never waited: state {:?}", state(pid));
}

/// Waits until the kernel no longer holds `sig` pending for `pid` (it was delivered: its
/// handler ran), at most 2000 looks 5 ms apart.
fn handled(pid: u32, sig: i32) {
    let bit = 1u64 << (sig - 1);
    let pending = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status.lines().any(|l| {
            let mask = l
                .strip_prefix("SigPnd:")
                .or_else(|| l.strip_prefix("ShdPnd:"));
            mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                .is_some_and(|m| m & bit != 0)
        })
    };
    for _ in 0..2000 {
        if !pending() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("signal {sig} still pending for {pid}");
}

/// The bytes written to a pipe and not read yet (FIONREAD on its write end).
fn unread(pipe: &File) -> u64 {
    rustix::io::ioctl_fionread(pipe).unwrap_or_else(|e| panic!("FIONREAD: {e}"))
}

/// The FIFO's write end without waiting for a reader: `None` when none has it open.
fn writer(fifo: &Path) -> Option<File> {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo);
    match f {
        Ok(f) => Some(f),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => None,
        Err(e) => panic!("opening {} to write: {e}", fifo.display()),
    }
}

/// ingest reading `fifo`, with the ending signals' default actions whatever this test
/// inherited (a background job's shell ignores SIGINT, and a tool keeps what was ignored).
fn ingest_on(fifo: &Path) -> Captured {
    let mut c = Command::new(testkit::tool("ingest"));
    c.arg(fifo).stdin(Stdio::null());
    // SAFETY: signal is async-signal-safe, as the child between fork and exec needs.
    unsafe {
        c.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    Captured::start(&mut c)
}

#[test]
fn a_fifo_without_a_writer_ends_on_a_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let fifo = dir.path().join(name);
        mkfifo(&fifo);
        let run = ingest_on(&fifo);
        asleep(run.pid());
        assert!(run.signal(sig), "{name} sent");
        handled(run.pid(), sig);
        // A writer now that the signal was handled: an ingest that waits on through it reads
        // this ping run and converts it.
        if let Some(mut w) = writer(&fifo) {
            let _ = w.write_all(format!("{PING}{STATS}").as_bytes());
        }
        let (st, out, err) = run.wait_output(Duration::from_secs(60));
        assert_eq!(st.code(), Some(130), "{name}: {err}");
        assert!(
            err.contains(&format!("interrupted by {name} while reading")),
            "{name}: {err}"
        );
        let summary = out.lines().last().map(measure::parse_line);
        let summary = summary.expect("a summary").expect("a record");
        assert_eq!(summary.status, Some(measure::Status::Partial), "{out}");
    }
}

/// ingest on a FIFO that has given the first lines of a ping run, then `sig`, then the rest.
fn signal_mid_pipe(dir: &Path, sig: i32) -> (Option<i32>, String, String) {
    let fifo = dir.join(format!("mid-{sig}"));
    mkfifo(&fifo);
    let run = ingest_on(&fifo);
    let mut w = (0..2000)
        .find_map(|_| {
            let w = writer(&fifo);
            if w.is_none() {
                std::thread::sleep(Duration::from_millis(5));
            }
            w
        })
        .expect("ingest opens the FIFO");
    w.write_all(PING.as_bytes()).expect("written");
    for _ in 0..2000 {
        if unread(&w) == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(unread(&w), 0, "ingest read the first lines");
    asleep(run.pid());
    assert!(run.signal(sig));
    let _ = w.write_all(STATS.as_bytes());
    drop(w);
    let (st, out, err) = run.wait_output(Duration::from_secs(60));
    (st.code(), out, err)
}

#[test]
fn ctrl_c_in_a_pipeline_reads_on_to_the_end_sigterm_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = signal_mid_pipe(dir.path(), libc::SIGINT);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("\"rtt_max_s\":0.00005"),
        "the statistics read: {out}"
    );
    let (code, _, err) = signal_mid_pipe(dir.path(), libc::SIGTERM);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains("interrupted by SIGTERM while reading"),
        "{err}"
    );
}

/// ingest's exit code, stderr and peak RSS in bytes (wait4's ru_maxrss) on `args`.
fn peak(args: &[&str]) -> (i32, String, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let err_path = dir.path().join("err");
    // Reaped by wait4 below, which gives its rusage too.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(testkit::tool("ingest"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("ingest runs");
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it and the status for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child started above, by its pid; both pointers outlive the call.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(
        pid,
        child.id() as i32,
        "{}",
        std::io::Error::last_os_error()
    );
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    (code, err, ru.ru_maxrss as u64 * 1024)
}

#[test]
fn an_endless_source_is_refused_at_the_limit_within_its_memory() {
    const MIB: u64 = 1 << 20;
    // A child of this test starts with this process's peak as its own (the kernel keeps it
    // across the vfork and the exec): what ingest --version shows is that floor.
    let (code, _, floor) = peak(&["--version"]);
    assert_eq!(code, 0);
    for (args, limit, text) in [
        (&["/dev/zero"][..], 256 * MIB, "--max-input 256M"),
        (
            &["--max-input", "8M", "/dev/zero"][..],
            8 * MIB,
            "--max-input 8M",
        ),
        (
            &["ping", "--max-input", "3k", "/dev/zero"][..],
            3072,
            "--max-input 3K",
        ),
    ] {
        let (code, err, rss) = peak(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("/dev/zero: more than {text}")),
            "{err}"
        );
        // What a run holds besides the source: the binary, its libraries, a read's buffer.
        assert!(
            rss < floor.max(limit) + 32 * MIB,
            "{args:?}: peak RSS {rss} bytes for a limit of {limit} (a child's floor {floor})"
        );
    }
}

#[test]
fn a_file_past_the_limit_is_refused_naming_it() {
    let file = crate::common::data("fio-2.2.json");
    let size = std::fs::metadata(&file).expect("example").len();
    let run = crate::common::ingest(&["--max-input", &(size - 1).to_string(), &file]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let want = format!("{file}: more than --max-input ");
    assert!(run.stderr.contains(&want), "{}", run.stderr);
    let run = crate::common::ingest(&["--max-input", &size.to_string(), &file]);
    assert_eq!(run.code, 0, "exactly the limit is read: {}", run.stderr);
}
