//! Runs on a busy machine: the load facts of a run's begin and summary mark its cells † (a
//! load average or runnable tasks above the CPU count, or steal above 5%), with a note and a
//! `load` line in the facts block, in every format; records without those facts (older
//! tools) mark nothing and add no line.

use crate::common::{line, ok};
use serde_json::{Value, json};

/// A column of one run: a begin with `begin` load facts, six samples, a summary with `end`.
fn column(label: &str, begin: Value, end: Value) -> Vec<String> {
    let mut info = json!({"hostname": "h1", "kernel": "6.1.0", "cpu_count": 2});
    for (k, v) in begin.as_object().expect("an object") {
        info[k] = v.clone();
    }
    let mut out = vec![line(
        "begin",
        label,
        "work",
        json!({}),
        0,
        json!({"info": info}),
    )];
    for i in 0..6 {
        let v = json!({"wall_s": 1.0 + i as f64 * 0.01});
        out.push(line("sample", label, "work", v, i + 1, json!({})));
    }
    out.push(line(
        "summary",
        label,
        "work",
        json!({"wall_s": 1.0}),
        0,
        json!({"status": "ok", "headline": "wall_s", "info": end}),
    ));
    out
}

/// Four columns: quiet (load below the CPU count), loaded (load above it), stolen (steal
/// above 5%) and old (no load facts at all).
fn four() -> String {
    let mut l = column(
        "quiet",
        json!({"load_1m": 1.5, "procs_running_count": 2}),
        json!({"load_1m_end": 1.9, "procs_running_end_count": 3, "steal_ratio": 0.01}),
    );
    l.extend(column(
        "loaded",
        json!({"load_1m": 1.8, "procs_running_count": 1}),
        json!({"load_1m_end": 2.6, "procs_running_end_count": 1, "steal_ratio": 0.0}),
    ));
    l.extend(column(
        "stolen",
        json!({"load_1m": 0.2, "procs_running_count": 1}),
        json!({"load_1m_end": 0.3, "procs_running_end_count": 1, "steal_ratio": 0.08}),
    ));
    l.extend(column("old", json!({}), json!({})));
    l.join("\n") + "\n"
}

#[test]
fn a_load_above_the_cpu_count_or_steal_marks_the_cell_and_below_does_not() {
    let text = ok(&["-f", "json"], &four());
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let cells = v["rows"][0]["cells"].as_array().expect("cells");
    let busy: Vec<u64> = cells
        .iter()
        .map(|c| c["busy"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(busy, [0, 6, 6, 0], "quiet, loaded, stolen, old:\n{text}");
    for (c, marked) in cells.iter().zip([false, true, true, false]) {
        let t = c["text"].as_str().expect("text");
        assert_eq!(t.contains('†'), marked, "{t}");
    }
    // The facts block: a load line, each column's figures, none for the old column.
    let facts = v["columns"].to_string();
    assert!(facts.contains("load"), "{facts}");
    assert!(
        facts.contains("quiet: 2 CPUs, load 1.9, 2 runnable, steal 1%"),
        "{facts}"
    );
    assert!(
        facts.contains("busy: 2 CPUs, load 2.6, 0 runnable, steal 0%"),
        "{facts}"
    );
    assert!(
        facts.contains("busy: 2 CPUs, load 0.3, 0 runnable, steal 8%"),
        "{facts}"
    );
}

#[test]
fn every_format_marks_the_busy_cells_and_says_why() {
    let input = four();
    for f in ["text", "markdown", "dokuwiki", "html", "svg"] {
        let out = ok(&["-f", f, "--verbose"], &input);
        assert!(out.matches(" †").count() >= 2, "{f}:\n{out}");
        assert!(
            out.contains("marks a cell with values of runs on a busy machine"),
            "{f}:\n{out}"
        );
        assert!(
            out.contains("load 2.60 on 2 CPUs"),
            "{f}: the note names why:\n{out}"
        );
        assert!(out.contains("steal 8.0% of the CPUs"), "{f}:\n{out}");
    }
    let csv = ok(&["-f", "csv"], &input);
    let head: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let at = head
        .iter()
        .position(|h| *h == "busy")
        .expect("a busy column");
    let busy: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').nth(head.len() - 1 - at).unwrap_or(""))
        .collect();
    assert_eq!(busy, ["0", "6", "6", "0"], "{csv}");
    assert!(head.contains(&"fact_load"), "{csv}");
}

#[test]
fn records_without_load_facts_mark_nothing_and_add_no_line() {
    let mut l = column("a", json!({}), json!({}));
    l.extend(column("b", json!({"cpu_count": 4}), json!({})));
    let input = l.join("\n") + "\n";
    let text = ok(&["-f", "text", "--verbose"], &input);
    assert!(!text.contains('†'), "{text}");
    assert!(!text.contains("load"), "{text}");
    let csv = ok(&["-f", "csv"], &input);
    assert!(!csv.lines().next().unwrap_or("").contains("busy"), "{csv}");
    // Quiet columns only: their load explains no difference, so no line.
    let mut l = column("a", json!({"load_1m": 0.5}), json!({"load_1m_end": 0.7}));
    l.extend(column(
        "b",
        json!({"load_1m": 1.2}),
        json!({"load_1m_end": 1.1}),
    ));
    let text = ok(&["-f", "text"], &(l.join("\n") + "\n"));
    assert!(!text.contains("load") && !text.contains('†'), "{text}");
}
