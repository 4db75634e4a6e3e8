//! Three network namespaces in a row, client - router - server, on two veth links with IPv4
//! and IPv6 routes through the router: a server one routed hop away (TTL, ICMP errors).

use crate::netns::{cmd, link, namespaces, unique};

/// The client's address on the first link (/24); the router's side of it is [`R_ADDR`].
pub const C_ADDR: &str = "10.231.8.1";
/// The router's address on the client's link.
pub const R_ADDR: &str = "10.231.8.2";
/// The router's address on the server's link.
pub const R2_ADDR: &str = "10.231.9.1";
/// The server's address (/24), one hop behind the router.
pub const S_ADDR: &str = "10.231.9.2";
/// The client's IPv6 address on the first link (/64, no duplicate address detection).
pub const C_ADDR6: &str = "fd00:231:8::1";
/// The router's IPv6 address on the client's link.
pub const R_ADDR6: &str = "fd00:231:8::2";
/// The router's IPv6 address on the server's link.
pub const R2_ADDR6: &str = "fd00:231:9::1";
/// The server's IPv6 address, one hop behind the router.
pub const S_ADDR6: &str = "fd00:231:9::2";

/// Namespaces `c` (client), `r` (router, forwarding IPv4 and IPv6) and `s` (server): link
/// `c_if` <-> `r_c_if` with [`C_ADDR`]/[`R_ADDR`], link `r_s_if` <-> `s_if` with
/// [`R2_ADDR`]/[`S_ADDR`] (and the IPv6 ones), default routes of client and server through
/// the router. Dropping it deletes the three namespaces with their links.
pub struct Routed {
    pub c: String,
    pub r: String,
    pub s: String,
    pub c_if: String,
    pub r_c_if: String,
    pub r_s_if: String,
    pub s_if: String,
    made: Vec<String>,
}

/// Default routes of `ns` through `via4` and `via6`.
fn default_routes(ns: &str, via4: &str, via6: &str) -> Result<(), String> {
    cmd("ip", &["-n", ns, "route", "add", "default", "via", via4])?;
    cmd(
        "ip",
        &["-n", ns, "-6", "route", "add", "default", "via", via6],
    )?;
    Ok(())
}

impl Routed {
    /// Makes the namespaces, the links, the routes, and turns forwarding on in the router.
    pub fn new() -> Result<Routed, String> {
        let id = unique("");
        let mut net = Routed {
            c: format!("bm-{id}-c"),
            r: format!("bm-{id}-r"),
            s: format!("bm-{id}-s"),
            // Interface names have at most 15 bytes: "bm" + pid (7) + "x" + n + side.
            c_if: format!("bm{id}a"),
            r_c_if: format!("bm{id}b"),
            r_s_if: format!("bm{id}c"),
            s_if: format!("bm{id}d"),
            made: Vec::new(),
        };
        namespaces(
            &[&net.c.clone(), &net.r.clone(), &net.s.clone()],
            &mut net.made,
        )?;
        link(
            (&net.c, &net.c_if, C_ADDR, C_ADDR6),
            (&net.r, &net.r_c_if, R_ADDR, R_ADDR6),
        )?;
        link(
            (&net.r, &net.r_s_if, R2_ADDR, R2_ADDR6),
            (&net.s, &net.s_if, S_ADDR, S_ADDR6),
        )?;
        default_routes(&net.c, R_ADDR, R_ADDR6)?;
        default_routes(&net.s, R2_ADDR, R2_ADDR6)?;
        cmd(
            "ip",
            &[
                "netns",
                "exec",
                &net.r,
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
                "net.ipv6.conf.all.forwarding=1",
            ],
        )?;
        Ok(net)
    }
}

impl Drop for Routed {
    fn drop(&mut self) {
        for ns in &self.made {
            let _ = cmd("ip", &["netns", "del", ns]);
        }
    }
}
