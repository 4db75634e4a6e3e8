//! Child processes that end (by their own pid) when a test does, and free ports for them.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A child process that is killed (by its pid) and reaped on drop if it is still running.
pub struct Spawned {
    child: Child,
    what: String,
}

impl Spawned {
    /// Starts `c`, with stdin from /dev/null and stdout and stderr as the caller set them.
    pub fn start(c: &mut Command) -> Spawned {
        let what = format!("{c:?}");
        let child = c
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        Spawned { child, what }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits at most `limit` for the process to end; panics naming it when it does not.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let end = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return st,
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
                Ok(None) => panic!("{} still runs after {limit:?}", self.what),
                Err(e) => panic!("cannot wait for {}: {e}", self.what),
            }
        }
    }

    /// Waits until the process listens on TCP `port` in its own network namespace
    /// (`/proc/PID/net/tcp*` shows that namespace's sockets); panics after `limit` or when the
    /// process ends first.
    pub fn wait_listening(&mut self, port: u16, limit: Duration) {
        let end = Instant::now() + limit;
        let local = format!(":{port:04X}");
        loop {
            let listening = ["tcp", "tcp6"].iter().any(|f| {
                std::fs::read_to_string(format!("/proc/{}/net/{f}", self.pid()))
                    .unwrap_or_default()
                    .lines()
                    .skip(1)
                    .any(|l| {
                        let cols: Vec<&str> = l.split_whitespace().collect();
                        cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
                    })
            });
            if listening {
                return;
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("{} ended ({st}) before listening on {port}", self.what);
            }
            assert!(
                Instant::now() < end,
                "{} does not listen on {port} after {limit:?}",
                self.what
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A TCP port that was free on 127.0.0.1 a moment ago (the kernel's choice).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(47_000 + (std::process::id() % 1000) as u16)
}

/// Sends `sig` to the process `pid` (a child of the test's own); false if it is gone or
/// `sig` is no signal.
pub fn signal(pid: u32, sig: i32) -> bool {
    send(pid, sig, false)
}

/// Sends `sig` to the process group `pgid` (a child of the test's own that leads its group,
/// with what it started).
pub fn signal_group(pgid: u32, sig: i32) -> bool {
    send(pgid, sig, true)
}

fn send(id: u32, sig: i32, group: bool) -> bool {
    let (Some(pid), Some(sig)) = (
        i32::try_from(id)
            .ok()
            .and_then(rustix::process::Pid::from_raw),
        rustix::process::Signal::from_named_raw(sig),
    ) else {
        return false;
    };
    let sent = if group {
        rustix::process::kill_process_group(pid, sig)
    } else {
        rustix::process::kill_process(pid, sig)
    };
    sent.is_ok()
}
