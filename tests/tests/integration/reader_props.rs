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
