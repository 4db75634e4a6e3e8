//! A records file never shares a file with what a tool measures or its payload: `-o` naming
//! blkwrite's target or timecmd's `--stdout FILE`, or records and payload in one regular file,
//! is refused with exit 2 (125 for timecmd) and nothing is written.

use benchmatrix_tests::{bin, run};
use std::process::{Command, Stdio};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("bm-records-file")
        .tempdir()
        .expect("tempdir")
}

#[test]
fn blkwrite_refuses_its_target_as_the_records_file() {
    let d = scratch();
    let new = d.path().join("f");
    let out = run(Command::new(bin("blkwrite"))
        .args(["--force", "-s", "1M", "-o"])
        .arg(&new)
        .arg(&new));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!new.exists(), "nothing is created");
    let old = d.path().join("g");
    std::fs::write(&old, "keep").expect("write");
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&old, &link).expect("symlink");
    let out = run(Command::new(bin("blkwrite"))
        .args(["--force", "-s", "1M", "-o"])
        .arg(&link)
        .arg(&old));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("give -o another file"));
    assert_eq!(std::fs::read_to_string(&old).expect("read"), "keep");
}

#[test]
fn timecmd_refuses_records_into_the_commands_output() {
    let d = scratch();
    let f = d.path().join("out.txt");
    let out = run(Command::new(bin("timecmd"))
        .arg("--stdout")
        .arg(&f)
        .arg("-o")
        .arg(&f)
        .args(["--", "echo", "hi"]));
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(!f.exists());
    // `> both 2>&1`: the records (stderr) would mix into the command's output (stdout).
    let both = d.path().join("both.txt");
    let file = std::fs::File::create(&both).expect("create");
    let err = file.try_clone().expect("clone");
    let st = Command::new(bin("timecmd"))
        .args(["--", "echo", "hi"])
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .status()
        .expect("run timecmd");
    assert_eq!(st.code(), Some(125));
    let text = std::fs::read_to_string(&both).expect("read");
    assert!(!text.contains("schema") && !text.contains("hi\n"), "{text}");
}

#[test]
fn netcat_mode_refuses_records_into_its_payload_file() {
    let d = scratch();
    let f = d.path().join("payload");
    let file = std::fs::File::create(&f).expect("create");
    // Bounded: were the records file not refused, the listener would wait for a client.
    let mut child = testkit::Spawned::start(
        Command::new(bin("netpipe"))
            .args(["-l", "-p", &testkit::free_port().to_string(), "-o"])
            .arg(&f)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::null()),
    );
    let st = child.wait(std::time::Duration::from_secs(20));
    assert_eq!(st.code(), Some(2));
    assert_eq!(std::fs::read(&f).expect("read").len(), 0);
}
