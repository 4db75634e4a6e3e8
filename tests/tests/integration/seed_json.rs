//! blkwrite's and blkread's seeds are JSON numbers every reader holds exactly: --seed above
//! 2^53 - 1 is a usage error, and a fresh seed in begin's info survives a round trip through jq.

use benchmatrix_tests::{bin, need_tool};
use std::process::Command;

#[test]
fn seeds_stay_below_2_to_the_53() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("f");
    let out = Command::new(bin("blkwrite"))
        .args([
            "--seed",
            "9007199254740993",
            "-s",
            "64k",
            "-b",
            "64k",
            "-o",
            "-",
        ])
        .arg(&file)
        .output()
        .expect("blkwrite runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--seed"));
    assert!(!file.exists(), "nothing written");
    let out = Command::new(bin("blkwrite"))
        .args(["-s", "64k", "-b", "64k", "-o", "-"])
        .arg(&file)
        .output()
        .expect("blkwrite runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("records");
    let begin = text.lines().next().expect("begin");
    let rec = measure::parse_line(begin).expect("a record");
    let seed = rec.info["seed"].as_u64().expect("a seed");
    assert!(seed <= measure::fields::MAX_SEQ, "{seed}");
    if need_tool("jq") {
        let mut child = Command::new("jq")
            .args(["-c", ".info.seed"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("jq runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(begin.as_bytes())
            .expect("written");
        let out = child.wait_with_output().expect("jq ends");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            seed.to_string()
        );
    }
}

#[test]
fn blkread_seeds_stay_below_2_to_the_53_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("f");
    std::fs::write(&file, vec![7u8; 1 << 20]).expect("a file to read");
    let read = |seed: Option<&str>| {
        let mut c = Command::new(bin("blkread"));
        c.args(["--random", "-b", "4k", "-o", "-"]);
        if let Some(s) = seed {
            c.args(["--seed", s]);
        }
        c.arg(&file).output().expect("blkread runs")
    };
    let out = read(Some("9007199254740993"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--seed"));
    for _ in 0..5 {
        let out = read(None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("records");
        let rec = measure::parse_line(text.lines().next().expect("begin")).expect("a record");
        let seed = rec.info["seed"].as_u64().expect("a seed");
        assert!(seed <= measure::fields::MAX_SEQ, "{seed}");
    }
}
