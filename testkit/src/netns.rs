//! Two network namespaces joined by a veth pair: a second "host" with addresses of its own,
//! optionally behind `tc tbf` for a link of known speed.

use std::ffi::OsStr;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// The pids of the processes in network namespace `ns` (`ip netns pids`; none if it is gone).
pub fn pids_in(ns: &str) -> Vec<u32> {
    let out = cmd("ip", &["netns", "pids", ns]).ok();
    out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Makes each namespace in `names`, with loopback up, and notes it in `made` (for Drop) as
/// soon as it exists.
pub(crate) fn namespaces(names: &[&str], made: &mut Vec<String>) -> Result<(), String> {
    for ns in names {
        cmd("ip", &["netns", "add", ns])?;
        made.push(ns.to_string());
        cmd("ip", &["-n", ns, "link", "set", "lo", "up"])?;
    }
    Ok(())
}

/// One end of a veth link: namespace, interface, IPv4 address (/24), IPv6 address (/64).
pub(crate) type End<'a> = (&'a str, &'a str, &'a str, &'a str);

/// A veth link between two namespaces with their addresses, up.
pub(crate) fn link(a: End, b: End) -> Result<(), String> {
    cmd(
        "ip",
        &[
            "link", "add", a.1, "netns", a.0, "type", "veth", "peer", "name", b.1, "netns", b.0,
        ],
    )?;
    for (ns, ifn, v4, v6) in [a, b] {
        cmd(
            "ip",
            &["-n", ns, "addr", "add", &format!("{v4}/24"), "dev", ifn],
        )?;
        cmd(
            "ip",
            &[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{v6}/64"),
                "dev",
                ifn,
                "nodad",
            ],
        )?;
        cmd("ip", &["-n", ns, "link", "set", ifn, "up"])?;
    }
    Ok(())
}

/// Limits the egress of interface `dev` in namespace `ns` to `rate` (tc's syntax, e.g.
/// `100mbit`) with a token bucket filter as its root qdisc.
pub(crate) fn tbf(ns: &str, dev: &str, rate: &str) -> Result<(), String> {
    cmd(
        "ip",
        &[
            "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
            "burst", "32kb", "latency", "50ms",
        ],
    )?;
    Ok(())
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
        namespaces(&[&net.a.clone(), &net.b.clone()], &mut net.made)?;
        link(
            (&net.a, &net.a_if, A_ADDR, A_ADDR6),
            (&net.b, &net.b_if, B_ADDR, B_ADDR6),
        )?;
        Ok(net)
    }

    /// Limits both directions of the link to `rate` (tc's syntax, e.g. `100mbit`) with a
    /// token bucket filter on each end's egress.
    pub fn shape(&self, rate: &str) -> Result<(), String> {
        tbf(&self.a, &self.a_if, rate)?;
        tbf(&self.b, &self.b_if, rate)
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
