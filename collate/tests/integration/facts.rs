//! The facts that differ between the columns, from the begin records' environment facts:
//! only those some two columns name with different values, in every format.

use crate::common::{line, ok, sample, summary};
use serde_json::{Value, json};

/// A column: a begin with `facts` (over the facts every column shares), six samples and a
/// summary of one measurement.
fn column(label: &str, facts: Value, wall: f64) -> Vec<String> {
    let mut info = json!({
        "hostname": "h1", "kernel": "6.1.0-28-amd64", "cpu_count": 2, "seed": label.len(),
        "mitigations": {"meltdown": "Not affected"},
    });
    for (k, v) in facts.as_object().expect("facts are an object") {
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
        out.push(sample(
            label,
            "work",
            json!({"wall_s": wall + i as f64 * 0.01}),
            i + 1,
        ));
    }
    out.push(summary(label, "work", json!({"wall_s": wall}), "wall_s"));
    out
}

fn three_columns() -> String {
    let disk = |driver: &str| json!([{"name": "vda", "kind": "disk", "driver": driver}]);
    let mut lines = column(
        "bare",
        json!({"vm": "none", "cpu_quota": "max", "clocksource": "tsc", "governor": "performance",
               "block_stack": disk("nvme")}),
        1.0,
    );
    lines.extend(column(
        "box",
        json!({"vm": "none", "cpu_quota": "25000/100000", "clocksource": "tsc",
               "block_stack": disk("nvme")}),
        2.5,
    ));
    lines.extend(column(
        "vm",
        json!({"vm": "qemu", "cpu_quota": "max", "clocksource": "hpet",
               "mitigations": {"meltdown": "Mitigation: PTI"}, "block_stack": disk("virtio_blk")}),
        1.5,
    ));
    lines.join("\n") + "\n"
}

#[test]
fn the_text_matrix_lists_only_the_facts_that_differ() {
    let text = ok(&["-f", "text"], &three_columns());
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("facts that differ:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let keys: Vec<&str> = block
        .iter()
        .map(|l| l.split_whitespace().next().expect("a key"))
        .collect();
    // In the facts' own order; the kernel, host name and CPU count are the same everywhere,
    // the governor only one column names, the seed is a parameter.
    assert_eq!(
        keys,
        [
            "vm",
            "clocksource",
            "cpu_quota",
            "mitigations.meltdown",
            "block_stack"
        ],
        "{text}"
    );
    let quota = block
        .iter()
        .find(|l| l.contains("cpu_quota"))
        .expect("cpu_quota");
    let cells: Vec<&str> = quota.split_whitespace().skip(1).collect();
    assert_eq!(cells, ["max", "25000/100000", "max"]);
    assert!(text.contains("vda (disk, virtio_blk)"), "{text}");
    // The block sits between the header and the rows.
    let header = text.lines().next().expect("a header");
    assert!(header.contains("bare") && header.contains("vm"), "{header}");
    assert!(text.find("facts that differ") < text.find("work"), "{text}");
}

#[test]
fn every_format_carries_them() {
    let input = three_columns();
    let md = ok(&["-f", "markdown"], &input);
    assert!(
        md.contains("| *fact:* cpu\\_quota | max | 25000/100000 | max |"),
        "{md}"
    );
    let doku = ok(&["-f", "dokuwiki"], &input);
    let row = doku
        .lines()
        .find(|l| l.contains("fact: vm"))
        .expect("a vm fact row");
    assert!(row.starts_with('^') && row.contains("qemu"), "{row}");
    let csv = ok(&["-f", "csv"], &input);
    let head = csv.lines().next().expect("a header");
    assert!(
        head.contains(",fact_vm,") && head.contains(",fact_mitigations_meltdown,"),
        "{head}"
    );
    let vm_line = csv
        .lines()
        .find(|l| l.contains(",vm,qemu,"))
        .expect("the vm column's line");
    assert!(vm_line.contains("virtio_blk"), "{vm_line}");
    let doc: Value = serde_json::from_str(&ok(&["-f", "json"], &input)).expect("JSON");
    assert_eq!(doc["columns"][1]["facts"]["cpu_quota"], "25000/100000");
    assert_eq!(doc["columns"][2]["facts"]["vm"], "qemu");
    assert!(doc["columns"][0]["facts"].get("kernel").is_none());
    let svg = ok(&["-f", "svg"], &input);
    assert!(
        svg.contains("facts that differ: vm (bare: none, box: none, vm: qemu)"),
        "{svg}"
    );
    let t = ok(&["--transpose"], &input);
    assert!(
        t.contains("facts that differ: vm (bare: none, box: none, vm: qemu)"),
        "{t}"
    );
}

#[test]
fn the_html_report_marks_the_cells_that_differ_from_the_baseline() {
    let html = ok(&["-f", "html", "--baseline", "box"], &three_columns());
    let row = html
        .lines()
        .find(|l| l.contains("<th scope=\"row\">cpu_quota</th>"))
        .expect("the cpu_quota fact row");
    // Against box's quota, bare's and vm's "max" differ; box's own cell does not.
    assert_eq!(
        row,
        "<tr><th scope=\"row\">cpu_quota</th><td class=\"differs\">max</td><td>25000/100000</td><td class=\"differs\">max</td></tr>"
    );
}

#[test]
fn one_column_or_the_same_facts_give_no_block() {
    let one = column("bare", json!({"vm": "none"}), 1.0).join("\n") + "\n";
    assert!(!ok(&[], &one).contains("facts that differ"));
    let mut same = column("a", json!({"vm": "none"}), 1.0);
    same.extend(column("b", json!({"vm": "none"}), 1.2));
    assert!(!ok(&[], &(same.join("\n") + "\n")).contains("facts that differ"));
}

#[test]
fn a_fact_that_changed_within_a_column_shows_both_values() {
    let mut lines = column("bare", json!({"kernel": "6.1.0-28-amd64"}), 1.0);
    let later = column("bare", json!({"kernel": "6.1.0-30-amd64"}), 1.0);
    // The second run of the column: its own run id, so its records are no repeats.
    lines.extend(
        later
            .into_iter()
            .map(|l| l.replace("\"run\":\"", "\"run\":\"b")),
    );
    lines.extend(column("vm", json!({}), 1.5));
    let text = ok(&[], &(lines.join("\n") + "\n"));
    let kernel = text
        .lines()
        .find(|l| l.trim_start().starts_with("kernel"))
        .expect("kernel");
    assert!(kernel.contains("6.1.0-28-amd64 | 6.1.0-30-amd64"), "{text}");
}

#[test]
fn a_long_fact_is_cut_in_text_and_whole_with_verbose() {
    let long = "Mitigation: Retpolines; IBPB: conditional; STIBP: disabled; RSB filling";
    let mut lines = column("bare", json!({"mitigations": {"spectre_v2": long}}), 1.0);
    lines.extend(column(
        "vm",
        json!({"mitigations": {"spectre_v2": "Mitigation: Enhanced IBRS"}}),
        1.5,
    ));
    let input = lines.join("\n") + "\n";
    let text = ok(&["-f", "text"], &input);
    assert!(!text.contains(long), "cut without --verbose:\n{text}");
    assert!(text.contains("Mitigation: Retpolines; IBPB: c…"), "{text}");
    assert!(
        text.contains("--verbose: whole"),
        "the cut is said:\n{text}"
    );
    let whole = ok(&["-f", "text", "--verbose"], &input);
    assert!(whole.contains(long), "whole with --verbose:\n{whole}");
    assert!(!whole.contains('…'), "{whole}");
    // Only the entry that differs is a fact: mitigations.spectre_v2, not the shared meltdown.
    assert!(whole.contains("mitigations.spectre_v2"), "{whole}");
    assert!(!whole.contains("mitigations.meltdown"), "{whole}");
}
