//! Records of two environments that reuse a run id and its seqs are different records, not
//! repeats: both count, whatever the order of the inputs, and a warning names both places;
//! a record read twice still counts once.

use crate::common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One run as a tool writes it, with a fixed run id: begin, a sample per value, summary.
fn run_of(host: &str, label: &str, values: &[f64]) -> String {
    let rec = |kind: &str, seq: usize, extra: Value| {
        let mut r = json!({
            "schema": "benchmatrix/1", "tool": "t", "version": "1", "type": kind,
            "run": "0123456789ab", "seq": seq, "at": "2026-11-30T13:00:00.000000Z",
            "host": host, "label": label, "name": "row", "values": {}, "info": {}
        });
        if let (Some(o), Value::Object(e)) = (r.as_object_mut(), extra) {
            o.extend(e);
        }
        r.to_string() + "\n"
    };
    let mut out = rec("begin", 0, json!({"info": {"kernel": format!("k-{host}")}}));
    for (i, v) in values.iter().enumerate() {
        out += &rec("sample", i, json!({"values": {"x_s": v}}));
    }
    out + &rec(
        "summary",
        0,
        json!({"status": "ok", "headline": "x_s", "values": {"x_s": values[0]}}),
    )
}

/// The matrix of collate's JSON: (row name, column key) to the cell's value and count.
fn cells(o: &std::process::Output) -> BTreeMap<(String, String), (f64, u64)> {
    let doc: Value = serde_json::from_str(&stdout(o)).expect("json");
    let cols = doc["columns"].as_array().expect("columns");
    let mut m = BTreeMap::new();
    for r in doc["rows"].as_array().expect("rows") {
        let name = r["dims"]["name"].as_str().unwrap_or("").to_string();
        for (k, c) in r["cells"].as_array().expect("cells").iter().enumerate() {
            if c.is_null() {
                continue;
            }
            let col = &cols[k]["key"];
            let v = (
                c["value"].as_f64().unwrap_or(f64::NAN),
                c["n"].as_u64().unwrap_or(0),
            );
            m.insert((name.clone(), col.as_str().unwrap_or("").to_string()), v);
        }
    }
    m
}

#[test]
fn two_environments_that_share_run_ids_both_count_in_either_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, run_of("ha", "A", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).unwrap();
    std::fs::write(
        &b,
        run_of("hb", "B", &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]),
    )
    .unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let ab = run(&[a, b, "-f", "json"], "");
    let ba = run(&[b, a, "-f", "json"], "");
    assert_eq!(ab.status.code(), Some(0), "{}", stderr(&ab));
    assert_eq!(ba.status.code(), Some(0), "{}", stderr(&ba));
    let m = cells(&ab);
    assert_eq!(m, cells(&ba), "the order of the inputs changes nothing");
    let want: BTreeMap<_, _> = [
        (("row".to_string(), "A".to_string()), (3.5, 6)),
        (("row".to_string(), "B".to_string()), (40.0, 7)),
    ]
    .into();
    assert_eq!(m, want, "{}", stdout(&ab));
    let err = stderr(&ab);
    assert!(
        err.starts_with(&format!(
            "collate: {b}:1 and {a}:1 are different records under one identity (run \
             0123456789ab, begin seq 0; another host, label or values), as are 7 more of \
             {b}'s: both are kept, {b}'s as run 0123456789ab/2"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // True repeats still count once: the same file again, or the input twice on stdin.
    let text_a = std::fs::read_to_string(a).unwrap();
    let text_b = std::fs::read_to_string(b).unwrap();
    for args in [vec![a, a, b, b], vec![b, a, b, a]] {
        let again = run(&[&args[..], &["-f", "json"]].concat(), "");
        assert_eq!(cells(&again), want, "{args:?}: {}", stderr(&again));
        assert!(
            stderr(&again).contains("repeats the record at"),
            "{}",
            stderr(&again)
        );
    }
    let piped = run(
        &["-f", "json"],
        &(text_a.clone() + &text_b + &text_a + &text_b),
    );
    assert_eq!(cells(&piped), want, "{}", stderr(&piped));
}

#[test]
fn other_values_under_one_identity_are_both_kept_and_named() {
    // One environment, one run id, two files that disagree on a sample: not a repeat.
    let first = run_of("h", "A", &[1.0, 2.0, 3.0]);
    let second = run_of("h", "A", &[1.0, 2.0, 9.0]);
    let out = run(&["-f", "json"], &(first.clone() + &second + &second));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = cells(&out);
    assert_eq!(m[&("row".to_string(), "A".to_string())].1, 4, "{m:?}");
    let err = stderr(&out);
    assert!(
        err.contains("collate: -:9 and -:4 are different records under one identity (run 0123456789ab, sample seq 2; another host, label or values): both are kept\n"),
        "{err}"
    );
    // The second file again: all 5 of its records are repeats (its third sample of the one
    // it was kept beside), as are its 4 that agree with the first file.
    assert!(
        err.starts_with("collate: -:6 repeats the record at -:1 (run 0123456789ab, begin seq 0) and 8 more records of - again in -"),
        "{err}"
    );
}
