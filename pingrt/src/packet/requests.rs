//! The echo requests of a run, built once and changed in place for each probe.

use super::checksum::{checksum_of, word_sum};
use super::{ECHO_HEADER, Family, echo_request, payload};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{icmp_checksum, payload_matches};
    use pnet_packet::icmp::{self, IcmpPacket};

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
}
