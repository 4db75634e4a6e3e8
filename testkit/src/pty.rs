//! A real terminal for a command: script(1) runs it on a new pseudo-terminal, so that a tool's
//! terminal behaviour (human lines, no JSON) is tested as a person would see it. The command
//! line is constant shell text; the data it needs (the binary's path, scratch files) reaches
//! the shell in its environment, quoted where used (`"$BIN"`), so a path with spaces or quotes
//! stays one word and is never read as shell code.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a command may run on the pty before the test gives up and ends it.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs `cmdline` (constant shell text) on a pty with no input, with each `(name, value)` of
/// `env` in its environment (script(1) hands its environment to the shell it starts), for the
/// line to use as `"$name"`; returns its exit status and what the terminal showed (stdout and
/// stderr both, the pty's CRLF turned into LF), or `None` after reporting a skip when
/// script(1) is not installed.
pub fn on_terminal(cmdline: &str, env: &[(&str, &OsStr)]) -> Option<(i32, String)> {
    if !crate::need_tool("script") {
        return None;
    }
    let mut child = Command::new("script")
        .args(["-qec", cmdline, "/dev/null"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run script: {e}"));
    let mut out = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let end = Instant::now() + LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{cmdline:?} still runs on the pty after {LIMIT:?}");
            }
            Err(e) => panic!("cannot wait for script: {e}"),
        }
    };
    let shown = reader.join().unwrap_or_default();
    let text = String::from_utf8_lossy(&shown).replace("\r\n", "\n");
    Some((status.code().unwrap_or(-1), text))
}

/// Runs `line` (constant shell text) on a pty as [`on_terminal`] does, with the tool `bin` in
/// `$BIN` and each of `paths` in the environment under its name.
pub fn tool_on_terminal(bin: &str, line: &str, paths: &[(&str, &Path)]) -> Option<(i32, String)> {
    let mut env = vec![("BIN", OsStr::new(bin))];
    env.extend(paths.iter().map(|&(name, p)| (name, p.as_os_str())));
    on_terminal(line, &env)
}

/// A scratch directory whose name (after `prefix`) has a space and a single quote, so that a
/// test that passes it to a shell shows it reaching the shell as data, never as code.
pub fn odd_tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{prefix} a b'c"))
        .tempdir()
        .unwrap_or_else(|e| panic!("cannot make a scratch directory: {e}"))
}
