//! Reading a JSON document out of a source: from where it starts (fio may print text before
//! it), with errors that name FILE:LINE, and what can be salvaged of one that ends early.

use crate::input::Input;
use crate::model::bad;
use measure::Failure;
use serde_json::Value;

/// How a document was read.
#[derive(Debug)]
pub enum Doc {
    /// Whole: the document, and the line after it where text follows, if any.
    Whole(Value, Option<usize>),
    /// Cut short: what was complete up to the line where the text ends.
    Truncated(Value, usize),
}

/// serde_json's message without its own " at line L column C" (the place is said first).
fn message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Reads the JSON document that starts at byte `start` of the input. `what` says what was
/// expected (`iperf3 -J output`), for the message.
pub fn document(input: &Input, start: usize, what: &str) -> Result<Doc, Failure> {
    let text = &input.text[start..];
    let first = input.line_of(start);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => {
            crate::literal::remember(&text[..stream.byte_offset()], &v);
            let rest = &text[stream.byte_offset()..];
            let trailing = rest
                .find(|c: char| !c.is_whitespace())
                .map(|i| input.line_of(start + stream.byte_offset() + i));
            Ok(Doc::Whole(v, trailing))
        }
        Some(Err(e)) if e.is_eof() => match salvage(text) {
            Some(v) => Ok(Doc::Truncated(v, first + e.line().saturating_sub(1))),
            None => Err(bad(
                &input.place(first + e.line().saturating_sub(1)),
                format!("the input ends before any complete part of {what}"),
            )),
        },
        Some(Err(e)) => Err(bad(
            &input.place(first + e.line().saturating_sub(1)),
            format!("{}: expected {what} (one JSON document)", message(&e)),
        )),
        None => Err(bad(&input.place(first), format!("empty: expected {what}"))),
    }
}

/// The one JSON document starting at byte `start`, whole, with nothing but blanks after it.
pub fn whole(input: &Input, start: usize, what: &str) -> Result<Value, Failure> {
    match document(input, start, what)? {
        Doc::Whole(v, None) => Ok(v),
        Doc::Whole(_, Some(line)) => Err(bad(
            &input.place(line),
            format!("text after the JSON document: expected one {what}"),
        )),
        Doc::Truncated(_, line) => Err(bad(
            &input.place(line),
            format!("the input ends early: expected all of {what}"),
        )),
    }
}

/// The longest prefix of a JSON text that ends in a complete object or array inside the
/// outermost one, closed: an interrupted `iperf3 -J` keeps its start and every interval
/// that was written whole.
pub fn salvage(text: &str) -> Option<Value> {
    let b = text.as_bytes();
    let mut stack: Vec<u8> = Vec::new();
    let mut best: Option<(usize, Vec<u8>)> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = crate::literal::closing_quote(b, i),
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                stack.pop();
                if stack.is_empty() {
                    break;
                }
                best = Some((i + 1, stack.clone()));
            }
            _ => {}
        }
        i += 1;
    }
    let (cut, open) = best?;
    let mut closed = text[..cut].to_string();
    closed.extend(open.iter().rev().map(|&c| c as char));
    let v = serde_json::from_str(&closed).ok()?;
    crate::literal::remember(&closed, &v);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvage_keeps_whole_parts() {
        let v = salvage(r#"{"start":{"a":1},"intervals":[{"x":1},{"x":2},{"x"#).expect("salvaged");
        assert_eq!(v["intervals"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["start"]["a"], 1);
        let v = salvage(r#"{"start":{"s":"}{"},"i":[{"x":"a\"}"}"#).expect("salvaged");
        assert_eq!(v["start"]["s"], "}{");
        assert!(salvage(r#"{"start":"#).is_none());
    }
}
