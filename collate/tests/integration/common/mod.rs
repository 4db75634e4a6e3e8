//! Shared test helpers: record lines as the tools write them, the fixed fixture, and running
//! the collate binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The release binary under test.
pub fn bin() -> &'static str {
    testkit::tool("collate")
}

/// A run id for the records of one (label, name and tags), as if each were a run of its own
/// (a record is identified by its run, type and seq), the same from test to test.
pub fn run_id(label: &str, name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes().chain([0]).chain(name.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:012x}", h & 0xffff_ffff_ffff)
}

/// One record line.
pub fn line(kind: &str, label: &str, name: &str, values: Value, seq: u64, extra: Value) -> String {
    let mut r = json!({
        "schema": "benchmatrix/1", "tool": "fixture", "version": "0.1.0", "type": kind,
        "run": run_id(label, name), "seq": seq, "at": "2026-11-30T13:00:00.000000Z",
        "host": "h1", "label": label, "name": name, "values": values, "info": {}
    });
    if let (Some(obj), Value::Object(extra)) = (r.as_object_mut(), extra) {
        let tags = extra.get("tags").map(Value::to_string).unwrap_or_default();
        obj.insert(
            "run".into(),
            json!(run_id(label, &format!("{name}\0{tags}"))),
        );
        for (k, v) in extra {
            obj.insert(k, v);
        }
    }
    r.to_string()
}

pub fn sample(label: &str, name: &str, values: Value, seq: u64) -> String {
    line("sample", label, name, values, seq, json!({}))
}

pub fn summary(label: &str, name: &str, values: Value, headline: &str) -> String {
    line(
        "summary",
        label,
        name,
        values,
        0,
        json!({"status": "ok", "headline": headline}),
    )
}

/// The golden fixture: three label levels, a label that needs escaping in every format,
/// missing cells, repeated samples (6 per cell: enough for the CI), a row that only
/// summaries carry, and a measurement whose summary names no headline of its samples'
/// (`wall_median_s` over the runs' `wall_s`, as timecmd writes it).
pub fn fixture() -> String {
    let labels = [
        "hvm/nas/net",
        "para domU/nas/net",
        "para domU/lvm/san",
        "dom0/xfs/disc",
        "a|b^c <&> \"q\",x/y*z/w",
    ];
    let mut out = Vec::new();
    for (li, l) in labels.iter().enumerate() {
        let li_f = li as f64;
        out.push(line(
            "begin",
            l,
            "network throughput domU->dom0",
            json!({}),
            0,
            json!({}),
        ));
        for i in 0..6u64 {
            if li == 3 && i > 1 {
                continue; // two samples only: too few for a CI or a comparison
            }
            let v = (200.0 + li_f * 10.0 + i as f64) * 1e6;
            out.push(sample(
                l,
                "network throughput domU->dom0",
                json!({"throughput_bits_per_s": v}),
                i,
            ));
            out.push(line(
                "interval",
                l,
                "network throughput domU->dom0",
                json!({"throughput_bits_per_s": v}),
                i,
                json!({}),
            ));
        }
        out.push(summary(
            l,
            "network throughput domU->dom0",
            json!({"throughput_bits_per_s": (200.0 + li_f * 10.0) * 1e6, "bytes_count": 5368709120u64}),
            "throughput_bits_per_s",
        ));
        if li != 2 {
            out.push(summary(
                l,
                "icmp latency domU<->dom0",
                json!({"rtt_median_s": (100.0 + li_f) * 1e-6, "loss_ratio": 0.0}),
                "rtt_median_s",
            ));
        }
        if li != 1 {
            for i in 0..3u64 {
                out.push(sample(
                    l,
                    "time make -j8 bzImage",
                    json!({"wall_s": 500.0 + li_f * 3.0 + i as f64, "maxrss_bytes": (300 + li as u64) * 1048576}),
                    i,
                ));
            }
            out.push(summary(
                l,
                "time make -j8 bzImage",
                json!({"wall_median_s": 501.0 + li_f * 3.0}),
                "wall_median_s",
            ));
        }
    }
    out.join("\n") + "\n"
}

/// A time row named `time` (`wall_s`) and a rate row `copy` (`rate_bytes_per_s`) in each
/// column of `columns` (label, seconds, bytes per second): 8 samples a cell, the `i`th the
/// column's figure times `1 + i * spread`, completed with summaries.
pub fn time_and_rate(time: &str, spread: f64, columns: &[(&str, f64, f64)]) -> String {
    let mut lines = Vec::new();
    for &(label, t, r) in columns {
        for i in 0..8u64 {
            let k = 1.0 + i as f64 * spread;
            lines.push(sample(label, time, json!({"wall_s": t * k}), i));
            lines.push(sample(label, "copy", json!({"rate_bytes_per_s": r * k}), i));
        }
    }
    complete(&(lines.join("\n") + "\n"))
}

/// `input` with an ok summary appended for every run of its samples that has none, as the
/// tools end every run that finishes (collate leaves a run without a summary out). The
/// summary names the run's first metric as its headline, so the rows stay those of the
/// samples.
pub fn complete(input: &str) -> String {
    let mut done: Vec<String> = Vec::new();
    let mut todo: Vec<Value> = Vec::new();
    for l in input.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        let run = v["run"].as_str().unwrap_or("").to_string();
        if v["type"] == "summary" {
            done.push(run);
        } else if v["type"] == "sample" && !todo.iter().any(|t| t["run"] == run.as_str()) {
            todo.push(v);
        }
    }
    let mut out = input.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for mut v in todo {
        if done.iter().any(|d| v["run"] == d.as_str()) {
            continue;
        }
        let (k, x) = match v["values"].as_object().and_then(|m| m.iter().next()) {
            Some((k, x)) => (k.clone(), x.clone()),
            None => continue,
        };
        v["type"] = json!("summary");
        v["seq"] = json!(1_000_000);
        v["status"] = json!("ok");
        v["headline"] = json!(k.clone());
        v["values"] = json!({ k: x });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// Runs collate with `args` and `stdin`.
pub fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn collate");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// collate's standard output for `args` with `input` on stdin, which must succeed.
pub fn ok(args: &[&str], input: &str) -> String {
    let out = run(args, input);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A cell of a DokuWiki table line, as DokuWiki's parser sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct DokuCell {
    pub header: bool,
    pub text: String,
    pub colspan: usize,
    pub align: &'static str,
}

/// A small model of DokuWiki's table syntax: a line starts with `^` (header cell) or `|`;
/// each separator opens a cell that runs to the next separator outside `%%...%%` and
/// `<nowiki>...</nowiki>`; a cell with nothing at all between its separators merges into the
/// cell on its left (colspan); two or more spaces on the left only align right, on the right
/// only align left, on both sides centre.
pub fn doku_row(line: &str) -> Vec<DokuCell> {
    let chars: Vec<char> = line.chars().collect();
    assert!(
        matches!(chars.first(), Some('^' | '|')),
        "not a table line: {line}"
    );
    let mut cells: Vec<DokuCell> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let header = chars[i] == '^';
        i += 1;
        let mut raw = String::new();
        let mut closed = false;
        while i < chars.len() {
            let rest: String = chars[i..].iter().collect();
            if let Some(inner) = rest.strip_prefix("%%") {
                let end = inner.find("%%").expect("unclosed %%") + 4;
                raw.push_str(&rest[..end]);
                i += rest[..end].chars().count();
                continue;
            }
            if rest.starts_with("<nowiki>") {
                let end = rest.find("</nowiki>").expect("unclosed nowiki") + 9;
                raw.push_str(&rest[..end]);
                i += rest[..end].chars().count();
                continue;
            }
            if chars[i] == '^' || chars[i] == '|' {
                closed = true;
                break;
            }
            raw.push(chars[i]);
            i += 1;
        }
        if !closed {
            // The text after the last separator is not a cell.
            assert!(
                raw.trim().is_empty(),
                "text after the last separator: {raw:?}"
            );
            break;
        }
        if raw.is_empty()
            && let Some(last) = cells.last_mut()
        {
            last.colspan += 1;
            continue;
        }
        let left = raw.len() - raw.trim_start().len();
        let right = raw.len() - raw.trim_end().len();
        let align = match (left >= 2, right >= 2) {
            (true, true) => "center",
            (true, false) => "right",
            (false, true) => "left",
            _ => "",
        };
        let mut text = raw.trim().to_string();
        if let Some(t) = text.strip_prefix("%%").and_then(|t| t.strip_suffix("%%")) {
            text = t.to_string();
        }
        cells.push(DokuCell {
            header,
            text,
            colspan: 1,
            align,
        });
    }
    cells
}

/// A small fixed-seed generator for test series (splitmix64), with normal deviates.
pub struct Noise(pub u64);

impl Noise {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform deviate in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal deviate (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// One suite run of a history as the tools write it: tool run `run` of suite invocation
/// `inv` (none: a run by hand) measuring `name` in `label`, `minute` minutes after
/// 2026-11-01T00:00Z (up to 61 days): a begin with the machine's `kernel`, `values` as samples of `wall_s` and an ok
/// summary.
pub fn history_run(
    label: &str,
    name: &str,
    (run, inv): (&str, Option<&str>),
    minute: u64,
    kernel: &str,
    values: &[f64],
) -> String {
    let at = |s: u64| {
        let t = minute * 60 + s;
        let d = t / 86400;
        let (month, day) = if d < 30 { (11, d + 1) } else { (12, d - 29) };
        format!(
            "2026-{month:02}-{day:02}T{:02}:{:02}:{:02}.000000Z",
            (t / 3600) % 24,
            (t / 60) % 60,
            t % 60
        )
    };
    let extra = |s: u64, more: Value| {
        let mut e = json!({"run": run, "at": at(s), "tool": "timecmd"});
        if let Some(i) = inv {
            e["invocation"] = json!(i);
        }
        if let (Some(e), Value::Object(m)) = (e.as_object_mut(), more) {
            e.extend(m);
        }
        e
    };
    let begin_info = json!({"info": {"kernel": kernel, "cpu_count": 2}});
    let mut out = vec![line(
        "begin",
        label,
        name,
        json!({}),
        0,
        extra(0, begin_info),
    )];
    for (i, v) in values.iter().enumerate() {
        let i = i as u64;
        out.push(line(
            "sample",
            label,
            name,
            json!({"wall_s": v}),
            i,
            extra(1 + i, json!({})),
        ));
    }
    let done = json!({"status": "ok", "headline": "wall_s"});
    out.push(line(
        "summary",
        label,
        name,
        json!({"wall_s": values[0]}),
        0,
        extra(59, done),
    ));
    out.join("\n") + "\n"
}

/// A history of `runs` suite runs of `name` in `label` (an hour apart), each of `samples`
/// samples around 1 s with `noise` (relative, normal) from `seed`, the level times
/// `1 + shift` from run `at` on (1-based), and the kernel "6.1.0" before run `at`, "6.12.0"
/// from it on. Ids are unique to the label.
pub fn history(
    label: &str,
    name: &str,
    runs: u64,
    samples: usize,
    seed: u64,
    shift: (u64, f64),
    noise: f64,
) -> String {
    let mut rng = Noise(seed);
    let mut out = String::new();
    for k in 1..=runs {
        let level = if k >= shift.0 { 1.0 + shift.1 } else { 1.0 };
        let values: Vec<f64> = (0..samples)
            .map(|_| level * (1.0 + noise * rng.normal()))
            .collect();
        let kernel = if k >= shift.0 { "6.12.0" } else { "6.1.0" };
        let (run, inv) = (
            format!("{label}-{name}-{k:04}"),
            format!("{label}-inv-{k:04}"),
        );
        out.push_str(&history_run(
            label,
            name,
            (&run, Some(&inv)),
            k * 60,
            kernel,
            &values,
        ));
    }
    out
}
