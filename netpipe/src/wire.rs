//! The netpipe/1 messages on the wire (see `agree` for how they are used): the 64-byte hello
//! each side says of its session, and the 32-byte marks that end a stream and answer it, or
//! answer a hello (`OK  `, `DENY`: a listener's --token check).

pub const HELLO_LEN: usize = 64;
pub const MARK_LEN: usize = 32;
/// The first 8 bytes of every netpipe/1 message.
pub const MAGIC: &[u8; 8] = b"NETPIPE1";

/// What one side says of its session in its hello.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// b'S' for a sender, b'R' for a receiver.
    pub role: u8,
    /// The streams of the session the side opens or takes (0: as many as come).
    pub streams: u16,
    pub index: u16,
    /// The session's random token: the streams of one client share it.
    pub token: u64,
    /// --bytes (`u64::MAX`: none) and --time in nanoseconds (0: none).
    pub bytes: u64,
    pub time_ns: u64,
    /// A listener's: it takes only clients whose hello carries its --token.
    pub wants_token: bool,
    /// A client's --token (zero-padded; all zeros: none). A listener never sends its own.
    pub key: [u8; KEY_LEN],
}

/// The longest --token: it travels in the hello's last 16 bytes.
pub const KEY_LEN: usize = 16;

impl Hello {
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut b = [0u8; HELLO_LEN];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(b"HELO");
        b[12] = self.role;
        b[13] = u8::from(self.wants_token);
        b[14..16].copy_from_slice(&self.streams.to_be_bytes());
        b[16..18].copy_from_slice(&self.index.to_be_bytes());
        b[24..32].copy_from_slice(&self.token.to_be_bytes());
        b[32..40].copy_from_slice(&self.bytes.to_be_bytes());
        b[40..48].copy_from_slice(&self.time_ns.to_be_bytes());
        b[48..64].copy_from_slice(&self.key);
        b
    }

    pub fn decode(b: &[u8]) -> Option<Hello> {
        if b.len() < HELLO_LEN || &b[..8] != MAGIC || &b[8..12] != b"HELO" {
            return None;
        }
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Some(Hello {
            role: b[12],
            streams: u16_at(14),
            index: u16_at(16),
            token: u64_at(24),
            bytes: u64_at(32),
            time_ns: u64_at(40),
            wants_token: b[13] & 1 != 0,
            key: b[48..64].try_into().unwrap_or([0; KEY_LEN]),
        })
    }

    /// Whether the sender runs without a limit (then Ctrl-C is its normal end).
    pub fn unlimited(&self) -> bool {
        self.bytes == u64::MAX && self.time_ns == 0
    }
}

/// A 32-byte mark: `END ` (the sender's bytes, flag 1 when it finished as asked) or `GOT `
/// (the receiver's bytes).
pub fn mark(tag: &[u8; 4], n: u64, flag: u32) -> [u8; MARK_LEN] {
    let mut b = [0u8; MARK_LEN];
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(tag);
    b[12..16].copy_from_slice(&flag.to_be_bytes());
    b[16..24].copy_from_slice(&n.to_be_bytes());
    b
}

/// Whether `b` begins with a listener's refusal (a `DENY` mark).
pub fn is_deny(b: &[u8]) -> bool {
    b.len() >= 12 && &b[..8] == MAGIC && &b[8..12] == b"DENY"
}

/// The count and flag of a mark with `tag`, if `b` is exactly one.
pub fn read_mark(tag: &[u8; 4], b: &[u8]) -> Option<(u64, u32)> {
    if b.len() != MARK_LEN || &b[..8] != MAGIC || &b[8..12] != tag {
        return None;
    }
    let flag = u32::from_be_bytes(b[12..16].try_into().ok()?);
    Some((u64::from_be_bytes(b[16..24].try_into().ok()?), flag))
}
