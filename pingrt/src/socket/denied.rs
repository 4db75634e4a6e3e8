//! What to do when the kernel refuses an ICMP socket: the capability or the sysctl to change.

use std::io;

pub(super) fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

/// The current `net.ipv4.ping_group_range`, as the kernel shows it.
pub fn ping_group_range() -> Option<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
        .ok()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
}

pub(super) fn raw_fix() -> String {
    "a raw ICMP socket needs CAP_NET_RAW: run as root, or grant it with \
     `setcap cap_net_raw+ep $(command -v pingrt)`"
        .to_string()
}

pub(super) fn dgram_fix() -> String {
    let gid = nix::unistd::getegid().as_raw();
    let range = ping_group_range().unwrap_or_else(|| "unknown".to_string());
    format!(
        "the unprivileged ICMP datagram socket is refused: group id {gid} is outside \
         net.ipv4.ping_group_range (now \"{range}\"); allow it with \
         `sysctl -w net.ipv4.ping_group_range=\"{gid} {gid}\"` (or \"0 2147483647\" for every group)"
    )
}
