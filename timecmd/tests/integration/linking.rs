//! How the timecmd binary is linked: an ordinary position-independent executable that the
//! dynamic loader starts, so its image is placed at random like any other program's.

/// An ELF64 little-endian file's type (2: an executable at a fixed address; 3: a shared
/// object or PIE) and whether it asks for a program interpreter (a PT_INTERP header).
fn elf_kind(elf: &[u8]) -> (u64, bool) {
    const PT_INTERP: u64 = 3;
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(
        (elf[4], elf[5]),
        (2, 1),
        "not a 64-bit little-endian ELF file"
    );
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

#[test]
fn an_ordinary_pie_with_a_loader() {
    if !cfg!(all(
        target_os = "linux",
        target_pointer_width = "64",
        target_endian = "little",
        not(target_feature = "crt-static")
    )) {
        testkit::skip("the check reads 64-bit little-endian ELF files of a dynamic C library");
        return;
    }
    let timecmd = std::fs::read(testkit::tool("timecmd")).expect("read the timecmd binary");
    assert_eq!(
        elf_kind(&timecmd),
        (3, true),
        "timecmd should be a position-independent executable (ELF type 3) that names its \
         dynamic loader"
    );
}
