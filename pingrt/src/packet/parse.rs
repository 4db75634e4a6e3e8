//! Parsing what comes in: echo replies, and ICMP errors that quote one of our requests.

use super::icmp_error::{IcmpError, describe_v4, describe_v6};
use super::{ECHO_HEADER, icmp_checksum};
use pnet_packet::icmp::echo_reply::EchoReplyPacket;
use pnet_packet::icmp::{IcmpPacket, IcmpTypes};
use pnet_packet::icmpv6::echo_reply::EchoReplyPacket as EchoReplyV6Packet;
use pnet_packet::icmpv6::{Icmpv6Packet, Icmpv6Types};
use pnet_packet::ipv4::Ipv4Packet;
use pnet_packet::ipv6::Ipv6Packet;
use std::net::IpAddr;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Family, echo_request, payload, payload_matches};
    use pnet_packet::icmp::{self, IcmpCode, IcmpType};

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
