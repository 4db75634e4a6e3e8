//! ICMP and ICMPv6 echo packets: built and parsed with `pnet_packet`, never trusted blindly.

use pnet_packet::icmp::echo_reply::EchoReplyPacket;
use pnet_packet::icmp::echo_request::MutableEchoRequestPacket;
use pnet_packet::icmp::{IcmpCode, IcmpPacket, IcmpType, IcmpTypes};
use pnet_packet::icmpv6::echo_reply::EchoReplyPacket as EchoReplyV6Packet;
use pnet_packet::icmpv6::echo_request::MutableEchoRequestPacket as MutableEchoRequestV6Packet;
use pnet_packet::icmpv6::{Icmpv6Code, Icmpv6Packet, Icmpv6Type, Icmpv6Types};
use pnet_packet::ipv4::Ipv4Packet;
use pnet_packet::ipv6::Ipv6Packet;
use std::net::IpAddr;

/// The ICMP family of a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

/// Length of the ICMP echo header (type, code, checksum, identifier, sequence).
pub const ECHO_HEADER: usize = 8;

/// The payload of probe number `probe`: an 8-byte run cookie, the 64-bit probe number (so a
/// reply to a probe 65536 sequence numbers ago is recognised after the 16-bit wrap), then the
/// byte pattern ping uses (the offset modulo 256). Short payloads carry a prefix of this.
/// The send time is never in the payload: it stays in the tracker.
pub fn payload(cookie: u64, probe: u64, size: usize) -> Vec<u8> {
    (0..size).map(|i| payload_byte(cookie, probe, i)).collect()
}

/// Byte `i` of the payload of probe number `probe`.
#[inline]
fn payload_byte(cookie: u64, probe: u64, i: usize) -> u8 {
    match i {
        0..8 => cookie.to_be_bytes()[i],
        8..16 => probe.to_be_bytes()[i - 8],
        _ => (i & 0xff) as u8,
    }
}

/// Whether `bytes` is exactly the payload of probe number `probe`, given `pattern`, the
/// payload of probe 0 of the run (built once): the probe number is the only difference.
pub fn payload_matches_pattern(pattern: &[u8], probe: u64, bytes: &[u8]) -> bool {
    let size = pattern.len();
    if bytes.len() != size {
        return false;
    }
    let head = size.min(8);
    let number = size.min(16);
    bytes[..head] == pattern[..head]
        && bytes[head..number] == probe.to_be_bytes()[..number - head]
        && bytes[number..] == pattern[number..]
}

/// The ones'-complement sum (RFC 1071) of `bytes` as big-endian 16-bit words, an odd last
/// byte padded with a zero, folded to 16 bits; partial sums of pieces that start at even
/// offsets add up (and fold) to the sum of the whole.
fn word_sum(bytes: &[u8]) -> u64 {
    // 32-bit words in native order, two from every eight bytes: 2^16 is 1 modulo 0xffff, so
    // the 32-bit words fold to the sum of their 16-bit halves, and a sum taken in the other
    // byte order is the byte-swapped sum (RFC 1071, 2.(B)).
    let mut octets = bytes.chunks_exact(8);
    let mut sum: u64 = octets
        .by_ref()
        .map(|o| {
            // chunks_exact hands out 8 bytes: the conversion cannot fail (nor cost a check).
            let v = u64::from_ne_bytes(o.try_into().unwrap_or([0; 8]));
            (v & 0xffff_ffff) + (v >> 32)
        })
        .sum();
    let mut quads = octets.remainder().chunks_exact(4);
    if let Some(q) = quads.next() {
        sum += u64::from(u32::from_ne_bytes(q.try_into().unwrap_or([0; 4])));
    }
    let mut rest = quads.remainder().chunks_exact(2);
    if let Some(w) = rest.next() {
        sum += u64::from(u16::from_ne_bytes([w[0], w[1]]));
    }
    if let [last] = rest.remainder() {
        sum += u64::from(u16::from_ne_bytes([*last, 0]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    u64::from(u16::from_be(sum as u16))
}

/// The ones' complement of the folded sum: the value of a checksum field.
fn checksum_of(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The ICMP checksum of `msg` (header and payload) as its sender computes it, with the
/// checksum field (bytes 2..4) left out: the same as `pnet_packet::icmp::checksum`.
pub fn icmp_checksum(msg: &[u8]) -> u16 {
    checksum_of(word_sum(msg.get(..2).unwrap_or(msg)) + word_sum(msg.get(4..).unwrap_or(&[])))
}

/// The echo requests of one run, built once and changed in place for each probe: only the
/// sequence number, the probe number in the payload and (IPv4) the checksum change, and the
/// checksum is updated from the sum of the parts that stay the same (RFC 1624), so a probe
/// costs the same whatever its size.
#[derive(Clone, Debug)]
pub struct Requests {
    family: Family,
    pkt: Vec<u8>,
    /// The word sum of the request with its checksum, sequence and probe number zeroed.
    fixed_sum: u64,
}

/// Where the probe number sits in a request: payload bytes 8..16, cut short with the payload.
fn number_range(len: usize) -> std::ops::Range<usize> {
    (ECHO_HEADER + 8).min(len)..(ECHO_HEADER + 16).min(len)
}

impl Requests {
    /// Requests of `family` with identifier `id` and payloads of `size` bytes carrying `cookie`.
    pub fn new(family: Family, id: u16, cookie: u64, size: usize) -> Requests {
        let mut pkt = echo_request(family, id, 0, &payload(cookie, 0, size));
        pkt[2..4].fill(0);
        let fixed_sum = word_sum(&pkt);
        Requests {
            family,
            pkt,
            fixed_sum,
        }
    }

    /// The request of probe number `probe` with wire sequence `seq`.
    pub fn probe(&mut self, seq: u16, probe: u64) -> &[u8] {
        let number = number_range(self.pkt.len());
        let n = number.len();
        self.pkt[6..8].copy_from_slice(&seq.to_be_bytes());
        self.pkt[number.clone()].copy_from_slice(&probe.to_be_bytes()[..n]);
        if self.family == Family::V4 {
            // Both fields start at even offsets: their words line up with the whole sum's.
            let sum = self.fixed_sum + word_sum(&self.pkt[6..8]) + word_sum(&self.pkt[number]);
            self.pkt[2..4].copy_from_slice(&checksum_of(sum).to_be_bytes());
        }
        &self.pkt
    }
}

/// Sets the echo request header of `buf` (payload already in place) and, for IPv4, the checksum.
fn fill_header(buf: &mut [u8], family: Family, id: u16, seq: u16) {
    match family {
        Family::V4 => {
            if let Some(mut p) = MutableEchoRequestPacket::new(buf) {
                p.set_icmp_type(IcmpTypes::EchoRequest);
                p.set_icmp_code(IcmpCode(0));
                p.set_checksum(0);
                p.set_identifier(id);
                p.set_sequence_number(seq);
            }
            let sum = icmp_checksum(buf);
            buf[2..4].copy_from_slice(&sum.to_be_bytes());
        }
        Family::V6 => {
            if let Some(mut p) = MutableEchoRequestV6Packet::new(buf) {
                p.set_icmpv6_type(Icmpv6Types::EchoRequest);
                p.set_icmpv6_code(Icmpv6Code(0));
                p.set_checksum(0);
                p.set_identifier(id);
                p.set_sequence_number(seq);
            }
        }
    }
}

/// An echo request of `family` with `id`, `seq` and `payload`. For IPv4 the checksum is set
/// (a raw socket sends it as is; the datagram socket recomputes it after setting its own
/// identifier). For ICMPv6 the kernel fills in the checksum, which covers a pseudo-header.
pub fn echo_request(family: Family, id: u16, seq: u16, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; ECHO_HEADER + payload.len()];
    buf[ECHO_HEADER..].copy_from_slice(payload);
    fill_header(&mut buf, family, id, seq);
    buf
}

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

/// An ICMP message that came in, as far as it concerns echo probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming<'a> {
    /// An echo reply; `checksum_ok` is false when the ICMP checksum does not add up.
    Reply {
        id: u16,
        seq: u16,
        payload: &'a [u8],
        /// ICMP bytes (header and payload), as ping's "64 bytes from".
        icmp_len: usize,
        checksum_ok: bool,
        /// TTL or hop limit from the IPv4 header when the packet carried one.
        ttl: Option<u8>,
    },
    /// An ICMP error quoting one of our echo requests (identifier, sequence and destination
    /// from the quote).
    Error {
        err: IcmpError,
        id: u16,
        seq: u16,
        dst: IpAddr,
        checksum_ok: bool,
    },
    /// Anything else: other processes' requests, our own requests looped back, noise.
    Other,
}

/// Parses an ICMP (IPv4) message; `with_ip_header` for raw sockets, which receive the IPv4
/// header as well.
pub fn parse_v4(buf: &[u8], with_ip_header: bool) -> Incoming<'_> {
    let (icmp_bytes, ttl) = if with_ip_header {
        let Some(ip) = Ipv4Packet::new(buf) else {
            return Incoming::Other;
        };
        let hl = usize::from(ip.get_header_length()) * 4;
        if hl < 20 || buf.len() < hl {
            return Incoming::Other;
        }
        let total = usize::from(ip.get_total_length()).clamp(hl, buf.len());
        (&buf[hl..total], Some(ip.get_ttl()))
    } else {
        (buf, None)
    };
    let Some(pkt) = IcmpPacket::new(icmp_bytes) else {
        return Incoming::Other;
    };
    let checksum_ok = icmp_checksum(icmp_bytes) == pkt.get_checksum();
    let t = pkt.get_icmp_type();
    if t == IcmpTypes::EchoReply {
        let Some(r) = EchoReplyPacket::new(icmp_bytes) else {
            return Incoming::Other;
        };
        return Incoming::Reply {
            id: r.get_identifier(),
            seq: r.get_sequence_number(),
            payload: icmp_bytes.get(ECHO_HEADER..).unwrap_or(&[]),
            icmp_len: icmp_bytes.len(),
            checksum_ok,
            ttl,
        };
    }
    let Some(err) = describe_v4(t, pkt.get_icmp_code()) else {
        return Incoming::Other;
    };
    // The quote after the 8-byte ICMP header: the original IPv4 header and at least 8 bytes
    // of the original ICMP echo request.
    let quote = icmp_bytes.get(ECHO_HEADER..).unwrap_or(&[]);
    match quoted_echo_v4(quote) {
        Some((id, seq, dst)) => Incoming::Error {
            err,
            id,
            seq,
            dst,
            checksum_ok,
        },
        None => Incoming::Other,
    }
}

/// The identifier and sequence of the echo request an ICMP error quotes.
fn quoted_echo_v4(quote: &[u8]) -> Option<(u16, u16, IpAddr)> {
    let ip = Ipv4Packet::new(quote)?;
    if ip.get_next_level_protocol().0 != 1 {
        return None;
    }
    let hl = usize::from(ip.get_header_length()) * 4;
    let echo = quote.get(hl..hl + ECHO_HEADER)?;
    let (id, seq) = echo_id_seq(echo, 8)?;
    Some((id, seq, IpAddr::V4(ip.get_destination())))
}

/// Identifier and sequence from an echo request header of type `request_type`.
pub fn echo_id_seq(echo: &[u8], request_type: u8) -> Option<(u16, u16)> {
    if echo.len() < ECHO_HEADER || echo[0] != request_type {
        return None;
    }
    Some((
        u16::from_be_bytes([echo[4], echo[5]]),
        u16::from_be_bytes([echo[6], echo[7]]),
    ))
}

/// Parses an ICMPv6 message (sockets never hand over the IPv6 header). The kernel has
/// checked the ICMPv6 checksum, which covers a pseudo-header, before delivering it.
pub fn parse_v6(buf: &[u8]) -> Incoming<'_> {
    let Some(pkt) = Icmpv6Packet::new(buf) else {
        return Incoming::Other;
    };
    let t = pkt.get_icmpv6_type();
    if t == Icmpv6Types::EchoReply {
        let Some(r) = EchoReplyV6Packet::new(buf) else {
            return Incoming::Other;
        };
        return Incoming::Reply {
            id: r.get_identifier(),
            seq: r.get_sequence_number(),
            payload: buf.get(ECHO_HEADER..).unwrap_or(&[]),
            icmp_len: buf.len(),
            checksum_ok: true,
            ttl: None,
        };
    }
    let Some(err) = describe_v6(t, pkt.get_icmpv6_code()) else {
        return Incoming::Other;
    };
    let quote = buf.get(ECHO_HEADER..).unwrap_or(&[]);
    match quoted_echo_v6(quote) {
        Some((id, seq, dst)) => Incoming::Error {
            err,
            id,
            seq,
            dst,
            checksum_ok: true,
        },
        None => Incoming::Other,
    }
}

fn quoted_echo_v6(quote: &[u8]) -> Option<(u16, u16, IpAddr)> {
    let ip = Ipv6Packet::new(quote)?;
    if ip.get_next_header().0 != 58 {
        return None;
    }
    let (id, seq) = echo_id_seq(quote.get(40..48)?, 128)?;
    Some((id, seq, IpAddr::V6(ip.get_destination())))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `bytes` is exactly the payload of probe number `probe`.
    fn payload_matches(cookie: u64, probe: u64, size: usize, bytes: &[u8]) -> bool {
        payload_matches_pattern(&payload(cookie, 0, size), probe, bytes)
    }
    use pnet_packet::icmp;

    #[test]
    fn payload_carries_cookie_probe_and_pattern() {
        let p = payload(0x0102030405060708, 70000, 20);
        assert_eq!(p.len(), 20);
        assert_eq!(&p[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(u64::from_be_bytes(p[8..16].try_into().unwrap()), 70000);
        assert_eq!(&p[16..], &[16, 17, 18, 19]);
        assert_eq!(payload(1, 2, 3).len(), 3);
        assert!(payload(1, 2, 0).is_empty());
    }

    #[test]
    fn requests_change_in_place_and_keep_the_checksum_right() {
        for family in [Family::V4, Family::V6] {
            for size in [0, 1, 7, 8, 9, 15, 16, 17, 20, 23, 56, 1399, 1400] {
                let mut r = Requests::new(family, 0xbeef, 0x0102_0304_0506_0708, size);
                for (seq, number) in [
                    (1u16, 0u64),
                    (65535, 65534),
                    (4, 0xffff_ffff_ffff_fff0),
                    (7, 6),
                ] {
                    let want = echo_request(
                        family,
                        0xbeef,
                        seq,
                        &payload(0x0102_0304_0506_0708, number, size),
                    );
                    assert_eq!(
                        r.probe(seq, number),
                        want.as_slice(),
                        "{family:?} size {size} number {number}"
                    );
                    if family == Family::V4 {
                        let view = IcmpPacket::new(&want).unwrap();
                        assert_eq!(icmp::checksum(&view), view.get_checksum());
                        assert_eq!(icmp_checksum(&want), view.get_checksum());
                    }
                    let p = &want[ECHO_HEADER..];
                    assert!(payload_matches(0x0102_0304_0506_0708, number, size, p));
                    if size > 8 {
                        assert!(!payload_matches(
                            0x0102_0304_0506_0708,
                            number ^ 1 << 56,
                            size,
                            p
                        ));
                    }
                    if size > 0 {
                        assert!(!payload_matches(
                            0x0102_0304_0506_0708 ^ 1 << 56,
                            number,
                            size,
                            p
                        ));
                        let mut bad = p.to_vec();
                        bad[size - 1] ^= 0x40;
                        assert!(!payload_matches(0x0102_0304_0506_0708, number, size, &bad));
                    }
                }
            }
        }
    }

    #[test]
    fn v4_request_checksum_and_reply_parse() {
        let req = echo_request(Family::V4, 0x1234, 7, &payload(9, 7, 56));
        assert_eq!(req.len(), 64);
        assert_eq!(req[0], 8);
        let view = IcmpPacket::new(&req).unwrap();
        assert_eq!(icmp::checksum(&view), view.get_checksum());
        // Turn it into a reply as a peer would: type 0, checksum adjusted.
        let mut rep = req.clone();
        rep[0] = 0;
        rep[2] = 0;
        rep[3] = 0;
        let sum = icmp::checksum(&IcmpPacket::new(&rep).unwrap());
        rep[2..4].copy_from_slice(&sum.to_be_bytes());
        match parse_v4(&rep, false) {
            Incoming::Reply {
                id,
                seq,
                payload: p,
                icmp_len,
                checksum_ok,
                ttl,
            } => {
                assert_eq!(
                    (id, seq, icmp_len, checksum_ok, ttl),
                    (0x1234, 7, 64, true, None)
                );
                assert_eq!(p, payload(9, 7, 56).as_slice());
                assert!(payload_matches(9, 7, 56, p));
                assert!(!payload_matches(9, 8, 56, p));
                assert!(!payload_matches(9, 7, 56, &p[..55]));
            }
            other => panic!("{other:?}"),
        }
        rep[20] ^= 0xff;
        assert!(matches!(
            parse_v4(&rep, false),
            Incoming::Reply {
                checksum_ok: false,
                ..
            }
        ));
        // Our own request looped back is not a reply.
        assert_eq!(parse_v4(&req, false), Incoming::Other);
    }

    #[test]
    fn v4_error_quotes_the_probe() {
        let req = echo_request(Family::V4, 0x4321, 65535, &payload(1, 2, 56));
        let mut quote = vec![
            0x45u8, 0, 0, 84, 0, 0, 0x40, 0, 1, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        quote.extend_from_slice(&req[..8]);
        let mut msg = vec![11u8, 0, 0, 0, 0, 0, 0, 0];
        msg.extend_from_slice(&quote);
        let sum = icmp::checksum(&IcmpPacket::new(&msg).unwrap());
        msg[2..4].copy_from_slice(&sum.to_be_bytes());
        // As a raw socket sees it: with an outer IPv4 header.
        let mut outer = vec![
            0x45u8, 0, 0, 0, 0, 0, 0, 0, 63, 1, 0, 0, 10, 0, 0, 9, 10, 0, 0, 1,
        ];
        let total = (outer.len() + msg.len()) as u16;
        outer[2..4].copy_from_slice(&total.to_be_bytes());
        outer.extend_from_slice(&msg);
        match parse_v4(&outer, true) {
            Incoming::Error {
                err,
                id,
                seq,
                dst,
                checksum_ok,
            } => {
                assert_eq!(err.kind, "ttl_exceeded");
                assert_eq!(err.text, "Time to live exceeded");
                assert_eq!((id, seq, checksum_ok), (0x4321, 65535, true));
                assert_eq!(dst, "10.0.0.2".parse::<IpAddr>().unwrap());
            }
            other => panic!("{other:?}"),
        }
        let unreachable = describe_v4(IcmpType(3), IcmpCode(1)).unwrap();
        assert_eq!(unreachable.text, "Destination Host Unreachable");
        assert!(describe_v4(IcmpType(8), IcmpCode(0)).is_none());
    }

    #[test]
    fn v6_reply_and_error() {
        let req = echo_request(Family::V6, 5, 6, &payload(3, 6, 8));
        assert_eq!(req[0], 128);
        let mut rep = req.clone();
        rep[0] = 129;
        assert!(matches!(
            parse_v6(&rep),
            Incoming::Reply { id: 5, seq: 6, .. }
        ));
        let mut msg = vec![3u8, 0, 0, 0, 0, 0, 0, 0];
        let mut ip6 = vec![0x60u8, 0, 0, 0, 0, 16, 58, 1];
        ip6.extend_from_slice(&[0; 32]);
        msg.extend_from_slice(&ip6);
        msg.extend_from_slice(&req);
        match parse_v6(&msg) {
            Incoming::Error { err, id, seq, .. } => {
                assert_eq!((err.kind, id, seq), ("ttl_exceeded", 5, 6));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_v6(&req), Incoming::Other);
        assert_eq!(parse_v6(&[1, 2]), Incoming::Other);
    }
}
