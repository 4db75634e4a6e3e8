//! The JSON of a record's line, scanned: strings without escapes, numbers by the grammar,
//! values checked as they are skipped or built as serde builds them; None for anything the
//! scanner leaves to serde.

use super::keys::Field;
use crate::fields::MAX_SEQ;
use crate::record::de::number_as;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Nesting deeper than this goes to serde (whose own limit is 128).
const MAX_DEPTH: u32 = 64;
/// Objects with more keys than this in `tags`, `values` or a skipped value go to serde
/// (the repeated-key check here is a scan of the keys before).
const MAX_KEYS: usize = 32;

/// The place in the line.
pub(super) struct Scan<'a> {
    pub(super) text: &'a str,
    pub(super) b: &'a [u8],
    pub(super) i: usize,
}

/// Eight copies of a byte, for the word-at-a-time string scan.
const fn splat(c: u8) -> u64 {
    u64::from_ne_bytes([c; 8])
}
const ONES: u64 = splat(0x01);
const HIGHS: u64 = splat(0x80);

/// The bytes of `w` below 0x20, quotes and backslashes, each as its high bit: what ends a
/// plain run of string text. Bytes after the first such may be marked too (a borrow runs
/// on), never one before it, so the lowest mark is exact.
fn stops(w: u64) -> u64 {
    let quote = w ^ splat(b'"');
    let slash = w ^ splat(b'\\');
    let low = w.wrapping_sub(splat(0x20));
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    (zero(quote) | zero(slash) | (low & !w)) & HIGHS
}

impl<'a> Scan<'a> {
    #[inline(always)]
    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline(always)]
    pub(super) fn eat(&mut self, c: u8) -> Option<()> {
        self.eat_if(c).then_some(())
    }

    #[inline(always)]
    pub(super) fn eat_if(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A string with no escape and no control character (serde's otherwise), as its text.
    #[inline(always)]
    pub(super) fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let mut i = start;
        // Eight bytes at a time (the words read little-endian, so the lowest mark is the
        // first stop), then byte by byte near the end of the line.
        while let Some(chunk) = self.b.get(i..i + 8) {
            let m = stops(u64::from_le_bytes(chunk.try_into().ok()?));
            if m != 0 {
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => i += 1,
            }
        }
        self.i = i + 1;
        // The quotes are ASCII, so the text between them is whole characters.
        self.text.get(start..i)
    }

    /// A JSON number's text (its grammar checked: `-? (0 | [1-9][0-9]*) (. [0-9]+)?
    /// ([eE] [+-]? [0-9]+)?`).
    #[inline(always)]
    pub(super) fn number(&mut self) -> Option<&'a str> {
        self.number_plain().map(|(text, _)| text)
    }

    /// A number's text and whether it is plain (a whole number: no fraction, no exponent).
    #[inline(always)]
    pub(super) fn number_plain(&mut self) -> Option<(&'a str, bool)> {
        let start = self.i;
        self.eat_if(b'-');
        if !self.eat_if(b'0') && self.digits() == 0 {
            return None;
        }
        let mut plain = true;
        if self.eat_if(b'.') {
            plain = false;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            plain = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some((self.text.get(start..self.i)?, plain))
    }

    /// Skips a run of digits, eight at a time where it can; how many.
    #[inline(always)]
    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let Ok(w) = <[u8; 8]>::try_from(chunk) else {
                break;
            };
            let t = u64::from_le_bytes(w) ^ splat(b'0');
            // A byte is a digit where t's byte is below 10: mark the others (the lowest
            // mark is exact; a carry only marks bytes after it).
            let marks = (t.wrapping_add(splat(0x76)) | t) & HIGHS;
            if marks != 0 {
                self.i += (marks.trailing_zeros() / 8) as usize;
                return self.i - start;
            }
            self.i += 8;
        }
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// `seq` written as a plain whole number in range (serde's for `7.0`, `7e0` and the rest).
    pub(super) fn seq(&mut self) -> Option<u64> {
        let text = self.number()?;
        if text.len() > 16 || !text.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        text.parse::<u64>().ok().filter(|&n| n <= MAX_SEQ)
    }

    /// An object's members: `member` reads the value of each key; None for what is not
    /// an object.
    #[inline(always)]
    pub(super) fn members(
        &mut self,
        member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.members_named(|_| None, Some, member)
    }

    /// An object's members whose keys name fields: `known` reads a key it knows whole
    /// (with its colon), else the key is scanned and named by [`Field::of`] (None for a key
    /// that names none); `member` reads each field's value.
    #[inline(always)]
    pub(super) fn members_known(
        &mut self,
        known: impl FnMut(&mut Self) -> Option<Field>,
        member: impl FnMut(&mut Self, Field) -> Option<()>,
    ) -> Option<()> {
        self.members_named(known, Field::of, member)
    }

    /// An object's members, each key read whole by `known` where it can, else scanned and
    /// named by `name` (None for a key it refuses), each value read by `member`.
    #[inline(always)]
    fn members_named<K>(
        &mut self,
        mut known: impl FnMut(&mut Self) -> Option<K>,
        name: impl Fn(&'a str) -> Option<K>,
        mut member: impl FnMut(&mut Self, K) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        self.ws();
        if self.eat_if(b'}') {
            return Some(());
        }
        loop {
            let key = match known(self) {
                Some(key) => key,
                None => {
                    let key = self.string()?;
                    self.ws();
                    self.eat(b':')?;
                    name(key)?
                }
            };
            self.ws();
            member(self, key)?;
            if self.end(b'}')? {
                return Some(());
            }
        }
    }

    /// An array's items, each read by `item`.
    #[inline(always)]
    fn items(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.ws();
        if self.eat_if(b']') {
            return Some(());
        }
        loop {
            item(self)?;
            if self.end(b']')? {
                return Some(());
            }
        }
    }

    /// After a member or an item: true at `close`, false after a comma (and the
    /// whitespace after it), None for anything else.
    #[inline(always)]
    fn end(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = *self.b.get(self.i)?;
        self.i += 1;
        if c == b',' {
            self.ws();
            Some(false)
        } else {
            (c == close).then_some(true)
        }
    }

    /// An object's entries in order, into `out` (empty), each value read by `value`; None
    /// for a key twice.
    pub(super) fn entries<V>(
        &mut self,
        mut out: Vec<(Cow<'a, str>, V)>,
        mut value: impl FnMut(&mut Self) -> Option<V>,
    ) -> Option<Vec<(Cow<'a, str>, V)>> {
        self.members(|s, key| {
            if out.len() >= MAX_KEYS || out.iter().any(|(k, _)| k == key) {
                return None;
            }
            let v = value(s)?;
            out.push((Cow::Borrowed(key), v));
            Some(())
        })?;
        Some(out)
    }

    /// Checks an object as it is skipped: each key once, every value valid JSON.
    pub(super) fn skip_object(&mut self, depth: u32) -> Option<()> {
        let mut keys: [&str; MAX_KEYS] = [""; MAX_KEYS];
        let mut n = 0;
        self.members(|s, key| {
            if n == MAX_KEYS || keys[..n].contains(&key) {
                return None;
            }
            keys[n] = key;
            n += 1;
            s.skip_value(depth + 1)
        })
    }

    /// Checks any JSON value as it is skipped.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match *self.b.get(self.i)? {
            b'{' => self.skip_object(depth),
            b'[' => self.skip_array(depth),
            b'"' => self.string().map(drop),
            b't' => self.word("true"),
            b'f' => self.word("false"),
            b'n' => self.word("null"),
            _ => self.sure_number().map(drop),
        }
    }

    fn skip_array(&mut self, depth: u32) -> Option<()> {
        self.items(|s| s.skip_value(depth + 1))
    }

    fn word(&mut self, w: &str) -> Option<()> {
        let end = self.i + w.len();
        (self.b.get(self.i..end)? == w.as_bytes()).then(|| self.i = end)
    }

    /// A number in a skipped or built value: one that serde reads without doubt (a whole
    /// number of up to 18 digits, or a finite f64 written in under 40 characters with an
    /// exponent of at most three digits), as its text and whether it is whole; anything
    /// else (overflow and its edges) is serde's to judge.
    fn sure_number(&mut self) -> Option<(&'a str, bool)> {
        let (text, plain) = self.number_plain()?;
        if plain && text.len() <= 18 {
            return Some((text, plain));
        }
        let exponent = text
            .find(['e', 'E'])
            .map_or(0, |e| text[e + 1..].trim_start_matches(['+', '-']).len());
        let finite = text.parse::<f64>().is_ok_and(f64::is_finite);
        (text.len() < 40 && exponent <= 3 && finite).then_some((text, plain))
    }

    /// An object built as serde builds `info`: each key once at every depth, strings
    /// without escapes, numbers as serde makes them.
    pub(super) fn object(&mut self, depth: u32) -> Option<Map<String, Value>> {
        let mut m = Map::new();
        self.members(|s, key| {
            if m.contains_key(key) {
                return None;
            }
            let v = s.value(depth + 1)?;
            m.insert(key.to_owned(), v);
            Some(())
        })?;
        Some(m)
    }

    fn value(&mut self, depth: u32) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match *self.b.get(self.i)? {
            b'{' => Value::Object(self.object(depth)?),
            b'[' => Value::Array(self.array(depth)?),
            b'"' => Value::String(self.string()?.to_owned()),
            b't' => self.word("true").map(|()| Value::Bool(true))?,
            b'f' => self.word("false").map(|()| Value::Bool(false))?,
            b'n' => self.word("null").map(|()| Value::Null)?,
            _ => {
                let (text, plain) = self.sure_number()?;
                Value::Number(number_as(text, plain)?)
            }
        })
    }

    fn array(&mut self, depth: u32) -> Option<Vec<Value>> {
        let mut items = Vec::new();
        self.items(|s| {
            items.push(s.value(depth + 1)?);
            Some(())
        })?;
        Some(items)
    }
}
