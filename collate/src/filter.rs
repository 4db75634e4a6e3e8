//! `--filter EXPR`: which records (and metrics) go into the matrix, in benchstat's filter
//! syntax: `key:value` matches a key's whole value (`*` matches any run of characters, in
//! quotes too; quote a value with spaces or parentheses: `name:"icmp latency*"`),
//! `key:(a OR b)` any of several values, `-x` negates, juxtaposition or `AND` is and, `OR` is
//! or, parentheses group. `key=value` is accepted for `key:value`. Keys are those of
//! `--rows`/`--cols`.

use crate::dims::{Dim, Source};

/// A parsed filter expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    All,
    Match(Dim, Vec<Pattern>),
    Not(Box<Filter>),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
}

/// A value to match: `*` matches any run of characters.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    text: String,
}

impl Pattern {
    pub fn matches(&self, v: &str) -> bool {
        if !self.text.contains('*') {
            return self.text == v;
        }
        glob_match(&self.text, v)
    }
}

/// `*` matches any (possibly empty) run of characters.
fn glob_match(pat: &str, s: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    let (first, rest) = (parts[0], &parts[1..]);
    let Some(mut tail) = s.strip_prefix(first) else {
        return false;
    };
    for (i, part) in rest.iter().enumerate() {
        if i == rest.len() - 1 {
            return tail.ends_with(part);
        }
        match tail.find(part) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open,
    Close,
    Minus,
    Or,
    And,
    Word { text: String, quoted: bool },
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '(' {
            out.push(Tok::Open);
            i += 1;
            continue;
        }
        if c == ')' {
            out.push(Tok::Close);
            i += 1;
            continue;
        }
        if c == '-' {
            out.push(Tok::Minus);
            i += 1;
            continue;
        }
        let mut text = String::new();
        let mut quoted = false;
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() || c == '(' || c == ')' {
                break;
            }
            if c == '"' {
                quoted = true;
                i += 1;
                let mut closed = false;
                while i < chars.len() {
                    match chars[i] {
                        '\\' if i + 1 < chars.len() => {
                            text.push(chars[i + 1]);
                            i += 2;
                        }
                        '"' => {
                            closed = true;
                            i += 1;
                            break;
                        }
                        other => {
                            text.push(other);
                            i += 1;
                        }
                    }
                }
                if !closed {
                    return Err("a quote \" is not closed".into());
                }
                continue;
            }
            text.push(c);
            i += 1;
        }
        match (text.as_str(), quoted) {
            ("OR", false) => out.push(Tok::Or),
            ("AND", false) => out.push(Tok::And),
            _ => out.push(Tok::Word { text, quoted }),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> Result<Filter, String> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            let right = self.and()?;
            left = Filter::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Filter, String> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                Some(Tok::And) => {
                    self.pos += 1;
                }
                Some(Tok::Word { .. } | Tok::Minus | Tok::Open) => {}
                _ => return Ok(left),
            }
            let right = self.unary()?;
            left = Filter::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Filter, String> {
        match self.next() {
            Some(Tok::Minus) => Ok(Filter::Not(Box::new(self.unary()?))),
            Some(Tok::Open) => {
                let f = self.or()?;
                match self.next() {
                    Some(Tok::Close) => Ok(f),
                    _ => Err("a parenthesis ( is not closed".into()),
                }
            }
            Some(Tok::Word { text, quoted }) => {
                if text == "*" && !quoted {
                    return Ok(Filter::All);
                }
                let Some(at) = text.find([':', '=']) else {
                    return Err(format!(
                        "\"{text}\" is not a match: write key:value, e.g. label:para/* or name:\"icmp latency\""
                    ));
                };
                let dim = Dim::parse(&text[..at])?;
                let value = &text[at + 1..];
                if value.is_empty() && !quoted {
                    // key:(a OR b)
                    if self.peek() == Some(&Tok::Open) {
                        self.pos += 1;
                        let mut pats = Vec::new();
                        loop {
                            match self.next() {
                                Some(Tok::Word { text, .. }) => pats.push(Pattern { text }),
                                _ => {
                                    return Err(format!(
                                        "{}:( must hold values separated by OR",
                                        dim.key()
                                    ));
                                }
                            }
                            match self.next() {
                                Some(Tok::Or) => continue,
                                Some(Tok::Close) => break,
                                _ => {
                                    return Err(format!(
                                        "{}:( must hold values separated by OR, then )",
                                        dim.key()
                                    ));
                                }
                            }
                        }
                        return Ok(Filter::Match(dim, pats));
                    }
                }
                Ok(Filter::Match(
                    dim,
                    vec![Pattern {
                        text: value.to_string(),
                    }],
                ))
            }
            Some(Tok::Close) => Err("unexpected )".into()),
            Some(Tok::Or | Tok::And) => Err("OR/AND needs a match on each side".into()),
            None => Err("the expression ends too early".into()),
        }
    }
}

impl Filter {
    /// Parses a filter expression; an empty one matches everything.
    pub fn parse(s: &str) -> Result<Filter, String> {
        let toks = tokenize(s).map_err(|e| format!("--filter {s}: {e}"))?;
        if toks.is_empty() {
            return Ok(Filter::All);
        }
        let mut p = Parser { toks, pos: 0 };
        let f = p.or().map_err(|e| format!("--filter {s}: {e}"))?;
        if p.pos < p.toks.len() {
            return Err(format!(
                "--filter {s}: unexpected text after the expression"
            ));
        }
        Ok(f)
    }

    /// Whether the filter depends on the metric (so it is evaluated per metric, not per record).
    pub fn per_metric(&self) -> bool {
        match self {
            Filter::All => false,
            Filter::Match(d, _) => d.per_metric(),
            Filter::Not(f) => f.per_metric(),
            Filter::And(a, b) | Filter::Or(a, b) => a.per_metric() || b.per_metric(),
        }
    }

    /// Every dimension the filter reads.
    pub fn dims(&self, out: &mut Vec<Dim>) {
        match self {
            Filter::All => {}
            Filter::Match(d, _) => {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
            Filter::Not(f) => f.dims(out),
            Filter::And(a, b) | Filter::Or(a, b) => {
                a.dims(out);
                b.dims(out);
            }
        }
    }

    pub fn matches(&self, r: &dyn Source, metric: &str) -> bool {
        match self {
            Filter::All => true,
            Filter::Match(d, pats) => {
                let v = r.get(d, metric);
                pats.iter().any(|p| p.matches(v))
            }
            Filter::Not(f) => !f.matches(r, metric),
            Filter::And(a, b) => a.matches(r, metric) && b.matches(r, metric),
            Filter::Or(a, b) => a.matches(r, metric) || b.matches(r, metric),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::Record;

    fn rec(name: &str, label: &str, disk: &str) -> Record {
        let line =
            serde_json::json!({"schema":"benchmatrix/1","tool":"t","version":"0","type":"sample",
            "run":"0","seq":0,"at":"2026-11-30T13:00:00Z","host":"h","label":label,"name":name,
            "tags":{"disk":disk},"values":{"x_s":1.0}})
            .to_string();
        measure::parse_line(&line).unwrap()
    }

    #[test]
    fn benchstat_syntax() {
        let r = rec("icmp latency", "para/lvm/san", "lvm");
        let r = r.as_view();
        let m = |e: &str| Filter::parse(e).unwrap().matches(&r, "rtt_s");
        assert!(m("name:\"icmp latency\""));
        assert!(m("label:para/*"));
        assert!(!m("label:hvm/*"));
        assert!(m("label.2:lvm disk:lvm"));
        assert!(m("label.2:lvm AND -disk:xfs"));
        assert!(m("disk:(xfs OR lvm)"));
        assert!(m("disk:xfs OR metric:rtt_s"));
        assert!(!m("-(disk:lvm)"));
        assert!(m("unit:s"));
        assert!(m("*"));
        assert!(m("label=*san"));
        assert!(m("label:p*/*/s*n"));
        assert!(m("label:\"para/*\""));
        assert!(m("name:\"icmp lat*\""));
        assert!(Filter::parse("name:\"x").is_err());
        assert!(Filter::parse("(name:x").is_err());
        assert!(Filter::parse("name").is_err());
        assert!(Filter::parse("OR").is_err());
        assert!(Filter::parse("disk:(a b)").is_err());
        assert!(Filter::parse("metric:x_s").unwrap().per_metric());
    }
}
