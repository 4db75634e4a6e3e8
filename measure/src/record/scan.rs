//! The common record read by a hand scanner, before serde: a line of the usual shape (the
//! envelope, `tags` and `values` without escapes, an `info` that is checked and not built)
//! becomes its [`RecordView`] in one pass over its bytes. Anything else, an error included,
//! gives `None` and goes to the serde reader ([`super::de`]), which reads it or words what
//! is wrong: so this scanner takes only lines that reader takes, into the same view (a
//! property test holds them together), and never has to explain itself.

use super::de::{Info, number};
use super::view::RecordView;
use super::{Kind, Status};
use crate::fields::MAX_SEQ;
use std::borrow::Cow;

/// Nesting deeper than this goes to serde (whose own limit is 128).
const MAX_DEPTH: u32 = 64;
/// Objects with more keys than this in `tags`, `values` or a skipped value go to serde
/// (the repeated-key check here is a scan of the keys before).
const MAX_KEYS: usize = 32;

/// The record on `line`, or None where serde must read it.
pub(super) fn view(line: &str, info: Info) -> Option<RecordView<'_>> {
    let mut s = Scan {
        text: line,
        b: line.as_bytes(),
        i: 0,
    };
    let mut f = Fields::default();
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if !s.eat_if(b'}') {
        loop {
            let key = s.string()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            f.field(&mut s, key)?;
            s.ws();
            if s.eat_if(b'}') {
                break;
            }
            s.eat(b',')?;
            s.ws();
        }
    }
    s.ws();
    if s.i != s.b.len() {
        return None;
    }
    f.view(info)
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
    info: bool,
}

/// Fills an empty slot; None for a slot filled already.
fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(v);
    Some(())
}

impl<'a> Fields<'a> {
    /// Reads the value of top-level `key`.
    fn field(&mut self, s: &mut Scan<'a>, key: &str) -> Option<()> {
        match key {
            "schema" => once(&mut self.schema, s.string()?),
            "tool" => once(&mut self.tool, s.string()?),
            "version" => once(&mut self.version, s.string()?),
            "run" => once(&mut self.run, s.string()?),
            "at" => once(&mut self.at, s.string()?),
            "host" => once(&mut self.host, s.string()?),
            "label" => once(&mut self.label, s.string()?),
            "name" => once(&mut self.name, s.string()?),
            "invocation" => once(&mut self.invocation, s.string()?),
            "error" => once(&mut self.error, s.string()?),
            "headline" => once(&mut self.headline, s.string()?),
            "type" => once(&mut self.kind, kind(s.string()?)?),
            "status" => once(&mut self.status, status(s.string()?)?),
            "seq" => once(&mut self.seq, s.seq()?),
            "tags" => {
                let tags = s.entries(|s| s.string().map(Cow::Borrowed))?;
                once(&mut self.tags, tags)
            }
            "values" => {
                let values = s.entries(|s| number(s.number()?))?;
                once(&mut self.values, values)
            }
            "info" if !self.info => {
                self.info = true;
                s.skip_object(0)
            }
            // headlines, unknown fields, a second info: serde's.
            _ => None,
        }
    }

    /// The view, as the serde reader's `Slots::view` makes it; None where a field is
    /// missing or `info` would be built.
    fn view(self, info: Info) -> Option<RecordView<'a>> {
        let kind = self.kind?;
        let keep_info = info == Info::Keep || matches!(kind, Kind::Begin | Kind::Summary);
        if keep_info && self.info {
            return None;
        }
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
            tags: self.tags.unwrap_or_default(),
            invocation: self.invocation.map(b),
            status: self.status,
            error: self.error.map(b),
            headline: self.headline.map(b),
            headlines: Vec::new(),
            values: self.values.unwrap_or_default(),
            info: keep_info.then(|| Cow::Owned(serde_json::Map::new())),
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

/// The place in the line.
struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
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
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        self.eat_if(c).then_some(())
    }

    #[inline(always)]
    fn eat_if(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A string with no escape and no control character (serde's otherwise), as its text.
    #[inline(always)]
    fn string(&mut self) -> Option<&'a str> {
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
    fn number(&mut self) -> Option<&'a str> {
        let start = self.i;
        self.eat_if(b'-');
        if !self.eat_if(b'0') && self.digits() == 0 {
            return None;
        }
        if self.eat_if(b'.') && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        self.text.get(start..self.i)
    }

    #[inline(always)]
    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// `seq` written as a plain whole number in range (serde's for `7.0`, `7e0` and the rest).
    fn seq(&mut self) -> Option<u64> {
        let text = self.number()?;
        if text.len() > 16 || !text.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        text.parse::<u64>().ok().filter(|&n| n <= MAX_SEQ)
    }

    /// An object's entries in order, each value read by `value`; None for a key twice.
    fn entries<V>(
        &mut self,
        mut value: impl FnMut(&mut Self) -> Option<V>,
    ) -> Option<Vec<(Cow<'a, str>, V)>> {
        let mut out: Vec<(Cow<'a, str>, V)> = Vec::new();
        self.eat(b'{')?;
        self.ws();
        if self.eat_if(b'}') {
            return Some(out);
        }
        loop {
            let key = self.string()?;
            if out.len() >= MAX_KEYS || out.iter().any(|(k, _)| k == key) {
                return None;
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            let v = value(self)?;
            out.push((Cow::Borrowed(key), v));
            self.ws();
            if self.eat_if(b'}') {
                return Some(out);
            }
            self.eat(b',')?;
            self.ws();
        }
    }

    /// Checks an object as it is skipped: each key once, every value valid JSON.
    fn skip_object(&mut self, depth: u32) -> Option<()> {
        let mut keys: [&str; MAX_KEYS] = [""; MAX_KEYS];
        let mut n = 0;
        self.eat(b'{')?;
        self.ws();
        if self.eat_if(b'}') {
            return Some(());
        }
        loop {
            let key = self.string()?;
            if n == MAX_KEYS || keys[..n].contains(&key) {
                return None;
            }
            keys[n] = key;
            n += 1;
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.skip_value(depth + 1)?;
            self.ws();
            if self.eat_if(b'}') {
                return Some(());
            }
            self.eat(b',')?;
            self.ws();
        }
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
            _ => self.skipped_number(),
        }
    }

    fn skip_array(&mut self, depth: u32) -> Option<()> {
        self.eat(b'[')?;
        self.ws();
        if self.eat_if(b']') {
            return Some(());
        }
        loop {
            self.skip_value(depth + 1)?;
            self.ws();
            if self.eat_if(b']') {
                return Some(());
            }
            self.eat(b',')?;
            self.ws();
        }
    }

    fn word(&mut self, w: &str) -> Option<()> {
        let end = self.i + w.len();
        (self.b.get(self.i..end)? == w.as_bytes()).then(|| self.i = end)
    }

    /// A number in a skipped value: one that serde reads without doubt (a whole number of
    /// up to 18 digits, or a finite f64 written in under 40 characters with an exponent of
    /// at most three digits); anything else (overflow and its edges) is serde's to judge.
    fn skipped_number(&mut self) -> Option<()> {
        let text = self.number()?;
        let plain = !text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
        if plain && text.len() <= 18 {
            return Some(());
        }
        let exponent = text
            .find(['e', 'E'])
            .map_or(0, |e| text[e + 1..].trim_start_matches(['+', '-']).len());
        let finite = text.parse::<f64>().is_ok_and(f64::is_finite);
        (text.len() < 40 && exponent <= 3 && finite).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::de::{Info, ViewSeed};
    use super::view;
    use proptest::prelude::*;
    use serde::de::DeserializeSeed;

    /// Lines of the shapes the scanner takes: a timecmd sample and a pingrt sample as the
    /// tools write them, with nested `info`, odd spacing and every kind of JSON value.
    const SHAPES: [&str; 3] = [
        r#"{"schema":"benchmatrix/1","tool":"timecmd","version":"0.1.0","type":"sample","run":"0a1b2c3d4e5f","seq":12,"at":"2026-12-07T10:00:01.250000Z","host":"h1","label":"env1/lvm/disk","name":"make 3","tags":{"disk":"vdb","peer":"10.0.0.2"},"values":{"wall_s":0.52343117702468739,"user_s":0.2,"max_rss_bytes":2945024,"cpu_ratio":1e-3,"fs_read_bytes":0},"info":{"run":13,"ok":true,"exit_code":0,"pid":10012}}"#,
        r#" { "schema" : "benchmatrix/1" , "tool":"pingrt","version":"0.1.0","type":"sample","run":"r","seq":0,"at":"2026-12-07T10:00:01Z","host":"ü","label":"a/b","name":"ping ::1","invocation":"i","values":{"rtt_s":1.5E-4},"info":{"x":[1,-2.5e+3,{"y":null,"z":[true,false,[]]},"s"],"e":{},"k":-0} } "#,
        r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"summary","run":"r","seq":9007199254740991,"at":"2026-12-07T10:00:01Z","host":"h","label":"l","name":"n","status":"failed","error":"it broke","headline":"x_s","values":{"x_s":3}}"#,
    ];

    /// The serde reader's view of `line`, where it reads one.
    fn serde_view(line: &str) -> Option<super::RecordView<'_>> {
        let mut de = serde_json::Deserializer::from_str(line);
        let v = ViewSeed(Info::Ends).deserialize(&mut de).ok()?;
        de.end().ok().map(|()| v)
    }

    #[test]
    fn the_usual_shapes_are_scanned_as_serde_reads_them() {
        for line in SHAPES {
            let v = view(line, Info::Ends).expect("the scanner takes the usual shape");
            assert_eq!(Some(v), serde_view(line), "{line}");
        }
    }

    #[test]
    fn what_the_scanner_leaves_to_serde() {
        let base = SHAPES[0];
        for (from, to) in [
            (r#""h1""#, r#""h\u0031""#),
            (r#""wall_s""#, r#""wall_\u0073""#),
            (r#""seq":12"#, r#""seq":12.0"#),
            (r#""seq":12"#, r#""seq":012"#),
            (r#""type":"sample""#, r#""type":"begin""#),
            (r#""ok":true"#, r#""ok":true,"ok":1"#),
            (r#""pid":10012"#, r#""pid":1e400"#),
            (
                r#""pid":10012"#,
                r#""pid":12345678901234567890123456789012345678901"#,
            ),
            (r#""wall_s":0.52343117702468739"#, r#""wall_s":"1""#),
            (r#""disk":"vdb""#, r#""disk":"vdb","disk":"vdc""#),
            (r#""name":"make 3""#, r#""name":"make 3","extra":1"#),
            (
                r#""info":{"#,
                r#""info":{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"#,
            ),
        ] {
            let line = base.replacen(from, to, 1);
            assert_ne!(line, base, "{from}");
            assert!(view(&line, Info::Ends).is_none(), "{line}");
        }
        // A begin's or a summary's info is built: serde's.
        assert!(view(&SHAPES[2].replace("}}", r#"},"info":{}}"#), Info::Ends).is_none());
        // Every record's, for parse_line.
        assert!(view(SHAPES[0], Info::Keep).is_none());
    }

    /// The char boundary at or before byte `i` of `line`.
    fn boundary(line: &str, i: usize) -> usize {
        (0..=i.min(line.len()))
            .rev()
            .find(|&k| line.is_char_boundary(k))
            .unwrap_or(0)
    }

    /// One of the shapes with a byte replaced, cut short, or a piece doubled.
    fn changed() -> impl Strategy<Value = String> {
        let pick = 0..SHAPES.len();
        prop_oneof![
            (pick.clone(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(s, i, b)| {
                let mut bytes = SHAPES[s].as_bytes().to_vec();
                let i = i.index(bytes.len());
                bytes[i] = b;
                String::from_utf8_lossy(&bytes).into_owned()
            }),
            (pick.clone(), any::<prop::sample::Index>()).prop_map(|(s, i)| {
                let line = SHAPES[s];
                line[..boundary(line, i.index(line.len()))].to_string()
            }),
            (pick, any::<prop::sample::Index>(), 1..24usize).prop_map(|(s, i, n)| {
                let line = SHAPES[s];
                let (a, b) = line.split_at(boundary(line, i.index(line.len())));
                let piece: String = b.chars().take(n).collect();
                format!("{a}{piece}{b}")
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever the scanner takes, serde takes as the same view.
        #[test]
        fn the_scanner_takes_only_what_serde_takes(line in changed()) {
            if let Some(v) = view(&line, Info::Ends) {
                prop_assert_eq!(Some(v), serde_view(&line), "{}", line);
            }
        }
    }
}
