//! `--name` always names the rows: every record of a run of each tool carries it (ingest's
//! parts as "NAME PART"), and a run that makes several rows does so through its summary's
//! headlines ("NAME: ROLE"), never by renaming its records.

use benchmatrix_tests::{bin, decode, ok, run};
use std::path::Path;
use std::process::Command;

/// Runs `tool [SUB] --name given -q -o FILE ARGS` (in `dir`) and returns its records.
fn named(dir: &Path, tool: &str, sub: &[&str], args: &[&str]) -> Vec<measure::Record> {
    let file = dir.join(format!("{tool}.jsonl"));
    let out = run(Command::new(bin(tool))
        .args(sub)
        .args(["--name", "given", "-q", "-o"])
        .arg(&file)
        .args(args)
        .current_dir(dir));
    ok(&out, tool);
    decode(&std::fs::read_to_string(&file).expect("records"))
}

#[test]
fn name_is_every_records_name_and_roles_make_the_rows() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let cases: &[(&str, &[&str], usize)] = &[
        (
            "cpumem",
            &["--only", "syscall,clock", "-t", "20ms", "-c", "2"],
            2,
        ),
        ("fsmeta", &["-n", "64", "."], 3),
        ("blkread", &["--random", "--create", "1M", "scratch"], 4),
        ("blkwrite", &["-s", "1M", "written"], 0),
        ("timecmd", &["-r", "2", "--", "true"], 0),
    ];
    for (tool, args, rows) in cases {
        let recs = named(d, tool, &[], args);
        assert!(recs.len() >= 3, "{tool}: {recs:?}");
        for r in &recs {
            assert_eq!(r.name, "given", "{tool}: {}", r.to_line());
        }
        let sum = recs.last().expect("a summary");
        assert_eq!(sum.headlines.len(), *rows, "{tool}: {}", sum.to_line());
    }
    // ingest: a hyperfine export of two commands is two runs, "given COMMAND" each.
    let export = d.join("hf.json");
    let hf = r#"{"results":[{"command":"sleep 0.01","mean":0.0112,"stddev":0.0003,"median":0.0111,"user":0.0005,"system":0.0004,"min":0.0108,"max":0.0119,"times":[0.0108,0.0111,0.0119],"exit_codes":[0,0,0]},{"command":"true","mean":0.0009,"stddev":0.0001,"median":0.0009,"user":0.0002,"system":0.0003,"min":0.0008,"max":0.0011,"times":[0.0008,0.0009,0.0011],"exit_codes":[0,0,0]}]}"#;
    std::fs::write(&export, hf).expect("export");
    let recs = named(d, "ingest", &["hyperfine"], &["hf.json"]);
    let mut names: Vec<&str> = recs.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    assert_eq!(names, ["given sleep 0.01", "given true"], "{recs:?}");
}
