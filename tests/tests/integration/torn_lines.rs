//! A records file holds whole lines only: a tool writing to a full file system cuts back
//! what it could not finish, and a tool appending to a file that ends in a fragment starts
//! its first record on a line of its own, so the next run is never glued onto the fragment.

use benchmatrix_tests::{bin, explain, need_root, run};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A tmpfs of `size` mounted on a new directory; unmounted and removed on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn new(size: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(testkit::unique("bm-full"));
        std::fs::create_dir(&dir).ok()?;
        let opts = format!("size={size}");
        let at = dir.to_string_lossy().into_owned();
        match testkit::cmd("mount", &["-t", "tmpfs", "-o", &opts, "tmpfs", &at]) {
            Ok(_) => Some(Tmpfs { dir }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                testkit::skip(&format!("cannot mount a tmpfs: {e}"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let at = self.dir.to_string_lossy().into_owned();
        if testkit::cmd("umount", &[&at]).is_err() {
            let _ = testkit::cmd("umount", &["-l", &at]);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Writes to `path` until the file system has no room left (bounded by the tmpfs's size).
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("create the filler");
    let block = [b'x'; 4096];
    for _ in 0..10_000 {
        if f.write_all(&block).is_err() {
            return;
        }
    }
    panic!("{} never filled up", path.display());
}

/// `timecmd -o FILE -- true`.
fn timecmd_into(file: &Path) -> std::process::Output {
    run(Command::new(bin("timecmd"))
        .arg("-q")
        .arg("-o")
        .arg(file)
        .args(["--", "true"]))
}

/// Every line of `text` that is not `except`, as parsed records (panics on a bad one).
fn records_but(text: &str, except: &[&str]) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !except.contains(l))
        .map(|l| {
            measure::parse_line(l).unwrap_or_else(|e| panic!("not a record: {l:?}: {e}"));
        })
        .count()
}

#[test]
fn a_full_file_system_leaves_no_torn_line_and_the_next_run_reads() {
    if !need_root("mounting a tmpfs") {
        return;
    }
    let Some(fs) = Tmpfs::new("16k") else {
        return;
    };
    let file = fs.dir.join("r.jsonl");
    let out = timecmd_into(&file);
    assert!(out.status.success(), "{}", explain(&out));
    // A blank line pads the file to 200 bytes short of its page's end: the next run's
    // begin starts there and the file system has no page for the rest of it.
    let len = std::fs::metadata(&file).expect("stat").len();
    let pad = (4096 - 200 - len % 4096) % 4096;
    let mut text = std::fs::read_to_string(&file).expect("read");
    text.push_str(&" ".repeat(pad.saturating_sub(1) as usize));
    text.push('\n');
    std::fs::write(&file, &text).expect("pad");
    fill(&fs.dir.join("filler"));
    let out = timecmd_into(&file);
    assert!(!out.status.success(), "{}", explain(&out));
    let after = std::fs::read_to_string(&file).expect("read");
    assert!(
        after.ends_with('\n'),
        "a torn line is left: {:?}",
        &after[text.len()..]
    );
    assert_eq!(records_but(&after, &[]), 3, "{after}");
    std::fs::remove_file(fs.dir.join("filler")).expect("free the space");
    let out = timecmd_into(&file);
    assert!(out.status.success(), "{}", explain(&out));
    let done = std::fs::read_to_string(&file).expect("read");
    assert_eq!(records_but(&done, &[]) % 3, 0, "{done}");
    let out = run(Command::new(bin("collate")).arg(&file));
    assert!(out.status.success(), "{}", explain(&out));
    let out = run(Command::new(bin("collate"))
        .arg("--skip-invalid")
        .arg(&file));
    assert!(out.status.success(), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("skipped"), "no line is invalid: {err}");
}

#[test]
fn a_fragment_left_by_another_writer_becomes_a_line_of_its_own() {
    let d = tempfile::tempdir().expect("tempdir");
    let frag = r#"{"schema":"benchmatrix/1","tool":"timecmd","#;
    // Through -o, and through stderr redirected to the file for appending (timecmd's
    // stdout is its command's).
    let file = d.path().join("r.jsonl");
    std::fs::write(&file, frag).expect("write");
    let out = timecmd_into(&file);
    assert!(out.status.success(), "{}", explain(&out));
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    let out = run(Command::new(bin("timecmd"))
        .args(["-q", "--", "true"])
        .stderr(Stdio::from(appended)));
    assert!(out.status.success(), "{}", explain(&out));
    let text = std::fs::read_to_string(&file).expect("read");
    assert_eq!(text.lines().next(), Some(frag), "{text}");
    assert_eq!(records_but(&text, &[frag]), 6, "{text}");
    let out = run(Command::new(bin("collate"))
        .arg("--skip-invalid")
        .arg(&file));
    assert!(out.status.success(), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let named = format!(
        "skipped 1 invalid line of 7 (--skip-invalid); first: {}:1:",
        file.display()
    );
    assert!(err.contains(&named), "the fragment's line is named: {err}");
}
