//! fsmeta end to end with real file systems: exact counts and DIR left as found, a tiny loop
//! ext4 filled up (blocks and inodes), a read-only mount, too many open files, Ctrl-C and
//! SIGTERM mid-run, and bad input.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{Run, TempDir, bin, fs_mounted, fsmeta, listing, records};
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::Spawned;

/// The samples of `r` for `phase` (equal-time slices), and the files they count; each is
/// keyed for its row (`creates_per_s`) under the run's one name, and their mean rate is the
/// phase's own (the summary's).
fn phase_samples(r: &Run, phase: &str) -> (usize, u64) {
    let s: Vec<_> = r
        .of("sample")
        .into_iter()
        .filter(|v| v["info"]["phase"] == phase)
        .collect();
    let key = format!("{phase}s_per_s");
    for v in &s {
        assert!(
            v["values"][&key].is_number(),
            "a {phase} sample carries {key}: {v}"
        );
        assert_eq!(v["name"], r.summary()["name"], "one name for the run: {v}");
    }
    let files: f64 = s.iter().map(|v| v["info"]["files"].as_f64().unwrap()).sum();
    let widths: Vec<f64> = s
        .iter()
        .map(|v| v["info"]["span_s"].as_f64().unwrap())
        .collect();
    assert!(
        widths.iter().all(|w| (w - widths[0]).abs() <= 1e-6),
        "equal slices: {widths:?}"
    );
    let mean = s
        .iter()
        .map(|v| v["values"][&key].as_f64().unwrap())
        .sum::<f64>()
        / s.len() as f64;
    let own = r.value(&key);
    assert!(
        (mean - own).abs() <= 1e-3 * own,
        "{phase}: the slices' mean rate {mean} is the phase's {own}"
    );
    (s.len(), files.round() as u64)
}

#[test]
fn counts_exactly_5000_and_leaves_dir_as_found() {
    let d = TempDir::with_content("fsmeta-count");
    let before = listing(&d.0);
    let r = fsmeta(&[
        "-n",
        "5000",
        "--dirs",
        "7",
        "-s",
        "100",
        "--seed",
        "5",
        d.path(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(listing(&d.0), before, "DIR is as it was");
    let s = r.summary();
    assert_eq!(s["status"], "ok");
    assert_eq!(s["headline"], "creates_per_s");
    // One run, a row per phase.
    assert_eq!(
        s["headlines"],
        serde_json::json!([
            {"key": "creates_per_s", "role": "create", "stat": "mean"},
            {"key": "stats_per_s", "role": "stat", "stat": "mean"},
            {"key": "unlinks_per_s", "role": "unlink", "stat": "mean"},
        ])
    );
    for k in ["files_count", "stat_count", "unlink_count"] {
        assert_eq!(r.value(k), 5000.0, "{k}");
    }
    for (phase, rate) in [
        ("create", "creates_per_s"),
        ("stat", "stats_per_s"),
        ("unlink", "unlinks_per_s"),
    ] {
        assert!(r.value(rate) > 0.0, "{rate}");
        let (n, files) = phase_samples(&r, phase);
        assert_eq!(
            (n, files),
            (16, 5000),
            "{phase}: 16 samples counting every file"
        );
        let p: Vec<f64> = ["p50", "p90", "p99", "p99_9", "max"]
            .iter()
            .map(|q| r.value(&format!("{phase}_latency_{q}_s")))
            .collect();
        assert!(
            p[0] > 0.0 && p.windows(2).all(|w| w[0] <= w[1]),
            "{phase} percentiles ordered: {p:?}"
        );
    }
    let begin = &r.of("begin")[0];
    assert_eq!(begin["info"]["files"], 5000);
    assert_eq!(begin["info"]["seed"], 5);
    assert!(
        begin["info"]["fs_type"].is_string(),
        "the file system under DIR: {begin}"
    );
    let private = begin["info"]["private_dir"].as_str().unwrap();
    assert!(
        private.starts_with(&format!("{}/fsmeta.", d.path())),
        "{private}"
    );
    assert!(!std::path::Path::new(private).exists());
}

#[test]
fn a_full_file_system_fails_cleanly() {
    // 8 MiB of ext4 with 128 inodes: -n 5000 runs out of inodes; 64 KiB files run out of blocks.
    let Some((m, _dev)) = fs_mounted(8, "mkfs.ext4 -q -F -N 128", "rw") else {
        return;
    };
    let dir = m.path().to_str().unwrap().to_string();
    let before = listing(m.path());
    for size in ["0", "64k"] {
        let r = fsmeta(&["-n", "5000", "-s", size, &dir]);
        assert_eq!(r.code, 2, "-s {size}: {}", r.stderr);
        assert_eq!(listing(m.path()), before, "-s {size}: nothing left behind");
        let s = r.summary();
        assert_eq!(s["status"], "failed");
        let err = s["error"].as_str().unwrap();
        assert!(
            err.contains("create failed after ") && err.contains(" of 5000 creates"),
            "{err}"
        );
        assert!(
            err.contains("the file system is full") && err.contains("private directory removed"),
            "{err}"
        );
        assert_eq!(s["info"]["errno"], libc::ENOSPC);
        assert_eq!(s["info"]["removed"], true);
        let made = r.value("files_count");
        assert!(made > 0.0 && made < 5000.0, "how far it got: {made}");
        assert!(
            r.stderr.contains(&format!("fsmeta: {dir}: create failed")),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_read_only_mount_is_a_clear_failure() {
    let Some((m, _dev)) = fs_mounted(16, "mkfs.ext4 -q -F", "ro") else {
        return;
    };
    let dir = m.path().to_str().unwrap();
    let before = listing(m.path());
    let r = fsmeta(&["-n", "100", dir]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("read-only"), "{}", r.stderr);
    assert_eq!(r.summary()["status"], "failed");
    assert_eq!(listing(m.path()), before);
}

#[test]
fn too_many_open_files_fails_cleanly() {
    let d = TempDir::with_content("fsmeta-emfile");
    let before = listing(&d.0);
    let out = Command::new("sh")
        .args([
            "-c",
            r#"ulimit -n 32 && exec "$BIN" -n 100 --dirs 64 "$DIR""#,
        ])
        .env("BIN", bin())
        .env("DIR", &d.0)
        .output()
        .unwrap();
    let r = common::parse(&out);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("too many open files"), "{}", r.stderr);
    assert_eq!(listing(&d.0), before, "the subdirectories made are gone");
}

/// Starts `-n N` into `dir` with its records in `out`, waits for files in its private
/// directory (the run is then in its create phase), sends `sig`, and returns the exit code and
/// the records.
fn interrupt(dir: &str, out: &std::path::Path, sig: i32) -> (Option<i32>, Vec<serde_json::Value>) {
    let file = std::fs::File::create(out).unwrap();
    let mut child = Spawned::start(Command::new(bin()).args(["-n", "400000", dir]).stdout(file));
    let end = Instant::now() + Duration::from_secs(60);
    let made = || {
        let text = std::fs::read_to_string(out).ok()?;
        let begin: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
        let private = begin["info"]["private_dir"].as_str()?.to_string();
        let n = std::fs::read_dir(private).ok()?.count();
        (n >= 100).then_some(())
    };
    while made().is_none() {
        assert!(Instant::now() < end, "no files made after 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(child.signal(sig));
    let st = child.wait(Duration::from_secs(60));
    (st.code(), records(&std::fs::read_to_string(out).unwrap()))
}

#[test]
fn ctrl_c_sigterm_sighup_and_a_sent_sigpipe_mid_run_write_the_summary_and_remove_the_directory() {
    let d = TempDir::with_content("fsmeta-int");
    let before = listing(&d.0);
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fsmeta-int-{}.jsonl", std::process::id()));
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
        let (code, recs) = interrupt(d.path(), &out, sig);
        assert_eq!(code, Some(130), "signal {sig}");
        let s = recs
            .iter()
            .find(|v| v["type"] == "summary")
            .expect("a summary");
        assert_eq!(s["status"], "partial");
        let err = s["error"].as_str().unwrap();
        assert!(
            err.starts_with("interrupted after ") && err.contains(" of 400000 creates"),
            "{err}"
        );
        assert!(err.contains("private directory removed"), "{err}");
        assert!(s["values"]["files_count"].as_f64().unwrap() > 0.0);
        assert_eq!(listing(&d.0), before, "signal {sig}: DIR as found");
    }
    let _ = std::fs::remove_file(&out);
}

#[test]
fn bad_input_is_a_clear_message_and_exit_2() {
    let d = TempDir::with_content("fsmeta-bad");
    let before = listing(&d.0);
    let file = d.0.join("keep.txt");
    let missing = d.0.join("no-such-dir");
    for (args, says) in [
        (
            vec!["-n", "0", d.path()],
            "'0' for '--files <N>': give 1 or more files",
        ),
        (
            vec!["-n", "many", d.path()],
            "'many' for '--files <N>': give a whole number",
        ),
        (
            vec!["-n", "100000001", d.path()],
            "give at most 100000000 files",
        ),
        (vec!["-s", "1x", d.path()], "--size"),
        (vec!["--size=-4k", d.path()], "negative"),
        (vec!["--dirs", "lots", d.path()], "--dirs"),
        (vec![file.to_str().unwrap()], "is not a directory"),
        (vec![missing.to_str().unwrap()], "does not exist"),
        (vec![], "DIR"),
        (vec!["--seed", "9007199254740992", d.path()], "--seed"),
    ] {
        let r = fsmeta(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    assert_eq!(listing(&d.0), before);
}

#[test]
fn files_with_data_and_fsync_on_a_loop_file_system() {
    let Some((m, _dev)) = fs_mounted(64, "mkfs.ext4 -q -F", "rw") else {
        return;
    };
    let before = listing(m.path());
    let r = fsmeta(&[
        "-n",
        "300",
        "-s",
        "4k",
        "--fsync",
        "--dirs",
        "3",
        m.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.value("files_count"), 300.0);
    let begin = &r.of("begin")[0]["info"];
    assert_eq!(begin["fs_type"], "ext4");
    assert_eq!(begin["fsync"], true);
    assert!(
        begin["block_stack"].to_string().contains("loop"),
        "the loop device beneath: {begin}"
    );
    assert_eq!(listing(m.path()), before);
}

#[test]
fn a_terminal_gets_a_summary_to_read_and_no_json() {
    // A space and a quote in the path: it reaches the shell as a variable, not as code.
    let d = TempDir::with_content("fsmeta-tty a b'c");
    let before = listing(&d.0);
    let env = [
        ("BIN", std::ffi::OsStr::new(bin())),
        ("DIR", d.0.as_os_str()),
    ];
    let Some((code, shown)) = testkit::on_terminal(r#""$BIN" -n 300 "$DIR""#, &env) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains('{'), "no JSON on a terminal: {shown}");
    let last: Vec<&str> = shown.lines().rev().take(4).collect();
    assert!(
        last[3].contains(&format!("fsmeta: 300 files of 0 bytes in {}", d.path())),
        "{shown}"
    );
    for (line, phase) in last[..3].iter().rev().zip(["create", "stat", "unlink"]) {
        assert!(
            line.trim_start().starts_with(phase) && line.contains("/s") && line.contains("p99.9"),
            "{shown}"
        );
    }
    assert_eq!(listing(&d.0), before);
}

/// A run without --seed reports a seed within --seed's range (2^53 - 1, exact in jq), and
/// that seed given back gives the same orders (the stat and unlink phases' first files).
#[test]
fn a_fresh_seed_is_one_that_seed_takes_back() {
    let d = TempDir::with_content("fsmeta-seed");
    for _ in 0..3 {
        let r = fsmeta(&["-n", "50", d.path()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let seed = r.of("begin")[0]["info"]["seed"].as_u64().unwrap();
        assert!(seed < 1 << 53, "seed {seed} is past 2^53 - 1");
        let again = fsmeta(&["-n", "50", "--seed", &seed.to_string(), d.path()]);
        assert_eq!(again.code, 0, "--seed {seed}: {}", again.stderr);
        assert_eq!(again.of("begin")[0]["info"]["seed"], seed);
    }
}
