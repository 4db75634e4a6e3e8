//! The binaries under test: the workspace's release builds, the profile `./benchmatrix` and
//! `cargo install` make, so that no test passes on a debug-only code path (clap's debug
//! assertions, overflow checks). One `cargo build --release` per test process, shared by every
//! crate's tests: cargo serializes concurrent builds and finds the second one up to date.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The target directory cargo builds into (honours CARGO_TARGET_DIR).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// The release binary `name` of the workspace, built (see [`bin_dir`]).
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(path.exists(), "binary {} was not built", path.display());
    path
}

/// Builds every binary of the workspace in release once per test process (cargo gives an
/// integration test only its own package's binaries, and only in the test's profile), then
/// returns the directory that holds them. The calling test shares the machine from here on
/// (see [`crate::alone`]), and its children start with a shell's signal dispositions (see
/// [`crate::signal::as_a_shell_gives`]).
pub fn bin_dir() -> PathBuf {
    crate::alone::share();
    crate::signal::as_a_shell_gives();
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args(["build", "--release", "--workspace", "--bins", "--quiet"])
            .current_dir(workspace_root())
            .output()
            .map_err(|e| format!("cannot run cargo build: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cargo build --release --workspace --bins failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = built {
        panic!("{e}");
    }
    target_dir().join("release")
}

/// The release binary `name` as text, for `Command::new` and for the environment of a shell
/// line that runs it as `"$BIN"` (every path under the target directory is UTF-8). The
/// calling test shares the machine from here on (see [`crate::alone`]).
pub fn tool(name: &str) -> &'static str {
    crate::alone::share();
    crate::signal::as_a_shell_gives();
    static PATHS: std::sync::Mutex<Vec<(String, &'static str)>> = std::sync::Mutex::new(Vec::new());
    let mut paths = PATHS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, p)) = paths.iter().find(|(n, _)| n == name) {
        return p;
    }
    let path = bin(name);
    let text: &'static str = match path.to_str() {
        Some(s) => Box::leak(s.to_string().into_boxed_str()),
        None => panic!("not a UTF-8 path: {}", path.display()),
    };
    paths.push((name.to_string(), text));
    text
}
