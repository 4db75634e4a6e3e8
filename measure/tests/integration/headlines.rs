//! A summary with several headlines as the reporter writes it: those among the values are
//! kept in order, the first is `headline`, and the strict reader reads it back.

use measure::parts::{Envelope, Summary, Values};
use measure::{Headline, Reporter, Status, parse_line};
use serde_json::Map;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn several_headlines_keep_those_among_the_values_and_the_first_is_the_headline() {
    let buf = Shared::default();
    let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
    rep.summary(Summary {
        status: Status::Ok,
        error: None,
        headline: None,
        headlines: vec![
            Headline::new("gone_s", "not measured"),
            Headline::new("rate_per_s", "rate"),
            Headline::new("p99_s", "latency p99"),
        ],
        values: Values::new().with("rate_per_s", 10.0).with("p99_s", 0.5),
        info: Map::new(),
    })
    .expect("summary");
    let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("UTF-8");
    let r = parse_line(text.trim()).expect("a valid line");
    assert_eq!(r.status, Some(Status::Ok));
    assert_eq!(r.headline.as_deref(), Some("rate_per_s"));
    let keys: Vec<&str> = r.headlines.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["rate_per_s", "p99_s"]);
    assert_eq!(r.headlines[1].role, "latency p99");
}
