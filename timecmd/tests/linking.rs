//! How the timecmd binary is linked: static, at a fixed address, with nothing to load or
//! relocate at start, wherever the C compiler has the static C library (see timecmd/build.rs):
//! that start-up work is a good part of a whole `timecmd -- true`.

use std::path::PathBuf;
use std::process::Command;

/// An ELF64 little-endian file's type (2: an executable at a fixed address; 3: a shared
/// object or PIE) and whether it asks for a program interpreter (a PT_INTERP header).
fn elf_kind(elf: &[u8]) -> (u64, bool) {
    const PT_INTERP: u64 = 3;
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    // A little-endian number of `len` bytes at `at`.
    let num = |at: usize, len: usize| {
        elf[at..at + len]
            .iter()
            .rev()
            .fold(0u64, |n, &b| (n << 8) | u64::from(b))
    };
    let (phoff, size, count) = (num(0x20, 8), num(0x36, 2), num(0x38, 2));
    let interp = (0..count).any(|i| num((phoff + i * size) as usize, 4) == PT_INTERP);
    (num(0x10, 2), interp)
}

/// The compiler's path for a library file, when it has one (as build.rs asks).
fn compiler_has(file: &str) -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    Command::new(cc)
        .arg(format!("-print-file-name={file}"))
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|p| p.is_absolute() && p.is_file())
}

#[test]
fn static_at_a_fixed_address_where_the_static_c_library_is_installed() {
    if !cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        target_arch = "x86_64"
    )) {
        eprintln!("skipped: the check reads x86_64 glibc ELF files");
        return;
    }
    // The check itself sees a dynamic program's loader.
    let sh = std::fs::read("/bin/sh").unwrap();
    assert!(elf_kind(&sh).1, "/bin/sh should name its dynamic loader");
    if !(compiler_has("libc.a") && compiler_has("crt1.o")) {
        eprintln!("skipped: the compiler has no static C library (apt-get install libc6-dev)");
        return;
    }
    let timecmd = std::fs::read(env!("CARGO_BIN_EXE_timecmd")).unwrap();
    assert_eq!(
        elf_kind(&timecmd),
        (2, false),
        "timecmd should be a static executable at a fixed address (ELF type 2, no loader) \
         where libc.a is installed: see timecmd/build.rs"
    );
}
