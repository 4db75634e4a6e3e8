//! The record read from JSON in one pass: each envelope field once, `values`, `info`,
//! `tags`, `headlines` and unknown fields built or skipped strictly (a key twice in any
//! object is an error), the optional fields present as their type or absent, never `null`.

use super::strict::{StrictObject, StrictTags, StrictValue, duplicate};
use super::{Headline, Record};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RecordVisitor)
    }
}

/// A key, borrowed from the input where it holds no escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s)))
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

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a benchmatrix/1 record (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
        let mut s = Slots::default();
        // Fields this reader does not know: ignored, but each once and read strictly.
        let mut others: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(Key(key)) = map.next_key()? {
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
                "tags" => put(&mut s.tags, m, StrictTags)?,
                "invocation" => put_plain(&mut s.invocation, m)?,
                "status" => put_plain(&mut s.status, m)?,
                "error" => put_plain(&mut s.error, m)?,
                "headline" => put_plain(&mut s.headline, m)?,
                "headlines" => put(&mut s.headlines, m, Headlines)?,
                "values" => put(&mut s.values, m, StrictObject("values"))?,
                "info" => put(&mut s.info, m, StrictObject("info"))?,
                _ => {
                    let fresh = !others.contains(&key);
                    if fresh {
                        m.next_value_seed(StrictValue {
                            within: Some(key.as_ref()),
                        })?;
                        others.insert(key.clone());
                    }
                    fresh
                }
            };
            if !fresh {
                return Err(duplicate(&key, None));
            }
        }
        s.record()
    }
}

/// The fields read so far; a filled slot is a field seen.
#[derive(Default)]
struct Slots {
    schema: Option<String>,
    tool: Option<String>,
    version: Option<String>,
    kind: Option<super::Kind>,
    run: Option<String>,
    seq: Option<u64>,
    at: Option<String>,
    host: Option<String>,
    label: Option<String>,
    name: Option<String>,
    tags: Option<std::collections::BTreeMap<String, String>>,
    invocation: Option<String>,
    status: Option<super::Status>,
    error: Option<String>,
    headline: Option<String>,
    headlines: Option<Vec<Headline>>,
    values: Option<serde_json::Map<String, serde_json::Value>>,
    info: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Slots {
    /// The record, or the first envelope field missing.
    fn record<E: de::Error>(self) -> Result<Record, E> {
        fn need<T, E: de::Error>(v: Option<T>, field: &'static str) -> Result<T, E> {
            v.ok_or_else(|| E::missing_field(field))
        }
        Ok(Record {
            schema: need(self.schema, "schema")?,
            tool: need(self.tool, "tool")?,
            version: need(self.version, "version")?,
            kind: need(self.kind, "type")?,
            run: need(self.run, "run")?,
            seq: need(self.seq, "seq")?,
            at: need(self.at, "at")?,
            host: need(self.host, "host")?,
            label: need(self.label, "label")?,
            name: need(self.name, "name")?,
            tags: self.tags.unwrap_or_default(),
            invocation: self.invocation,
            status: self.status,
            error: self.error,
            headline: self.headline,
            headlines: self.headlines.unwrap_or_default(),
            values: self.values.unwrap_or_default(),
            info: self.info.unwrap_or_default(),
        })
    }
}
