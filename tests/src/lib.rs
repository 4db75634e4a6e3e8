//! Harness for tests that span tools: finds the release binaries, runs them, decodes their
//! JSON lines strictly through `measure`, and skips what needs root or a missing tool.

pub mod docs;
pub mod kernel;
pub mod suite;
pub mod suite_cli;
pub mod wiki;

pub use testkit::{need_root, need_tool, skip};

/// A tool library's `command()`.
pub type CommandFn = fn() -> clap::Command;

/// Every tool of the workspace with its clap Command, in the order of `members` (a tool
/// that is a second binary of another tool's crate, see [`SECOND_BINARIES`], comes just
/// before that crate's own tool).
pub const TOOLS: &[(&str, CommandFn)] = &[
    ("blkread", blkwrite::read::command),
    ("blkwrite", blkwrite::command),
    ("collate", collate::command),
    ("cpumem", cpumem::command),
    ("fsmeta", fsmeta::command),
    ("ingest", ingest::command),
    ("netpipe", netpipe::command),
    ("pingrt", pingrt::command),
    ("timecmd", timecmd::command),
];

/// Tools that are a second binary of another tool's crate, sharing its engine: (tool, crate).
/// The tool's library is the crate's module `TOOL` and its `main` is `src/bin/TOOL.rs`.
pub const SECOND_BINARIES: &[(&str, &str)] = &[("blkread", "blkwrite")];

/// The crate that builds `tool`: its own, or the one it is a second binary of.
pub fn crate_of(tool: &str) -> &str {
    SECOND_BINARIES
        .iter()
        .find(|(t, _)| *t == tool)
        .map_or(tool, |(_, c)| c)
}

use measure::Record;
use std::path::Path;
use std::process::{Command, Output};

pub use testkit::release::{bin, bin_dir, target_dir, workspace_root};

/// Decodes every line strictly; panics naming the line that the reader rejects.
pub fn decode(text: &str) -> Vec<Record> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| match measure::parse_line(l) {
            Ok(r) => r,
            Err(e) => panic!("line {} rejected: {e}\n{l}", i + 1),
        })
        .collect()
}

/// Runs a command and returns its output, panicking when it cannot start.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// The exit status and both outputs of a finished command, for a failed assertion's message.
pub fn explain(out: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Panics with the command's output unless it exited 0.
pub fn ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", explain(out));
}

/// A path as the UTF-8 text a command line takes (every path a test makes is UTF-8).
pub fn path_str(p: &Path) -> &str {
    match p.to_str() {
        Some(s) => s,
        None => panic!("not a UTF-8 path: {}", p.display()),
    }
}

/// Panics unless `dir` is empty (what a run leaves behind in its working directories).
pub fn empty_dir(dir: &Path) {
    let left: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
        Err(e) => panic!("cannot read {}: {e}", dir.display()),
    };
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        dir.display()
    );
}

/// The names of the files in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => panic!("cannot read {}: {e}", dir.display()),
    };
    names.sort();
    names
}

/// cpumem's matrix rows (each probe's role, the `name` of its samples) in the order the
/// probes run, from cpumem's own probe table; cpumem's records test pins the names.
pub fn cpumem_rows() -> Vec<String> {
    cpumem::probe::PROBES
        .iter()
        .map(|p| format!("cpumem: {}", p.role))
        .collect()
}

/// The median of `v` (the mean of the middle two for an even count); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    measure::stats::median(v).unwrap_or(f64::NAN)
}
