//! Records and messages never land in the target: stdout or stderr opened on the file or the
//! device blkread or blkwrite measures is refused before anything is written (exit 2), and
//! the target keeps every byte.

use crate::common::{bin, blkread_bin, fs_loop};
use std::process::{Command, Output};

/// `tool args` run by sh with `redirect` (`>> FILE`, `2>> FILE`).
fn redirected(tool: &str, args: &str, redirect: &str) -> Output {
    Command::new("sh")
        .args(["-c", &format!("exec '{tool}' {args} {redirect}")])
        .output()
        .expect("sh runs")
}

fn scratch(bytes: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("data");
    let data: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, &data).expect("written");
    (d, f, data)
}

#[test]
fn stdout_appending_to_the_target_is_refused() {
    let (_d, f, data) = scratch(1 << 20);
    let p = f.display().to_string();
    for (tool, args) in [
        (blkread_bin(), format!("-s 1M '{p}'")),
        (bin(), format!("--force -s 1M '{p}'")),
    ] {
        let out = redirected(tool, &args, &format!(">> '{p}'"));
        assert_eq!(out.status.code(), Some(2), "{tool} {args}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stdout is") && err.contains("-o FILE"),
            "{err}"
        );
        assert_eq!(std::fs::read(&f).expect("read back"), data, "{tool} {args}");
    }
}

#[test]
fn stderr_on_the_target_is_refused_without_a_word_into_it() {
    let (d, f, data) = scratch(1 << 20);
    let p = f.display().to_string();
    let rec = d.path().join("r.jsonl");
    let args = format!("-s 1M '{p}' -o '{}'", rec.display());
    let out = redirected(blkread_bin(), &args, &format!("2>> '{p}'"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&f).expect("read back"), data);
}

#[test]
fn stdout_on_the_device_keeps_its_file_system() {
    let Some(dev) = fs_loop(16, "mkfs.ext4 -q") else {
        return;
    };
    let read_magic = || {
        let all = std::fs::read(dev.file()).expect("the image");
        all[0x400..0x1000].to_vec()
    };
    let before = read_magic();
    // ext4's magic 0xEF53 at 0x438.
    assert_eq!(&before[0x38..0x3a], &[0x53, 0xef]);
    let out = redirected(
        blkread_bin(),
        &format!("-s 1M {}", dev.dev),
        &format!("> {}", dev.dev),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read_magic(), before);
}
