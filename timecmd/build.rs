//! Links timecmd as a static executable at a fixed address where the system has the static
//! C library, so that nothing is loaded or relocated when it starts. timecmd is timed as a
//! whole against /usr/bin/time (bench/run, bench/timecmd.sh), and on a VM the start-up work
//! that this removes is a good part of a whole `timecmd -- true` (about 1.2 ms): loading and
//! relocating libc, then, for a static PIE, relocating some 2,900 pointers of its own, which
//! alone cost 0.05 to 0.1 ms a cold start (bench/run: 1.20 and 1.21 ms as a static PIE, 1.11
//! to 1.15 ms as this).
//!
//! The price is that timecmd's own code and data sit at the same address in every process;
//! its stack, heap and mappings are still placed at random. timecmd reads no untrusted input
//! (its arguments, /proc and /sys), so address randomization of its image would guard little.
//! It resolves no host or user names either, so static glibc's weakness (NSS) cannot touch it.
//!
//! Cargo has no per-package crt-static, and std names its libraries (`-lgcc_s -lc`...) after
//! a `-Bdynamic`. So this puts links to the static archives (libc.a, libgcc_eh.a for
//! libgcc_s, ...) in a folder of its own that the linker searches before the compiler's own:
//! there each `-l` finds an archive. Where an archive is missing (no libc6-dev, musl, cross or
//! crt-static builds), GCC's unwinder alone is linked from its archive, so that libc is still
//! the only shared library: libgcc_s would cost one more load.
#![allow(
    clippy::print_stdout,
    reason = "a build script talks to cargo on stdout"
)]

use std::env::var;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries std links on linux-gnu, each replaced by the archive named beside it.
const STD_LIBS: [(&str, &str); 7] = [
    ("gcc_s", "libgcc_eh.a"),
    ("util", "libutil.a"),
    ("rt", "librt.a"),
    ("pthread", "libpthread.a"),
    ("m", "libm.a"),
    ("dl", "libdl.a"),
    ("c", "libc.a"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    let is = |key: &str, want: &str| var(key).is_ok_and(|v| v == want);
    let crt_static = var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|f| f.contains("crt-static"));
    let native = var("TARGET").ok() == var("HOST").ok();
    if !is("CARGO_CFG_TARGET_OS", "linux")
        || !is("CARGO_CFG_TARGET_ENV", "gnu")
        || crt_static
        || !native
    {
        return;
    }
    let cc = var("CC").unwrap_or_else(|_| "cc".into());
    if let Some(dir) = var("OUT_DIR")
        .ok()
        .and_then(|out| static_archives(&cc, &Path::new(&out).join("static")))
    {
        // For the binary alone: a search path given to the library would reach the crates
        // that link it (the workspace's tests) and turn their -lc static too.
        println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        println!("cargo:rustc-link-arg-bins=-static");
        println!("cargo:rustc-link-arg-bins=-no-pie");
        return;
    }
    let Some(unwinder) = find(&cc, "libgcc_eh.a") else {
        return;
    };
    if let Some(dir) = unwinder.parent() {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    // Whole: the unwinder's users (std) come later on the link line than this crate.
    println!("cargo:rustc-link-lib=static:+whole-archive=gcc_eh");
}

/// Fills `dir` with `lib<name>.a` links to the static archives of std's libraries and
/// returns it; None when the compiler lacks any of them or the static start files.
fn static_archives(cc: &str, dir: &Path) -> Option<PathBuf> {
    find(cc, "crt1.o")?;
    find(cc, "crtbeginT.o")?;
    let found = STD_LIBS
        .iter()
        .map(|(lib, archive)| find(cc, archive).map(|path| (lib, path)))
        .collect::<Option<Vec<_>>>()?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).ok()?;
    for (lib, path) in found {
        std::os::unix::fs::symlink(path, dir.join(format!("lib{lib}.a"))).ok()?;
    }
    Some(dir.to_path_buf())
}

/// The compiler's own path for a library file, if it has that file.
fn find(cc: &str, file: &str) -> Option<PathBuf> {
    let out = Command::new(cc)
        .arg(format!("-print-file-name={file}"))
        .output()
        .ok()?;
    // The compiler prints the bare name back when it has no such file.
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (path.is_absolute() && path.is_file()).then_some(path)
}
