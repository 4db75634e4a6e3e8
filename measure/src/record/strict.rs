//! Objects read strictly: a key that appears twice in one object, which serde_json's maps
//! would let pass with the last one winning, is refused while the object is built, at every
//! depth, so that the check costs no pass of its own over the line.

use super::{ParseError, reject};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

const DUPLICATE_HEAD: &str = "duplicate key \"";
const DUPLICATE_TAIL: &str = ": a key may appear once in an object";

/// The error for `key` met a second time in the object that is the value of `within` (none
/// for the line's own object).
pub(super) fn duplicate<E: de::Error>(key: &str, within: Option<&str>) -> E {
    let mut msg = format!("{DUPLICATE_HEAD}{key}\"");
    if let Some(w) = within {
        msg.push_str(" in \"");
        msg.push_str(w);
        msg.push('"');
    }
    msg.push_str(DUPLICATE_TAIL);
    E::custom(msg)
}

/// A JSON value built strictly; `within` is the key it is the value of, which names the
/// object in a message about a repeated key (an array's items are within its key too).
#[derive(Clone, Copy)]
pub(super) struct StrictValue<'a> {
    pub within: Option<&'a str>,
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        object(map, self.within).map(Value::Object)
    }
}

/// The entries of an object, each key once (checked before its value is read, so that the
/// reader's place is the repeated key's).
fn object<'de, A: MapAccess<'de>>(
    mut map: A,
    within: Option<&str>,
) -> Result<Map<String, Value>, A::Error> {
    let mut m = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        match m.entry(key) {
            Entry::Occupied(o) => return Err(duplicate(o.key(), within)),
            Entry::Vacant(v) => {
                let within = Some(v.key().as_str());
                let val = map.next_value_seed(StrictValue { within })?;
                v.insert(val);
            }
        }
    }
    Ok(m)
}

/// A string, borrowed from the input where it holds no escape.
pub(super) struct Text<'de>(pub Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(s)))
    }
}

/// The keys of one object read so far, for the repeated-key check without building the
/// object: a list while it is short (most objects have a few keys), a hash set past that.
#[derive(Default)]
pub(super) struct KeySet<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

/// Keys kept in the list before they move to the set.
const FEW_KEYS: usize = 16;

impl<'de> KeySet<'de> {
    /// Adds `key`; false when it is there already.
    pub(super) fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < FEW_KEYS {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

/// A JSON value checked as it is skipped: every object's keys once, at every depth, and
/// nothing built; `within` as in [`StrictValue`].
#[derive(Clone, Copy)]
pub(super) struct StrictSkip<'a> {
    pub within: Option<&'a str>,
}

impl<'de> DeserializeSeed<'de> for StrictSkip<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSkip<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = KeySet::default();
        while let Some(Text(key)) = map.next_key()? {
            if !keys.insert(key.clone()) {
                return Err(duplicate(&key, self.within));
            }
            map.next_value_seed(StrictSkip {
                within: Some(key.as_ref()),
            })?;
        }
        Ok(())
    }
}

/// An object (`values`, `info`) built strictly; `within` is its key.
pub(super) struct StrictObject(pub &'static str);

impl<'de> DeserializeSeed<'de> for StrictObject {
    type Value = Map<String, Value>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for StrictObject {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        object(map, Some(self.0))
    }
}

/// An error naming the first key that repeats in its object, with the column where it
/// starts; `line` is valid JSON (a line the reader could not take for another reason passes).
pub(super) fn check(line: &str) -> Result<(), ParseError> {
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = StrictValue { within: None }.deserialize(&mut de);
    match parsed {
        Ok(_) => Ok(()),
        Err(e) => match worded(&e, line) {
            Some(why) => Err(why),
            None => Ok(()),
        },
    }
}

/// The message of a repeated-key error from serde_json, with the column of the key's opening
/// quote in place of serde_json's "at line L column C"; None for any other error.
fn worded(e: &serde_json::Error, line: &str) -> Option<ParseError> {
    if e.classify() != serde_json::error::Category::Data {
        return None;
    }
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    let msg = text.strip_suffix(&place).unwrap_or(&text);
    let head = msg.strip_suffix(DUPLICATE_TAIL)?;
    if !head.starts_with(DUPLICATE_HEAD) {
        return None;
    }
    let column = match key_start(line, e.line(), e.column()) {
        Some(c) => format!(" (column {c})"),
        None => String::new(),
    };
    Some(reject(format!("{head}{column}{DUPLICATE_TAIL}")))
}

/// The column (from 1) of the opening quote of the key that ends just before serde_json's
/// place (`column`, from 1, of the last byte it read: the key's closing quote, or blanks
/// after it).
fn key_start(line: &str, line_no: usize, column: usize) -> Option<usize> {
    let start = line
        .split_inclusive('\n')
        .take(line_no.checked_sub(1)?)
        .map(str::len)
        .sum::<usize>();
    let b = line.as_bytes();
    let mut close = (start + column).checked_sub(1)?;
    while b.get(close)?.is_ascii_whitespace() {
        close = close.checked_sub(1)?;
    }
    if b[close] != b'"' {
        return None;
    }
    // Inside the key every quote is escaped: the opening one is the first quote before the
    // closing one that an even number of backslashes precede.
    let mut q = close;
    loop {
        q = b[..q].iter().rposition(|&c| c == b'"')?;
        let slashes = b[..q].iter().rev().take_while(|&&c| c == b'\\').count();
        if slashes % 2 == 0 {
            return Some(q - start + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line;

    const BASE: &str = r#"{"schema":"benchmatrix/1","tool":"t","version":"1","type":"summary","run":"r","seq":0,"at":"2026-11-30T13:00:00Z","host":"h","label":"l","name":"n","status":"ok","headline":"a_s","headlines":[{"key":"a_s","role":"r"}],"values":{"a_s":1},"info":{"x":[{"y":1}]},"extra":{"z":[1]}}"#;

    /// The error for BASE with `from` replaced by `to`.
    fn refused(from: &str, to: &str) -> String {
        let line = BASE.replace(from, to);
        assert_ne!(line, BASE, "{from}");
        parse_line(&line).expect_err(&line).to_string()
    }

    #[test]
    fn a_repeated_key_is_named_with_its_object_and_column() {
        assert!(parse_line(BASE).is_ok());
        for (from, to, want) in [
            (r#"{"y":1}"#, r#"{"y":1,"y":2}"#, r#""y" in "x""#),
            (r#"{"z":[1]}"#, r#"{"z":[1],"z":2}"#, r#""z" in "extra""#),
            (r#""extra""#, r#""extra":1,"extra""#, r#""extra" ("#),
            (
                r#""role":"r""#,
                r#""role":"r","q":1,"q":1"#,
                r#""q" in "headlines""#,
            ),
            (
                r#""role":"r""#,
                r#""role":"r","role":"s""#,
                r#""role" in "headlines""#,
            ),
            (r#""seq":0"#, r#""seq":0,"seq":0"#, r#""seq" ("#),
        ] {
            let err = refused(from, to);
            assert!(
                err.contains(&format!("duplicate key {want}")),
                "{to}: {err}"
            );
            assert!(
                err.ends_with(": a key may appear once in an object"),
                "{err}"
            );
        }
        // The column is the repeated key's opening quote, escaped or not.
        let line = BASE.replace(r#""a_s":1}"#, r#""a_s":1, "a\u005fs" :2}"#);
        let at = line.find(r#""a\u005fs""#).expect("the key") + 1;
        let err = parse_line(&line).expect_err("a_s twice").to_string();
        assert!(
            err.contains(&format!(r#""a_s" in "values" (column {at})"#)),
            "{err}"
        );
    }
}
