//! The script ends cleanly on every signal that ends a session: SIGHUP (a dropped ssh
//! session) to `./benchmatrix --serve` stops its listeners; SIGHUP to a measuring run, sent
//! to the script alone mid-step, ends its tool, unmounts the kernel's tmpfs and removes its
//! scratch, exit 129; Ctrl-C pressed again and again while the kernel tree unpacks does not
//! cut that cleanup short, exit 130.

use benchmatrix_tests::kernel::{Filler, fake_tarball, kernel_mounts, processes_naming};
use benchmatrix_tests::suite::{folders, listening, script_env, script_path};
use benchmatrix_tests::{empty_dir, need_root, need_tool, path_str as s};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use testkit::{Captured, NetPair};

use testkit::netns::pids_in;

#[test]
fn sighup_to_serve_stops_both_listeners() {
    if !need_root("--serve in a namespace of its own") || !need_tool("ip") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let net = NetPair::new().expect("namespaces");
    let mut c = NetPair::exec(&net.a, "sh");
    c.arg(script_path()).args(["--serve", "--port", "6500"]);
    let serving = Captured::start(script_env(&mut c, tmp.path(), tmp.path()));
    for _ in 0..200 {
        if listening(&net.a) == [6500, 6501] {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(listening(&net.a), [6500, 6501], "serving");
    serving.signal(libc::SIGHUP);
    let (st, _, err) = serving.wait_output(Duration::from_secs(30));
    assert_eq!(st.code(), Some(129), "{st}: {err}");
    assert!(err.contains("stopped serving: no listener left"), "{err}");
    assert_eq!(listening(&net.a), [0u16; 0], "ports left");
    assert_eq!(pids_in(&net.a), [0u32; 0], "processes left");
}

/// Starts the script with `args` in its own process group (as a shell's job), records into
/// `res/s.jsonl`, scratch under `scratch`.
fn start(work: &Path, scratch: &Path, res: &Path, args: &[&str]) -> Child {
    let mut c = Command::new("sh");
    c.arg(script_path()).args(args);
    c.args(["--results", s(res), "--label", "s", "--no-matrix"]);
    script_env(&mut c, work, scratch);
    c.process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the script")
}

/// Waits (at most 120 s) until the records hold a sample of `row`: its tool is mid-series.
fn wait_sample(res: &Path, row: &str) {
    let sample = format!("\"name\":\"{row}\"");
    let started = Instant::now();
    let seen = || {
        std::fs::read_to_string(res.join("s.jsonl")).is_ok_and(|t| {
            t.lines()
                .any(|l| l.contains("\"type\":\"sample\"") && l.contains(&sample))
        })
    };
    while !seen() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(seen(), "{row}: no sample");
}

/// The run ended with `code` and left no mount, no scratch and no process of its own.
fn nothing_left(child: Child, code: i32, scratch: &Path, work: &Path) {
    let out = child.wait_with_output().expect("the script's end");
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        kernel_mounts(scratch).is_empty(),
        "{:?}",
        kernel_mounts(scratch)
    );
    assert!(
        processes_naming(scratch).is_empty(),
        "{:?}",
        processes_naming(scratch)
    );
    empty_dir(scratch);
    empty_dir(work);
}

#[test]
fn sighup_to_the_script_mid_step_ends_its_tool_and_removes_its_scratch() {
    if !need_tool("bzip2") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "res"]);
    let child = start(&work, &scratch, &res, &["--only", "tar", "--runs", "200"]);
    wait_sample(&res, "time tar xjf tree.tar.bz2");
    // To the script alone, not its group.
    testkit::process::signal(child.id(), libc::SIGHUP);
    nothing_left(child, 129, &scratch, &work);
}

/// A tarball whose unpack takes a while in a tmpfs: 256 MiB of zeros.
fn slow_tarball(dir: &Path) -> std::path::PathBuf {
    fake_tarball(dir, "linux-0.1", "linux-0.1", Filler::Zeros(256 << 20))
}

/// Whether the kernel steps can run with a tmpfs here.
fn can_kernel() -> bool {
    need_root("the kernel workload's tmpfs") && benchmatrix_tests::kernel::can_build()
}

#[test]
fn sighup_mid_unpack_unmounts_the_tmpfs_and_ends_the_unpack() {
    if !can_kernel() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res, src] = folders(tmp.path(), ["work", "tmp", "res", "src"]);
    let tarball = slow_tarball(&src);
    let args = [
        "--only",
        "kernel",
        "--runs",
        "100",
        "--kernel-tarball",
        s(&tarball),
    ];
    let child = start(&work, &scratch, &res, &args);
    wait_sample(&res, "time tar xJf linux");
    assert_eq!(kernel_mounts(&scratch).len(), 1, "the tmpfs is mounted");
    // To the script alone, not its group.
    testkit::process::signal(child.id(), libc::SIGHUP);
    nothing_left(child, 129, &scratch, &work);
}

#[test]
fn ctrl_c_again_and_again_during_the_unpack_does_not_cut_the_cleanup_short() {
    if !can_kernel() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res, src] = folders(tmp.path(), ["work", "tmp", "res", "src"]);
    let tarball = slow_tarball(&src);
    let args = [
        "--only",
        "kernel",
        "--runs",
        "100",
        "--kernel-tarball",
        s(&tarball),
    ];
    let mut child = start(&work, &scratch, &res, &args);
    wait_sample(&res, "time tar xJf linux");
    // Ctrl-C reaches the whole job; it is pressed every 20 ms (at most 500 times) until the
    // script has ended, so some land during its cleanup.
    for _ in 0..500 {
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        testkit::process::signal_group(child.id(), libc::SIGINT);
        std::thread::sleep(Duration::from_millis(20));
    }
    nothing_left(child, 130, &scratch, &work);
}
