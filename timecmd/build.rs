//! Links GCC's unwinder from its static archive (libgcc_eh.a) instead of loading libgcc_s.so
//! at every start. timecmd is timed as a whole against /usr/bin/time (bench/timecmd.sh), and
//! one more shared library to map and relocate costs each start about 0.1 ms on a VM, a
//! tenth of a whole `timecmd -- true`. With all of the unwinder's symbols defined in the
//! binary, the linker's --as-needed leaves libgcc_s out; panics unwind and print backtraces
//! as before. Where the archive is not found (cross builds, another C compiler, musl or
//! crt-static builds), the link stays as Rust makes it.
#![allow(
    clippy::print_stdout,
    reason = "a build script talks to cargo on stdout"
)]

use std::env::var;
use std::path::Path;
use std::process::Command;

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
    let Ok(out) = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    // The compiler prints the bare name back when it has no such file.
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let archive = Path::new(&printed);
    let Some(dir) = archive
        .parent()
        .filter(|_| archive.is_absolute() && archive.is_file())
    else {
        return;
    };
    println!("cargo:rustc-link-search=native={}", dir.display());
    // Whole: the unwinder's users (std) come later on the link line than this crate.
    println!("cargo:rustc-link-lib=static:+whole-archive=gcc_eh");
}
