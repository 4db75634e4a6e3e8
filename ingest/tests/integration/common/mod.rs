//! What ingest's tests share: running the binary on a file or on stdin, and its records
//! decoded strictly by measure's reader.

#![allow(dead_code)]

use measure::Record;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// ingest's output: the exit code, the records, stderr.
pub struct Run {
    pub code: i32,
    pub records: Vec<Record>,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        let stdout = String::from_utf8(out.stdout).expect("records are UTF-8");
        let records = stdout
            .lines()
            .map(|l| measure::parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        Run {
            code: out.status.code().unwrap_or(-1),
            records,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn of(&self, kind: measure::Kind) -> Vec<&Record> {
        self.records.iter().filter(|r| r.kind == kind).collect()
    }

    pub fn summary(&self) -> &Record {
        let s = self.records.last().expect("a summary");
        assert_eq!(
            s.kind,
            measure::Kind::Summary,
            "the last record is the summary"
        );
        s
    }

    /// The summary's headline value, with the headline's key.
    pub fn headline(&self) -> (String, f64) {
        let s = self.summary();
        let h = s.headline.clone().expect("a headline");
        let v = s.value(&h).expect("the headline's value");
        (h, v)
    }
}

/// ingest with `args`.
pub fn ingest(args: &[&str]) -> Run {
    let out = Command::new(testkit::tool("ingest"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("ingest runs");
    Run::from(out)
}

/// ingest with `args`, `input` on its stdin.
pub fn ingest_stdin(args: &[&str], input: &[u8]) -> Run {
    let mut child = Command::new(testkit::tool("ingest"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ingest runs");
    let written = child.stdin.take().expect("stdin").write_all(input);
    // ingest may end before it reads its input (a usage error, a line it refuses): the
    // pipe it closed is no failure of the test's.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "input written: {e}"
        );
    }
    Run::from(child.wait_with_output().expect("ingest ends"))
}

/// A stored example under tests/data.
pub fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

/// Every record says it was converted by ingest and is the source tool's.
pub fn converted(run: &Run, tool: &str) {
    assert!(
        !run.records.is_empty(),
        "no records; stderr: {}",
        run.stderr
    );
    for r in &run.records {
        assert_eq!(r.tool, tool, "{}", r.to_line());
        assert_eq!(
            r.info.get("converted_by").and_then(|v| v.as_str()),
            Some("ingest")
        );
    }
    // One run, or several one after the other (a hyperfine command, an fping host each):
    // every run a begin first, its summary last, no run id twice.
    let mut seen: Vec<&str> = Vec::new();
    for r in &run.records {
        if seen.last() != Some(&r.run.as_str()) {
            assert_eq!(r.kind, measure::Kind::Begin, "a run starts with begin");
            assert!(!seen.contains(&r.run.as_str()), "run {} split", r.run);
            seen.push(&r.run);
        }
    }
    for (i, r) in run.records.iter().enumerate() {
        let next = run.records.get(i + 1).map(|n| n.run.as_str());
        if next != Some(r.run.as_str()) {
            assert_eq!(
                r.kind,
                measure::Kind::Summary,
                "a run ends with its summary"
            );
        }
    }
}

/// The records of each run, in order.
pub fn runs(run: &Run) -> Vec<Vec<&Record>> {
    let mut out: Vec<Vec<&Record>> = Vec::new();
    for r in &run.records {
        match out.last_mut() {
            Some(last) if last[0].run == r.run => last.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}
