//! timecmd with GNU time's and POSIX time's flags against /usr/bin/time itself: the same
//! command under both prints reports of the same shape (the same lines and labels in order,
//! numbers where time has numbers), `-o FILE -a` appends as time does, and the records still
//! go where they go (`--records FILE` here, stderr when it is a pipe).

use std::path::Path;
use std::process::Command;
use testkit::shape;

const TIME: &str = "/usr/bin/time";

/// Runs `program args` with stdout discarded; returns (exit code, stderr).
fn run(program: &str, args: &[&str]) -> (i32, String) {
    let o = Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .output()
        .expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn have_time() -> bool {
    if Path::new(TIME).is_file() {
        return true;
    }
    testkit::skip("GNU time is not installed at /usr/bin/time (Debian's time package)");
    false
}

/// Whether `line` is a JSON record (timecmd's, on a piped stderr).
fn record(line: &str) -> bool {
    line.starts_with("{\"schema\"")
}

#[test]
fn reports_have_gnu_times_shape() {
    if !have_time() {
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    let rec = d.path().join("r.jsonl");
    let rec = rec.to_str().expect("utf-8");
    let ours = testkit::tool("timecmd");
    for flags in [
        &["-v"][..],
        &["--verbose"],
        &["-p"],
        &["--portability"],
        &["-f", "%e %M"],
        &[
            "-f",
            "%e %E %U %S %P %M %t %K %D %p %X %Z %F %R %W %c %w %I %O %r %s %k %C %x",
        ],
        &["--format=%% \\t%C\\n%x %Q \\q"],
    ] {
        for cmd in [
            &["sh", "-c", "exit 0"][..],
            &["sh", "-c", "exit 3"],
            &["sh", "-c", "kill -TERM $$"],
        ] {
            let mut a: Vec<&str> = flags.to_vec();
            a.extend(cmd);
            let (tc, terr) = run(TIME, &a);
            let mut b: Vec<&str> = vec!["--records", rec];
            b.extend(&a);
            let (oc, oerr) = run(ours, &b);
            assert_eq!(oc, tc, "{a:?}: the command's status passed on as time does");
            assert_eq!(
                shape::lines(&oerr),
                shape::lines(&terr),
                "{a:?}:\n{oerr}\nagainst time's\n{terr}"
            );
        }
    }
    // The records went to --records FILE: a begin, a sample and a summary per run.
    let text = std::fs::read_to_string(rec).expect("records");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"type\":\"summary\""))
            .count(),
        21
    );
}

#[test]
fn o_file_with_a_appends_as_time_does() {
    if !have_time() {
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    let ours = testkit::tool("timecmd");
    let (tf, of) = (d.path().join("time.out"), d.path().join("timecmd.out"));
    for (program, file) in [(TIME, &tf), (ours, &of)] {
        let f = file.to_str().expect("utf-8");
        std::fs::write(file, "kept\n").expect("written");
        for cmd in ["exit 0", "exit 2"] {
            let (_, err) = run(program, &["-f", "%e %M", "-o", f, "-a", "sh", "-c", cmd]);
            // Records go to stderr, a pipe here; GNU time's report went to the file only.
            assert!(err.lines().all(record), "{program}: {err}");
        }
    }
    let (t, o) = (
        std::fs::read_to_string(&tf).expect("time's"),
        std::fs::read_to_string(&of).expect("timecmd's"),
    );
    assert!(o.starts_with("kept\n"), "{o}");
    assert_eq!(
        shape::lines(&o),
        shape::lines(&t),
        "{o}\nagainst time's\n{t}"
    );
    assert_eq!(o.lines().count(), 4, "{o}");
    // Without -a, -o truncates, as time's does.
    let f = of.to_str().expect("utf-8");
    run(ours, &["-p", "-o", f, "true"]);
    let o = std::fs::read_to_string(&of).expect("timecmd's");
    assert_eq!(shape::lines(&o), ["real #", "user #", "sys #"], "{o}");
}

/// `-q` (read once, by the lifecycle, which also turns the human lines off) drops the
/// `Command exited with non-zero status N` line as time's `-q` does; without it the line is there.
#[test]
fn q_drops_the_failure_line_as_time_does() {
    if !have_time() {
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    let rec = d.path().join("r.jsonl");
    let rec = rec.to_str().expect("utf-8");
    let ours = testkit::tool("timecmd");
    for q in [&["-q"][..], &["--quiet"], &[]] {
        let mut a: Vec<&str> = vec!["-f", "%e %M"];
        a.extend(q);
        a.extend(["sh", "-c", "exit 3"]);
        let (tc, terr) = run(
            TIME,
            &[
                &["-f", "%e %M"][..],
                &["-q"][..q.len().min(1)],
                &a[2 + q.len()..],
            ]
            .concat(),
        );
        let mut b: Vec<&str> = vec!["--records", rec];
        b.extend(&a);
        let (oc, oerr) = run(ours, &b);
        assert_eq!(oc, tc, "{a:?}");
        assert_eq!(
            shape::lines(&oerr),
            shape::lines(&terr),
            "{a:?}:\n{oerr}\nagainst time's\n{terr}"
        );
        assert_eq!(
            oerr.contains("non-zero status 3"),
            q.is_empty(),
            "{a:?}: {oerr}"
        );
    }
}

#[test]
fn o_stays_the_records_without_gnu_flags() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("r.jsonl");
    let (code, err) = run(
        testkit::tool("timecmd"),
        &["-o", f.to_str().expect("utf-8"), "true"],
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&f).expect("records");
    assert!(
        text.lines().all(record) && text.lines().count() == 3,
        "{text}"
    );
    // And --records FILE names them in GNU time's form too: -a without -o is refused.
    let (code, err) = run(testkit::tool("timecmd"), &["-a", "true"]);
    assert_eq!(code, 125, "{err}");
}
