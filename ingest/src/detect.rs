//! Which tool wrote a source: told by its first word (`ingest iperf3 FILE`) or told from
//! the content.

use crate::input::Input;

/// The formats ingest reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Iperf3,
    Iperf3Stream,
    Fio,
    Hyperfine,
    Ping,
    Fping,
    /// KEY=VALUE lines of any tool: named by its word only, never told from the content.
    Figures,
}

impl Format {
    /// The subcommand that names the format (`iperf3` covers both iperf3 formats).
    pub fn word(self) -> &'static str {
        match self {
            Format::Iperf3 | Format::Iperf3Stream => "iperf3",
            Format::Fio => "fio",
            Format::Hyperfine => "hyperfine",
            Format::Ping => "ping",
            Format::Fping => "fping",
            Format::Figures => "figures",
        }
    }
}

/// The first key of the first JSON object in `text`, if the text starts with one.
fn first_key(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    rest.split_once('"').map(|(k, _)| k)
}

/// The format of `input`, told from its content.
pub fn detect(input: &Input) -> Option<Format> {
    let text = &input.text;
    let head = &text[..text.floor_char_boundary(1 << 16)];
    match first_key(head) {
        Some("event") => return Some(Format::Iperf3Stream),
        Some("start" | "intervals" | "end" | "error") => return Some(Format::Iperf3),
        Some("fio version" | "jobs" | "global options") => return Some(Format::Fio),
        Some("results") => return Some(Format::Hyperfine),
        _ => {}
    }
    if head.contains("\"fio version\"") {
        return Some(Format::Fio);
    }
    for raw in head.lines() {
        let (_, line) = crate::ping::stamp(raw.trim_end());
        if line.starts_with("PING ")
            || line.starts_with("PING6(")
            || line.contains(" bytes from ")
            || line.ends_with(" ping statistics ---")
            || line.ends_with(" ping6 statistics ---")
        {
            return Some(Format::Ping);
        }
        if line.contains(" : [")
            || line.contains(" : xmt/rcv/%loss")
            || line.contains(" is alive")
            || line.ends_with(" is unreachable")
            || counts(line)
        {
            return Some(Format::Fping);
        }
    }
    None
}

/// Whether `line` is fping -C's summary of a host: `HOST : 0.45 0.41 - 0.39`.
fn counts(line: &str) -> bool {
    line.split_once(" : ").is_some_and(|(_, rest)| {
        !rest.trim().is_empty()
            && rest
                .split_whitespace()
                .all(|t| t == "-" || t.parse::<f64>().is_ok())
    })
}

/// The iperf3 format of an input said to be iperf3's.
pub fn iperf3_kind(input: &Input) -> Format {
    match first_key(&input.text) {
        Some("event") => Format::Iperf3Stream,
        _ => Format::Iperf3,
    }
}
