//! The record read from JSON in one pass, as a [`RecordView`]: each envelope field once,
//! borrowed from the line where it holds no escape; `values`, `tags`, `info`, `headlines`
//! and unknown fields read strictly (a key twice in any object is an error); the optional
//! fields present as their type or absent, never `null`. `info` is built only where the
//! caller wants it ([`Info`]); otherwise it is checked as it is skipped.

use super::strict::{KeySet, StrictObject, StrictSkip, StrictValue, Text, duplicate};
use super::view::RecordView;
use super::{Headline, Kind, Record, Status};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// Which records get their `info` built (it is checked in every record either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Info {
    /// Every record's.
    Keep,
    /// A begin's and a summary's only (the environment facts, the load over the run); a
    /// line whose `info` comes before its `type` has it built, then dropped if it is
    /// neither.
    Ends,
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ViewSeed(Info::Keep)
            .deserialize(d)
            .map(RecordView::into_record)
    }
}

/// Reads a record as a view, building `info` as [`Info`] says.
pub(super) struct ViewSeed(pub Info);

impl<'de> DeserializeSeed<'de> for ViewSeed {
    type Value = RecordView<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RecordView<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

/// `seq` by [`crate::fields::seq`]'s rule.
struct Seq;

impl<'de> DeserializeSeed<'de> for Seq {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        crate::fields::seq(d)
    }
}

/// `headlines`: a list of one or more, its objects read strictly.
struct Headlines;

impl<'de> DeserializeSeed<'de> for Headlines {
    type Value = Vec<Headline>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Headline>, D::Error> {
        let v = StrictValue {
            within: Some("headlines"),
        }
        .deserialize(d)?;
        let list = Vec::<Headline>::deserialize(v).map_err(de::Error::custom)?;
        if list.is_empty() {
            return Err(de::Error::custom("an empty list"));
        }
        Ok(list)
    }
}

/// An object read strictly into its entries in order, each value by `V`; `within` names
/// the object in a message about a repeated key.
struct Entries<V> {
    within: &'static str,
    value: std::marker::PhantomData<V>,
}

impl<V> Entries<V> {
    fn of(within: &'static str) -> Self {
        Entries {
            within,
            value: std::marker::PhantomData,
        }
    }
}

impl<'de, V: Deserialize<'de>> DeserializeSeed<'de> for Entries<V> {
    type Value = Vec<(Cow<'de, str>, V)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
    type Value = Vec<(Cow<'de, str>, V)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object (\"{}\")", self.within)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(Cow<'de, str>, V)> = Vec::new();
        let mut keys = KeySet::default();
        while let Some(Text(key)) = map.next_key()? {
            if !keys.insert(key.clone()) {
                return Err(duplicate(&key, Some(self.within)));
            }
            let val = map.next_value()?;
            out.push((key, val));
        }
        Ok(out)
    }
}

/// A number of `values`, read from its text (which serde_json has checked is one JSON value)
/// by the standard library's parser: correctly rounded, as serde_json's `float_roundtrip`
/// parse is, to the same f64, and several times faster on the 17 significant digits that a
/// computed f64 is written with (the float parse was a tenth of collate's time). Anything but
/// a finite number is an error, which the slow path words as it did.
struct Num(Number);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        number(raw.get())
            .map(Num)
            .ok_or_else(|| de::Error::custom("a values entry that is not a finite number"))
    }
}

/// The JSON number `text` as serde_json makes it: a whole number as u64 (not negative) or
/// i64 (negative), -0 and whole numbers beyond those as f64, anything else as f64; None for
/// text that is not a number or one that overflows f64.
fn number(text: &str) -> Option<Number> {
    let b = text.as_bytes();
    let first = *b.first()?;
    if first != b'-' && !first.is_ascii_digit() {
        return None;
    }
    number_as(text, !b.iter().any(|c| matches!(c, b'.' | b'e' | b'E')))
}

/// [`number`] for `text` that the caller has checked is a JSON number, `plain` where it
/// has neither fraction nor exponent.
pub(super) fn number_as(text: &str, plain: bool) -> Option<Number> {
    if plain {
        if !text.starts_with('-') {
            if let Ok(n) = text.parse::<u64>() {
                return Some(n.into());
            }
        } else if let Ok(n) = text.parse::<i64>()
            && n != 0
        {
            return Some(n.into());
        }
    }
    Number::from_f64(text.parse::<f64>().ok()?)
}

/// `info`: built (`true`) or checked as it is skipped.
struct InfoSeed(bool);

impl<'de> DeserializeSeed<'de> for InfoSeed {
    type Value = Option<Map<String, Value>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.0 {
            StrictObject("info").deserialize(d).map(Some)
        } else {
            d.deserialize_map(StrictSkip {
                within: Some("info"),
            })
            .map(|()| None)
        }
    }
}

/// A field's value into its slot; false (the value unread) when the slot is filled already.
fn put<'de, A: MapAccess<'de>, S: DeserializeSeed<'de>>(
    slot: &mut Option<S::Value>,
    map: &mut A,
    seed: S,
) -> Result<bool, A::Error> {
    if slot.is_some() {
        return Ok(false);
    }
    *slot = Some(map.next_value_seed(seed)?);
    Ok(true)
}

/// A field of a type that reads itself.
fn put_plain<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
) -> Result<bool, A::Error> {
    put(slot, map, std::marker::PhantomData::<T>)
}

impl<'de> Visitor<'de> for ViewSeed {
    type Value = RecordView<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a benchmatrix/1 record (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RecordView<'de>, A::Error> {
        let mut s = Slots::default();
        let mut info_seen = false;
        // Fields this reader does not know: ignored, but each once and read strictly.
        let mut others = KeySet::default();
        while let Some(Text(key)) = map.next_key()? {
            let m = &mut map;
            let fresh = match key.as_ref() {
                "schema" => put_plain(&mut s.schema, m)?,
                "tool" => put_plain(&mut s.tool, m)?,
                "version" => put_plain(&mut s.version, m)?,
                "type" => put_plain(&mut s.kind, m)?,
                "run" => put_plain(&mut s.run, m)?,
                "seq" => put(&mut s.seq, m, Seq)?,
                "at" => put_plain(&mut s.at, m)?,
                "host" => put_plain(&mut s.host, m)?,
                "label" => put_plain(&mut s.label, m)?,
                "name" => put_plain(&mut s.name, m)?,
                "tags" => put(&mut s.tags, m, Entries::<Text>::of("tags"))?,
                "invocation" => put_plain(&mut s.invocation, m)?,
                "status" => put_plain(&mut s.status, m)?,
                "error" => put_plain(&mut s.error, m)?,
                "headline" => put_plain(&mut s.headline, m)?,
                "headlines" => put(&mut s.headlines, m, Headlines)?,
                "values" => put(&mut s.values, m, Entries::<Num>::of("values"))?,
                "info" => {
                    let build = match self.0 {
                        Info::Keep => true,
                        Info::Ends => s
                            .kind
                            .is_none_or(|k| matches!(k, Kind::Begin | Kind::Summary)),
                    };
                    let fresh = !info_seen;
                    if fresh {
                        s.info = m.next_value_seed(InfoSeed(build))?;
                        info_seen = true;
                    }
                    fresh
                }
                _ => {
                    let fresh = others.insert(key.clone());
                    if fresh {
                        m.next_value_seed(StrictSkip {
                            within: Some(key.as_ref()),
                        })?;
                    }
                    fresh
                }
            };
            if !fresh {
                return Err(duplicate(&key, None));
            }
        }
        s.view(self.0)
    }
}

/// The fields read so far; a filled slot is a field seen.
#[derive(Default)]
struct Slots<'de> {
    schema: Option<Text<'de>>,
    tool: Option<Text<'de>>,
    version: Option<Text<'de>>,
    kind: Option<Kind>,
    run: Option<Text<'de>>,
    seq: Option<u64>,
    at: Option<Text<'de>>,
    host: Option<Text<'de>>,
    label: Option<Text<'de>>,
    name: Option<Text<'de>>,
    tags: Option<Vec<(Cow<'de, str>, Text<'de>)>>,
    invocation: Option<Text<'de>>,
    status: Option<Status>,
    error: Option<Text<'de>>,
    headline: Option<Text<'de>>,
    headlines: Option<Vec<Headline>>,
    values: Option<Vec<(Cow<'de, str>, Num)>>,
    info: Option<Map<String, Value>>,
}

impl<'de> Slots<'de> {
    /// The view, or the first envelope field missing.
    fn view<E: de::Error>(self, info: Info) -> Result<RecordView<'de>, E> {
        fn need<T, E: de::Error>(v: Option<T>, field: &'static str) -> Result<T, E> {
            v.ok_or_else(|| E::missing_field(field))
        }
        fn text<'de, E: de::Error>(
            v: Option<Text<'de>>,
            field: &'static str,
        ) -> Result<Cow<'de, str>, E> {
            need(v, field).map(|t| t.0)
        }
        let kind = need(self.kind, "type")?;
        let keep_info = info == Info::Keep || matches!(kind, Kind::Begin | Kind::Summary);
        Ok(RecordView {
            schema: text(self.schema, "schema")?,
            tool: text(self.tool, "tool")?,
            version: text(self.version, "version")?,
            kind,
            run: text(self.run, "run")?,
            seq: need(self.seq, "seq")?,
            at: text(self.at, "at")?,
            host: text(self.host, "host")?,
            label: text(self.label, "label")?,
            name: text(self.name, "name")?,
            tags: self
                .tags
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect(),
            invocation: self.invocation.map(|t| t.0),
            status: self.status,
            error: self.error.map(|t| t.0),
            headline: self.headline.map(|t| t.0),
            headlines: self.headlines.unwrap_or_default(),
            values: self
                .values
                .unwrap_or_default()
                .into_iter()
                .map(|(k, n)| (k, n.0))
                .collect(),
            info: if keep_info {
                Some(Cow::Owned(self.info.unwrap_or_default()))
            } else {
                None
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::number;
    use serde_json::{Number, Value};

    /// serde_json's own number for `text` (float_roundtrip), where it reads one.
    fn serde_number(text: &str) -> Option<Number> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Number(n)) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn numbers_read_as_serde_json_reads_them() {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "0.0",
            "-0.0",
            "1e0",
            "1E+2",
            "2.5e-3",
            "5.719e-6",
            "0.00015925911942462397",
            "0.21044453859339612",
            "20.000832845841924",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e400",
            "-1e400",
            "4.9e-324",
            "2e-324",
            "1e-400",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "9007199254740993",
            "0.1",
            "\"1\"",
            "true",
            "null",
            "[1]",
            "{}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Full-precision values as the tools write them, over many magnitudes.
        let mut x = 1.234_567_890_123_456_7e-9_f64;
        for _ in 0..200 {
            texts.push(serde_json::to_string(&x).expect("a number"));
            texts.push(format!("{x:.17e}"));
            x *= 3.7;
        }
        for t in &texts {
            assert_eq!(number(t), serde_number(t), "{t}");
        }
    }
}
