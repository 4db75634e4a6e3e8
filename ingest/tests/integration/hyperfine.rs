//! hyperfine exports with several commands: each command a run of its own with hyperfine's
//! figures in its summary, parameter scans a row per value, repeats and commands without
//! times kept apart and warned about.

use crate::common;

use crate::common::{Run, converted, data, ingest, runs};
use measure::{Kind, Record};
use serde_json::Value;

/// The runs of an ingested export by their row name (the summary's).
fn by_name<'a>(run: &'a Run, name: &str) -> Vec<&'a Record> {
    runs(run)
        .into_iter()
        .find(|r| r.last().is_some_and(|s| s.name == name))
        .unwrap_or_else(|| panic!("no run named {name:?}"))
}

/// Every result of the export `file` is a run: its samples are its times, its summary holds
/// hyperfine's seven figures exactly, the headline is the median wall time.
fn every_figure_survives(file: &str, names: &[&str]) {
    let src: Value =
        serde_json::from_str(&std::fs::read_to_string(data(file)).expect("read")).expect("json");
    let run = ingest(&[&data(file)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "hyperfine");
    let results = src["results"].as_array().expect("results");
    assert_eq!(runs(&run).len(), results.len(), "a run per command");
    let mut figures = 0;
    for (r, name) in results.iter().zip(names) {
        let recs = by_name(&run, name);
        let s = recs.last().expect("summary");
        assert_eq!(s.kind, Kind::Summary);
        assert_eq!(s.headline.as_deref(), Some("wall_median_s"));
        for (from, to) in [
            ("mean", "wall_mean_s"),
            ("stddev", "wall_stddev_s"),
            ("median", "wall_median_s"),
            ("min", "wall_min_s"),
            ("max", "wall_max_s"),
            ("user", "user_mean_s"),
            ("system", "sys_mean_s"),
        ] {
            assert_eq!(s.value(to), r[from].as_f64(), "{name} {to}");
            figures += usize::from(r[from].is_number());
        }
        let walls: Vec<f64> = recs.iter().filter_map(|x| x.value("wall_s")).collect();
        let times: Vec<f64> = r["times"]
            .as_array()
            .expect("times")
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        assert_eq!(walls, times, "{name}");
        assert!(recs.iter().all(|x| x.name == *name));
    }
    assert!(figures >= 7 * results.len() - 2, "{figures}");
}

#[test]
fn each_command_has_its_own_summary() {
    every_figure_survives("hyperfine-1.11.json", &["sleep 0.1", "sleep 0.2"]);
}

#[test]
fn parameter_scans_are_a_row_per_value() {
    // -P threads 1 8 'make -j {threads}', and -L compiler gcc,clang with --command-name
    // build (the name does not show the parameter, so the row name adds it).
    let names = [
        "make -j 1",
        "make -j 8",
        "build (compiler = gcc)",
        "build (compiler = clang)",
    ];
    every_figure_survives("hyperfine-scan.json", &names);
    let run = ingest(&[&data("hyperfine-scan.json")]);
    let gcc = by_name(&run, "build (compiler = gcc)");
    for r in &gcc[1..] {
        assert_eq!(r.info["parameters"]["compiler"], "gcc", "{}", r.to_line());
        assert_eq!(r.info["command"], "build");
    }
    // A single run hyperfine gives no stddev (null): left out, not zero.
    assert_eq!(gcc.last().expect("summary").value("wall_stddev_s"), None);
    let run = ingest(&["--name", "par", &data("hyperfine-scan.json")]);
    assert_eq!(runs(&run)[1][0].name, "par make -j 8");
    assert_eq!(run.summary().name, "par build (compiler = clang)");
}

#[test]
fn counts_are_never_the_headline() {
    let run = ingest(&[&data("hyperfine-repeats.json")]);
    for r in run.of(Kind::Summary) {
        assert_eq!(
            r.headline.as_deref(),
            Some("wall_median_s"),
            "{}",
            r.to_line()
        );
    }
}

#[test]
fn repeats_and_commands_without_times_stay_apart() {
    let run = ingest(&[&data("hyperfine-repeats.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "hyperfine");
    let names: Vec<&str> = run
        .of(Kind::Summary)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["sleep 0.1", "never ran", "sleep 0.1 #2", "killed"]);
    let warnings = |r: &Record| -> String {
        r.info
            .get("warnings")
            .and_then(Value::as_array)
            .map(|w| format!("{w:?}"))
            .unwrap_or_default()
    };
    // No times: no samples, hyperfine's figures, a warning; the others keep their names.
    let never = by_name(&run, "never ran");
    assert_eq!(never.len(), 2, "begin and summary");
    assert_eq!(never[1].value("wall_mean_s"), Some(0.5));
    assert_eq!(never[1].value("runs_count"), Some(0.0));
    assert!(
        warnings(never[1]).contains("\\\"times\\\": []"),
        "{}",
        warnings(never[1])
    );
    assert!(
        run.stderr.contains("results[1] (never ran)"),
        "{}",
        run.stderr
    );
    // The repeat: its own run and samples, numbered from 1, with a warning.
    let again = by_name(&run, "sleep 0.1 #2");
    assert_eq!(again[1].value("wall_s"), Some(0.1021));
    assert_eq!(again[1].info["run"], 1);
    assert_eq!(again.last().expect("s").value("wall_mean_s"), Some(0.1025));
    assert!(warnings(again.last().expect("s")).contains("results[0]"));
    assert!(run.stderr.contains("not pooled"), "{}", run.stderr);
    let first = by_name(&run, "sleep 0.1");
    assert_eq!(first.last().expect("s").value("wall_mean_s"), Some(0.1023));
    assert!(warnings(first.last().expect("s")).is_empty());
    // A run killed by a signal (exit code null) counts as failed.
    let killed = by_name(&run, "killed");
    assert_eq!(
        killed.last().expect("s").value("failed_runs_count"),
        Some(1.0)
    );
}

#[test]
fn a_command_without_median_or_mean_fails_its_run() {
    let run = common::ingest_stdin(
        &["hyperfine"],
        br#"{"results": [{"command": "a", "median": 0.1, "times": [0.1]},
                         {"command": "b", "times": [0.2]}]}"#,
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.of(Kind::Summary)[0].status, Some(measure::Status::Ok));
    assert_eq!(run.summary().status, Some(measure::Status::Failed));
    assert!(run.stderr.contains("neither a median"), "{}", run.stderr);
}
