//! `./benchmatrix --workload kernel` for real: Debian's linux-source tarball unpacked and built
//! (tinyconfig) in a tmpfs the script mounts, one warm-up and one measured run each; the two
//! rows and their tags; no mount and no tree left, after the run and after a Ctrl-C mid-build.

use benchmatrix_tests::suite::{folders, script, script_env, script_path};
use benchmatrix_tests::{decode, empty_dir, explain, need_root, need_tool, ok, path_str as s};
use measure::{Kind, Status};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The newest linux-source tarball, as the script picks it; `None` (and a skip) without one.
fn tarball() -> Option<String> {
    let mut found: Vec<String> = std::fs::read_dir("/usr/src")
        .ok()?
        .flatten()
        .map(|e| e.path().to_string_lossy().into_owned())
        .filter(|p| p.contains("/linux-source-") && p.contains(".tar."))
        .collect();
    found.sort();
    found.pop()
}

/// Whether this machine can run the kernel steps: root (the tmpfs), the tarball and the
/// build's programs.
fn can_build() -> bool {
    if !need_root("the kernel workload's tmpfs") {
        return false;
    }
    if tarball().is_none() {
        testkit::skip("no /usr/src/linux-source-* tarball (apt-get install linux-source-6.1)");
        return false;
    }
    ["make", "flex", "bison", "bc", "perl", "xz", "cc"]
        .iter()
        .all(|t| need_tool(t))
}

/// The script's kernel mounts under `scratch` (the run's TMPDIR) still in the mount table;
/// another test's run has its own.
fn kernel_mounts(scratch: &Path) -> Vec<String> {
    let under = s(scratch);
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.strip_prefix("benchmatrix-kernel ")
                .is_some_and(|rest| rest.starts_with(under))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_kernel_workload_unpacks_and_builds_in_a_tmpfs_and_leaves_nothing() {
    if !can_build() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let args = [
        "--only",
        "kernel",
        "--runs",
        "1",
        "--jobs",
        "2",
        "--results",
        s(&res),
        "--label",
        "k",
    ];
    let out = script(&work, &scratch, &[], &args);
    ok(&out, "the kernel workload");
    let recs = decode(&std::fs::read_to_string(res.join("k.jsonl")).expect("the results"));
    let tarball = tarball().expect("the tarball");
    let base = Path::new(&tarball)
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    for (name, tags) in [
        (
            "time tar xJf linux",
            vec![("tarball", base.as_str()), ("fs", "tmpfs")],
        ),
        (
            "time make linux (tinyconfig)",
            vec![("config", "tinyconfig"), ("jobs", "2"), ("fs", "tmpfs")],
        ),
    ] {
        let sum = recs
            .iter()
            .find(|r| r.kind == Kind::Summary && r.name == name)
            .unwrap_or_else(|| panic!("{name}: a summary in {}", explain(&out)));
        assert_eq!(sum.status, Some(Status::Ok), "{name}: {}", sum.to_line());
        assert_eq!(sum.tool, "timecmd");
        for (k, v) in tags {
            assert_eq!(
                sum.tags.get(k).map(String::as_str),
                Some(v),
                "{name}: tag {k}"
            );
        }
        // The warm-up is not recorded: one sample for --runs 1.
        let samples = recs
            .iter()
            .filter(|r| r.kind == Kind::Sample && r.name == name)
            .count();
        assert_eq!(samples, 1, "{name}");
    }
    let make = recs
        .iter()
        .find(|r| r.kind == Kind::Summary && r.name == "time make linux (tinyconfig)")
        .expect("make");
    let version = make.tags.get("kernel").expect("the tag kernel");
    assert!(version.split('.').count() == 3, "kernel={version}");
    assert!(
        kernel_mounts(&scratch).is_empty(),
        "{:?}",
        kernel_mounts(&scratch)
    );
    empty_dir(&work);
    empty_dir(&scratch);
}

#[test]
fn a_ctrl_c_mid_build_leaves_no_mount_and_no_tree() {
    if !can_build() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let mut c = Command::new("sh");
    c.arg(script_path()).args([
        "--only",
        "kernel",
        "--runs",
        "1",
        "--results",
        s(&res),
        "--label",
        "k",
    ]);
    script_env(&mut c, &work, &scratch);
    // Its own process group, as a shell's job: Ctrl-C reaches the script and timecmd.
    use std::os::unix::process::CommandExt;
    let child = c
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the script");
    let results = res.join("k.jsonl");
    let started = Instant::now();
    let building = || {
        std::fs::read_to_string(&results)
            .is_ok_and(|t| t.contains("\"type\":\"begin\"") && t.contains("time make linux"))
    };
    while !building() && started.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(building(), "the build never started");
    std::thread::sleep(Duration::from_secs(5));
    testkit::process::signal_group(child.id(), libc::SIGINT);
    let out = child.wait_with_output().expect("the script's end");
    assert_eq!(out.status.code(), Some(130), "{}", explain(&out));
    assert!(
        kernel_mounts(&scratch).is_empty(),
        "{:?}",
        kernel_mounts(&scratch)
    );
    empty_dir(&scratch);
    empty_dir(&work);
}
