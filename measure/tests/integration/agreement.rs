//! The strict reader and `record.schema.json` (through a JSON Schema validator, format
//! assertion on) accept exactly the same lines: property-tested over lines made of valid and
//! invalid choices for every field, and with `at` made of random parts. The one rule that
//! only the reader can make here, a headline that names no key in values, is told apart (a
//! key twice in an object cannot be made through a JSON map; the golden lines cover it).

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::OnceLock;

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("record.schema.json");
        let text = std::fs::read_to_string(path).expect("record.schema.json");
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("schema compiles")
    })
}

/// One of `choices` (JSON texts; `"-"` leaves the field out).
fn pick(choices: &'static [&'static str]) -> impl Strategy<Value = Option<Value>> {
    proptest::sample::select(choices)
        .prop_map(|c| (c != "-").then(|| serde_json::from_str(c).expect("choice is JSON")))
}

/// An `at` made of parts, in and out of their ranges.
fn at_parts() -> impl Strategy<Value = Option<Value>> {
    (
        0u32..10000,
        0u32..14,
        0u32..33,
        0u32..26,
        0u32..62,
        0u32..62,
        proptest::sample::select(&["", ".5", ".123456", ".", ".x"][..]),
        proptest::sample::select(&["Z", "z", "+00:00", "", " Z"][..]),
        proptest::sample::select(&["T", "t", " "][..]),
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, zone, sep)| {
            Some(json!(format!(
                "{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}"
            )))
        })
}

fn at_choice() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        pick(&[
            "\"2026-11-30T13:00:00.123456Z\"",
            "\"2016-12-31T23:59:60Z\"",
            "\"a\"",
            "\"\"",
            "5",
            "null",
            "-",
        ]),
        at_parts(),
    ]
}

/// The field names, in the order of [`envelope`] then [`body`].
const NAMES: [&str; 18] = [
    "schema",
    "tool",
    "version",
    "type",
    "run",
    "seq",
    "at",
    "host",
    "label",
    "name",
    "tags",
    "invocation",
    "status",
    "error",
    "headline",
    "headlines",
    "values",
    "info",
];

/// Choices for the first eight fields (schema to host).
fn envelope() -> impl Strategy<Value = [Option<Value>; 8]> {
    (
        pick(&[
            "\"benchmatrix/1\"",
            "\"benchmatrix/1\"",
            "\"benchmatrix/2\"",
            "1",
            "-",
        ]),
        pick(&["\"t\"", "\"t\"", "\"\"", "5", "-"]),
        pick(&["\"0\"", "\"\"", "null", "-"]),
        pick(&[
            "\"begin\"",
            "\"sample\"",
            "\"interval\"",
            "\"summary\"",
            "\"summary\"",
            "\"other\"",
            "-",
        ]),
        pick(&["\"r\"", "\"r\"", "\"\"", "-"]),
        pick(&[
            "0",
            "7",
            "7.0",
            "7e0",
            "-0.0",
            "-1",
            "1.5",
            "9007199254740991",
            "9007199254740992",
            "1e300",
            "\"1\"",
            "null",
            "-",
        ]),
        at_choice(),
        pick(&["\"h\"", "\"\"", "1", "-"]),
    )
        .prop_map(|e| [e.0, e.1, e.2, e.3, e.4, e.5, e.6, e.7])
}

/// Choices for the last ten fields (label to info).
fn body() -> impl Strategy<Value = [Option<Value>; 10]> {
    (
        pick(&["\"l\"", "\"\"", "[]", "-"]),
        pick(&["\"n\"", "\"\"", "-"]),
        pick(&["-", "{}", "{\"k\":\"v\"}", "{\"k\":1}", "[]", "null"]),
        pick(&["-", "-", "\"i\"", "\"\"", "null", "7"]),
        pick(&[
            "-",
            "\"ok\"",
            "\"ok\"",
            "\"partial\"",
            "\"failed\"",
            "\"bad\"",
            "null",
        ]),
        pick(&["-", "-", "\"e\"", "\"\"", "null", "3"]),
        pick(&["-", "\"x_s\"", "\"x_s\"", "\"y_s\"", "null", "1"]),
        pick(&[
            "-",
            "-",
            "[{\"key\":\"x_s\",\"role\":\"r\"}]",
            "[{\"key\":\"x_s\",\"role\":\"r\"},{\"key\":\"y_count\",\"role\":\"q\"}]",
            "[{\"key\":\"x_s\",\"role\":\"r\"},{\"key\":\"x_s\",\"role\":\"q\"}]",
            "[{\"key\":\"y_s\",\"role\":\"r\"}]",
            "[{\"key\":\"x_s\"}]",
            "[{\"key\":\"x_s\",\"role\":\"\"}]",
            "[{\"key\":\"x_s\",\"role\":1}]",
            "[{\"key\":\"x_s\",\"role\":\"r\",\"stat\":\"mean\"}]",
            "[{\"key\":\"x_s\",\"role\":\"r\",\"stat\":\"median\"}]",
            "[{\"key\":\"x_s\",\"role\":\"r\",\"stat\":\"p90\"}]",
            "[{\"key\":\"x_s\",\"role\":\"r\",\"stat\":null}]",
            "[]",
            "{}",
            "null",
        ]),
        pick(&[
            "-",
            "{}",
            "{\"x_s\":1}",
            "{\"x_s\":1}",
            "{\"x_s\":-1}",
            "{\"x_s\":-0.0}",
            "{\"x_s\":\"1\"}",
            "{\"x\":1}",
            "{\"x_s\":0.5,\"y_count\":3}",
            "{\"_s\":1}",
            "{\"\\n_s\":1}",
            "{\"x_ratio\":1.5}",
            "[]",
            "null",
        ]),
        pick(&["-", "{}", "{\"a\":[1,{\"b\":null}]}", "[]", "null"]),
    )
        .prop_map(|b| [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9])
}

/// A line of random choices, in envelope order.
fn line() -> impl Strategy<Value = Map<String, Value>> {
    (envelope(), body()).prop_map(|(e, b)| {
        NAMES
            .iter()
            .zip(e.into_iter().chain(b))
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect()
    })
}

/// A valid line (a sample or an ok summary) with one or two of its fields taken from a
/// random line (or left out): most lines it makes are one mistake away from valid.
fn near() -> impl Strategy<Value = Map<String, Value>> {
    (line(), 0usize..18, 0usize..18, any::<bool>()).prop_map(|(random, i, j, summary)| {
        let base = if summary {
            r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"summary","run":"r","seq":0,"at":"2026-11-30T13:00:00.123456Z","host":"h","label":"l","name":"n","tags":{"k":"v"},"status":"ok","headline":"x_s","values":{"x_s":1},"info":{}}"#
        } else {
            r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"sample","run":"r","seq":3,"at":"2026-11-30T13:00:00Z","host":"h","label":"l","name":"n","values":{"x_s":1},"info":{"a":1}}"#
        };
        let mut m: Map<String, Value> = serde_json::from_str(base).expect("base line");
        for k in [NAMES[i], NAMES[j]] {
            match random.get(k) {
                Some(v) => drop(m.insert(k.to_string(), v.clone())),
                None => drop(m.remove(k)),
            }
        }
        m
    })
}

/// Whether the line breaks the rule only the reader states: a headline (a string) that names
/// no key of `values`.
fn headline_astray(m: &Map<String, Value>) -> bool {
    let values = m.get("values").and_then(Value::as_object);
    let single = match (m.get("headline"), values) {
        (Some(Value::String(h)), Some(v)) => !v.contains_key(h),
        (Some(Value::String(_)), None) => true,
        _ => false,
    };
    // headlines: a key not in values, a key twice, or a first key that is not headline's.
    let keys: Vec<&str> = m
        .get("headlines")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("key").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let many = !keys.is_empty()
        && (keys
            .iter()
            .any(|k| !values.is_some_and(|v| v.contains_key(*k)))
            || keys.iter().enumerate().any(|(i, k)| keys[..i].contains(k))
            || m.get("headline").and_then(Value::as_str) != Some(keys[0]));
    single || many
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn reader_and_schema_accept_the_same_lines(m in prop_oneof![line(), near(), near()]) {
        let value = Value::Object(m.clone());
        let text = value.to_string();
        let reader = measure::parse_line(&text);
        let schema = validator().is_valid(&value);
        if headline_astray(&m) {
            prop_assert!(reader.is_err(), "reader accepts a headline that names no value: {text}");
        } else {
            prop_assert_eq!(
                reader.is_ok(),
                schema,
                "reader says {:?}, schema says {} for {}",
                reader.as_ref().err(),
                schema,
                text
            );
        }
    }
}
