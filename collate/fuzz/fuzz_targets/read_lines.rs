//! Fuzz target: arbitrary bytes as JSON lines through collate's strict line reader, the
//! aggregation, the matrix and every output format. Errors are expected; panics are bugs.
#![no_main]

use collate::collect::{Collector, MetricChoice, Spec};
use collate::dims::Dim;
use collate::filter::Filter;
use collate::matrix::{Options, build};
use collate::render::{Format, render};
use collate::stats::Stat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut c = Collector::new(Spec {
        rows: vec![Dim::Name, Dim::Metric],
        cols: vec![Dim::Label],
        filter: Filter::All,
        metrics: MetricChoice::Headline,
    });
    for line in data.split(|&b| b == b'\n') {
        if let Ok(Some(r)) = collate::read::parse_raw(line) {
            c.add_record(&r);
        }
    }
    let o = Options {
        stat: Stat::Median,
        baseline: None,
        columns: None,
        show_ci: true,
        // Runs without a summary count too: the fuzzer rarely writes one.
        include_partial: true,
        latest: false,
    };
    if let Ok(t) = build(&c, &o) {
        for name in Format::NAMES {
            if let Some(f) = Format::parse(name) {
                let _ = render(&t, f, false);
                let _ = render(&t, f, true);
            }
        }
    }
});
