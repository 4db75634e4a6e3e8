//! blkwrite in dd's form against GNU dd itself: the same operands write the same file (size
//! and bytes), and the closing lines on stderr have dd's shape and byte count, while the
//! records go to stdout as in blkwrite's own form; operands blkwrite cannot honour are
//! refused with exit 2.

use crate::common::{bin, parse, tmp_in};
use std::path::Path;
use std::process::Command;
use testkit::shape;

/// Runs `program` with `args`, `of=` pointing at `out`; returns (exit code, stdout, stderr).
fn run(program: &str, args: &str, out: &Path) -> (i32, Vec<u8>, String) {
    let mut words: Vec<String> = args.split(' ').map(str::to_string).collect();
    words.push(format!("of={}", out.display()));
    let o = Command::new(program).args(&words).output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The byte count of dd's third line (`N bytes ... copied`).
fn copied(stderr: &str) -> Option<u64> {
    let line = stderr.lines().find(|l| l.contains(" copied, "))?;
    line.split(' ').next()?.parse().ok()
}

#[test]
fn the_same_file_and_dds_closing_lines() {
    if !testkit::need_tool("dd") {
        return;
    }
    let d = tmp_in("ddform");
    for args in [
        "if=/dev/zero bs=64M count=4 oflag=direct conv=fsync",
        "if=/dev/zero bs=1k count=3",
        "if=/dev/zero bs=1000 count=1 conv=fdatasync",
        "if=/dev/zero bs=512 count=1 status=noxfer",
        "if=/dev/zero bs=2x1K count=5 oflag=dsync",
        "if=/dev/zero bs=4k count=2 status=none",
    ] {
        let (a, b) = (d.path().join("dd.out"), d.path().join("blkwrite.out"));
        let (dc, dout, derr) = run("dd", args, &a);
        let (bc, bout, berr) = run(bin(), args, &b);
        assert_eq!(
            (dc, bc),
            (0, 0),
            "{args}: dd said {derr}, blkwrite said {berr}"
        );
        assert!(dout.is_empty(), "dd wrote to stdout");
        assert_eq!(
            shape::lines(&berr),
            shape::lines(&derr),
            "{args}:\n{berr}\nagainst dd's\n{derr}"
        );
        assert_eq!(copied(&berr), copied(&derr), "{args}");
        let (fa, fb) = (
            std::fs::read(&a).expect("dd's file"),
            std::fs::read(&b).expect("blkwrite's file"),
        );
        assert_eq!(fa.len(), fb.len(), "{args}: file sizes");
        assert!(fa == fb, "{args}: the files differ");
        // The records go where they go in blkwrite's own form: stdout, a pipe here.
        let r = parse(&std::process::Output {
            status: std::process::ExitStatus::default(),
            stdout: bout,
            stderr: Vec::new(),
        });
        assert_eq!(r.value("written_bytes") as usize, fb.len(), "{args}");
        let name = r.summary()["name"].as_str().unwrap_or_default().to_string();
        // dd flushes only with conv=fsync or fdatasync.
        assert_eq!(
            name.contains("no-flush"),
            !args.contains("conv=f"),
            "{args}: {name}"
        );
        std::fs::remove_file(&a).expect("removed");
        std::fs::remove_file(&b).expect("removed");
    }
}

#[test]
fn an_existing_file_is_overwritten_as_dd_does() {
    if !testkit::need_tool("dd") {
        return;
    }
    let d = tmp_in("ddform");
    for args in [
        "if=/dev/zero bs=1k count=2 seek=3",
        "if=/dev/zero bs=1k count=2 seek=1 conv=notrunc",
        "if=/dev/zero bs=1k count=1",
    ] {
        let (a, b) = (d.path().join("dd.out"), d.path().join("blkwrite.out"));
        let old: Vec<u8> = (0..10_000u32).map(|i| (i % 251 + 1) as u8).collect();
        std::fs::write(&a, &old).expect("written");
        std::fs::write(&b, &old).expect("written");
        let (dc, _, derr) = run("dd", args, &a);
        let (bc, _, berr) = run(bin(), args, &b);
        assert_eq!((dc, bc), (0, 0), "{args}: {derr} / {berr}");
        assert!(
            std::fs::read(&a).expect("dd's") == std::fs::read(&b).expect("blkwrite's"),
            "{args}: blkwrite left another file than dd"
        );
    }
    // conv=excl refuses an existing file, as dd does.
    let (bc, _, berr) = run(
        bin(),
        "bs=1k count=1 conv=excl",
        &d.path().join("blkwrite.out"),
    );
    assert_eq!(bc, 2, "{berr}");
    assert!(berr.contains("exists"), "{berr}");
}

#[test]
fn what_blkwrite_cannot_honour_is_refused() {
    let d = tmp_in("ddform");
    let f = d.path().join("f");
    for (args, says) in [
        ("if=/etc/hostname bs=1k count=1", "use dd to copy"),
        ("bs=1k count=1 skip=2", "skip="),
        ("bs=1k count=1 iflag=direct", "iflag="),
        ("bs=1k count=1 oflag=append", "oflag=append"),
        ("bs=1k count=1 conv=sparse", "conv=sparse"),
        ("bs=1k count=1 status=loud", "status=loud"),
        ("bs=1k", "count= is missing"),
        ("bs=1k count=1 -b 4k", "say the same thing"),
        ("bs=1k count=1 oflag=direct --direct", "say the same thing"),
        ("bs=1q count=1", "suffix"),
    ] {
        let (code, out, err) = run(bin(), args, &f);
        assert_eq!(code, 2, "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
        assert!(out.is_empty(), "{args}: a refusal before any record");
        assert!(!f.exists(), "{args}: nothing created");
    }
    // A blkwrite flag that says something no operand does goes with them.
    let (code, out, err) = run(bin(), "bs=1k count=2 --label dd/form --verify", &f);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&out).contains("\"label\":\"dd/form\""));
    assert_eq!(
        std::fs::metadata(&f).expect("kept, as dd keeps it").len(),
        2048
    );
}
