//! Lines for a person: progress, per-event lines and the final summary, on stderr, only when a
//! person is watching (the lifecycle decides), and a summary made
//! from any tool's summary record for tools without one of their own.

use crate::record::{Status, UNIT_SUFFIXES};
use crate::reporter::Written;
use crate::units;
use serde_json::Value;
use std::io::Write;

/// The human side of one invocation: everything it prints goes to stderr.
#[derive(Debug)]
pub struct Human {
    on: bool,
    /// A progress line is on screen (written with `\r`, to be cleared before other text).
    progress: bool,
    summary_shown: bool,
}

impl Human {
    /// A handle that prints when `on`.
    pub fn new(on: bool) -> Self {
        Human {
            on,
            progress: false,
            summary_shown: false,
        }
    }

    /// Whether a person is watching (stderr is a terminal, no `-q`, and the records do not
    /// go to the same terminal).
    pub fn on(&self) -> bool {
        self.on
    }

    /// One line (a probe, an interval), after clearing a progress line.
    pub fn line(&mut self, text: &str) {
        if self.on {
            self.clear();
            let _ = writeln!(std::io::stderr(), "{text}");
        }
    }

    /// Replaces the progress line (as dd status=progress does).
    pub fn progress(&mut self, text: &str) {
        if self.on {
            let _ = write!(std::io::stderr(), "\r{text}\x1b[K");
            self.progress = true;
        }
    }

    /// Removes the progress line, if one is shown.
    pub fn clear(&mut self) {
        if self.progress {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.progress = false;
        }
    }

    /// The tool's own final summary (several lines; none when empty); the lifecycle then
    /// prints none.
    pub fn summary(&mut self, text: &str) {
        self.summary_shown = true;
        if self.on && !text.is_empty() {
            self.clear();
            let t = text.trim_end_matches('\n');
            let _ = writeln!(std::io::stderr(), "{t}");
        }
    }

    /// Whether the tool printed its own summary.
    pub fn summary_shown(&self) -> bool {
        self.summary_shown
    }
}

/// A summary for a person from a summary record: the row name and status, then the headline
/// and every other value, each in a readable unit.
pub fn summary_text(name: &str, s: &Written) -> String {
    let status = match s.status {
        Status::Ok => "ok".to_string(),
        Status::Partial => "partial".to_string(),
        Status::Failed => "failed".to_string(),
    };
    let mut out = match &s.error {
        Some(e) => format!("{name}: {status}: {e}\n"),
        None => format!("{name}: {status}\n"),
    };
    let mut keys: Vec<&String> = s.values.0.keys().collect();
    if let Some(h) = &s.headline
        && let Some(i) = keys.iter().position(|k| *k == h)
    {
        let k = keys.remove(i);
        keys.insert(0, k);
    }
    let rows: Vec<(String, String)> = keys
        .iter()
        .filter_map(|k| {
            let v = s.values.0.get(k.as_str()).and_then(Value::as_f64)?;
            Some((label(k), value_text(k, v)))
        })
        .collect();
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (l, v) in rows {
        out.push_str(&format!("  {l:<width$}  {v}\n"));
    }
    out
}

/// `write_phase_bytes_per_s` -> `write phase`: the key without its unit, spaced.
fn label(key: &str) -> String {
    let bare = UNIT_SUFFIXES
        .iter()
        .find_map(|s| key.strip_suffix(s))
        .unwrap_or(key);
    bare.replace('_', " ")
}

/// A value in the unit its key's suffix names, scaled for reading.
pub fn value_text(key: &str, v: f64) -> String {
    let suffix = UNIT_SUFFIXES
        .iter()
        .find(|s| key.ends_with(*s))
        .copied()
        .unwrap_or("");
    match suffix {
        "_count" => format!("{v}"),
        "_ratio" => format!("{}%", units::sig(v * 100.0, 3)),
        "" => units::sig3(v),
        _ => {
            let sc = units::choose_scale(suffix, v);
            format!("{} {}", units::sig3(sc.apply(v)), sc.unit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parts::Values;

    #[test]
    fn summary_puts_the_headline_first_in_units() {
        let s = Written {
            status: Status::Ok,
            error: None,
            headline: Some("throughput_bytes_per_s".into()),
            values: Values::new()
                .with_count("written_bytes", 1 << 30)
                .with("write_s", 0.5)
                .with("throughput_bytes_per_s", 2.1e9)
                .with("loss_ratio", 0.25),
        };
        let t = summary_text("write 1G", &s);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "write 1G: ok");
        assert!(
            lines[1].contains("throughput") && lines[1].ends_with("2.10 GB/s"),
            "{t}"
        );
        assert!(
            t.contains("written  1.00 GiB") || t.contains("1.00 GiB"),
            "{t}"
        );
        assert!(t.contains("500 ms"), "{t}");
        assert!(t.contains("25.0%"), "{t}");
    }

    #[test]
    fn a_failed_summary_says_why() {
        let s = Written {
            status: Status::Failed,
            error: Some("connection refused".into()),
            headline: None,
            values: Values::new(),
        };
        assert_eq!(
            summary_text("send", &s),
            "send: failed: connection refused\n"
        );
    }
}
