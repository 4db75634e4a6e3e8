//! The scanner held to the serde reader: the usual shapes read alike, the rest left to serde,
//! and changed lines never read otherwise.

use super::super::de::{Info, ViewSeed};
use super::super::view::Reuse;
use proptest::prelude::*;
use serde::de::DeserializeSeed;

/// The scanner's view of `line`, into new lists.
fn view(line: &str, info: Info) -> Option<super::RecordView<'_>> {
    super::view(line, info, &mut Reuse::default())
}

/// Lines of the shapes the scanner takes: a timecmd sample and a pingrt sample as the
/// tools write them, with nested `info`, odd spacing and every kind of JSON value; a
/// summary; a begin with the machine's facts (its `info` built) and one whose `info` comes
/// before its `type`.
const SHAPES: [&str; 5] = [
    r#"{"schema":"benchmatrix/1","tool":"timecmd","version":"0.1.0","type":"sample","run":"0a1b2c3d4e5f","seq":12,"at":"2026-12-07T10:00:01.250000Z","host":"h1","label":"env1/lvm/disk","name":"make 3","tags":{"disk":"vdb","peer":"10.0.0.2"},"values":{"wall_s":0.52343117702468739,"user_s":0.2,"max_rss_bytes":2945024,"cpu_ratio":1e-3,"fs_read_bytes":0},"info":{"run":13,"ok":true,"exit_code":0,"pid":10012}}"#,
    r#" { "schema" : "benchmatrix/1" , "tool":"pingrt","version":"0.1.0","type":"sample","run":"r","seq":0,"at":"2026-12-07T10:00:01Z","host":"ü","label":"a/b","name":"ping ::1","invocation":"i","values":{"rtt_s":1.5E-4},"info":{"x":[1,-2.5e+3,{"y":null,"z":[true,false,[]]},"s"],"e":{},"k":-0} } "#,
    r#"{"schema":"benchmatrix/1","tool":"t","version":"0","type":"summary","run":"r","seq":9007199254740991,"at":"2026-12-07T10:00:01Z","host":"h","label":"l","name":"n","status":"failed","error":"it broke","headline":"x_s","values":{"x_s":3}}"#,
    r#"{"schema":"benchmatrix/1","tool":"pingrt","version":"0.1.0","type":"begin","run":"r","seq":0,"at":"2026-12-07T10:00:01Z","host":"h","label":"l","name":"n","tags":{"disk":"vda"},"values":{},"info":{"host":"10.0.0.1","count":100,"interval_s":0.2,"cpu_count":2,"memory_bytes":25276182528,"hypervisor":true,"mitigations":{"meltdown":"Not affected","spectre_v2":"Mitigation: Retpolines; STIBP: disabled"},"load_1m":0.29000000000000004,"shell":null,"command":["make","-j2"],"n":-7,"z":-0,"big":18446744073709551615,"bigger":18446744073709551616,"neg":-9223372036854775808}}"#,
    r#"{"info":{"a":[1,{"b":2.5}],"c":"d"},"schema":"benchmatrix/1","tool":"t","version":"0","type":"begin","run":"r","seq":1,"at":"2026-12-07T10:00:01Z","host":"h","label":"l","name":"n"}"#,
];

/// The serde reader's view of `line`, where it reads one.
fn serde_view(line: &str, info: Info) -> Option<super::RecordView<'_>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let v = ViewSeed(info).deserialize(&mut de).ok()?;
    de.end().ok().map(|()| v)
}

#[test]
fn the_usual_shapes_are_scanned_as_serde_reads_them() {
    for line in SHAPES {
        for info in [Info::Ends, Info::Keep] {
            let v = view(line, info).expect("the scanner takes the usual shape");
            assert_eq!(Some(v), serde_view(line, info), "{line}");
        }
    }
    // A sample's info is not built (parse_view), a begin's is, also where it comes first.
    assert!(
        view(SHAPES[0], Info::Ends)
            .expect("a sample")
            .info
            .is_none()
    );
    let begin = view(SHAPES[3], Info::Ends).expect("a begin");
    assert_eq!(
        begin.info.expect("built")["mitigations"]["meltdown"],
        "Not affected"
    );
    let early = view(SHAPES[4], Info::Ends).expect("a begin");
    assert_eq!(early.info.expect("built")["a"][1]["b"], 2.5);
    let sample = SHAPES[4].replace("begin", "sample");
    assert!(view(&sample, Info::Ends).expect("a sample").info.is_none());
}

#[test]
fn what_the_scanner_leaves_to_serde() {
    let base = SHAPES[0];
    for (from, to) in [
        (r#""h1""#, r#""h\u0031""#),
        (r#""wall_s""#, r#""wall_\u0073""#),
        (r#""seq":12"#, r#""seq":12.0"#),
        (r#""seq":12"#, r#""seq":012"#),
        (r#""ok":true"#, r#""ok":true,"ok":1"#),
        (r#""pid":10012"#, r#""pid":1e400"#),
        (
            r#""pid":10012"#,
            r#""pid":12345678901234567890123456789012345678901"#,
        ),
        (r#""wall_s":0.52343117702468739"#, r#""wall_s":"1""#),
        (r#""disk":"vdb""#, r#""disk":"vdb","disk":"vdc""#),
        (r#""name":"make 3""#, r#""name":"make 3","extra":1"#),
        (
            r#""info":{"#,
            r#""info":{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"#,
        ),
    ] {
        let line = base.replacen(from, to, 1);
        assert_ne!(line, base, "{from}");
        assert!(view(&line, Info::Ends).is_none(), "{line}");
    }
    // What is built of a begin's info holds no escape, and each key once at every depth.
    for (from, to) in [
        (r#""c":"d""#, r#""c":"\u0064""#),
        (r#"{"b":2.5}"#, r#"{"b":2.5,"b":3}"#),
        (r#""c":"d""#, r#""c":"d","a":0"#),
        (r#""c":"d""#, r#""c":1e400"#),
    ] {
        let line = SHAPES[4].replacen(from, to, 1);
        assert_ne!(line, SHAPES[4], "{from}");
        for info in [Info::Ends, Info::Keep] {
            assert!(view(&line, info).is_none(), "{line}");
        }
    }
}

/// The char boundary at or before byte `i` of `line`.
fn boundary(line: &str, i: usize) -> usize {
    (0..=i.min(line.len()))
        .rev()
        .find(|&k| line.is_char_boundary(k))
        .unwrap_or(0)
}

/// One of the shapes with a byte replaced, cut short, or a piece doubled.
fn changed() -> impl Strategy<Value = String> {
    let pick = 0..SHAPES.len();
    prop_oneof![
        (pick.clone(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(s, i, b)| {
            let mut bytes = SHAPES[s].as_bytes().to_vec();
            let i = i.index(bytes.len());
            bytes[i] = b;
            String::from_utf8_lossy(&bytes).into_owned()
        }),
        (pick.clone(), any::<prop::sample::Index>()).prop_map(|(s, i)| {
            let line = SHAPES[s];
            line[..boundary(line, i.index(line.len()))].to_string()
        }),
        (pick, any::<prop::sample::Index>(), 1..24usize).prop_map(|(s, i, n)| {
            let line = SHAPES[s];
            let (a, b) = line.split_at(boundary(line, i.index(line.len())));
            let piece: String = b.chars().take(n).collect();
            format!("{a}{piece}{b}")
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the scanner takes, serde takes as the same view.
    #[test]
    fn the_scanner_takes_only_what_serde_takes(line in changed()) {
        // Into new lists, and into the lists of a view of the usual shape read before.
        let mut reuse = Reuse::default();
        for info in [Info::Ends, Info::Keep] {
            if let Some(v) = view(&line, info) {
                prop_assert_eq!(Some(v), serde_view(&line, info), "{}", line);
            }
            if let Some(v) = super::view(SHAPES[0], info, &mut reuse) {
                reuse.give_back(v);
            }
            if let Some(v) = super::view(&line, info, &mut reuse) {
                let want = serde_view(&line, info);
                prop_assert_eq!(Some(&v), want.as_ref(), "{}", line);
                reuse.give_back(v);
            }
        }
    }
}

#[test]
fn views_read_into_the_lists_of_views_before_are_the_same() {
    // Lines of every shape one after another, each view handed back when it is done with:
    // the next is read into its lists, emptied.
    let mut reuse = Reuse::default();
    for round in 0..3 {
        for line in SHAPES {
            let v = super::view(line, Info::Ends, &mut reuse).expect("the usual shape");
            assert_eq!(
                Some(&v),
                serde_view(line, Info::Ends).as_ref(),
                "{round}: {line}"
            );
            reuse.give_back(v);
        }
    }
    assert!(reuse.tags.is_empty() && reuse.values.is_empty());
    assert!(reuse.values.capacity() > 0, "the lists are kept");
}
