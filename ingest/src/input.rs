//! The source text: read from FILE or stdin (`-` or none), named as the messages name it, and
//! the line a byte offset falls on.

use measure::{Exit, Failure};
use std::io::Read;
use std::path::Path;

/// Blanks (as spaces, so that every offset and line stays where it was) what a terminal or an
/// editor puts before a tool's output: a UTF-8 byte order mark and terminal escape sequences
/// (CSI `ESC [ ... final`, as a shell's `ESC [?1034h`; OSC `ESC ] ... BEL or ESC \\`; two-byte
/// `ESC =`, `ESC >`).
fn blank_leading_noise(b: &mut [u8]) {
    let mut i = 0;
    if b.starts_with(b"\xEF\xBB\xBF") {
        i = 3;
    }
    while i + 1 < b.len() && b[i] == 0x1b {
        let end = match b[i + 1] {
            b'[' => (i + 2..b.len()).find(|&k| (0x40..=0x7e).contains(&b[k])),
            b']' => (i + 2..b.len()).find(|&k| b[k] == 0x07 || (b[k] == b'\\' && b[k - 1] == 0x1b)),
            b'=' | b'>' => Some(i + 1),
            _ => None,
        };
        let Some(end) = end else { break };
        i = end + 1;
    }
    b[..i].fill(b' ');
}

/// One source, whole.
#[derive(Debug)]
pub struct Input {
    /// FILE as given, or `stdin`.
    pub name: String,
    pub text: String,
}

/// All of `r`; an Interrupted error when Ctrl-C, SIGTERM or SIGHUP arrives before or while
/// it waits for more (a pipe whose writer goes on), so that the run ends with its summary.
/// (`read_to_end` retries after every signal.)
fn read_all(mut r: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut buf = vec![0; 64 << 10];
    loop {
        if measure::signal::interrupted() {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        match r.read(&mut buf) {
            // A signal may come with the end (the writer closed as it was sent).
            Ok(0) if measure::signal::interrupted() => {}
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::Interrupted
                    && !measure::signal::interrupted() => {}
            Err(e) => return Err(e),
        }
    }
}

impl Input {
    /// Reads `path` (`None` or `-` is stdin). Text that is not UTF-8 is refused, naming the
    /// line of the first byte that is not.
    pub fn read(path: Option<&Path>) -> Result<Input, Failure> {
        let (name, bytes) = match path {
            Some(p) if p != Path::new("-") => {
                let name = p.display().to_string();
                let bytes = std::fs::read(p).map_err(|e| Failure::new(Exit::Cannot, &name, e))?;
                (name, bytes)
            }
            _ => {
                let bytes = read_all(std::io::stdin().lock()).map_err(|e| match e.kind() {
                    std::io::ErrorKind::Interrupted => {
                        Failure::new(Exit::Interrupted, "reading stdin", "interrupted")
                    }
                    _ => Failure::new(Exit::Cannot, "reading stdin", e),
                })?;
                ("stdin".to_string(), bytes)
            }
        };
        Input::from_bytes(name, bytes)
    }

    /// The source from its bytes (tests give them directly).
    pub fn from_bytes(name: String, mut bytes: Vec<u8>) -> Result<Input, Failure> {
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
