//! The common record read by a hand scanner, before serde: a line of the usual shape (the
//! envelope, `tags`, `values` and `info` without escapes; no `headlines`, no field of
//! another name) becomes its [`RecordView`] in one pass over its bytes, `info` checked as it
//! is skipped or built where the serde reader builds it. Anything else, an error included,
//! gives `None` and goes to the serde reader ([`super::de`]), which reads it or words what
//! is wrong: so this scanner takes only lines that reader takes, into the same view (a
//! property test holds them together), and never has to explain itself.

use super::de::{Info, number_as};
use super::view::{RecordView, Reuse, relive};
use super::{Kind, Status};
use std::borrow::Cow;

mod json;
mod keys;

use json::Scan;
use keys::Field;

/// The record on `line`, or None where serde must read it.
pub(super) fn view<'a>(line: &'a str, info: Info, reuse: &mut Reuse) -> Option<RecordView<'a>> {
    let mut s = Scan {
        text: line,
        b: line.as_bytes(),
        i: 0,
    };
    let mut f = Fields::default();
    s.ws();
    let mut next = 0;
    let mut lists = (
        relive(std::mem::take(&mut reuse.tags)),
        relive(std::mem::take(&mut reuse.values)),
    );
    s.members_known(
        |s| s.known_key(&mut next),
        |s, field| f.field(s, field, info, &mut lists),
    )?;
    s.ws();
    if s.i != s.b.len() {
        return None;
    }
    f.view(info, lists)
}

/// The fields read so far (each at most once: a second goes to serde, which names it).
#[derive(Default)]
struct Fields<'a> {
    schema: Option<&'a str>,
    tool: Option<&'a str>,
    version: Option<&'a str>,
    kind: Option<Kind>,
    run: Option<&'a str>,
    seq: Option<u64>,
    at: Option<&'a str>,
    host: Option<&'a str>,
    label: Option<&'a str>,
    name: Option<&'a str>,
    tags: Option<Vec<(Cow<'a, str>, Cow<'a, str>)>>,
    invocation: Option<&'a str>,
    status: Option<Status>,
    error: Option<&'a str>,
    headline: Option<&'a str>,
    values: Option<Vec<(Cow<'a, str>, serde_json::Number)>>,
    /// Whether `info` was read, and what was built of it.
    info: bool,
    built: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The lists a line's tags and values are read into (emptied ones of lines before).
type Lists<'a> = (
    Vec<(Cow<'a, str>, Cow<'a, str>)>,
    Vec<(Cow<'a, str>, serde_json::Number)>,
);

/// Fills an empty slot; None for a slot filled already.
fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(v);
    Some(())
}

impl<'a> Fields<'a> {
    /// Reads the value of top-level `field`.
    fn field(
        &mut self,
        s: &mut Scan<'a>,
        field: Field,
        info: Info,
        lists: &mut Lists<'a>,
    ) -> Option<()> {
        match field {
            Field::Schema => once(&mut self.schema, s.string()?),
            Field::Tool => once(&mut self.tool, s.string()?),
            Field::Version => once(&mut self.version, s.string()?),
            Field::Run => once(&mut self.run, s.string()?),
            Field::At => once(&mut self.at, s.string()?),
            Field::Host => once(&mut self.host, s.string()?),
            Field::Label => once(&mut self.label, s.string()?),
            Field::Name => once(&mut self.name, s.string()?),
            Field::Invocation => once(&mut self.invocation, s.string()?),
            Field::Error => once(&mut self.error, s.string()?),
            Field::Headline => once(&mut self.headline, s.string()?),
            Field::Type => once(&mut self.kind, kind(s.string()?)?),
            Field::Status => once(&mut self.status, status(s.string()?)?),
            Field::Seq => once(&mut self.seq, s.seq()?),
            Field::Tags => {
                let tags = s.entries(std::mem::take(&mut lists.0), |s| {
                    s.string().map(Cow::Borrowed)
                })?;
                once(&mut self.tags, tags)
            }
            Field::Values => {
                let values = s.entries(std::mem::take(&mut lists.1), |s| {
                    let (text, plain) = s.number_plain()?;
                    number_as(text, plain)
                })?;
                once(&mut self.values, values)
            }
            Field::Info if !self.info => {
                self.info = true;
                // Built as the serde reader builds it: for a line whose type says it is
                // kept, or one whose type is yet to come.
                let build = info == Info::Keep
                    || matches!(self.kind, None | Some(Kind::Begin | Kind::Summary));
                if build {
                    self.built = Some(s.object(0)?);
                    Some(())
                } else {
                    s.skip_object(0)
                }
            }
            // A second info: serde's (as are headlines and unknown fields, which have no
            // Field).
            Field::Info => None,
        }
    }

    /// The view, as the serde reader's `Slots::view` makes it; None where a field is
    /// missing or `info` would be built.
    fn view(self, info: Info, lists: Lists<'a>) -> Option<RecordView<'a>> {
        let kind = self.kind?;
        let keep_info = info == Info::Keep || matches!(kind, Kind::Begin | Kind::Summary);
        let b = |t: &'a str| Cow::Borrowed(t);
        Some(RecordView {
            schema: b(self.schema?),
            tool: b(self.tool?),
            version: b(self.version?),
            kind,
            run: b(self.run?),
            seq: self.seq?,
            at: b(self.at?),
            host: b(self.host?),
            label: b(self.label?),
            name: b(self.name?),
            tags: self.tags.unwrap_or(lists.0),
            invocation: self.invocation.map(b),
            status: self.status,
            error: self.error.map(b),
            headline: self.headline.map(b),
            headlines: Vec::new(),
            values: self.values.unwrap_or(lists.1),
            info: keep_info.then(|| Cow::Owned(self.built.unwrap_or_default())),
        })
    }
}

fn kind(t: &str) -> Option<Kind> {
    Some(match t {
        "begin" => Kind::Begin,
        "sample" => Kind::Sample,
        "interval" => Kind::Interval,
        "summary" => Kind::Summary,
        _ => return None,
    })
}

fn status(t: &str) -> Option<Status> {
    Some(match t {
        "ok" => Status::Ok,
        "partial" => Status::Partial,
        "failed" => Status::Failed,
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
