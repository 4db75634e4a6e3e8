//! A record as read from its line, its texts borrowed from the line where they hold no
//! escape: what a reader of many lines (collate) takes, with no copy of what it drops.

use super::{Headline, Kind, Record, Status};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

/// One line of the contract as [`super::parse_view`] reads it, with the same checks as
/// [`Record`]'s. `values` and `tags` are in the line's order; `info` is there where it was
/// built: always by `parse_line`, for a begin and a summary only by `parse_view`.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordView<'a> {
    pub schema: Cow<'a, str>,
    pub tool: Cow<'a, str>,
    pub version: Cow<'a, str>,
    pub kind: Kind,
    pub run: Cow<'a, str>,
    pub seq: u64,
    pub at: Cow<'a, str>,
    pub host: Cow<'a, str>,
    pub label: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub tags: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub invocation: Option<Cow<'a, str>>,
    pub status: Option<Status>,
    pub error: Option<Cow<'a, str>>,
    pub headline: Option<Cow<'a, str>>,
    pub headlines: Vec<Headline>,
    pub values: Vec<(Cow<'a, str>, Number)>,
    pub info: Option<Cow<'a, Map<String, Value>>>,
}

impl RecordView<'_> {
    /// A value as f64, when the key is present.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, n)| n.as_f64())
    }

    /// Whether `values` has `key`.
    pub fn has_value(&self, key: &str) -> bool {
        self.values.iter().any(|(k, _)| k == key)
    }

    /// A tag's value, when the record has the tag.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The record with texts of its own (`info` empty where it was not built).
    pub fn into_record(self) -> Record {
        Record {
            schema: self.schema.into_owned(),
            tool: self.tool.into_owned(),
            version: self.version.into_owned(),
            kind: self.kind,
            run: self.run.into_owned(),
            seq: self.seq,
            at: self.at.into_owned(),
            host: self.host.into_owned(),
            label: self.label.into_owned(),
            name: self.name.into_owned(),
            tags: self
                .tags
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            invocation: self.invocation.map(Cow::into_owned),
            status: self.status,
            error: self.error.map(Cow::into_owned),
            headline: self.headline.map(Cow::into_owned),
            headlines: self.headlines,
            values: self
                .values
                .into_iter()
                .map(|(k, n)| (k.into_owned(), Value::Number(n)))
                .collect(),
            info: self.info.map(Cow::into_owned).unwrap_or_default(),
        }
    }
}

impl Record {
    /// The record as a view of its own texts (for code that reads views, handed a record).
    pub fn as_view(&self) -> RecordView<'_> {
        fn text(s: &str) -> Cow<'_, str> {
            Cow::Borrowed(s)
        }
        RecordView {
            schema: text(&self.schema),
            tool: text(&self.tool),
            version: text(&self.version),
            kind: self.kind,
            run: text(&self.run),
            seq: self.seq,
            at: text(&self.at),
            host: text(&self.host),
            label: text(&self.label),
            name: text(&self.name),
            tags: self.tags.iter().map(|(k, v)| (text(k), text(v))).collect(),
            invocation: self.invocation.as_ref().map(|s| text(s)),
            status: self.status,
            error: self.error.as_ref().map(|s| text(s)),
            headline: self.headline.as_ref().map(|s| text(s)),
            headlines: self.headlines.clone(),
            values: self
                .values
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::Number(n) => Some((text(k), n.clone())),
                    _ => None,
                })
                .collect(),
            info: Some(Cow::Borrowed(&self.info)),
        }
    }
}

/// The lists of a view that a reader of many lines hands back ([`Reuse::give_back`]) once
/// it is done with a line, so that the next line's view is read into them: no allocation a
/// line for its `tags` and `values`.
#[derive(Debug, Default)]
pub struct Reuse {
    pub(super) tags: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    pub(super) values: Vec<(Cow<'static, str>, Number)>,
}

impl Reuse {
    /// Keeps `view`'s lists, emptied, for the next line.
    pub fn give_back(&mut self, view: RecordView<'_>) {
        self.tags = relive(view.tags);
        self.values = relive(view.values);
    }
}

/// An emptied list of another lifetime, in the same allocation (the standard library
/// collects in place when the items are of one size).
pub(super) fn relive<T, U>(mut list: Vec<T>) -> Vec<U> {
    list.clear();
    list.into_iter().filter_map(|_| None).collect()
}
