//! The error line on stderr, `netpipe: what went wrong`, whoever watches: the records say it
//! too, but a script's log and a person both read stderr.

/// Writes `netpipe: msg` to stderr, ignoring a closed stderr.
pub fn say(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "netpipe: {msg}");
}
