//! Property tests in the normal `cargo test`: every line the reader accepts reads back the
//! same after the writer writes it again (and the writer's line is a fixed point), and the
//! unit parsers read every size and duration they should, exactly, and refuse the rest with
//! a message (never a panic).

use measure::units::{parse_duration, parse_seconds, parse_size};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

const SUFFIXES: [&str; 7] = [
    "_s",
    "_bytes",
    "_bits_per_s",
    "_bytes_per_s",
    "_per_s",
    "_ratio",
    "_count",
];

/// A valid `at`: RFC 3339 UTC, with 0 to 9 decimals.
fn at() -> impl Strategy<Value = String> {
    (
        0u32..10000,
        1u32..13,
        1u32..29,
        0u32..24,
        0u32..60,
        0u32..60,
        0usize..10,
        any::<u32>(),
    )
        .prop_map(|(y, mo, d, h, mi, s, places, frac)| {
            let digits = format!("{frac:010}");
            let frac = if places == 0 {
                String::new()
            } else {
                format!(".{}", &digits[..places])
            };
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}Z")
        })
}

/// A measurement: any finite number not below zero, or a count.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (proptest::num::f64::POSITIVE | proptest::num::f64::ZERO | proptest::num::f64::SUBNORMAL)
            .prop_map(|f| json!(f)),
        any::<u64>().prop_map(|n| json!(n)),
    ]
}

/// Info: any JSON, a few levels deep.
fn info_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        proptest::num::f64::NORMAL.prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A line the reader must accept: valid fields with any text in them, in a shuffled key
/// order, with an unknown field sometimes.
fn accepted_line() -> impl Strategy<Value = String> {
    let text = any::<String>();
    (
        (
            text.prop_filter("a tool", |s| !s.is_empty()),
            text,
            0usize..4,
            text.prop_filter("a run", |s| !s.is_empty()),
        ),
        (0u64..(1 << 53), at(), text, text, text),
        proptest::collection::btree_map(text, text, 0..3),
        proptest::collection::vec((text, 0usize..7, number()), 0..5),
        proptest::collection::btree_map(text, info_value(), 0..4),
        (any::<bool>(), any::<u64>()),
    )
        .prop_map(
            |(
                (tool, version, kind, run),
                (seq, at, host, label, name),
                tags,
                values,
                info,
                (unknown, order),
            )| {
                let kind = ["begin", "sample", "interval", "summary"][kind];
                let values: Map<String, Value> = values
                    .into_iter()
                    .map(|(k, s, v)| (format!("v{k}{}", SUFFIXES[s]), v))
                    .collect();
                let mut m = Map::new();
                for (k, v) in [
                    ("schema", json!("benchmatrix/1")),
                    ("tool", json!(tool)),
                    ("version", json!(version)),
                    ("type", json!(kind)),
                    ("run", json!(run)),
                    ("seq", json!(seq)),
                    ("at", json!(at)),
                    ("host", json!(host)),
                    ("label", json!(label)),
                    ("name", json!(name)),
                ] {
                    m.insert(k.to_string(), v);
                }
                if !tags.is_empty() {
                    m.insert("tags".into(), json!(tags));
                }
                if kind == "summary" {
                    match values.keys().next() {
                        Some(h) => {
                            m.insert("status".into(), json!("ok"));
                            m.insert("headline".into(), json!(h));
                        }
                        None => {
                            m.insert("status".into(), json!("partial"));
                            m.insert("error".into(), json!("interrupted"));
                        }
                    }
                }
                m.insert("values".into(), Value::Object(values));
                m.insert("info".into(), Value::Object(info.into_iter().collect()));
                if unknown {
                    m.insert("later_field".into(), json!({"x": [1, 2]}));
                }
                // A key order of its own: the reader does not care.
                let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
                let n = pairs.len();
                pairs.rotate_left((order % n as u64) as usize);
                Value::Object(pairs.into_iter().collect()).to_string()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn accepted_lines_round_trip_through_the_writer(line in accepted_line()) {
        let rec = measure::parse_line(&line).map_err(|e| TestCaseError::fail(format!("{e}: {line}")))?;
        let written = rec.to_line();
        let again = measure::parse_line(&written).map_err(|e| TestCaseError::fail(format!("{e}: {written}")))?;
        prop_assert_eq!(&again, &rec);
        prop_assert_eq!(again.to_line(), written);
    }

    #[test]
    fn any_text_is_read_or_refused_with_a_reason(line in any::<String>()) {
        match measure::parse_line(&line) {
            Ok(rec) => prop_assert_eq!(measure::parse_line(&rec.to_line()).ok(), Some(rec)),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn sizes_read_exactly(n in any::<u64>(), k in 0u64..(1 << 40)) {
        prop_assert_eq!(parse_size(&n.to_string()), Ok(n));
        prop_assert_eq!(parse_size(&format!(" {n}B ")), Ok(n));
        prop_assert_eq!(parse_size(&format!("{k}k")), Ok(k * 1024));
        prop_assert_eq!(parse_size(&format!("{k}KiB")), Ok(k * 1024));
        prop_assert_eq!(parse_size(&format!("{k}kB")), Ok(k * 1000));
        prop_assert_eq!(parse_size(&format!("{}.5k", k >> 20)), Ok((k >> 20) * 1024 + 512));
        match n.checked_mul(1 << 30) {
            Some(b) => prop_assert_eq!(parse_size(&format!("{n}G")), Ok(b)),
            None => {
                let big = format!("{n}G");
                prop_assert!(parse_size(&big).is_err())
            }
        }
        let neg = format!("-{n}");
        prop_assert!(parse_size(&neg).is_err_and(|e| e.contains("negative")));
    }

    #[test]
    fn durations_read_exactly(secs in 0u64..(1 << 33), nanos in 0u32..1_000_000_000, n in any::<u64>()) {
        let d = Duration::new(secs, nanos);
        prop_assert_eq!(parse_seconds(&format!("{secs}.{nanos:09}")), Ok(d));
        prop_assert_eq!(parse_duration(&format!("{secs}.{nanos:09}s")), Ok(d));
        prop_assert_eq!(parse_seconds(&secs.to_string()), Ok(Duration::from_secs(secs)));
        prop_assert_eq!(parse_duration(&format!("{n}ns")), Ok(Duration::from_nanos(n)));
        match n.checked_mul(1_000_000) {
            Some(ns) => prop_assert_eq!(parse_duration(&format!("{n}ms")), Ok(Duration::from_nanos(ns))),
            None => {
                let big = format!("{n}ms");
                prop_assert!(parse_duration(&big).is_err())
            }
        }
        prop_assert!(parse_duration(&secs.to_string()).is_err_and(|e| e.contains("no unit")));
        let sub = format!("{secs}.{nanos:09}1ns");
        prop_assert!(parse_duration(&sub).is_err(), "not whole nanoseconds: {}", sub);
    }

    #[test]
    fn any_size_or_duration_text_is_read_or_refused_with_a_reason(s in any::<String>()) {
        for r in [parse_size(&s).map(|_| ()), parse_duration(&s).map(|_| ()), parse_seconds(&s).map(|_| ())] {
            if let Err(e) = r {
                prop_assert!(!e.is_empty());
            }
        }
    }
}
