//! blkwrite on real files in a temporary directory: what it writes (byte for byte, against
//! dd and fio too), what it refuses, --verify, alignment errors, tmpfs, ENOSPC, Ctrl-C.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use blkwrite::blk::engine::Plan;
use blkwrite::blk::pattern::{Order, Pattern, Pool};
use std::process::Command;

fn tmp() -> tempfile::TempDir {
    tmp_in("blkwrite-test")
}

/// The bytes blkwrite writes for (size, bs, seed, random data).
fn expected(size: u64, bs: u64, seed: u64) -> Vec<u8> {
    let blocks = size.div_ceil(bs);
    let pool = Pool::new(bs, blocks, Pattern::Random, seed).unwrap();
    let plan = Plan {
        start: 0,
        size,
        bs,
        blocks,
        order: Order::Sequential,
        iodepth: 1,
        flush: blkwrite::blk::engine::Flush::End,
        datasync: false,
        time: None,
        engine: blkwrite::blk::engine::Engine::Sync,
        dir: blkwrite::blk::engine::Dir::Write,
        wrap: false,
        interval: std::time::Duration::from_secs(1),
    };
    let mut v = Vec::new();
    for b in 0..blocks {
        let (_, len) = plan.extent(b);
        v.extend_from_slice(&pool.block(b)[..len as usize]);
    }
    v
}

#[test]
fn new_file_is_written_reported_and_removed() {
    let d = tmp();
    let f = d.path().join("t");
    let r = blkwrite(&["-s", "3M", "-b", "256k", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!f.exists(), "the test file is removed without --keep");
    let types: Vec<&str> = r
        .records
        .iter()
        .map(|v| v["type"].as_str().unwrap())
        .filter(|t| *t != "interval")
        .collect();
    assert_eq!(types, ["begin", "sample", "summary"]);
    let s = r.summary();
    assert_eq!(s["status"], "ok");
    assert_eq!(s["headline"], "throughput_bytes_per_s");
    assert_eq!(r.value("written_bytes"), (3 << 20) as f64);
    assert_eq!(r.value("write_count"), 12.0);
    assert_eq!(r.value("sync_count"), 1.0);
    let total = r.value("total_s");
    assert!((total - r.value("write_s") - r.value("flush_s")).abs() < 1e-9);
    for k in [
        "latency_p50_s",
        "latency_p90_s",
        "latency_p99_s",
        "latency_p99_9_s",
    ] {
        assert!(r.value(k) <= r.value("latency_max_s"));
        assert!(r.value(k) > 0.0);
    }
    let b = r.begin();
    assert_eq!(b["info"]["target_kind"], "new-file");
    assert!(b["info"]["fs_type"].is_string());
    assert!(b["info"]["block_stack"].is_array());
    assert!(b["info"]["kernel"].is_string());
    assert_eq!(b["name"], "write 3M bs=256k buffered seq fsync-end");
}

#[test]
fn odd_sizes_are_exact_and_content_is_byte_exact() {
    let d = tmp();
    for (size, bs) in [
        (1_000_003u64, 65536u64),
        (4097, 4096),
        (1, 512),
        (10 << 20, 1 << 20),
    ] {
        let f = d.path().join(format!("r{size}"));
        let r = blkwrite(&[
            "-s",
            &size.to_string(),
            "-b",
            &bs.to_string(),
            "--seed",
            "9",
            "--keep",
            f.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.value("written_bytes"), size as f64);
        let got = std::fs::read(&f).unwrap();
        assert_eq!(got.len() as u64, size);
        assert!(got == expected(size, bs, 9), "content of {size}/{bs}");
        // Random offsets at depth 8 write the very same bytes.
        let g = d.path().join(format!("q{size}"));
        let r = blkwrite(&[
            "-s",
            &size.to_string(),
            "-b",
            &bs.to_string(),
            "--seed",
            "9",
            "--random",
            "--iodepth",
            "8",
            "--keep",
            g.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(std::fs::read(&g).unwrap() == got);
    }
}

/// Whether `program` succeeds with the words of `args` (constant text) and then `last` (one
/// argument, a path's, whatever it holds); no shell.
fn runs(program: &str, args: &str, last: &str) -> bool {
    Command::new(program)
        .args(args.split(' '))
        .arg(last)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn zeros_match_dd_and_fio() {
    let d = tmp();
    let ours = d.path().join("ours");
    let r = blkwrite(&[
        "--pattern",
        "zero",
        "-c",
        "16",
        "-b",
        "64k",
        "--keep",
        ours.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let dd = d.path().join("dd");
    let of = format!("of={}", arg(&dd));
    assert!(runs(
        "dd",
        "if=/dev/zero bs=64k count=16 conv=fsync status=none",
        &of
    ));
    assert!(std::fs::read(&ours).unwrap() == std::fs::read(&dd).unwrap());
    if !testkit::need_tool("fio") {
        return;
    }
    let fio = d.path().join("fio");
    assert!(runs(
        "fio",
        "--name=z --rw=write --bs=64k --size=1M --zero_buffers --end_fsync=1 --output=/dev/null",
        &format!("--filename={}", arg(&fio))
    ));
    assert!(std::fs::read(&ours).unwrap() == std::fs::read(&fio).unwrap());
    // fio and blkwrite write the same number of bytes for the same random job.
    let ours2 = d.path().join("ours2");
    let r = blkwrite(&[
        "--direct",
        "--random",
        "-s",
        "2M",
        "-b",
        "4k",
        "--iodepth",
        "4",
        "--keep",
        ours2.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fio2 = d.path().join("fio2");
    assert!(runs(
        "fio",
        "--name=r --rw=randwrite --bs=4k --size=2M --direct=1 --ioengine=io_uring --iodepth=4 --output=/dev/null",
        &format!("--filename={}", arg(&fio2))
    ));
    assert_eq!(
        std::fs::metadata(&ours2).unwrap().len(),
        std::fs::metadata(&fio2).unwrap().len()
    );
    assert_eq!(r.value("write_count"), 512.0);
}

#[test]
fn existing_file_needs_force_and_is_kept() {
    let d = tmp();
    let f = d.path().join("precious");
    std::fs::write(&f, b"do not lose me").unwrap();
    let r = blkwrite(&["-s", "64k", f.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(r.summary()["status"], "failed");
    assert_eq!(std::fs::read(&f).unwrap(), b"do not lose me");
    let r = blkwrite(&[
        "-s",
        "64k",
        "--pattern",
        "zero",
        "--force",
        f.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["target_kind"], "existing-file");
    let got = std::fs::read(&f).unwrap();
    assert_eq!(got.len(), 65536, "kept, overwritten in place");
    assert!(got.iter().all(|&b| b == 0));
}

#[test]
fn verify_passes_then_catches_a_corrupted_block() {
    let d = tmp();
    let f = d.path().join("v");
    let p = f.to_str().unwrap();
    let r = blkwrite(&[
        "-s", "1M", "-b", "64k", "--seed", "5", "--verify", "--keep", p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.value("verify_bad_block_count"), 0.0);
    assert_eq!(r.value("verified_bytes"), (1 << 20) as f64);
    let args = ["--verify-only", "-s", "1M", "-b", "64k", "--seed", "5", p];
    assert_eq!(blkwrite(&args).code, 0);
    // Corrupt one byte in block 4 (offset 262144..327680).
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[300_000] ^= 0xFF;
    std::fs::write(&f, &bytes).unwrap();
    let r = blkwrite(&args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "failed");
    assert!(
        s["error"].as_str().unwrap().contains("offset 262144"),
        "{s}"
    );
    assert_eq!(r.value("verify_bad_block_count"), 1.0);
    // The wrong seed finds every block bad; no seed is refused.
    assert_eq!(
        blkwrite(&["--verify-only", "-s", "1M", "-b", "64k", "--seed", "6", p]).code,
        1
    );
    let r = blkwrite(&["--verify-only", "-s", "1M", "-b", "64k", p]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--seed"));
}

#[test]
fn verify_only_on_a_short_file_checks_what_is_there() {
    let d = tmp();
    let f = d.path().join("short");
    let p = f.to_str().unwrap();
    let w = blkwrite(&["-s", "3M", "--seed", "9", "--keep", p]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(50_000)
        .unwrap();
    let r = blkwrite(&["--verify-only", "-s", "3M", "--seed", "9", p]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "failed");
    let e = s["error"].as_str().unwrap();
    assert!(
        e.contains("50000 bytes, shorter than --size: 3145728"),
        "{e}"
    );
    assert!(e.contains("the 50000 bytes it has match"), "{e}");
    assert_eq!(r.value("verified_bytes"), 50_000.0);
    assert_eq!(r.value("verify_bad_block_count"), 0.0);
    assert_eq!(s["info"]["target_bytes"], 50_000);
}

#[test]
fn io_uring_random_periodic_flush_and_verify() {
    let d = tmp();
    let f = d.path().join("u");
    let r = blkwrite(&[
        "--direct",
        "--random",
        "-s",
        "4M",
        "-b",
        "4k",
        "--iodepth",
        "16",
        "--flush",
        "every=100",
        "--fdatasync",
        "--verify",
        f.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.value("write_count"), 1024.0);
    assert_eq!(r.value("sync_count"), 11.0, "10 periodic + 1 at the end");
    assert_eq!(r.value("verify_bad_block_count"), 0.0);
    let s = r.summary();
    assert_eq!(s["info"]["engine"], "io_uring");
    assert_eq!(s["info"]["direct_effective"], true);
    assert_eq!(
        r.begin()["info"]["preallocated"],
        true,
        "--random preallocates like fio"
    );
    assert!(!f.exists());
}

#[test]
fn time_limit_stops_early_and_verifies_what_was_written() {
    for depth in ["1", "8"] {
        time_limit_at_depth(depth);
    }
}

fn time_limit_at_depth(depth: &str) {
    let d = tmp();
    let f = d.path().join("t");
    let r = blkwrite(&[
        "--dsync",
        "--random",
        "-s",
        "1G",
        "-b",
        "4k",
        "--iodepth",
        depth,
        "--time",
        "300ms",
        "--verify",
        f.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["info"]["stop"], "time");
    if depth != "1" {
        assert_eq!(s["info"]["engine"], "io_uring");
    }
    assert_eq!(s["info"]["complete"], false);
    let n = r.value("write_count");
    assert!(n > 0.0 && n < (1u64 << 18) as f64);
    assert_eq!(
        s["info"]["issued_count"].as_f64(),
        Some(n),
        "depth {depth}: every write in flight at the deadline is waited for"
    );
    assert_eq!(r.value("verified_bytes"), r.value("written_bytes"));
    assert_eq!(r.value("verify_bad_block_count"), 0.0);
}

#[test]
fn direct_alignment_errors_name_the_fix() {
    let d = tmp();
    let f = d.path().join("a");
    let r = blkwrite(&["--direct", "-b", "1000", "-s", "1M", f.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--bs 1000") && r.stderr.contains("multiple of"),
        "{}",
        r.stderr
    );
    assert!(!f.exists(), "a refused run leaves no file behind");
    let r = blkwrite(&["--direct", "-b", "4k", "-s", "10000", f.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--size 10000"), "{}", r.stderr);
    assert_eq!(r.summary()["status"], "failed");
    // Buffered, the same odd sizes are fine.
    assert_eq!(
        blkwrite(&["-b", "1000", "-s", "10000", f.to_str().unwrap()]).code,
        0
    );
}

#[test]
fn usage_errors() {
    let d = tmp();
    let f = d.path().join("u");
    let p = f.to_str().unwrap();
    let r = blkwrite(&[p]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("-s SIZE"), "{}", r.stderr);
    let r = blkwrite(&["-s", "1M", "--flush", "often", p]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("every=N"));
    assert_eq!(blkwrite(&["-s", "1M", "-c", "3", p]).code, 2);
    let r = blkwrite(&["-s", "1M", d.path().to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("directory"), "{}", r.stderr);
    let r = blkwrite(&["-s", "1M", "/dev/null"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("character device"), "{}", r.stderr);
    let help = Command::new(bin()).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("EXAMPLES"));
}

#[test]
fn a_run_that_writes_nothing_is_a_failure() {
    let d = tmp();
    let p = d.path().join("z");
    let p = p.to_str().unwrap();
    // The time limit ends before the first write: measured nothing, so failed and exit 1.
    let r = blkwrite(&["-s", "1M", "--time", "1ns", p]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "failed", "{s}");
    let e = s["error"].as_str().unwrap();
    assert!(
        e.contains("nothing was written") && e.contains("--time"),
        "{e}"
    );
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    // Options that ask for nothing are usage errors.
    for args in [["-s", "0", "-b", "4k"], ["-s", "1M", "--time", "0"]] {
        let r = blkwrite(&[args[0], args[1], args[2], args[3], p]);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
}

#[test]
fn a_dangling_symlink_is_refused_by_name() {
    let d = tmp();
    let link = d.path().join("dangling");
    std::os::unix::fs::symlink("missing", &link).unwrap();
    let r = blkwrite(&["-s", "1M", link.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is a symlink to missing"), "{}", r.stderr);
    assert!(r.stderr.contains("remove the link"), "{}", r.stderr);
    assert!(
        !d.path().join("missing").exists(),
        "nothing created through the link"
    );
}

#[test]
fn tmpfs_direct_is_refused_or_reported() {
    let shm = std::path::Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "));
    if !is_tmpfs {
        testkit::skip("/dev/shm is not a tmpfs");
        return;
    }
    let f = shm.join(format!("blkwrite-test-{}", std::process::id()));
    let p = f.to_str().unwrap();
    let r = blkwrite(&["--direct", "-s", "1M", "-b", "4k", p]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("tmpfs") && r.stderr.contains("--direct=try"),
        "{}",
        r.stderr
    );
    assert!(!f.exists());
    let r = blkwrite(&["--direct=try", "-s", "1M", "-b", "4k", p]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["direct_effective"], false);
    assert!(
        r.begin()["info"]["direct_note"]
            .as_str()
            .unwrap()
            .contains("tmpfs")
    );
    assert!(r.summary()["name"].as_str().unwrap().contains("buffered"));
    assert!(!f.exists());
}

#[test]
fn enospc_on_a_small_file_system_fails_cleanly() {
    let Some(l) = fs_loop(16, "mkfs.ext4 -q") else {
        return;
    };
    let Some(m) = mounted(&l.dev, "rw") else {
        return;
    };
    let f = m.path().join("big");
    // Refused up front: 64 MiB do not fit in what statvfs says is free.
    let r = blkwrite(&["-s", "64M", "-b", "1M", f.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bytes free"), "{}", r.stderr);
    assert!(!f.exists(), "nothing made");
    // With --force it tries, and ENOSPC ends it cleanly.
    let r = blkwrite(&["--force", "-s", "64M", "-b", "1M", f.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "failed");
    assert!(s["error"].as_str().unwrap().contains("full"), "{s}");
    assert_eq!(s["info"]["errno"], libc::ENOSPC);
    assert!(r.value("written_bytes") > 0.0, "partial figures");
    assert!(!f.exists(), "the test file is removed after ENOSPC");
    assert!(r.stderr.contains("No space left"), "{}", r.stderr);
    // Read-only: a clear error, nothing written.
    drop(m);
    let Some(ro) = mounted(&l.dev, "ro") else {
        return;
    };
    let r = blkwrite(&["-s", "1M", ro.path().join("x").to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("Read-only"), "{}", r.stderr);
}

#[test]
fn btrfs_direct_is_reported_as_not_effective() {
    let Some(l) = fs_loop(128, "mkfs.btrfs -q -f") else {
        return;
    };
    let Some(m) = mounted(&l.dev, "rw") else {
        return;
    };
    let f = m.path().join("b");
    let r = blkwrite(&["--direct", "-s", "1M", "-b", "4k", f.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("btrfs"), "{}", r.stderr);
    let r = blkwrite(&["--direct=try", "-s", "1M", "-b", "4k", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["direct_effective"], false);
    assert_eq!(r.begin()["info"]["fs_type"], "btrfs");
}

#[test]
fn ctrl_c_writes_a_failed_summary_and_removes_the_file() {
    for depth in ["1", "8"] {
        ctrl_c_at_depth(depth);
    }
}

fn ctrl_c_at_depth(depth: &str) {
    let d = tmp();
    let f = d.path().join("c");
    let mut cmd = Command::new(bin());
    cmd.args([
        "--dsync",
        "-s",
        "4G",
        "-b",
        "4k",
        "--time",
        "20s",
        "--iodepth",
        depth,
    ])
    .arg(&f);
    let r = interrupted(cmd, || {});
    assert_eq!(r.code, 130, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "failed");
    assert!(s["error"].as_str().unwrap().contains("interrupted"));
    assert!(r.value("written_bytes") > 0.0);
    assert_eq!(
        s["info"]["issued_count"].as_f64(),
        Some(r.value("write_count")),
        "depth {depth}: the writes in flight at Ctrl-C are waited for"
    );
    assert!(!f.exists());
}

#[test]
fn sighup_sigterm_and_a_sent_sigpipe_write_the_summary_and_remove_the_file() {
    let d = tmp();
    let f = d.path().join("c");
    for sig in ["HUP", "TERM", "PIPE"] {
        let mut cmd = Command::new(bin());
        cmd.args(["--dsync", "-s", "4G", "-b", "4k", "--time", "20s"])
            .arg(&f);
        let r = signalled(cmd, sig, || {});
        assert_eq!(r.code, 130, "SIG{sig}: {}", r.stderr);
        assert_eq!(r.summary()["status"], "failed", "SIG{sig}");
        assert!(!f.exists(), "SIG{sig}: the file blkwrite made is removed");
    }
}
