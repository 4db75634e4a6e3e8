//! Golden lines of every record type, checked against both the strict reader and the JSON Schema.

use serde_json::Value;
use std::path::Path;

fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("record.schema.json");
    let text = std::fs::read_to_string(&path).expect("record.schema.json");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    // Format assertion on: the schema's "format": "date-time" is part of the contract.
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles")
}

fn golden(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read_to_string(path).expect("golden file")
}

#[test]
fn valid_lines_pass_reader_and_schema() {
    let v = schema();
    let mut kinds = std::collections::HashSet::new();
    for line in golden("valid.jsonl").lines() {
        let rec = measure::parse_line(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        kinds.insert(rec.kind);
        let json: Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> = v.iter_errors(&json).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "schema rejects {line}: {errors:?}");
        // What the writer writes back is read back the same.
        assert_eq!(measure::parse_line(&rec.to_line()).unwrap(), rec);
    }
    assert_eq!(
        kinds.len(),
        4,
        "golden lines cover begin, sample, interval, summary"
    );
}

#[test]
fn invalid_lines_fail_reader_and_schema_with_a_reason() {
    let v = schema();
    let mut cases = 0;
    for line in golden("invalid.jsonl").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (want, json_line) = line.split_once('\t').expect("case\\tline");
        let (reader_only, want) = match want.strip_prefix("reader-only ") {
            Some(w) => (true, w),
            None => (false, want),
        };
        let err = measure::parse_line(json_line).expect_err(json_line);
        assert!(
            err.to_string().contains(want),
            "reader said {err:?}, expected it to mention {want:?} for {json_line}"
        );
        if let Ok(json) = serde_json::from_str::<Value>(json_line) {
            // The reader-only rules are the two a JSON Schema cannot state; the schema
            // must accept those lines, so that the list of them stays exact.
            assert_eq!(
                v.is_valid(&json),
                reader_only,
                "schema and the reader-only mark disagree on {json_line}"
            );
        }
        cases += 1;
    }
    assert!(cases >= 20);
}
