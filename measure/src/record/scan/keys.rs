//! The envelope's keys as the tools write them, in their order: at each key the scanner
//! first tries the ones after the last it met, each a comparison of one or two words with
//! the line's bytes, before it scans a key of unknown text.

use super::json::Scan;

/// A top-level field the scanner reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Schema,
    Tool,
    Version,
    Type,
    Run,
    Seq,
    At,
    Host,
    Label,
    Name,
    Tags,
    Invocation,
    Status,
    Error,
    Headline,
    Values,
    Info,
}

impl Field {
    /// The field a key names; None for `headlines` and unknown keys (serde's).
    pub(super) fn of(key: &str) -> Option<Field> {
        KEYS.iter().find(|k| k.name == key).map(|k| k.field)
    }
}

/// A key as it is written (quoted, then its colon), as words to compare.
struct Key {
    field: Field,
    name: &'static str,
    /// The written key's length (`"name":`), its first eight bytes (little-endian, those
    /// past its end masked off) and, for a longer one, its last eight.
    len: usize,
    head: u64,
    mask: u64,
    tail: u64,
}

/// Byte `k` of `name` as written in a line: a quote, the name, a quote and a colon.
const fn written(name: &[u8], k: usize) -> u8 {
    if k == 0 || k == name.len() + 1 {
        b'"'
    } else if k <= name.len() {
        name[k - 1]
    } else {
        b':'
    }
}

/// The little-endian word of the written key's bytes `at..at + 8`, those past its end as 0.
const fn word(name: &[u8], at: usize) -> u64 {
    let mut w = 0u64;
    let mut k = 0;
    while k < 8 {
        if at + k < name.len() + 3 {
            w |= (written(name, at + k) as u64) << (8 * k);
        }
        k += 1;
    }
    w
}

const fn key(field: Field, name: &'static str) -> Key {
    let len = name.len() + 3;
    let mask = if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * len)) - 1
    };
    let tail = if len > 8 {
        word(name.as_bytes(), len - 8)
    } else {
        0
    };
    Key {
        field,
        name,
        len,
        head: word(name.as_bytes(), 0),
        mask,
        tail,
    }
}

/// In the order the tools write them (`Record`'s fields).
const KEYS: [Key; 17] = [
    key(Field::Schema, "schema"),
    key(Field::Tool, "tool"),
    key(Field::Version, "version"),
    key(Field::Type, "type"),
    key(Field::Run, "run"),
    key(Field::Seq, "seq"),
    key(Field::At, "at"),
    key(Field::Host, "host"),
    key(Field::Label, "label"),
    key(Field::Name, "name"),
    key(Field::Tags, "tags"),
    key(Field::Invocation, "invocation"),
    key(Field::Status, "status"),
    key(Field::Error, "error"),
    key(Field::Headline, "headline"),
    key(Field::Values, "values"),
    key(Field::Info, "info"),
];

impl Scan<'_> {
    /// The field whose key, quoted and with its colon and nothing between, is at the
    /// scanner's place, trying the keys from `next` on (which moves past the one found);
    /// None where none is (then the key is scanned as any string).
    #[inline(always)]
    pub(super) fn known_key(&mut self, next: &mut usize) -> Option<Field> {
        let at = self.i;
        let head = u64::from_le_bytes(self.b.get(at..at + 8)?.try_into().ok()?);
        for (k, key) in KEYS.iter().enumerate().skip(*next) {
            if head & key.mask != key.head {
                continue;
            }
            if key.len > 8 {
                let end = self.b.get(at + key.len - 8..at + key.len)?;
                if u64::from_le_bytes(end.try_into().ok()?) != key.tail {
                    continue;
                }
            }
            self.i = at + key.len;
            *next = k + 1;
            return Some(key.field);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Field, KEYS, Scan};

    fn scan(line: &str) -> Scan<'_> {
        Scan {
            text: line,
            b: line.as_bytes(),
            i: 0,
        }
    }

    #[test]
    fn a_key_is_known_only_as_written_whole() {
        for (k, key) in KEYS.iter().enumerate() {
            assert_eq!(Field::of(key.name), Some(key.field));
            let line = format!("\"{}\":\"x\",\"pad\":0", key.name);
            let mut s = scan(&line);
            let mut next = 0;
            assert_eq!(s.known_key(&mut next), Some(key.field), "{line}");
            assert_eq!((s.i, next), (key.len, k + 1));
            // Not once it has been passed.
            let mut s = scan(&line);
            assert_eq!(s.known_key(&mut next), None);
            // Not a longer or shorter key, one with space before its colon, or an escape.
            for other in [
                format!("\"{}x\":1,\"pad\":0", key.name),
                format!("\"{}\" :1,\"pad\":0", key.name),
                format!("\"{}\":1", &key.name[..key.name.len() - 1]),
                format!(
                    "\"\\u00{:x}{}\":1,\"pad\":0",
                    key.name.as_bytes()[0],
                    &key.name[1..]
                ),
            ] {
                let mut next = 0;
                assert_eq!(scan(&other).known_key(&mut next), None, "{other}");
            }
        }
        assert_eq!(Field::of("headlines"), None);
        assert_eq!(Field::of("extra"), None);
        // Near the end of a line: too few bytes to compare, so the key is scanned.
        assert_eq!(scan("\"at\":1").known_key(&mut 0), None);
    }
}
