//! The netpipe/1 messages on the wire (see `agree` for how they are used): the 64-byte hello
//! each side says of its session, and the 32-byte marks that end a stream and answer it, or
//! answer a hello (`OK  `, `DENY`: a listener's --token check); a client's --token travels
//! in a key block after its hello.

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
    /// A client's --token, sent in a key block after the hello. A listener never sends its
    /// own.
    pub key: Option<Key>,
}

/// The shortest and the longest --token. Under 16 characters a token can be guessed (a
/// 2-character one fell to 693 tries in 3.6 s); 48 fill the key block.
pub const MIN_KEY: usize = 16;
pub const MAX_KEY: usize = 48;
/// The key block that follows a hello whose flag says so: `NETPIPE1KEY `, the token's
/// length, three zeros, the token zero-padded to [`MAX_KEY`].
pub const KEY_BLOCK_LEN: usize = 64;
/// The hello's flags (byte 13): the sender wants a token; a key block follows.
const WANTS_TOKEN: u8 = 1;
const HAS_KEY: u8 = 2;

/// A --token: 16 to 48 printable bytes, compared in constant time.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Key {
    len: u8,
    bytes: [u8; MAX_KEY],
}

impl std::fmt::Debug for Key {
    /// Never the token itself: a debug print must not put it in a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bytes)", self.len)
    }
}

impl Key {
    /// The key of `t`, if it is 16 to 48 printable characters without spaces.
    pub fn new(t: &[u8]) -> Option<Key> {
        let fits = (MIN_KEY..=MAX_KEY).contains(&t.len()) && t.iter().all(u8::is_ascii_graphic);
        if !fits {
            return None;
        }
        let mut bytes = [0u8; MAX_KEY];
        bytes[..t.len()].copy_from_slice(t);
        Some(Key {
            len: t.len() as u8,
            bytes,
        })
    }

    /// Whether two keys are the same, in a time that does not depend on where they differ
    /// (every byte is looked at, and the padding is zeros on both), so that a client cannot
    /// learn a token's prefix from how fast a wrong guess is refused. A hand loop: the
    /// `subtle` crate would add a dependency for these four lines.
    pub fn same(&self, other: &Key) -> bool {
        let mut d = self.len ^ other.len;
        for (a, b) in self.bytes.iter().zip(other.bytes.iter()) {
            d |= a ^ b;
        }
        std::hint::black_box(d) == 0
    }

    /// The key block.
    pub fn block(&self) -> [u8; KEY_BLOCK_LEN] {
        let mut b = [0u8; KEY_BLOCK_LEN];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(b"KEY ");
        b[12] = self.len;
        b[16..].copy_from_slice(&self.bytes);
        b
    }

    /// The key a block carries, if `b` begins with a well-formed one.
    pub fn from_block(b: &[u8]) -> Option<Key> {
        if b.len() < KEY_BLOCK_LEN || &b[..8] != MAGIC || &b[8..12] != b"KEY " {
            return None;
        }
        let len = usize::from(b[12]).min(MAX_KEY);
        Key::new(&b[16..16 + len])
    }
}

/// How many bytes the hello at the head of `b` takes (itself and its key block), from its
/// flags; `None` until the flags have come.
pub fn hello_wire_len(b: &[u8]) -> Option<usize> {
    let flags = *b.get(13)?;
    Some(
        HELLO_LEN
            + if flags & HAS_KEY != 0 {
                KEY_BLOCK_LEN
            } else {
                0
            },
    )
}

impl Hello {
    /// The hello as sent: 64 bytes, then the key block when it carries a key.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; HELLO_LEN];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(b"HELO");
        b[12] = self.role;
        b[13] = if self.wants_token { WANTS_TOKEN } else { 0 }
            | if self.key.is_some() { HAS_KEY } else { 0 };
        b[14..16].copy_from_slice(&self.streams.to_be_bytes());
        b[16..18].copy_from_slice(&self.index.to_be_bytes());
        b[24..32].copy_from_slice(&self.token.to_be_bytes());
        b[32..40].copy_from_slice(&self.bytes.to_be_bytes());
        b[40..48].copy_from_slice(&self.time_ns.to_be_bytes());
        if let Some(k) = &self.key {
            b.extend_from_slice(&k.block());
        }
        b
    }

    /// The hello at the head of `b`, with its key block when its flags say one follows (a
    /// flagged hello without a well-formed block is none).
    pub fn decode(b: &[u8]) -> Option<Hello> {
        if b.len() < HELLO_LEN || &b[..8] != MAGIC || &b[8..12] != b"HELO" {
            return None;
        }
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let key = if b[13] & HAS_KEY != 0 {
            Some(Key::from_block(&b[HELLO_LEN..])?)
        } else {
            None
        };
        Some(Hello {
            role: b[12],
            streams: u16_at(14),
            index: u16_at(16),
            token: u64_at(24),
            bytes: u64_at(32),
            time_ns: u64_at(40),
            wants_token: b[13] & WANTS_TOKEN != 0,
            key,
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

/// A listener's refusal: a `DENY` mark that says which listener refused (its process id,
/// and how many seconds it has been listening), so that a client can tell whoever runs it
/// which process holds the port.
pub fn deny_mark(pid: u32, listening_s: u64) -> [u8; MARK_LEN] {
    mark(b"DENY", listening_s, pid)
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
