//! Hosts on one switch: network namespaces, each joined by a veth link to a bridge in a
//! namespace of its own, with addresses on one /24 (and /64); any host's link optionally
//! behind `tc tbf` for a known speed. A LAN of machines for tests that drive several.

use crate::netns::{cmd, namespaces, tbf, unique};

/// The hosts' IPv4 network: host `i` is `10.231.10.{i + 1}`/24.
const NET4: &str = "10.231.10";
/// The hosts' IPv6 network: host `i` is `fd00:231:10::{i + 1}`/64.
const NET6: &str = "fd00:231:10:";

/// `count` host namespaces (`hosts[i]`, address [`Bridge::addr`]`(i)`) and a switch
/// namespace holding the bridge their links are ports of. Dropping it deletes every namespace,
/// which takes the links, the bridge and the qdiscs with them; end the processes running
/// inside first (declare their guards after this one, so that they drop before it).
pub struct Bridge {
    pub switch: String,
    pub hosts: Vec<String>,
    /// Each host's interface (in its namespace) and the bridge port it plugs into.
    pub links: Vec<(String, String)>,
    made: Vec<String>,
}

impl Bridge {
    /// Makes the switch with its bridge up, and `count` hosts plugged into it, links up.
    pub fn new(count: usize) -> Result<Bridge, String> {
        let id = unique("");
        let mut net = Bridge {
            switch: format!("bm-{id}-sw"),
            hosts: (0..count).map(|i| format!("bm-{id}-h{i}")).collect(),
            // Interface names have at most 15 bytes: "bm" + pid (7) + "x" + n + side + i.
            links: (0..count)
                .map(|i| (format!("bm{id}h{i}"), format!("bm{id}p{i}")))
                .collect(),
            made: Vec::new(),
        };
        let names: Vec<String> = std::iter::once(net.switch.clone())
            .chain(net.hosts.iter().cloned())
            .collect();
        namespaces(
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
            &mut net.made,
        )?;
        let sw = net.switch.as_str();
        cmd("ip", &["-n", sw, "link", "add", "br0", "type", "bridge"])?;
        cmd("ip", &["-n", sw, "link", "set", "br0", "up"])?;
        for (i, (ns, (ifn, port))) in net.hosts.iter().zip(&net.links).enumerate() {
            cmd(
                "ip",
                &[
                    "link", "add", ifn, "netns", ns, "type", "veth", "peer", "name", port, "netns",
                    sw,
                ],
            )?;
            cmd("ip", &["-n", sw, "link", "set", port, "master", "br0"])?;
            cmd("ip", &["-n", sw, "link", "set", port, "up"])?;
            let v4 = format!("{}/24", Bridge::addr(i));
            let v6 = format!("{}/64", Bridge::addr6(i));
            cmd("ip", &["-n", ns, "addr", "add", &v4, "dev", ifn])?;
            cmd("ip", &["-n", ns, "addr", "add", &v6, "dev", ifn, "nodad"])?;
            cmd("ip", &["-n", ns, "link", "set", ifn, "up"])?;
        }
        Ok(net)
    }

    /// Host `i`'s IPv4 address; it exists only inside the namespaces.
    pub fn addr(i: usize) -> String {
        format!("{NET4}.{}", i + 1)
    }

    /// Host `i`'s IPv6 address (no duplicate address detection).
    pub fn addr6(i: usize) -> String {
        format!("{NET6}:{:x}", i + 1)
    }

    /// Limits both directions of host `i`'s link to `rate` (tc's syntax, e.g. `100mbit`): a
    /// token bucket filter on the host's egress and on the bridge port's, toward the host.
    pub fn shape(&self, i: usize, rate: &str) -> Result<(), String> {
        let (ifn, port) = &self.links[i];
        tbf(&self.hosts[i], ifn, rate)?;
        tbf(&self.switch, port, rate)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        for ns in self.made.iter().rev() {
            let _ = cmd("ip", &["netns", "del", ns]);
        }
    }
}
