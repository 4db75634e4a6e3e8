//! What an ICMP or ICMPv6 error means, in ping's wording.

use pnet_packet::icmp::{IcmpCode, IcmpType};
use pnet_packet::icmpv6::{Icmpv6Code, Icmpv6Type};

/// What an ICMP error says went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcmpError {
    /// Short machine-readable kind: `unreachable`, `ttl_exceeded`, `packet_too_big`,
    /// `parameter_problem`, `source_quench`, `redirect` or `icmp_error`.
    pub kind: &'static str,
    /// ping's wording, e.g. "Destination Host Unreachable".
    pub text: String,
    pub icmp_type: u8,
    pub icmp_code: u8,
}

/// ping's wording for an ICMP (IPv4) error; `None` for messages that are not errors.
pub fn describe_v4(t: IcmpType, code: IcmpCode) -> Option<IcmpError> {
    let c = code.0;
    let (kind, text) = match t.0 {
        3 => (
            "unreachable",
            match c {
                0 => "Destination Net Unreachable".to_string(),
                1 => "Destination Host Unreachable".to_string(),
                2 => "Destination Protocol Unreachable".to_string(),
                3 => "Destination Port Unreachable".to_string(),
                4 => "Frag needed and DF set".to_string(),
                5 => "Source Route Failed".to_string(),
                6 => "Destination Net Unknown".to_string(),
                7 => "Destination Host Unknown".to_string(),
                8 => "Source Host Isolated".to_string(),
                9 => "Destination Net Prohibited".to_string(),
                10 => "Destination Host Prohibited".to_string(),
                11 => "Destination Net Unreachable for Type of Service".to_string(),
                12 => "Destination Host Unreachable for Type of Service".to_string(),
                13 => "Packet filtered".to_string(),
                14 => "Precedence Violation".to_string(),
                15 => "Precedence Cutoff".to_string(),
                _ => format!("Dest Unreachable, Bad Code: {c}"),
            },
        ),
        4 => ("source_quench", "Source Quench".to_string()),
        5 => ("redirect", format!("Redirect (code {c})")),
        11 => (
            "ttl_exceeded",
            match c {
                0 => "Time to live exceeded".to_string(),
                1 => "Frag reassembly time exceeded".to_string(),
                _ => format!("Time exceeded, Bad Code: {c}"),
            },
        ),
        12 => ("parameter_problem", format!("Parameter problem (code {c})")),
        _ => return None,
    };
    Some(IcmpError {
        kind,
        text,
        icmp_type: t.0,
        icmp_code: c,
    })
}

/// ping's wording for an ICMPv6 error; `None` for messages that are not errors.
pub fn describe_v6(t: Icmpv6Type, code: Icmpv6Code) -> Option<IcmpError> {
    let c = code.0;
    let (kind, text) = match t.0 {
        1 => (
            "unreachable",
            match c {
                0 => "No route".to_string(),
                1 => "Administratively prohibited".to_string(),
                2 => "Beyond scope of source address".to_string(),
                3 => "Address unreachable".to_string(),
                4 => "Port unreachable".to_string(),
                5 => "Source address failed ingress/egress policy".to_string(),
                6 => "Reject route to destination".to_string(),
                _ => format!("Destination unreachable, Unknown code {c}"),
            },
        ),
        2 => ("packet_too_big", "Packet too big".to_string()),
        3 => (
            "ttl_exceeded",
            match c {
                0 => "Time to live exceeded".to_string(),
                1 => "Frag reassembly time exceeded".to_string(),
                _ => format!("Time exceeded, Unknown code {c}"),
            },
        ),
        4 => ("parameter_problem", format!("Parameter problem (code {c})")),
        _ => return None,
    };
    Some(IcmpError {
        kind,
        text,
        icmp_type: t.0,
        icmp_code: c,
    })
}
