//! fping: a run per host (and per fping run where outputs follow each other), a failed
//! sample per lost probe, the host's figures as fping printed them.

use crate::common::{Run, converted, data, ingest, ingest_stdin, runs};
use ingest::model::scale_text;
use measure::{Kind, Record, Status};

/// The failed and the answered samples of one run.
fn samples<'a>(run: &[&'a Record]) -> (Vec<&'a Record>, Vec<&'a Record>) {
    run.iter()
        .filter(|r| r.kind == Kind::Sample)
        .partition(|r| r.error.is_some())
}

fn summary_of(run: &Run, k: usize) -> &Record {
    runs(run)[k].last().copied().expect("a summary")
}

#[test]
fn lost_probes_of_silent_hosts_are_failed_samples() {
    // -c -q: only the counts; a silent host's 4 probes are 4 failed samples.
    let run = ingest(&[&data("fping-5-c-q.txt")]);
    assert_eq!(
        run.code, 1,
        "a host without a reply, as fping exits: {}",
        run.stderr
    );
    converted(&run, "fping");
    let by_host = runs(&run);
    assert_eq!(by_host.len(), 3, "a run per host");
    let (failed, ok) = samples(&by_host[1]);
    assert_eq!((failed.len(), ok.len()), (4, 0));
    assert!(failed.iter().all(|r| r.name == "ping 10.0.0.9"));
    let s = summary_of(&run, 1);
    assert_eq!(s.status, Some(Status::Failed));
    assert_eq!(s.value("loss_ratio"), Some(1.0));
    let (failed, _) = samples(&by_host[2]);
    assert_eq!(failed.len(), 1, "4 sent, 3 received");
    assert_eq!(summary_of(&run, 2).value("rtt_max_s"), Some(0.00142));
    // -C's "- - - -" for a silent host: as many failed samples.
    let run = ingest(&[&data("fping-3.10-C.txt")]);
    let (failed, ok) = samples(&runs(&run)[1]);
    assert_eq!((failed.len(), ok.len()), (4, 0));
    assert!(failed.iter().all(|r| r.name == "ping 10.0.0.2"));
}

#[test]
fn the_mean_is_fpings_as_printed() {
    let run = ingest(&[&data("fping-5-c-q.txt")]);
    let s = summary_of(&run, 0);
    assert_eq!(s.name, "ping 10.0.0.1");
    assert_eq!(s.headline.as_deref(), Some("rtt_mean_s"));
    assert_eq!(s.value("rtt_mean_s"), Some(0.000352));
    assert_eq!(s.value("rtt_mean_s"), scale_text("0.352", -3));
    assert_eq!(s.value("rtt_min_s"), Some(0.00031));
    // -C prints no mean: the mean of the printed times, exact (1.07 / 3 ms).
    let run = ingest(&[&data("fping-twice.txt")]);
    assert_eq!(
        summary_of(&run, 0).value("rtt_mean_s"),
        scale_text("0.35666666666666666666667", -3)
    );
}

#[test]
fn fping_runs_one_after_the_other_are_runs_of_their_own() {
    // Two fping -C 3 -q outputs concatenated: each host of each a run, never merged.
    let run = ingest(&[&data("fping-twice.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "fping");
    let all = runs(&run);
    let names: Vec<&str> = all.iter().map(|r| r[0].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ping 10.0.0.1",
            "ping 10.0.0.2",
            "ping 10.0.0.1",
            "ping 10.0.0.2"
        ]
    );
    let nth: Vec<i64> = all
        .iter()
        .map(|r| {
            r.last()
                .and_then(|s| s.info["fping_run"].as_i64())
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(nth, [1, 1, 2, 2]);
    let (failed, ok) = samples(&all[0]);
    assert_eq!((failed.len(), ok.len()), (0, 3));
    assert_eq!(ok[0].value("rtt_s"), Some(0.00031));
    let (failed, ok) = samples(&all[2]);
    assert_eq!((failed.len(), ok.len()), (1, 2));
    assert_eq!(ok[0].value("rtt_s"), Some(0.0003));
    // -c with its reply lines, twice: the second reply [0] after a summary starts over.
    let run = ingest(&[&data("fping-c-twice.txt")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let all = runs(&run);
    assert_eq!(all.len(), 2);
    assert_eq!(summary_of(&run, 0).value("rtt_mean_s"), Some(0.000045));
    assert_eq!(summary_of(&run, 1).value("received_count"), Some(1.0));
    let (failed, ok) = samples(&all[1]);
    assert_eq!((failed.len(), ok.len()), (1, 1));
    // -e twice: the second "is alive" of a host is the second run's.
    let run = ingest_stdin(&["fping"], b"h is alive (0.03 ms)\nh is alive (0.04 ms)\n");
    assert_eq!(runs(&run).len(), 2, "{}", run.stderr);
    assert_eq!(run.summary().value("rtt_mean_s"), Some(0.00004));
}
