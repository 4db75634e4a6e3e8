//! Real parts for end-to-end tests, each removed by its Drop even when a test fails: two
//! network namespaces joined by a veth pair (a second "host", optionally behind `tc tbf`),
//! loop devices on scratch files, and child processes ended by their pid.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A name unique to this process and call: `{prefix}{pid}x{n}`.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}{}x{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// Runs a program with arguments (no shell); Err carries its stderr when it fails.
pub fn cmd(program: &str, args: &[&str]) -> Result<Output, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{program} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The address of host A (namespace `a`) on the veth; it exists only inside the namespaces.
pub const A_ADDR: &str = "10.231.7.1";
/// The address of host B (namespace `b`) on the veth.
pub const B_ADDR: &str = "10.231.7.2";
/// Host A's IPv6 address on the veth (/64, no duplicate address detection).
pub const A_ADDR6: &str = "fd00:231:7::1";
/// Host B's IPv6 address on the veth.
pub const B_ADDR6: &str = "fd00:231:7::2";

/// Two network namespaces `a` and `b`, joined by a veth pair `a_if` <-> `b_if` with
/// [`A_ADDR`] and [`B_ADDR`] (/24), [`A_ADDR6`] and [`B_ADDR6`] (/64). Dropping it deletes both namespaces, which takes the
/// veth pair and its qdiscs with them. End the processes running inside first (declare
/// their guards after this one, so that they drop before it).
pub struct NetPair {
    pub a: String,
    pub b: String,
    pub a_if: String,
    pub b_if: String,
    made: Vec<String>,
}

impl NetPair {
    /// Makes the namespaces and the link, up, with loopback up in each.
    pub fn new() -> Result<NetPair, String> {
        let id = unique("");
        let mut net = NetPair {
            a: format!("bm-{id}-a"),
            b: format!("bm-{id}-b"),
            // Interface names have at most 15 bytes: "bm" + pid (7) + "x" + n + side.
            a_if: format!("bm{id}a"),
            b_if: format!("bm{id}b"),
            made: Vec::new(),
        };
        for ns in [net.a.clone(), net.b.clone()] {
            cmd("ip", &["netns", "add", &ns])?;
            net.made.push(ns.clone());
            cmd("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
        }
        cmd(
            "ip",
            &[
                "link", "add", &net.a_if, "netns", &net.a, "type", "veth", "peer", "name",
                &net.b_if, "netns", &net.b,
            ],
        )?;
        for (ns, ifn, addr, addr6) in [
            (&net.a, &net.a_if, A_ADDR, A_ADDR6),
            (&net.b, &net.b_if, B_ADDR, B_ADDR6),
        ] {
            cmd(
                "ip",
                &["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", ifn],
            )?;
            cmd(
                "ip",
                &[
                    "-n",
                    ns,
                    "addr",
                    "add",
                    &format!("{addr6}/64"),
                    "dev",
                    ifn,
                    "nodad",
                ],
            )?;
            cmd("ip", &["-n", ns, "link", "set", ifn, "up"])?;
        }
        Ok(net)
    }

    /// Limits both directions of the link to `rate` (tc's syntax, e.g. `100mbit`) with a
    /// token bucket filter on each end's egress.
    pub fn shape(&self, rate: &str) -> Result<(), String> {
        for (ns, ifn) in [(&self.a, &self.a_if), (&self.b, &self.b_if)] {
            cmd(
                "ip",
                &[
                    "netns", "exec", ns, "tc", "qdisc", "add", "dev", ifn, "root", "tbf", "rate",
                    rate, "burst", "32kb", "latency", "50ms",
                ],
            )?;
        }
        Ok(())
    }

    /// A command that runs `program` inside namespace `ns` (`ip netns exec` execs it, so the
    /// child's pid is the program's).
    pub fn exec(ns: &str, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(program)
            .stdin(Stdio::null());
        c
    }
}

impl Drop for NetPair {
    fn drop(&mut self) {
        for ns in &self.made {
            let _ = cmd("ip", &["netns", "del", ns]);
        }
    }
}

/// A loop device over a sparse scratch file; detached and the file removed on drop.
pub struct LoopDev {
    pub dev: String,
    file: PathBuf,
}

impl LoopDev {
    /// Creates `size` bytes of file in `dir` and attaches it to a free loop device.
    pub fn new(dir: &Path, size: u64) -> Result<LoopDev, String> {
        let file = dir.join(format!("{}.img", unique("loop")));
        let f = std::fs::File::create(&file)
            .map_err(|e| format!("cannot create {}: {e}", file.display()))?;
        let sized = f.set_len(size);
        drop(f);
        if let Err(e) = sized {
            let _ = std::fs::remove_file(&file);
            return Err(format!("cannot size {}: {e}", file.display()));
        }
        let path = file.to_string_lossy().into_owned();
        match cmd("losetup", &["-f", "--show", &path]) {
            Ok(out) => Ok(LoopDev {
                dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
                file,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&file);
                Err(e)
            }
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = cmd("losetup", &["-d", &self.dev]);
        let _ = std::fs::remove_file(&self.file);
    }
}

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

/// The median of `v` (the mean of the middle two for an even count); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    measure::stats::median(v).unwrap_or(f64::NAN)
}
