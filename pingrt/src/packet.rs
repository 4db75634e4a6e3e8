//! ICMP and ICMPv6 echo packets: built and parsed with `pnet_packet`, never trusted blindly.
//! This file holds the payload and the request header; the checksum, the per-probe request
//! builder, the parser and ping's error wording live in the files of `packet/`.

mod checksum;
mod icmp_error;
mod parse;
mod requests;

pub use checksum::icmp_checksum;
pub use icmp_error::{IcmpError, describe_v4, describe_v6};
pub use parse::{Incoming, echo_id_seq, parse_v4, parse_v6};
pub use requests::Requests;

use pnet_packet::icmp::IcmpCode;
use pnet_packet::icmp::IcmpTypes;
use pnet_packet::icmp::echo_request::MutableEchoRequestPacket;
use pnet_packet::icmpv6::echo_request::MutableEchoRequestPacket as MutableEchoRequestV6Packet;
use pnet_packet::icmpv6::{Icmpv6Code, Icmpv6Types};

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

/// Whether `bytes` is exactly the payload of probe number `probe` (for the tests).
#[cfg(test)]
pub(crate) fn payload_matches(cookie: u64, probe: u64, size: usize, bytes: &[u8]) -> bool {
    payload_matches_pattern(&payload(cookie, 0, size), probe, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
