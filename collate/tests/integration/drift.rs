//! Runs on a drifting clock: a guest's begin gives the ratio of its clock to its host's
//! (`given.guest_clock_ratio`, from fleet/envs/vm.sh); more than 2% from 1 marks the cells made
//! from its records ‡, with a note naming the runs and their ratios, in every format that
//! shows the busy mark; a ratio within 2% and records without the fact mark nothing.

use crate::common::{line, ok};
use serde_json::{Value, json};

/// A column of netpipe's shape: a sender's begin (with the guest's given facts where
/// `ratio` is one), four samples of its throughput and its summary.
fn netpipe_column(label: &str, ratio: Option<&str>) -> Vec<String> {
    let name = "network throughput this->peer";
    let mut info = json!({
        "role": "sender", "protocol": "tcp", "hostname": format!("{label}-host"),
        "kernel": "6.1.0-57-amd64", "cpu_count": 2, "clocksource": "hpet",
    });
    if let Some(r) = ratio {
        info["virtualization"] = json!("qemu");
        info["given"] = json!({"accel": "tcg", "guest_clock_ratio": r});
    }
    let extra = |more: Value| {
        let mut e = json!({"tool": "netpipe", "invocation": format!("inv-{label}")});
        for (k, v) in more.as_object().expect("an object") {
            e[k] = v.clone();
        }
        e
    };
    let mut out = vec![line(
        "begin",
        label,
        name,
        json!({}),
        0,
        extra(json!({"info": info})),
    )];
    for i in 0..4 {
        let v = json!({"throughput_bits_per_s": 4.8e8 + i as f64 * 1e6, "duration_s": 1.01});
        out.push(line("sample", label, name, v, i, extra(json!({}))));
    }
    out.push(line(
        "summary",
        label,
        name,
        json!({"throughput_bits_per_s": 4.8e8}),
        0,
        extra(json!({"status": "ok", "headline": "throughput_bits_per_s"})),
    ));
    out
}

/// Three columns: bare (no clock fact), a guest whose clock ran 5% fast (1.05) and one
/// within 2% (1.01).
fn three() -> String {
    let mut l = netpipe_column("bare", None);
    l.extend(netpipe_column("fast", Some("1.0500")));
    l.extend(netpipe_column("steady", Some("1.0100")));
    l.join("\n") + "\n"
}

#[test]
fn a_clock_ratio_beyond_two_percent_marks_the_cells_and_one_within_does_not() {
    let text = ok(&["-f", "json"], &three());
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let cells = v["rows"][0]["cells"].as_array().expect("cells");
    let drift: Vec<u64> = cells
        .iter()
        .map(|c| c["drift"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(drift, [0, 4, 0], "bare, fast, steady:\n{text}");
    for (c, marked) in cells.iter().zip([false, true, false]) {
        let t = c["text"].as_str().expect("text");
        assert_eq!(t.contains('‡'), marked, "{t}");
    }
    // The ratio itself is a fact that differs between the columns.
    let facts = v["columns"].to_string();
    assert!(
        facts.contains("1.0500") && facts.contains("1.0100"),
        "{facts}"
    );
}

#[test]
fn every_format_marks_the_drifting_cells_and_names_the_ratio() {
    let input = three();
    for f in ["text", "markdown", "dokuwiki", "html", "svg"] {
        let out = ok(&["-f", f, "--verbose"], &input);
        // One cell marked (html and svg draw it in a chart's label too).
        assert!(out.contains(" ‡"), "{f}:\n{out}");
        assert!(
            out.contains("marks a cell with values of runs on a drifting clock"),
            "{f}:\n{out}"
        );
        assert!(
            out.contains("guest/host clock ratio 1.0500"),
            "{f}: the note names the ratio:\n{out}"
        );
        assert!(
            !out.contains("ratio 1.0100"),
            "{f}: not the steady one:\n{out}"
        );
    }
    let csv = ok(&["-f", "csv"], &input);
    let head: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let at = head
        .iter()
        .position(|h| *h == "drift")
        .expect("a drift column");
    let drift: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').nth(head.len() - 1 - at).unwrap_or(""))
        .collect();
    assert_eq!(drift, ["0", "4", "0"], "{csv}");
}

#[test]
fn a_steady_guest_and_bare_runs_mark_nothing_and_add_no_note() {
    let mut l = netpipe_column("bare", None);
    l.extend(netpipe_column("steady", Some("0.9850")));
    let input = l.join("\n") + "\n";
    let text = ok(&["-f", "text", "--verbose"], &input);
    assert!(!text.contains('‡'), "{text}");
    assert!(!text.contains("drifting clock"), "{text}");
    let csv = ok(&["-f", "csv"], &input);
    assert!(!csv.lines().next().unwrap_or("").contains("drift"), "{csv}");
}
