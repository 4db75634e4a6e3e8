//! Records and messages never land in the target: stdout or stderr opened on the file or the
//! device blkread or blkwrite measures is refused before anything is written (exit 2), and
//! the target keeps every byte.

use crate::common::{bin, blkread_bin, fs_loop};
use std::path::Path;
use std::process::{Command, Output};

/// `tool args` run by sh with `redirect` (constant shell text: `>> "$T"`, `2>> "$T"`), `$T`
/// naming `target` in sh's environment.
fn redirected(tool: &str, args: &[&str], redirect: &str, target: &Path) -> Output {
    Command::new("sh")
        .args(["-c", &format!(r#"exec "$@" {redirect}"#), "sh", tool])
        .args(args)
        .env("T", target)
        .output()
        .expect("sh runs")
}

/// A file of `bytes` bytes in a scratch directory whose path has a space and a quote.
fn scratch(bytes: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let d = testkit::odd_tempdir("streams");
    let f = d.path().join("data");
    let data: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, &data).expect("written");
    (d, f, data)
}

#[test]
fn stdout_appending_to_the_target_is_refused() {
    let (_d, f, data) = scratch(1 << 20);
    let p = f.to_str().expect("a UTF-8 path");
    for (tool, args) in [
        (blkread_bin(), &["-s", "1M", p][..]),
        (bin(), &["--force", "-s", "1M", p]),
    ] {
        let out = redirected(tool, args, r#">> "$T""#, &f);
        assert_eq!(out.status.code(), Some(2), "{tool} {args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stdout is") && err.contains("-o FILE"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(&f).expect("read back"),
            data,
            "{tool} {args:?}"
        );
    }
}

#[test]
fn stderr_on_the_target_is_refused_without_a_word_into_it() {
    let (d, f, data) = scratch(1 << 20);
    let p = f.to_str().expect("a UTF-8 path");
    let rec = d.path().join("r.jsonl");
    let args = ["-s", "1M", p, "-o", rec.to_str().expect("a UTF-8 path")];
    let out = redirected(blkread_bin(), &args, r#"2>> "$T""#, &f);
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
        &["-s", "1M", &dev.dev],
        r#"> "$T""#,
        Path::new(&dev.dev),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read_magic(), before);
}
