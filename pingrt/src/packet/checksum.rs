//! The Internet checksum (RFC 1071) of ICMP messages, summed eight bytes at a time.

/// The ones'-complement sum (RFC 1071) of `bytes` as big-endian 16-bit words, an odd last
/// byte padded with a zero, folded to 16 bits; partial sums of pieces that start at even
/// offsets add up (and fold) to the sum of the whole.
pub(crate) fn word_sum(bytes: &[u8]) -> u64 {
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
pub(crate) fn checksum_of(mut sum: u64) -> u16 {
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
