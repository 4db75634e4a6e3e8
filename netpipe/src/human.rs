//! Human lines on stderr: progress and summaries for a person watching a terminal.

/// A human line on stderr, only when stderr is a terminal.
pub fn human(msg: &str) {
    if measure::cli::is_terminal(2) {
        eprintln_human(&format!("netpipe: {msg}"));
    }
}

/// Writes a line to stderr, ignoring a closed stderr.
pub fn eprintln_human(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
