//! The source text: read from FILE or stdin (`-` or none), named as the messages name it, and
//! the line a byte offset falls on.

use measure::Failure;
use std::path::Path;

/// Blanks (as spaces, so that every offset and line stays where it was) what a terminal or an
/// editor puts before a tool's output, in any order and between blanks: a UTF-8 byte order
/// mark, terminal escape sequences (CSI `ESC [ ... final`, as a shell's `ESC [?1034h` or
/// `ESC [?2004l`; OSC `ESC ] ... BEL or ESC \\`; two-byte `ESC =`, `ESC >`) and the `^C` a
/// terminal echoes for Ctrl-C. Detection and every reader see the text after it alike.
fn blank_leading_noise(b: &mut [u8]) {
    let mut i = 0;
    if b.starts_with(b"\xEF\xBB\xBF") {
        b[..3].fill(b' ');
        i = 3;
    }
    while i < b.len() {
        let end = match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'^' if b.get(i + 1) == Some(&b'C') => Some(i + 1),
            0x1b => match b.get(i + 1) {
                Some(b'[') => (i + 2..b.len()).find(|&k| (0x40..=0x7e).contains(&b[k])),
                Some(b']') => {
                    (i + 2..b.len()).find(|&k| b[k] == 0x07 || (b[k] == b'\\' && b[k - 1] == 0x1b))
                }
                Some(b'=' | b'>') => Some(i + 1),
                _ => None,
            },
            _ => None,
        };
        let Some(end) = end else { break };
        b[i..=end].fill(b' ');
        i = end + 1;
    }
}

/// UTF-16 text after its byte order mark (`FF FE` little-endian, `FE FF` big-endian) as a
/// string, or why it does not decode; `None` without such a mark.
fn utf16(b: &[u8]) -> Option<Result<String, String>> {
    let le = match b {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let body = &b[2..];
    if !body.len().is_multiple_of(2) {
        return Some(Err(format!(
            "an odd number of bytes ({}) after its byte order mark",
            body.len()
        )));
    }
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|c| match le {
            true => u16::from_le_bytes([c[0], c[1]]),
            false => u16::from_be_bytes([c[0], c[1]]),
        })
        .collect();
    Some(String::from_utf16(&units).map_err(|_| "a lone surrogate (not UTF-16 text)".to_string()))
}

/// The UTF-16 its first characters are in when they are ASCII with a NUL byte each beside
/// them, as UTF-16 text written without a byte order mark.
fn bom_less_utf16(b: &[u8]) -> Option<&'static str> {
    let [a, b1, c, d, ..] = b else { return None };
    match (*a, *b1, *c, *d) {
        (x, 0, y, 0) if x != 0 && y != 0 => Some("UTF-16LE"),
        (0, x, 0, y) if x != 0 && y != 0 => Some("UTF-16BE"),
        _ => None,
    }
}

/// The refusal of UTF-16 text that cannot be read, with the command that converts it.
fn not_utf16(name: &str, why: &str, enc: &str) -> Failure {
    let file = if name == "stdin" { "FILE" } else { name };
    Failure::usage(format!(
        "{name}: UTF-16 text ({why}): convert it to UTF-8 first: iconv -f {enc} -t UTF-8 {file} | ingest"
    ))
}

/// One source, whole.
#[derive(Debug)]
pub struct Input {
    /// FILE as given, or `stdin`.
    pub name: String,
    pub text: String,
}

impl Input {
    /// Reads `path` (`None` or `-` is stdin), at most `max` bytes of it (see [`crate::read`]).
    /// Text that is not UTF-8 is refused, naming the line of the first byte that is not.
    pub fn read(path: Option<&Path>, max: u64) -> Result<Input, Failure> {
        let (name, bytes) = crate::read::source(path, max)?;
        Input::from_bytes(name, bytes)
    }

    /// The source from its bytes (tests give them directly): UTF-16 with its byte order mark
    /// (what Windows tools write) decoded, else UTF-8.
    pub fn from_bytes(name: String, bytes: Vec<u8>) -> Result<Input, Failure> {
        let mut bytes = match utf16(&bytes) {
            Some(Ok(text)) => text.into_bytes(),
            Some(Err(why)) => return Err(not_utf16(&name, &why, "UTF-16")),
            None => bytes,
        };
        if let Some(enc) = bom_less_utf16(&bytes) {
            let why = "no byte order mark says so, and NUL bytes stand between its characters";
            return Err(not_utf16(&name, why, enc));
        }
        blank_leading_noise(&mut bytes);
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Input { name, text }),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
                Err(Failure::usage(format!(
                    "{name}:{line}: not text (a byte that is not UTF-8 at offset {at}): \
                     expected the text output of iperf3, fio, hyperfine, ping or fping"
                )))
            }
        }
    }

    /// `FILE:LINE`.
    pub fn place(&self, line: usize) -> String {
        format!("{}:{line}", self.name)
    }

    /// The 1-based line that byte offset `at` falls on.
    pub fn line_of(&self, at: usize) -> usize {
        let at = at.min(self.text.len());
        1 + self.text.as_bytes()[..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    /// The number of lines (a last line without a newline counts).
    pub fn lines(&self) -> usize {
        self.text.lines().count().max(1)
    }
}
