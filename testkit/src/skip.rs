//! Skips that somebody sees: a test that cannot run here says `skipped: why` and returns, and
//! the reason is also appended to the file named by `BENCHMATRIX_SKIP_LOG`, so that CI can list
//! every skip at the end (cargo test counts a skipped test as passed and hides its output).

use std::io::Write;

/// The environment variable naming the file that collects skip reasons (one line each).
pub const SKIP_LOG: &str = "BENCHMATRIX_SKIP_LOG";

/// Reports that the calling test is skipped for `why`: on stderr, and as a line
/// `test-name: why` in `$BENCHMATRIX_SKIP_LOG` when that is set.
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    // The test binary's name without cargo's hash: `devices` of target/debug/deps/devices-1a2b.
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| {
            s.rsplit_once('-')
                .map_or(s.clone(), |(name, _)| name.to_string())
        })
        .unwrap_or_default();
    eprintln!("skipped: {why}");
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        let line = format!("{binary}::{test}: {why}\n");
        // One write of a short line to a file opened for appending lands whole, so tests
        // running in parallel (threads and processes) do not mix their lines.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// Whether the tests run as root (namespaces, loop devices, raw sockets, tc, iptables).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// True when running as root; otherwise reports `skipped: WHAT needs root` for the caller
/// to return.
pub fn need_root(what: &str) -> bool {
    let root = is_root();
    if !root {
        skip(&format!("{what} needs root"));
    }
    root
}

/// Whether `tool` is an executable file in a folder of PATH.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

/// True when `tool` is on PATH; otherwise reports `skipped: TOOL is not installed`.
pub fn need_tool(tool: &str) -> bool {
    let found = on_path(tool);
    if !found {
        skip(&format!("{tool} is not installed"));
    }
    found
}
