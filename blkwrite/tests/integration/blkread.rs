//! blkread on real files: what it counts (every byte of a 512 MiB file, the file unchanged),
//! random and time-based reads, what it refuses (holes, missing targets, bad sizes), the
//! scratch file of --create, the page cache state, tmpfs, Ctrl-C and the summary a terminal
//! shows.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

fn tmp() -> tempfile::TempDir {
    tmp_in("blkread-test")
}

/// A file of `size` random bytes written by blkwrite (no holes), kept.
fn data_file(p: &Path, size: &str) {
    let r = blkwrite(&["-s", size, "--keep", "--seed", "3", arg(p)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// The file's SHA-256 (sha256sum) and modification time.
fn fingerprint(p: &Path) -> (String, std::time::SystemTime) {
    let out = Command::new("sha256sum").arg(p).output().unwrap();
    assert!(out.status.success());
    let sum = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    (sum, std::fs::metadata(p).unwrap().modified().unwrap())
}

/// Every latency percentile in the summary, in order: min <= p50 <= ... <= max.
fn assert_latency_ordered(r: &Run) {
    let keys = [
        "latency_min_s",
        "latency_p50_s",
        "latency_p90_s",
        "latency_p99_s",
        "latency_p99_9_s",
        "latency_max_s",
    ];
    let v: Vec<f64> = keys.iter().map(|k| r.value(k)).collect();
    assert!(
        v.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {v:?}"
    );
    assert!(v[0] > 0.0);
    let mean = r.value("latency_mean_s");
    assert!(v[0] <= mean && mean <= v[5]);
}

#[test]
fn a_sequential_read_of_512_mib_counts_every_byte_and_changes_nothing() {
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "512M");
    let before = fingerprint(&f);
    for direct in ["--direct=off", "--direct=try"] {
        let r = blkread(&[direct, arg(&f)]);
        assert_eq!(r.code, 0, "{}", r.stderr);
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
        assert_eq!(r.value("read_bytes"), 536870912.0, "{direct}");
        assert_eq!(
            r.value("read_count"),
            512.0,
            "{direct}: 1 MiB reads by default"
        );
        assert!(r.value("throughput_bytes_per_s") > 0.0);
        assert_latency_ordered(&r);
        let b = r.begin();
        assert_eq!(b["info"]["size_bytes"], 536870912);
        assert_eq!(b["info"]["target_kind"], "existing-file");
        assert!(b["info"]["fs_type"].is_string(), "{b}");
    }
    assert_eq!(fingerprint(&f), before, "reading leaves the file as it was");
}

#[test]
fn random_reads_take_4k_blocks_each_once_and_report_the_seed() {
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "8M");
    let r = blkread(&["--random", "--seed", "5", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["headline"], "reads_per_s");
    // One run, four rows: the rate and three latency percentiles, each a key of the values.
    let rows: Vec<(&str, &str)> = s["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["key"].as_str().unwrap(), h["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rows,
        [
            ("reads_per_s", "reads per second"),
            ("latency_p50_s", "latency p50"),
            ("latency_p99_s", "latency p99"),
            ("latency_p99_9_s", "latency p99.9"),
        ]
    );
    assert_eq!(
        r.value("read_count"),
        2048.0,
        "8 MiB in 4 KiB reads, each once"
    );
    assert_eq!(r.value("read_bytes"), 8388608.0);
    assert!(r.value("reads_per_s") > 0.0);
    assert_latency_ordered(&r);
    assert_eq!(r.begin()["info"]["seed"], 5);
    assert!(s["name"].as_str().unwrap().contains("rand"), "{s}");
    // io_uring at depth 8: the same count, every read in flight completed.
    let r = blkread(&["--random", "--iodepth", "8", "-s", "4M", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.value("read_count"), 1024.0);
    assert_eq!(r.summary()["info"]["engine"], "io_uring");
    assert_eq!(r.summary()["info"]["issued_count"], 1024);
}

#[test]
fn a_time_limit_wraps_around_and_writes_intervals() {
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "1M");
    for depth in ["1", "4"] {
        let r = blkread(&[
            "--random",
            "-t",
            "300ms",
            "-i",
            "100ms",
            "--iodepth",
            depth,
            arg(&f),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let s = r.summary();
        assert_eq!(s["status"], "ok");
        assert_eq!(s["info"]["stop"], "time");
        assert_eq!(
            s["info"]["issued_count"].as_f64(),
            Some(r.value("read_count"))
        );
        let intervals = Run::of("interval", &r);
        assert!(!intervals.is_empty(), "-i 100ms within 300ms");
        let sum: f64 = intervals
            .iter()
            .map(|v| v["values"]["read_count"].as_f64().unwrap())
            .sum();
        assert!(sum <= r.value("read_count"));
    }
}

#[test]
fn holes_are_refused_with_the_way_to_fill_them() {
    let d = tmp();
    let sparse = d.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let r = blkread(&[arg(&sparse)]);
    assert_eq!(r.code, 2);
    let e = r.summary()["error"].as_str().unwrap().to_string();
    assert!(e.contains("hole") && e.contains("--create"), "{e}");
    assert!(r.stderr.contains("hole"), "{}", r.stderr);
    // Data first, then a hole: the data alone may be read, the whole file may not.
    let part = d.path().join("part");
    data_file(&part, "1M");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&part)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    assert_eq!(blkread(&["-s", "1M", arg(&part)]).code, 0);
    let r = blkread(&[arg(&part)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("1048576.."), "{}", r.stderr);
    // The way out it suggests keeps the data: it copies, and the copy reads.
    let before = std::fs::read(&part).unwrap();
    let cp = r
        .stderr
        .split("(cp ")
        .nth(1)
        .and_then(|t| t.split(';').next())
        .unwrap();
    assert!(sh(&format!("cp {cp}")), "cp {cp}");
    assert_eq!(std::fs::read(&part).unwrap(), before, "the data is kept");
    let full = d.path().join("part.full");
    assert_eq!(blkread(&[arg(&full)]).code, 0, "the copy has no hole");
    // Allocated but never written (fallocate): zeros without the device, refused too.
    let alloc = d.path().join("alloc");
    if testkit::cmd("fallocate", &["-l", "4M", arg(&alloc)]).is_ok() {
        let r = blkread(&[arg(&alloc)]);
        assert_eq!(
            r.code, 2,
            "an unwritten extent reads as zeros: {:?}",
            r.records
        );
    } else {
        testkit::skip("fallocate is not supported here");
    }
}

#[test]
fn bad_sizes_and_missing_targets_exit_2_with_a_message() {
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "1M");
    let cases: &[(&[&str], &str)] = &[
        (&["-s", "2M"], "-s 2M is more than"),
        (&["-s", "0"], "--size 0"),
        (&["-b", "0"], "--bs 0"),
        (&["-b", "3x"], "--bs"),
        (&["-t", "0"], "--time 0"),
        (&["--random", "-b", "2M"], "--bs 2M"),
    ];
    for (args, said) in cases {
        let mut a = args.to_vec();
        a.push(arg(&f));
        let r = blkread(&a);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
    }
    let missing = d.path().join("missing");
    let r = blkread(&[arg(&missing)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("does not exist") && r.stderr.contains("--create"),
        "{}",
        r.stderr
    );
    assert_eq!(r.summary()["status"], "failed");
    assert!(!missing.exists(), "nothing is created without --create");
    let r = blkread(&[arg(d.path())]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a file or a block device"),
        "{}",
        r.stderr
    );
    // --create never overwrites.
    let before = fingerprint(&f);
    let r = blkread(&["--create", "1M", arg(&f)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("exists"), "{}", r.stderr);
    assert_eq!(fingerprint(&f), before);
}

#[test]
fn create_makes_reads_and_removes_a_scratch_file() {
    let d = tmp();
    let f = d.path().join("scratch");
    let r = blkread(&["--create", "4M", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!f.exists(), "the scratch file is removed");
    assert_eq!(r.value("read_bytes"), 4194304.0);
    let b = r.begin();
    assert_eq!(b["info"]["created"], true);
    assert!(b["info"]["create_s"].as_f64().unwrap() > 0.0);
    // Its pages were dropped after the fsync: buffered reads start from the device.
    assert_eq!(b["info"]["cache_resident_bytes"], 0, "{b}");
    let r = blkread(&["--create", "2M", "--keep", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        2 << 20,
        "--keep keeps it"
    );
}

#[test]
fn buffered_reads_say_what_was_cached_and_drop_cache_evicts_it() {
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "4M");
    assert!(sh(&format!("cat {} > /dev/null", arg(&f))));
    let r = blkread(&[arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cached = r.begin()["info"]["cache_resident_bytes"].as_u64().unwrap();
    assert!(
        cached > 0 && cached <= 4 << 20,
        "just read, so cached: {cached}"
    );
    let ratio = r.begin()["info"]["cache_resident_ratio"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&ratio));
    let r = blkread(&["--drop-cache", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["cache_dropped"], true);
    assert_eq!(r.begin()["info"]["cache_resident_bytes"], 0);
    // O_DIRECT does not go through the cache: no cache state then.
    let r = blkread(&["--direct=try", arg(&f)]);
    if r.begin()["info"]["direct_effective"] == true {
        assert!(r.begin()["info"].get("cache_resident_bytes").is_none());
    }
}

#[test]
fn tmpfs_refuses_direct_and_try_says_so() {
    let shm = Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
    if !is_tmpfs {
        testkit::skip("/dev/shm is not a tmpfs here");
        return;
    }
    let d = tempfile::Builder::new()
        .prefix("blkread-test")
        .tempdir_in(shm)
        .unwrap();
    let f = d.path().join("f");
    data_file(&f, "1M");
    let r = blkread(&["--direct", arg(&f)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("tmpfs") && r.stderr.contains("--direct=try"),
        "{}",
        r.stderr
    );
    let r = blkread(&["--direct=try", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b = r.begin();
    assert_eq!(b["info"]["direct_effective"], false);
    assert!(b["info"]["direct_note"].as_str().unwrap().contains("tmpfs"));
    assert_eq!(b["info"]["fs_type"], "tmpfs");
    assert_eq!(r.value("read_bytes"), 1048576.0);
}

#[test]
fn ctrl_c_writes_the_summary_and_removes_the_scratch_file() {
    let d = tmp();
    let f = d.path().join("scratch");
    for depth in ["1", "8"] {
        let mut cmd = Command::new(blkread_bin());
        cmd.args([
            "--create",
            "16M",
            "--random",
            "-t",
            "20s",
            "-i",
            "100ms",
            "--iodepth",
            depth,
        ])
        .arg(&f);
        let r = interrupted(cmd, || {
            assert!(f.exists(), "the scratch file is there while reading");
        });
        assert_eq!(r.code, 130, "{}", r.stderr);
        let s = r.summary();
        assert_eq!(s["status"], "partial");
        assert!(
            s["error"]
                .as_str()
                .unwrap()
                .contains("scratch file removed"),
            "{s}"
        );
        assert!(r.value("read_count") > 0.0);
        assert_eq!(
            s["info"]["issued_count"].as_f64(),
            Some(r.value("read_count")),
            "depth {depth}"
        );
        assert!(
            !f.exists(),
            "depth {depth}: the scratch file is removed after Ctrl-C"
        );
    }
}

#[test]
fn a_terminal_gets_a_summary_to_read_and_no_json() {
    let d = tmp();
    let f = d.path().join("scratch");
    let env = [("BLKREAD", OsStr::new(blkread_bin())), ("F", f.as_os_str())];
    let Some((code, shown)) = testkit::on_terminal(r#""$BLKREAD" --create 2M -b 256k "$F""#, &env)
    else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains('{'), "no JSON on a terminal: {shown}");
    let first = shown.lines().next().unwrap_or_default();
    assert!(
        first.ends_with("read 2M bs=256k buffered seq: ok"),
        "{shown}"
    );
    for (label, word) in [
        ("read", "2097152 bytes (2.10 MB, 2.00 MiB) in"),
        ("reads", "8 ("),
        ("latency", "p99.9"),
    ] {
        assert!(
            shown
                .lines()
                .any(|l| l.trim_start().starts_with(label) && l.contains(word)),
            "{label} ... {word}: {shown}"
        );
    }
    assert!(!f.exists(), "the scratch file is removed");
}

#[test]
fn sigterm_sighup_and_a_sent_sigpipe_end_like_ctrl_c_and_remove_the_scratch_file() {
    let d = tmp();
    let f = d.path().join("scratch");
    for sig in ["TERM", "HUP", "PIPE"] {
        let mut cmd = Command::new(blkread_bin());
        cmd.args(["--create", "16M", "--random", "-t", "20s", "-i", "100ms"])
            .arg(&f);
        let r = signalled(cmd, sig, || assert!(f.exists()));
        assert_eq!(r.code, 130, "SIG{sig}: {}", r.stderr);
        let s = r.summary();
        assert_eq!(s["status"], "partial", "SIG{sig}");
        assert!(!f.exists(), "SIG{sig}: the scratch file is removed");
    }
}

#[test]
fn a_file_put_in_the_scratch_files_place_mid_run_is_kept() {
    use std::io::BufRead;
    let d = tmp();
    let f = d.path().join("scr");
    let moved = d.path().join("scr.moved");
    for (tool, args) in [
        (
            blkread_bin(),
            &["--create", "8M", "--random", "-t", "1s", "-i", "100ms"][..],
        ),
        (bin(), &["--dsync", "-s", "4G", "-b", "4k", "-t", "2s"]),
    ] {
        let mut child = Command::new(tool)
            .args(args)
            .arg(&f)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        assert!(
            lines
                .by_ref()
                .map_while(Result::ok)
                .any(|l| l.contains("\"interval\""))
        );
        std::fs::rename(&f, &moved).expect("moved away");
        std::fs::write(&f, "precious").expect("the user's file");
        lines.for_each(drop);
        let out = child.wait_with_output().expect("ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            std::fs::read_to_string(&f).expect("kept"),
            "precious",
            "{tool}"
        );
        assert!(
            err.contains("left alone") && err.contains("scr.moved"),
            "{tool}: {err}"
        );
        std::fs::remove_file(&moved).expect("the scratch file is where the warning said");
        std::fs::remove_file(&f).expect("clean");
    }
}

#[test]
fn a_size_beyond_the_free_space_is_refused_with_the_numbers() {
    let d = tmp();
    let f = d.path().join("big");
    for (r, flag) in [
        (blkread(&["--create", "1000T", arg(&f)]), "--create 1000T"),
        (blkwrite(&["-s", "1000T", arg(&f)]), "-s 1000T"),
    ] {
        assert_eq!(r.code, 2, "{flag}: {}", r.stderr);
        assert!(
            r.stderr.contains(flag)
                && r.stderr.contains("bytes free")
                && r.stderr.contains("--force"),
            "{}",
            r.stderr
        );
        assert!(!f.exists(), "{flag}: nothing made");
    }
}

#[test]
fn drop_cache_writes_a_fresh_file_out_first_and_says_when_it_cannot_drop() {
    // Just written, not synced: every page is dirty, which DONTNEED alone keeps.
    let d = tmp();
    let f = d.path().join("fresh");
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i % 253) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let r = blkread(&["--drop-cache", arg(&f)]);
    let fs = r.begin()["info"]["fs_type"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if fs == "tmpfs" {
        testkit::skip("the scratch directory is on tmpfs, which cannot drop its pages");
        return;
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ratio = r.begin()["info"]["cache_resident_ratio"].as_f64().unwrap();
    assert!(ratio <= 0.01, "{fs}: {ratio} of a fresh file still cached");
    assert_eq!(r.summary()["status"], "ok");
    // tmpfs keeps its files in memory: the figure is the cache's, so the run is partial.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let s = tempfile::tempdir_in(shm).unwrap();
    let g = s.path().join("fresh");
    std::fs::write(&g, &data).unwrap();
    let r = blkread(&["--drop-cache", arg(&g)]);
    if r.begin()["info"]["fs_type"] != "tmpfs" {
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    let sum = r.summary();
    assert_eq!(sum["status"], "partial");
    assert!(
        sum["error"].as_str().unwrap().contains("in the page cache"),
        "{sum}"
    );
    assert!(
        sum["values"]["read_bytes"].as_f64().unwrap() > 0.0,
        "the figures are kept"
    );
    assert!(
        r.stderr.contains("page cache"),
        "the terminal says so: {}",
        r.stderr
    );
}

#[test]
fn a_buffered_timed_read_after_drop_cache_stops_at_one_pass() {
    // 4 MiB buffered with --drop-cache and 5 s: one pass (from the device), not 5 s of
    // re-reading the page cache the first pass filled.
    let d = tmp();
    let f = d.path().join("f");
    data_file(&f, "4M");
    let r = blkread(&["--drop-cache", "-t", "5s", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = r.summary();
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["info"]["passes"], 1.0, "{s}");
    assert!(
        s["info"]["one_pass"]
            .as_str()
            .unwrap()
            .contains("page cache"),
        "{s}"
    );
    assert_eq!(s["values"]["read_bytes"], 4 << 20);
    // Without --drop-cache the cache is part of what is measured (as dd's), and --time
    // starts over at the end: more than one pass.
    let r = blkread(&["-t", "300ms", arg(&f)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.summary()["info"]["passes"].as_f64().unwrap() > 1.0);
    assert!(r.summary()["info"].get("one_pass").is_none());
}
