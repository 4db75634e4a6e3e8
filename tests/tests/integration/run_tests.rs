//! The README's test command, `./run-tests`: cargo test over the workspace, then the tests
//! that skipped and why (which cargo hides); `.ci/run` runs the same command. Checked with a
//! stand-in `cargo` that skips two tests and fails, so no test suite runs inside this one.

use benchmatrix_tests::{run, workspace_root};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn run_tests_lists_the_skips_and_keeps_cargos_status() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    assert!(
        readme.contains("./run-tests                   # the test command"),
        "the README names ./run-tests as its test command"
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    assert!(ci.contains("exec ./run-tests --locked"), "{ci}");

    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("cargo");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"cargo $*\"\nprintf 'b::two: no mandoc\\na::one: needs root\\n' >> \"$BENCHMATRIX_SKIP_LOG\"\nexit 101\n",
    )
    .expect("fake cargo");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = run(Command::new(root.join("run-tests"))
        .arg("-p")
        .arg("collate")
        .env("PATH", path)
        // Its own list: the one of a ./run-tests that runs this test stays as it is.
        .env("BENCHMATRIX_SKIP_LOG", dir.path().join("skips.txt")));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(101), "{text}");
    assert!(
        text.contains("cargo test --workspace --no-fail-fast -p collate"),
        "{text}"
    );
    assert!(
        text.contains(
            "run-tests: 2 test(s) skipped:\nrun-tests:   a::one: needs root\nrun-tests:   b::two: no mandoc\n"
        ),
        "{text}"
    );
}
