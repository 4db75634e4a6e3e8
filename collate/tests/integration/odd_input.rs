//! Input that used to break the output or pass unnoticed: control characters in labels,
//! names and tags (escaped in every format), a sample without values, a `--rows` or `--cols`
//! key that no record has, `--transpose` where a format has no transposed form, and values
//! outside the display range (an exponent, never 309 digits, `0.000000000000` or `-0`), and
//! lines across the reader's blocks.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;

const FORMATS: [&str; 7] = ["text", "dokuwiki", "markdown", "html", "csv", "json", "svg"];

#[test]
fn control_characters_are_escaped_in_every_format() {
    let mut lines = Vec::new();
    for (label, v) in [("two\nlines", 1.0), ("tab\there", 2.0)] {
        for i in 0..3 {
            lines.push(line(
                "sample",
                label,
                "name\rwith\u{1b}[31mescape",
                json!({"wall_s": v + i as f64 * 0.01}),
                i,
                json!({"tags": {"disk": "l\nvm"}}),
            ));
        }
    }
    let input = complete(&(lines.join("\n") + "\n"));
    for f in FORMATS {
        let out = run(&["-f", f, "--cols", "label,tag.disk"], &input);
        assert!(out.status.success(), "{f}: {}", stderr(&out));
        let text = stdout(&out);
        // No control character but the line ends.
        assert!(
            text.chars().all(|c| c == '\n' || !c.is_control()),
            "{f}: {text:?}"
        );
        if f != "json" {
            // Markdown escapes the backslash itself.
            let plain = text.replace("\\\\", "\\");
            for want in ["two\\nlines", "tab\\there", "l\\nvm", "\\x1b"] {
                assert!(plain.contains(want), "{f}: {want} in {text}");
            }
        }
    }
    // The text table keeps its shape: one header line per level, one line per row.
    let text = stdout(&run(&["--cols", "label,tag.disk", "--no-ci"], &input));
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), 3, "{text}");
    assert!(
        table[2].starts_with("name\\rwith\\x1b[31mescape (s) ↓"),
        "{text}"
    );
}

#[test]
fn a_sample_without_values_is_said() {
    let input = complete(
        &[
            sample("e", "row", json!({"x_s": 1.0}), 0),
            sample("e", "row", json!({}), 1),
        ]
        .join("\n"),
    );
    let out = run(&["-f", "json"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 sample without values (and without an error) left out"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_key_that_no_record_has_is_an_error() {
    let f = fixture();
    for (args, want) in [
        (
            vec!["--rows", "name,disk"],
            "--rows tag.disk: no record has a tag disk",
        ),
        (
            vec!["--cols", "tag.nope"],
            "--cols tag.nope: no record has a tag nope",
        ),
    ] {
        let out = run(&args, &f);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    // A tag that some records have is fine.
    let mut lines = vec![sample("e", "row", json!({"x_s": 1.0}), 0)];
    lines.push(line(
        "sample",
        "e",
        "row",
        json!({"x_s": 2.0}),
        1,
        json!({"tags": {"disk": "lvm"}}),
    ));
    let out = run(&["--rows", "name,tag.disk"], &complete(&lines.join("\n")));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn values_outside_the_display_range_get_an_exponent() {
    let v = json!({"big_count": 1e308, "tiny_count": 1e-320, "zero_count": -0.0});
    let input = complete(&sample("e", "row", v, 0));
    let args = ["--metric", "big_count,tiny_count,zero_count"];
    for f in ["text", "markdown", "dokuwiki", "html", "svg"] {
        let out = run(&[&args[..], &["-f", f]].concat(), &input);
        assert!(out.status.success(), "{f}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("1.00e308"), "{f}: {text}");
        assert!(text.contains("1.00e-320"), "{f}: {text}");
        assert!(!text.contains("000000000000"), "{f}: {text}");
        assert!(!text.contains("-0"), "{f}: {text}");
    }
    let csv = stdout(&run(&[&args[..], &["-f", "csv"]].concat(), &input));
    for l in csv.lines().skip(1) {
        let value = l.split(',').nth(4).unwrap();
        assert!(value.parse::<f64>().is_ok() && value.len() < 12, "{l}");
    }
}

/// The reader hands whole lines to its parser threads in blocks of 256 KiB: lines that
/// straddle blocks, a line longer than a block, CRLF endings and a last line without its
/// newline are all read, and a bad line is named by its line in its own input, from a file
/// or a pipe.
#[test]
fn lines_across_blocks_are_read_whole_and_counted() {
    let n = 5000u64;
    let mut lines: Vec<String> = (0..n)
        .map(|i| sample("env", "bench", json!({"wall_s": 1.0 + (i % 7) as f64}), i))
        .collect();
    // A sample whose info is longer than two blocks.
    let big = line(
        "sample",
        "env",
        "bench",
        json!({"wall_s": 4.0}),
        n,
        json!({"info": {"note": "x".repeat(600 * 1024)}}),
    );
    lines.insert(2500, big);
    let body = complete(&(lines.join("\r\n") + "\n"));
    // The summary's line, the last, without its newline.
    let input = body.trim_end_matches('\n');
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.jsonl");
    std::fs::write(&path, input).unwrap();
    let p = path.to_str().unwrap();
    for out in [run(&["-f", "json", p], ""), run(&["-f", "json"], input)] {
        assert!(out.status.success(), "{}", stderr(&out));
        let m: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(m["rows"][0]["cells"][0]["n"], n + 1, "{m}");
    }
    // A bad line in the second input, past several blocks, is named by its line there.
    let mut bad = lines.clone();
    bad[4321] = bad[4321].replace("\"seq\"", "\"seq\":1,\"seq\"");
    let second = dir.path().join("bad.jsonl");
    std::fs::write(&second, bad.join("\n")).unwrap();
    let s = second.to_str().unwrap();
    let out = run(&[p, s], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let want = format!("collate: {s}:4322: duplicate key \"seq\"");
    assert!(stderr(&out).starts_with(&want), "{}", stderr(&out));
    let out = run(&["--skip-invalid", p, "-"], &bad.join("\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("-:4322: duplicate key"),
        "{}",
        stderr(&out)
    );
}

/// Whether XML 1.0 allows `c` in a document (its Char production).
fn xml_char(c: char) -> bool {
    matches!(u32::from(c), 0x9 | 0xa | 0xd | 0x20..=0xd7ff | 0xe000..=0xfffd | 0x10000..=0x10ffff)
}

/// Whether `c` may reach a terminal or a document raw: not a control character (C0, DEL,
/// C1) but the line end, and not a non-character.
fn printable(c: char) -> bool {
    let n = u32::from(c);
    c == '\n' || !(c.is_control() || (0xfdd0..=0xfdef).contains(&n) || n & 0xfffe == 0xfffe)
}

/// Parses `text` with expat (Python's XML parser), when python3 is installed.
fn expat_parses(f: &str, text: &str) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    if !testkit::need_tool("python3") {
        return;
    }
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parseString(sys.stdin.buffer.read())",
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{f}: expat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn controls_and_noncharacters_in_hosts_labels_tags_facts_and_errors_never_print_raw() {
    let host = "h\u{1b}]0;pwned\u{7}";
    let tags = json!({"disk": "t\u{7f}\u{85}\u{9b}x"});
    let mut lines = Vec::new();
    for (label, kernel) in [("l\u{fffe}a\u{ffff}", "k\u{1b}[2J\u{0}"), ("plain", "k2")] {
        let extra = json!({"host": host, "tags": tags, "info": {"kernel": kernel}});
        lines.push(line("begin", label, "n\u{1}ame", json!({}), 0, extra));
        for i in 0..3 {
            let extra = json!({"host": host, "tags": tags});
            let values = json!({"wall_s": 1.0 + i as f64 * 0.01});
            lines.push(line("sample", label, "n\u{1}ame", values, i, extra));
        }
    }
    let failed =
        json!({"host": host, "tags": tags, "status": "failed", "error": "boom\u{1b}[31m\u{9b}"});
    lines.push(line(
        "sample",
        "gone",
        "n\u{1}ame",
        json!({"wall_s": 1.0}),
        0,
        json!({"host": host, "tags": tags}),
    ));
    lines.push(line("summary", "gone", "n\u{1}ame", json!({}), 0, failed));
    let input = complete(&(lines.join("\n") + "\n"));
    for f in FORMATS {
        let out = run(
            &["-f", f, "--cols", "label,host,tag.disk", "--verbose"],
            &input,
        );
        assert!(out.status.success(), "{f}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.chars().all(printable), "{f}: {text:?}");
        assert!(
            stderr(&out).chars().all(printable),
            "{f}: {:?}",
            stderr(&out)
        );
        if matches!(f, "html" | "svg") {
            assert!(text.chars().all(xml_char), "{f}: {text:?}");
            crate::formats::well_formed(&text);
            expat_parses(f, &text);
        }
        if f == "text" {
            for want in [
                "h\\x1b]0;pwned\\x07",
                "l\\u{fffe}a\\u{ffff}",
                "t\\x7f\\x85\\x9bx",
            ] {
                assert!(text.contains(want), "{want} in {text}");
            }
            assert!(text.contains("k\\x1b[2J\\x00"), "the fact: {text}");
            assert!(text.contains("boom\\x1b[31m\\x9b"), "the error: {text}");
        }
    }
}
