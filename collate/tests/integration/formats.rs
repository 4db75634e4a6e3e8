//! Golden outputs for every format from a fixed input, the DokuWiki table parsed back by a
//! model of DokuWiki's merging rules and checked against the classic comparison's table (the
//! DokuWiki page of Xen environments the project reproduces), the CSV parsed back by a CSV
//! reader, and the HTML and SVG checked to be well formed.
//!
//! `UPDATE_GOLDEN=1 cargo test -p collate --test integration formats` rewrites the golden files.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;
use std::path::PathBuf;

fn golden(name: &str, args: &[&str]) {
    let out = run(args, &fixture());
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let got = stdout(&out);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert!(
        got == want,
        "{name} differs from the golden file; got:\n{got}\nwant:\n{want}"
    );
}

#[test]
fn golden_text() {
    golden("text.txt", &["-f", "text"]);
}

#[test]
fn golden_text_baseline() {
    golden("text-baseline.txt", &["--baseline", "hvm/nas/net"]);
}

#[test]
fn golden_text_transposed() {
    golden("text-transposed.txt", &["--transpose", "--no-ci"]);
}

#[test]
fn golden_dokuwiki() {
    golden("dokuwiki.txt", &["-f", "dokuwiki"]);
}

#[test]
fn golden_markdown() {
    golden("markdown.md", &["-f", "markdown"]);
}

#[test]
fn golden_html() {
    golden("table.html", &["-f", "html", "--baseline", "hvm/nas/net"]);
}

#[test]
fn golden_csv() {
    golden("table.csv", &["-f", "csv"]);
}

#[test]
fn golden_json() {
    golden("table.json", &["-f", "json", "--baseline", "hvm/nas/net"]);
}

#[test]
fn golden_svg() {
    golden("chart.svg", &["-f", "svg"]);
}

// The classic comparison's table header, as written there.
const CLASSIC_HEADER: [&str; 3] = [
    "^                                         ^  hvm^ hvmp^      paravirtualized domU           ^^^^^^^ dom0^ bare^",
    "^                                         ^  nas^  nas^  nas^  lvm^ file^   lvm^   xfs^  lvm^  xfs^  xfs^  xfs^",
    "^                                         ^  net^  net^  net^  san^  ram^ iscsi^ iscsi^ disc^ disc^ disc^ disc^",
];

// The classic comparison's rows: (name, values in the unit of its title, unit factor to base, key).
fn classic_rows() -> Vec<(&'static str, [f64; 11], f64, &'static str)> {
    vec![
        (
            "network throughput domU->dom0",
            [
                7., 84., 230., 229., 231., 221., 226., 230., 231., 246., 344.,
            ],
            1e6,
            "throughput_bits_per_s",
        ),
        (
            "network throughput dom0->domU",
            [21., 122., 97., 110., 96., 93., 93., 98., 97., 246., 344.],
            1e6,
            "throughput_bits_per_s",
        ),
        (
            "latency for icmp domU<->dom0",
            [0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.03, 0.01],
            1e-3,
            "rtt_s",
        ),
        (
            "time tar xjf linux-2.6.19.tar.bz2",
            [17., 14., 25., 18., 18., 17., 15., 13., 18., 16., 13.],
            1.0,
            "wall_s",
        ),
        (
            "time make -j8 bzImage modules",
            [
                1241., 1257., 561., 547., 560., 555., 556., 559., 559., 593., 465.,
            ],
            1.0,
            "wall_s",
        ),
        (
            "time it takes to write a 2GB blockfile",
            [17., 72., 40., 16., 8., 42., 48., 139., 65., 36., 32.],
            1.0,
            "wall_s",
        ),
    ]
}

const CLASSIC_LABELS: [&str; 11] = [
    "hvm/nas/net",
    "hvmp/nas/net",
    "paravirtualized domU/nas/net",
    "paravirtualized domU/lvm/san",
    "paravirtualized domU/file/ram",
    "paravirtualized domU/lvm/iscsi",
    "paravirtualized domU/xfs/iscsi",
    "paravirtualized domU/lvm/disc",
    "paravirtualized domU/xfs/disc",
    "dom0/xfs/disc",
    "bare/xfs/disc",
];

fn design_input() -> String {
    let mut lines = Vec::new();
    for (j, label) in CLASSIC_LABELS.iter().enumerate() {
        for (name, vals, factor, key) in classic_rows() {
            lines.push(sample(
                label,
                name,
                serde_json::json!({ key: vals[j] * factor }),
                0,
            ));
            lines.push(summary(
                label,
                name,
                serde_json::json!({ key: vals[j] * factor }),
                key,
            ));
        }
    }
    lines.join("\n")
}

/// (text, colspan) of each header cell, the shape that DokuWiki renders.
fn shape(cells: &[DokuCell]) -> Vec<(String, usize)> {
    cells.iter().map(|c| (c.text.clone(), c.colspan)).collect()
}

#[test]
fn dokuwiki_merges_like_the_design_table() {
    let out = run(&["-f", "dokuwiki"], &complete(&design_input()));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    for (i, want) in CLASSIC_HEADER.iter().enumerate() {
        let got = doku_row(lines[i]);
        let want = doku_row(want);
        assert_eq!(shape(&got), shape(&want), "header row {i}:\n{}", lines[i]);
        assert!(got.iter().all(|c| c.header));
        // Single columns right-aligned (two spaces before), spans centred.
        for c in &got[1..] {
            let want_align = if c.colspan > 1 { "center" } else { "right" };
            assert_eq!(c.align, want_align, "{c:?} in {}", lines[i]);
        }
    }
    // "paravirtualized domU" spans 7 columns, as `^^^^^^^` does in the classic table.
    assert!(lines[0].contains("paravirtualized domU") && lines[0].contains("^^^^^^^ "));
    // Every data row: a title and 11 right-aligned values equal to the classic table's.
    let rows: Vec<Vec<DokuCell>> = lines[3..9].iter().map(|l| doku_row(l)).collect();
    for ((name, vals, factor, _), row) in classic_rows().into_iter().zip(&rows) {
        assert_eq!(row.len(), 12, "{row:?}");
        assert!(row[0].text.starts_with(name), "{row:?}");
        let unit = row[0]
            .text
            .rsplit_once('(')
            .map(|(_, u)| u.trim_end_matches(['↑', '↓', ' ']).trim_end_matches(')'))
            .unwrap();
        let to_base = match unit {
            "Mb/s" => 1e6,
            "us" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            other => panic!("unit {other}"),
        };
        for (j, cell) in row[1..].iter().enumerate() {
            assert_eq!(cell.align, "right", "{cell:?}");
            assert!(!cell.header);
            let got: f64 = cell.text.parse().unwrap();
            let want = vals[j] * factor;
            assert!(
                (got * to_base - want).abs() <= want * 0.005,
                "{name} column {j}: {} {unit} vs {want}",
                cell.text
            );
        }
    }
    // The source lines up: every line of the table is as long as the first.
    let width = lines[0].chars().count();
    assert!(
        lines[..9].iter().all(|l| l.chars().count() == width),
        "{text}"
    );
}

#[test]
fn dokuwiki_escapes_separators() {
    let out = run(&["-f", "dokuwiki"], &fixture());
    let text = stdout(&out);
    let header = doku_row(text.lines().next().unwrap());
    let last = header.last().unwrap();
    assert_eq!(last.text, "a|b^c <&> \"q\",x");
    let widths: Vec<usize> = text
        .lines()
        .take_while(|l| l.starts_with(['^', '|']))
        .map(|l| doku_row(l).iter().map(|c| c.colspan).sum())
        .collect();
    assert!(widths.iter().all(|&w| w == 6), "{widths:?}\n{text}");
    // A missing cell is shown as missing, not as 0 and not as an empty (merging) cell.
    assert!(
        text.lines()
            .any(|l| l.starts_with("|icmp latency") && doku_row(l)[3].text == "-")
    );
}

#[test]
fn csv_is_tidy_and_numeric() {
    let out = run(&["-f", "csv", "--baseline", "hvm/nas/net"], &fixture());
    assert!(out.status.success(), "{}", stderr(&out));
    let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
    let head: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    let want = [
        "row", "label_1", "label_2", "label_3", "unit", "n", "value", "ci_low", "ci_high",
        "excluded", "ratio", "p_value", "verdict",
    ];
    assert_eq!(head, want);
    let recs: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    // One line per present cell (5 + 4 + 4), then 4 overall lines per compared column (4).
    assert_eq!(recs.len(), 13 + 4 * 4, "{}", stdout(&out));
    for r in &recs {
        assert_eq!(r.len(), want.len());
        for k in [5, 6, 7, 8, 9, 10, 11] {
            assert!(r[k].is_empty() || r[k].parse::<f64>().is_ok(), "{k}: {r:?}");
        }
        assert!(
            ["", "better", "worse", "same", "unknown"].contains(&&r[12]),
            "{r:?}"
        );
        assert!(
            ["s", "bits_per_s", "ratio", "count"].contains(&&r[4]),
            "{r:?}"
        );
    }
    let first = &recs[0];
    assert_eq!(&first[0], "network throughput domU->dom0");
    assert_eq!((&first[1], &first[2], &first[3]), ("hvm", "nas", "net"));
    // Base units: bits per second, not Mb/s.
    assert_eq!(first[6].parse::<f64>().unwrap(), 202.5e6);
    assert_eq!(&first[10], "1");
    let para = &recs[1];
    assert_eq!(&para[1], "para domU");
    assert_eq!(&para[12], "better");
    assert!((para[10].parse::<f64>().unwrap() - 212.5 / 202.5).abs() < 1e-12);
    let p: f64 = para[11].parse().unwrap();
    assert!((p - 2.0 / 924.0).abs() < 1e-12, "{p}");
    // The label that needs quoting comes back whole.
    assert!(
        recs.iter()
            .any(|r| &r[1] == "a|b^c <&> \"q\",x" && &r[2] == "y*z")
    );
    // The time row's cells are over samples: n 3.
    let time = recs.iter().find(|r| r[0].starts_with("time make")).unwrap();
    assert_eq!((&time[4], &time[5]), ("s", "3"));
    assert!(recs.iter().any(|r| r[0].starts_with("overall")));
}

/// Checks that `text` is well-formed XML (every tag closed, in order; attributes quoted;
/// entities known) and returns the element names in document order.
pub(crate) fn well_formed(text: &str) -> Vec<String> {
    let mut r = quick_xml::Reader::from_str(text);
    r.config_mut().check_end_names = true;
    let mut names = Vec::new();
    let mut depth = 0i32;
    loop {
        match r.read_event() {
            Ok(quick_xml::events::Event::Start(e)) => {
                depth += 1;
                for a in e.attributes() {
                    a.unwrap();
                }
                names.push(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            Ok(quick_xml::events::Event::Empty(e)) => {
                names.push(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            Ok(quick_xml::events::Event::End(_)) => depth -= 1,
            Ok(quick_xml::events::Event::Text(t)) => {
                t.decode().unwrap();
            }
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well formed at {}: {e}\n{text}", r.buffer_position()),
        }
    }
    assert_eq!(depth, 0, "unclosed elements");
    names
}

#[test]
fn html_is_well_formed_with_merged_headers() {
    let out = run(&["-f", "html", "--baseline", "hvm/nas/net"], &fixture());
    let text = stdout(&out);
    assert!(text.starts_with("<!DOCTYPE html>"));
    let names = well_formed(&text);
    assert_eq!(names.iter().filter(|n| *n == "table").count(), 1);
    let thead = &text[text.find("<thead>").unwrap()..text.find("</thead>").unwrap()];
    assert_eq!(thead.matches("<tr>").count(), 3);
    assert!(thead.contains("<th rowspan=\"3\"></th>"));
    assert!(thead.contains("<th colspan=\"2\" scope=\"colgroup\">para domU</th>"));
    assert!(thead.contains("a|b^c &lt;&amp;&gt; &quot;q&quot;,x"));
    assert!(text.contains("domU-&gt;dom0"));
    assert!(!text.contains("<&>"));
}

#[test]
fn svg_is_well_formed() {
    let out = run(&["-f", "svg"], &fixture());
    let text = stdout(&out);
    let names = well_formed(&text);
    assert_eq!(names[0], "svg");
    // The background, one bar per present cell (5 + 4 + 4) and a legend swatch per chart
    // (no baseline: no band).
    assert_eq!(names.iter().filter(|n| *n == "rect").count(), 1 + 13 + 3);
    assert!(text.contains("no value"));
}

/// Each chart draws every value of a cell as a dot (up to 100 a cell), and with a baseline
/// its interval shaded once a row where the baseline has a cell.
#[test]
fn charts_show_every_value_and_the_baseline_band() {
    for base in [None, Some("hvm/nas/net")] {
        let mut args = vec!["-f", "json"];
        args.extend(base.iter().flat_map(|b| ["--baseline", *b]));
        let v: serde_json::Value = serde_json::from_slice(&run(&args, &fixture()).stdout).unwrap();
        let rows = v["rows"].as_array().unwrap();
        let dots: u64 = rows
            .iter()
            .flat_map(|r| r["cells"].as_array().unwrap())
            .filter_map(|c| c["n"].as_u64())
            .map(|n| n.min(100))
            .sum();
        let bands = rows
            .iter()
            .filter(|r| r["cells"][0]["compare"]["baseline"] == true)
            .count();
        args[1] = "svg";
        let svg = stdout(&run(&args, &fixture()));
        assert_eq!(
            svg.matches("<circle class=\"dot\"").count() as u64,
            dots,
            "{base:?}"
        );
        assert_eq!(svg.matches("class=\"band\"").count(), bands, "{base:?}");
        assert_eq!(bands > 0, base.is_some());
    }
}

#[test]
fn json_carries_the_statistics() {
    let out = run(&["-f", "json", "--baseline", "hvm/nas/net"], &fixture());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stat"], "median");
    assert_eq!(v["columns"].as_array().unwrap().len(), 5);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let tp = &rows[0];
    assert_eq!(tp["display_unit"], "Mb/s");
    assert_eq!(tp["source"], "samples");
    let c = &tp["cells"][1];
    assert_eq!(c["n"], 6);
    // Samples 210..215 Mb/s: median 212.5, the 95% CI of 6 values is X(1)..X(6).
    assert_eq!(c["value"], 212.5e6);
    assert_eq!(c["ci_low"], 210e6);
    assert_eq!(c["ci_high"], 215e6);
    // 6 against 6 fully separated: p = 2 / C(12, 6) = 0.0021645.
    let p = c["compare"]["p"].as_f64().unwrap();
    assert!((p - 2.0 / 924.0).abs() < 1e-12, "{p}");
    assert_eq!(c["compare"]["significant"], true);
    assert_eq!(tp["cells"][3]["compare"]["too_few"], true);
    assert_eq!(tp["cells"][0]["compare"]["baseline"], true);
    assert_eq!(rows[1]["source"], "summaries");
    assert!(rows[1]["cells"][2].is_null());
}

/// A baseline of 0 (no loss, no major faults) against a cell that differs significantly:
/// the change is the difference in the row's unit in every format that shows deltas, and
/// every other cell reads as before.
#[test]
fn a_significant_change_from_zero_shows_the_difference() {
    let mut lines = Vec::new();
    for (label, loss, faults, wall) in [("base", 0.0, 0.0, 1.0), ("lossy", 0.005, 3.0, 2.0)] {
        for i in 0..6u64 {
            let w = wall + i as f64 * 0.01;
            let v =
                serde_json::json!({"loss_ratio": loss, "maj_faults_count": faults, "wall_s": w});
            lines.push(sample(label, "probe", v, i));
        }
    }
    let input = complete(&(lines.join("\n") + "\n"));
    let args = [
        "--metric",
        "loss_ratio,maj_faults_count,wall_s",
        "--baseline",
        "base",
    ];
    let csv = run(&[&args[..], &["-f", "csv"]].concat(), &input);
    assert!(csv.status.success(), "{}", stderr(&csv));
    let text = stdout(&csv);
    // The ratio of a change from 0 has no value; the p-value and the verdict do.
    assert!(
        text.contains(
            "probe: loss,lossy,ratio,6,0.005,0.005,0.005,0,,0.0021645021645021645,worse\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("probe: maj_faults,lossy,count,6,3,3,3,0,,"),
        "{text}"
    );
    assert!(text.contains("probe: wall,lossy,s,6,2.025,"), "{text}");
    let html = stdout(&run(&[&args[..], &["-f", "html"]].concat(), &input));
    assert!(
        html.contains("<td class=\"up worse\" title=\"n=6\">0.5 ±0.0% +0.5% worse</td>"),
        "{html}"
    );
    let json = stdout(&run(&[&args[..], &["-f", "json"]].concat(), &input));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["dims"]["metric"] == "maj_faults_count")
        .unwrap();
    let compare = &row["cells"][1]["compare"];
    assert_eq!(compare["significant"], true, "{compare}");
    assert_eq!(compare["delta"], 3.0, "{compare}");
    assert!(compare["delta_pct"].is_null(), "{compare}");
    for f in ["text", "markdown", "dokuwiki"] {
        let out = stdout(&run(&[&args[..], &["-f", f]].concat(), &input));
        assert!(
            out.contains("0.5 ±0.0% +0.5%") && out.contains("3 ±0.0% +3"),
            "{f}: {out}"
        );
        assert!(out.contains("Where the baseline is 0"), "{f}: {out}");
    }
}

/// The CSV of one sample per label (and an ok summary each), read back as records.
fn csv_of_labels(labels: &[&str]) -> (Vec<String>, Vec<csv::StringRecord>) {
    let input: String = labels
        .iter()
        .map(|l| sample(l, "t", json!({"wall_s": 1.0}), 0) + "\n")
        .collect();
    let out = run(&["-f", "csv"], &complete(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
    let head = rdr.headers().unwrap().iter().map(str::to_string).collect();
    (head, rdr.records().map(|r| r.unwrap()).collect())
}

#[test]
fn csv_keeps_every_level_of_the_deepest_label() {
    for labels in [&["a/b", "a/x/y"][..], &["bare", "a/b/c"]] {
        let (head, recs) = csv_of_labels(labels);
        assert_eq!(&head[1..4], ["label_1", "label_2", "label_3"], "{labels:?}");
        for l in labels {
            let levels: Vec<&str> = l.split('/').collect();
            let found = recs
                .iter()
                .any(|r| (1..4).all(|i| &r[i] == levels.get(i - 1).copied().unwrap_or("")));
            assert!(found, "{l}: {recs:?}");
        }
    }
}

#[test]
fn csv_text_a_spreadsheet_would_run_starts_with_a_quote() {
    // The first's / makes two levels: the first level is the one a spreadsheet would run.
    let labels = ["=cmd|' /C calc'!A0", "+SUM(1+1)", "@x", "-2+3", "plain"];
    let (head, recs) = csv_of_labels(&labels);
    for l in ["=cmd|' ", "+SUM(1+1)", "@x", "-2+3", "plain"] {
        let want = if l == "plain" {
            l.to_string()
        } else {
            format!("'{l}")
        };
        assert!(recs.iter().any(|r| r[1] == want), "{want}: {recs:?}");
    }
    // Numbers are never prefixed.
    let value = head
        .iter()
        .position(|h| h == "value")
        .expect("a value column");
    assert!(
        recs.iter().all(|r| r[value].parse::<f64>().is_ok()),
        "{recs:?}"
    );
}
