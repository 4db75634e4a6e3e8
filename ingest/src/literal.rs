//! Each JSON number's text as the source wrote it. serde_json keeps a number as an f64 (the
//! workspace does not turn on `arbitrary_precision`, which would slow every other reader), and
//! an f64's shortest text can differ from the source's: iperf3 prints 17 digits,
//! `3.6047458169646678`, whose f64 prints as `3.604745816964668`. A unit change computed from
//! that shorter text rounds twice (0.03604745816964668 instead of 0.036047458169646676), so
//! the converters scale the source's own digits, found here.
//!
//! After a document is parsed, its number tokens (in text order) are paired with its number
//! nodes (in document order: serde_json's `preserve_order` keeps objects in text order); a
//! node's text is kept by the node's address where it differs from the f64's own. The tree is
//! only read afterwards, so the addresses hold; where the counts disagree (a key given twice
//! keeps one value), nothing is kept and the f64's text is used, as before.

use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// Node address -> the source's text, for the documents of this conversion.
    static TEXTS: RefCell<HashMap<usize, String>> = RefCell::new(HashMap::new());
}

/// Where the JSON string opened by the quote at `open` ends: its closing quote (or the end of
/// the text), escapes skipped.
pub(crate) fn closing_quote(b: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// The number tokens of a JSON text, in order (strings skipped).
fn tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = closing_quote(b, i) + 1,
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                out.push(&text[start..i]);
            }
            _ => i += 1,
        }
    }
    out
}

/// The number nodes of `v`, in document order.
fn nodes<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    match v {
        Value::Number(_) => out.push(v),
        Value::Array(a) => a.iter().for_each(|x| nodes(x, out)),
        Value::Object(m) => m.values().for_each(|x| nodes(x, out)),
        _ => {}
    }
}

/// Keeps the source texts of `v`'s numbers, `v` having been parsed from `text`.
pub fn remember(text: &str, v: &Value) {
    let toks = tokens(text);
    let mut ns = Vec::new();
    nodes(v, &mut ns);
    if toks.len() != ns.len() {
        return;
    }
    TEXTS.with(|t| {
        let mut t = t.borrow_mut();
        for (n, tok) in ns.into_iter().zip(toks) {
            if let Value::Number(num) = n
                && num.to_string() != tok
            {
                t.insert(n as *const Value as usize, tok.to_string());
            }
        }
    });
}

/// The text of number node `v` as the source wrote it, where it differs from the f64's own.
pub fn text_of(v: &Value) -> Option<String> {
    TEXTS.with(|t| t.borrow().get(&(v as *const Value as usize)).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_digits_are_kept() {
        let text = r#"{"a":"x1.5","cpu":{"p":3.6047458169646678,"n":[1,2e3,-0.5]}}"#;
        let v: Value = serde_json::from_str(text).expect("JSON");
        remember(text, &v);
        let p = &v["cpu"]["p"];
        assert_eq!(text_of(p).as_deref(), Some("3.6047458169646678"));
        // Numbers whose f64 prints as written keep no entry.
        assert_eq!(text_of(&v["cpu"]["n"][0]), None);
    }
}
