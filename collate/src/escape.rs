//! Text from records made safe to print: control characters (C0, DEL, C1) and Unicode
//! non-characters (U+FFFE, U+FFFF, U+FDD0..U+FDEF and the last two of every plane) are shown
//! as escapes (`\n`, `\x1b`, `\u{fffe}`), so that a host name or a tag cannot drive a terminal, and
//! an SVG or HTML page stays well-formed. Every format's own escaping starts from here.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is printed as an escape.
pub fn unprintable(c: char) -> bool {
    c.is_control() || noncharacter(c)
}

/// A Unicode non-character (never text; XML refuses U+FFFE and U+FFFF).
fn noncharacter(c: char) -> bool {
    let n = u32::from(c);
    (0xfdd0..=0xfdef).contains(&n) || n & 0xfffe == 0xfffe
}

/// `s` with every [`unprintable`] character as an escape: `\n`, `\t`, `\r`, else `\x1b`
/// for a control character, `\u{fffe}` for a non-character; borrowed when there is none.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unprintable) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if noncharacter(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it) with the characters it leaves raw that
/// [`visible`] escapes (DEL, C1 controls, non-characters) written as `\uXXXX` escapes:
/// the same JSON value, and no raw control character in the output.
pub fn json_ascii_controls(json: String) -> String {
    // serde_json escapes C0 controls in strings: one in its text is the layout's whitespace.
    let raw = |c: char| c > '\u{1f}' && unprintable(c);
    if !json.chars().any(raw) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_noncharacters_become_escapes() {
        assert_eq!(visible("plain ü"), "plain ü");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
        assert_eq!(visible("a\x1b[31mb"), "a\\x1b[31mb");
        assert_eq!(
            visible("\t\n\r\u{0}\u{7f}\u{9b}"),
            "\\t\\n\\r\\x00\\x7f\\x9b"
        );
        assert_eq!(
            visible("\u{fffe}\u{ffff}\u{fdd0}\u{1fffe}"),
            "\\u{fffe}\\u{ffff}\\u{fdd0}\\u{1fffe}"
        );
        assert_eq!(visible("\u{fffd}\u{fdf0}"), "\u{fffd}\u{fdf0}");
    }

    #[test]
    fn json_keeps_its_value_without_raw_controls() {
        let s = "x\u{1b}\u{7f}\u{85}\u{ffff}\u{10ffff}";
        let j = json_ascii_controls(serde_json::to_string_pretty(&[s]).unwrap_or_default());
        assert!(!j.chars().any(|c| c != '\n' && unprintable(c)), "{j}");
        let s = [s.to_string()];
        assert_eq!(serde_json::from_str::<[String; 1]>(&j).ok(), Some(s));
    }
}
