//! The fallback where libblkid cannot be asked (see `blkid`): what a block device holds, from
//! its first and last blocks, for a fixed list: file systems (ext2/3/4, xfs, btrfs, f2fs,
//! squashfs, iso9660, FAT, NTFS), swap, LVM2 physical volumes, LUKS, md RAID superblocks, and
//! MBR/GPT partition tables.

/// How many bytes from the start of a device [`scan`] wants (btrfs's superblock is at 64 KiB).
pub const HEAD_BYTES: usize = 0x11000;
/// How many bytes from the end (md 0.90 and 1.0 superblocks live there).
pub const TAIL_BYTES: usize = 0x20000;

fn at(b: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    b.get(off..off.checked_add(len)?)
}

fn has(b: &[u8], off: usize, magic: &[u8]) -> bool {
    at(b, off, magic.len()) == Some(magic)
}

const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// What the device holds: one description per signature found (empty when none).
/// `head` is the start of the device, `tail` the bytes ending at `size` (the device size).
pub fn scan(head: &[u8], tail: &[u8], size: u64) -> Vec<String> {
    let mut found = Vec::new();
    let mut add = |s: &str| found.push(s.to_string());
    if has(head, 1080, &[0x53, 0xEF]) {
        add("an ext2/ext3/ext4 file system");
    }
    if has(head, 0, b"XFSB") {
        add("an xfs file system");
    }
    if has(head, 0x10040, b"_BHRfS_M") {
        add("a btrfs file system");
    }
    if has(head, 1024, &0xF2F5_2010_u32.to_le_bytes()) {
        add("an f2fs file system");
    }
    if has(head, 0, b"hsqs") {
        add("a squashfs file system");
    }
    if has(head, 0x8001, b"CD001") {
        add("an iso9660 file system");
    }
    if [4096usize, 8192, 16384, 65536]
        .iter()
        .any(|&p| has(head, p - 10, b"SWAPSPACE2") || has(head, p - 10, b"SWAP-SPACE"))
    {
        add("a swap area");
    }
    if (0..4).any(|s| has(head, s * 512, b"LABELONE") && has(head, s * 512 + 24, b"LVM2 001")) {
        add("an LVM2 physical volume");
    }
    if has(head, 0, b"LUKS\xba\xbe") {
        add("a LUKS encrypted volume");
    }
    if has(head, 0, &MD_MAGIC) || has(head, 4096, &MD_MAGIC) || md_at_end(tail, size) {
        add("an md RAID member superblock");
    }
    if has(head, 512, b"EFI PART") || has(head, 4096, b"EFI PART") || gpt_backup(tail, size) {
        add("a GPT partition table");
    }
    if has(head, 510, &[0x55, 0xAA]) {
        if has(head, 3, b"NTFS    ") {
            add("an NTFS file system");
        } else if has(head, 0x36, b"FAT") || has(head, 0x52, b"FAT32") {
            add("a FAT file system");
        } else if (0..4).all(|i| matches!(head.get(446 + 16 * i), Some(0x00 | 0x80))) {
            add("an MBR partition table");
        }
    }
    found
}

/// GPT's backup header, in the last logical block (512 or 4096 bytes): it remains where only
/// the primary header at the start was wiped, and gdisk or the kernel restore the table.
fn gpt_backup(tail: &[u8], size: u64) -> bool {
    [512usize, 4096].iter().any(|&block| {
        tail.len() >= block && size >= block as u64 && has(tail, tail.len() - block, b"EFI PART")
    })
}

/// md 1.0 (8-12 KiB from the end, 4 KiB aligned) and 0.90 (the last 64 KiB-aligned 64 KiB).
fn md_at_end(tail: &[u8], size: u64) -> bool {
    let tail_start = size.saturating_sub(tail.len() as u64);
    let in_tail = |off: u64| {
        off >= tail_start && has(tail, (off - tail_start) as usize, &MD_MAGIC) && off + 4 <= size
    };
    let v10 = (size / 512).saturating_sub(16) & !7;
    let v090 = (size & !0xFFFF).saturating_sub(0x10000);
    size >= 0x20000 && (in_tail(v10 * 512) || in_tail(v090))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> Vec<u8> {
        vec![0u8; HEAD_BYTES]
    }

    #[test]
    fn blank_and_random_devices_hold_nothing() {
        assert!(scan(&head(), &[0u8; TAIL_BYTES], 1 << 30).is_empty());
        let mut r = head();
        crate::blk::pattern::fill_random(&mut r, 3);
        assert!(scan(&r, &[], 1 << 30).is_empty());
        assert!(scan(&[], &[], 0).is_empty());
    }

    #[test]
    fn each_magic_is_named() {
        let cases: Vec<(usize, &[u8], &str)> = vec![
            (1080, &[0x53, 0xEF], "ext4"),
            (0, b"XFSB", "xfs"),
            (0x10040, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (512, b"EFI PART", "GPT"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (4096, &MD_MAGIC, "md RAID"),
        ];
        for (off, magic, word) in cases {
            let mut h = head();
            h[off..off + magic.len()].copy_from_slice(magic);
            let f = scan(&h, &[], 1 << 30);
            assert!(f.iter().any(|s| s.contains(word)), "{word}: {f:?}");
        }
        let mut h = head();
        h[512..520].copy_from_slice(b"LABELONE");
        h[536..544].copy_from_slice(b"LVM2 001");
        assert!(scan(&h, &[], 1 << 30)[0].contains("LVM2"));
        let mut h = head();
        h[510] = 0x55;
        h[511] = 0xAA;
        assert!(scan(&h, &[], 1 << 30)[0].contains("MBR"));
        h[446] = 0x13;
        assert!(scan(&h, &[], 1 << 30).is_empty());
    }

    #[test]
    fn a_gpt_backup_header_alone_is_named() {
        for block in [512usize, 4096] {
            let size = 1u64 << 30;
            let mut tail = vec![0u8; TAIL_BYTES];
            let at = TAIL_BYTES - block;
            tail[at..at + 8].copy_from_slice(b"EFI PART");
            assert_eq!(
                scan(&head(), &tail, size),
                ["a GPT partition table"],
                "{block}"
            );
        }
    }

    #[test]
    fn md_superblock_at_the_end() {
        let size: u64 = 64 << 20;
        let mut tail = vec![0u8; TAIL_BYTES];
        let off = ((size / 512 - 16) & !7) * 512 - (size - TAIL_BYTES as u64);
        tail[off as usize..off as usize + 4].copy_from_slice(&MD_MAGIC);
        assert!(scan(&head(), &tail, size)[0].contains("md"));
    }
}
