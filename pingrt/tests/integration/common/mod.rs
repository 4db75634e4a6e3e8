//! Shared parts of pingrt's integration tests: running the binary, reading its records, the
//! test hosts (testkit's network namespaces, cleaned up by Drop), and a programmable echo
//! responder.
#![allow(dead_code)]

use measure::Record;
use nix::sched::{CloneFlags, setns};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The release binary under test.
pub fn bin() -> &'static str {
    testkit::tool("pingrt")
}

/// What one run of a command gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub records: Vec<Record>,
}

impl Run {
    pub fn from_output(o: Output) -> Run {
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        let records = stdout
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| measure::parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e}")))
            .collect();
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            records,
        }
    }

    pub fn summary(&self) -> &Record {
        self.records
            .iter()
            .find(|r| r.kind == measure::Kind::Summary)
            .unwrap_or_else(|| panic!("no summary in {}\nstderr: {}", self.stdout, self.stderr))
    }

    pub fn begin(&self) -> &Record {
        self.records
            .iter()
            .find(|r| r.kind == measure::Kind::Begin)
            .expect("begin")
    }

    pub fn samples(&self) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.kind == measure::Kind::Sample)
            .collect()
    }

    /// A count or value from the summary.
    pub fn v(&self, key: &str) -> f64 {
        self.summary()
            .value(key)
            .unwrap_or_else(|| panic!("summary has no {key}: {}", self.stdout))
    }

    pub fn info(&self, key: &str) -> serde_json::Value {
        self.summary().info.get(key).cloned().unwrap_or_default()
    }

    pub fn explain(&self) -> String {
        format!(
            "exit {}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs pingrt with `args`, in namespace `ns` when given.
pub fn pingrt(ns: Option<&str>, args: &[&str]) -> Run {
    let mut c = match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, bin()]);
            c
        }
        None => Command::new(bin()),
    };
    c.args(args).stdin(Stdio::null());
    Run::from_output(c.output().expect("run pingrt"))
}

/// Sends SIGINT (Ctrl-C) to `child`, a process this test started, by its pid.
pub fn interrupt(child: &std::process::Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("kill -INT");
}

/// Whether the test may go on: root and every tool in `tools` (else a counted skip says why).
pub fn can_run(what: &str, tools: &[&str]) -> bool {
    testkit::need_root(what) && tools.iter().all(|t| testkit::need_tool(t))
}

/// Runs `cmd` (constant shell text) with `sh -c` inside namespace `ns`.
pub fn in_ns(ns: &str, cmd: &str) {
    if let Err(e) = testkit::cmd("ip", &["netns", "exec", ns, "sh", "-c", cmd]) {
        panic!("{e}");
    }
}

/// Turns off ICMP rate limits in `ns`, so every probe gets its error back.
fn quiet_icmp_limits(ns: &str) {
    in_ns(
        ns,
        "sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0",
    );
}

/// The hosts of a test: a client `c` and a server `s` on one veth pair
/// ([`testkit::NetPair`]), or one routed hop apart behind a router `r`
/// ([`testkit::routed::Routed`]). ICMP rate limits are off in the server and the router.
/// The namespaces (and what is in them) go when it drops, even when the test fails.
pub struct Net {
    pub c: String,
    pub r: Option<String>,
    pub s: String,
    /// The client's interface name.
    pub c_if: String,
    /// The server's interface name.
    pub s_if: String,
    /// The client's and the server's addresses, IPv4 and IPv6.
    pub c4: &'static str,
    pub s4: &'static str,
    pub s6: &'static str,
    /// The router's addresses on the client's link (routed only).
    pub r4: &'static str,
    pub r6: &'static str,
    _pair: Option<testkit::NetPair>,
    _routed: Option<testkit::routed::Routed>,
}

impl Net {
    /// Two namespaces joined by one veth pair.
    pub fn pair() -> Net {
        let p = testkit::NetPair::new().expect("network namespaces");
        let net = Net {
            c: p.a.clone(),
            r: None,
            s: p.b.clone(),
            c_if: p.a_if.clone(),
            s_if: p.b_if.clone(),
            c4: testkit::A_ADDR,
            s4: testkit::B_ADDR,
            s6: testkit::B_ADDR6,
            r4: "",
            r6: "",
            _pair: Some(p),
            _routed: None,
        };
        quiet_icmp_limits(&net.s);
        net
    }

    /// Client, router and server: the server is one routed hop away.
    pub fn routed() -> Net {
        use testkit::routed::{C_ADDR, R_ADDR, R_ADDR6, Routed, S_ADDR, S_ADDR6};
        let r = Routed::new().expect("network namespaces");
        quiet_icmp_limits(&r.r);
        quiet_icmp_limits(&r.s);
        Net {
            c: r.c.clone(),
            r: Some(r.r.clone()),
            s: r.s.clone(),
            c_if: r.c_if.clone(),
            s_if: r.s_if.clone(),
            c4: C_ADDR,
            s4: S_ADDR,
            s6: S_ADDR6,
            r4: R_ADDR,
            r6: R_ADDR6,
            _pair: None,
            _routed: Some(r),
        }
    }

    /// Runs `cmd` with `sh -c` inside `ns`.
    pub fn exec(&self, ns: &str, cmd: &str) {
        in_ns(ns, cmd);
    }
}

/// What the responder does with one echo request: a list of replies, each after a delay and
/// possibly damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    None,
    BadChecksum,
    BadPayload,
}

type Plan = dyn Fn(u16) -> Vec<(Duration, Damage)> + Send + Sync;

/// A user-space ICMP echo responder inside a namespace (whose kernel echo is turned off):
/// replies as `plan` says per sequence number. Stopped and joined on drop.
pub struct Responder {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    pub seen: Arc<Mutex<Vec<u16>>>,
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A reply waiting for its time: when, to whom, the ICMP message.
type Due = (Instant, Ipv4Addr, Vec<u8>);

/// The replies `plan` asks for to the echo request `icmp` (ICMP header and payload).
fn replies(plan: &Plan, seq: u16, icmp: &[u8], src: Ipv4Addr) -> Vec<Due> {
    plan(seq)
        .into_iter()
        .map(|(delay, damage)| {
            let mut rep = icmp.to_vec();
            rep[0] = 0;
            rep[2] = 0;
            rep[3] = 0;
            if damage == Damage::BadPayload && rep.len() > 20 {
                rep[20] ^= 0x5a;
            }
            let mut sum = pnet_packet::icmp::IcmpPacket::new(&rep)
                .map(|p| pnet_packet::icmp::checksum(&p))
                .expect("an ICMP message");
            if damage == Damage::BadChecksum {
                sum ^= 0x0101;
            }
            rep[2..4].copy_from_slice(&sum.to_be_bytes());
            (Instant::now() + delay, src, rep)
        })
        .collect()
}

/// Sends the replies in `pending` that are due; returns how long until the next one
/// (at most 20 ms).
fn send_due(sock: &Socket, pending: &mut Vec<Due>) -> Duration {
    let now = Instant::now();
    pending.retain(|(at, to, pkt)| {
        if *at > now {
            return true;
        }
        let _ = sock.send_to(pkt, &SockAddr::from(SocketAddrV4::new(*to, 0)));
        false
    });
    pending
        .iter()
        .map(|p| p.0.saturating_duration_since(now))
        .min()
        .unwrap_or(Duration::from_millis(20))
        .min(Duration::from_millis(20))
}

/// Reads one packet within `wait`; an echo request gives its sequence number, its sender
/// and its ICMP part.
fn next_request(sock: &Socket, buf: &mut [u8], wait: Duration) -> Option<(u16, Ipv4Addr, Vec<u8>)> {
    sock.set_read_timeout(Some(wait.max(Duration::from_millis(1))))
        .ok()?;
    let n = (&*sock).read(buf).ok()?;
    let pkt = &buf[..n];
    let hl = usize::from(*pkt.first()? & 0x0f) * 4;
    if pkt.len() < hl + 8 || pkt[hl] != 8 {
        return None;
    }
    let src = Ipv4Addr::new(pkt[12], pkt[13], pkt[14], pkt[15]);
    let icmp = &pkt[hl..];
    Some((u16::from_be_bytes([icmp[6], icmp[7]]), src, icmp.to_vec()))
}

impl Responder {
    /// Starts a responder in namespace `ns` (turning off the kernel's own echo replies there).
    pub fn start(
        ns: &str,
        plan: impl Fn(u16) -> Vec<(Duration, Damage)> + Send + Sync + 'static,
    ) -> Responder {
        in_ns(ns, "sysctl -qw net.ipv4.icmp_echo_ignore_all=1");
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let ready = Arc::new(AtomicBool::new(false));
        let (s2, seen2, ready2) = (stop.clone(), seen.clone(), ready.clone());
        let path = format!("/run/netns/{ns}");
        let plan: Box<Plan> = Box::new(plan);
        let handle = std::thread::spawn(move || {
            let f = std::fs::File::open(&path).expect("open netns");
            // Only this thread moves into the namespace.
            setns(&f, CloneFlags::CLONE_NEWNET).expect("setns");
            let sock =
                Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4)).expect("raw socket");
            // Room for a burst of requests at -i 0 (the tests run as root, above rmem_max).
            let _ = nix::sys::socket::setsockopt(
                &sock,
                nix::sys::socket::sockopt::RcvBufForce,
                &(64 << 20),
            );
            ready2.store(true, Ordering::SeqCst);
            let mut pending: Vec<Due> = Vec::new();
            let mut buf = vec![0u8; 70000];
            while !s2.load(Ordering::SeqCst) {
                let wait = send_due(&sock, &mut pending);
                if let Some((seq, src, icmp)) = next_request(&sock, &mut buf, wait) {
                    seen2.lock().expect("seen").push(seq);
                    pending.extend(replies(&plan, seq, &icmp, src));
                }
            }
        });
        let t0 = Instant::now();
        while !ready.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Responder {
            stop,
            handle: Some(handle),
            seen,
        }
    }
}
