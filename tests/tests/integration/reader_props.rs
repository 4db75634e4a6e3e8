//! The reader of record files (collate's, on measure's strict parse_line) names every line it
//! refuses as FILE:LINE: property-tested with a bad line (a valid one with bytes changed,
//! cut or doubled) at a random place among valid ones.

use collate::read::{OnInvalid, read_all};
use proptest::prelude::*;
use std::io::Write;

const GOOD: &str = r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"sample","run":"0123456789ab","seq":0,"at":"2026-11-30T13:00:00.123456Z","host":"h","label":"l","name":"n","values":{"wall_s":0.5},"info":{}}"#;

/// A line the strict reader refuses: GOOD with a byte replaced, cut short, or a key doubled.
fn bad_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..GOOD.len(), any::<u8>()).prop_map(|(i, b)| {
            let mut bytes = GOOD.as_bytes().to_vec();
            bytes[i] = b;
            String::from_utf8_lossy(&bytes).replace('\n', " ")
        }),
        (1..GOOD.len()).prop_map(|n| GOOD[..n].to_string()),
        Just(GOOD.replace(r#""wall_s":0.5"#, r#""wall_s":0.5,"wall_s":5"#)),
        Just(GOOD.replace(r#""seq":0"#, r#""seq":0.5"#)),
    ]
    .prop_filter("refused by the reader", |l| {
        !l.trim().is_empty() && measure::parse_line(l).is_err()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_refused_line_is_named_file_colon_line(before in 0usize..4200, after in 0usize..3, bad in bad_line()) {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        for i in 0..before {
            writeln!(f, "{}", GOOD.replace(r#""seq":0"#, &format!(r#""seq":{i}"#))).expect("write");
        }
        writeln!(f, "{bad}").expect("write");
        for _ in 0..after {
            writeln!(f, "{GOOD}").expect("write");
        }
        f.flush().expect("flush");
        let path = f.path().display().to_string();
        let err = read_all(std::slice::from_ref(&path), OnInvalid::Fail, &[], |_| Ok(()))
            .expect_err("a bad line stops the read");
        let msg = err.message.unwrap_or_default();
        let place = format!("{path}:{}: ", before + 1);
        prop_assert!(msg.starts_with(&place), "{} does not start with {}", msg, place);
    }
}

/// A summary with tags, nested info, headlines and an unknown field: every part of the
/// record that the view reads its own way.
const RICH: &str = r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"summary","run":"r1","seq":3,"at":"2026-11-30T13:00:00Z","host":"h","label":"a/b","name":"n","tags":{"disk":"lvm","k":"v"},"status":"ok","headline":"rate_per_s","headlines":[{"key":"rate_per_s","role":"r"}],"values":{"rate_per_s":12,"p99_s":1.5e-3},"info":{"x":{"y":[1,{"z":2}]},"s":"\u0041"},"extra":[{"q":1}]}"#;

/// RICH with a byte replaced, cut short, or a piece doubled (a key twice somewhere).
fn changed_rich() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..RICH.len(), any::<u8>()).prop_map(|(i, b)| {
            let mut bytes = RICH.as_bytes().to_vec();
            bytes[i] = b;
            String::from_utf8_lossy(&bytes).into_owned()
        }),
        (1..RICH.len()).prop_map(|n| RICH[..n].to_string()),
        (0..RICH.len(), 1..24usize).prop_map(|(i, n)| {
            let (a, b) = RICH.split_at(i.min(RICH.len()));
            let piece: String = b.chars().take(n).collect();
            format!("{a}{piece}{b}")
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// collate's view reader (parse_view) takes exactly the lines parse_line takes, as the same
    /// record, and refuses the others with the same message.
    #[test]
    fn the_view_reader_agrees_with_parse_line(line in changed_rich()) {
        let full = measure::parse_line(&line);
        let view = measure::parse_view(&line);
        match (&full, view) {
            (Ok(r), Ok(v)) => {
                // A summary's view (as a begin's) builds info too: the view is the record.
                prop_assert_eq!(v.info.as_deref(), Some(&r.info));
                prop_assert_eq!(r, &v.into_record());
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{line}: parse_line {a:?}, parse_view {b:?}"),
        }
    }
}

#[test]
fn the_view_builds_info_for_a_begin_and_a_summary_only() {
    // A summary's info: the load over its run.
    let v = measure::parse_view(RICH).expect("a summary");
    assert_eq!(v.info.as_deref().expect("a summary's info")["s"], "A");
    let begin = RICH
        .replace(r#""type":"summary""#, r#""type":"begin""#)
        .replace(r#","headlines":[{"key":"rate_per_s","role":"r"}]"#, "");
    let v = measure::parse_view(&begin).expect("a begin");
    let info = v.info.as_deref().expect("a begin's info");
    assert_eq!(info["x"]["y"][1]["z"], 2);
    // info before type: built as it is read, kept for a begin, dropped for a sample.
    let early = begin
        .replace(r#""type":"begin","#, "")
        .replace(r#""extra""#, r#""type":"begin","extra""#);
    assert!(early.find(r#""info""#) < early.find(r#""type""#));
    assert_eq!(
        measure::parse_view(&early).expect("begin").info.as_deref(),
        Some(info)
    );
    let sample = early
        .replace(r#""type":"begin""#, r#""type":"sample""#)
        .replace(r#","status":"ok","headline":"rate_per_s""#, "");
    assert!(
        measure::parse_view(&sample)
            .expect("a sample")
            .info
            .is_none()
    );
    // A repeated key in a sample's info is refused though info is not built.
    let twice = sample.replace(r#""s":"\u0041""#, r#""s":"\u0041","s":1"#);
    let err = measure::parse_view(&twice)
        .expect_err("s twice")
        .to_string();
    assert!(err.contains(r#"duplicate key "s" in "info""#), "{err}");
}
