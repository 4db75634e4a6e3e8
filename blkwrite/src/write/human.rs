//! What a person reads on a terminal: the progress line while writing (as dd status=progress
//! prints it) and the final summary, in the units dd and fio users read at a glance.

use crate::blk::engine::Tick;
use crate::blk::lines::{dd_bytes, latency_text};
use crate::write::cli::Opts;
use measure::Status;
use measure::parts::Summary;
use measure::units::{format_bytes, format_bytes_per_s, format_seconds, sig3};
use serde_json::Value;

/// The progress line: how much of `size` is written, for how long, at what rate overall
/// and over the last interval.
pub(crate) fn progress(k: &Tick, size: u64) -> String {
    let done = k.total_bytes as f64;
    let pct = if size > 0 {
        100.0 * done / size as f64
    } else {
        0.0
    };
    let avg = done / k.elapsed_s.max(1e-9);
    let now = k.bytes as f64 / k.interval_s.max(1e-9);
    format!(
        "blkwrite: {} of {} ({pct:.0}%) written, {:.1} s, {}, now {}",
        format_bytes(done),
        format_bytes(size as f64),
        k.elapsed_s,
        format_bytes_per_s(avg),
        format_bytes_per_s(now),
    )
}

/// The final summary: the row name and how it ended, then what was written, in what time and
/// at what rate, the write phase and the flush apart, the latency percentiles of one write,
/// and what the read-back found.
pub(crate) fn summary(name: &str, o: &Opts, s: &Summary) -> String {
    let v = &s.values;
    let get = |k: &str| v.0.get(k).and_then(Value::as_f64);
    let stopped = s.info.get("stop").and_then(Value::as_str) == Some("time");
    let mut out = match (s.status, &s.error) {
        (Status::Ok, _) if stopped => format!("{name}: ok, stopped at the --time limit\n"),
        (Status::Ok, _) => format!("{name}: ok\n"),
        (_, Some(e)) => format!("{name}: failed: {e}\n"),
        (_, None) => format!("{name}: failed\n"),
    };
    let mut row = |label: &str, text: String| out.push_str(&format!("  {label:<12} {text}\n"));
    if let (Some(b), Some(total)) = (get("written_bytes"), get("total_s")) {
        let rate = get("throughput_bytes_per_s").map_or(String::new(), |r| {
            format!(", {} (write and flush)", format_bytes_per_s(r))
        });
        row(
            "written",
            format!("{} in {}{rate}", dd_bytes(b), format_seconds(total)),
        );
    }
    if let (Some(w), Some(n)) = (get("write_s"), get("write_count")) {
        let mut parts = vec![format_seconds(w)];
        if let Some(r) = get("write_phase_bytes_per_s") {
            parts.push(format_bytes_per_s(r));
        }
        let iops = if w > 0.0 {
            format!(" ({}/s)", sig3(n / w))
        } else {
            String::new()
        };
        parts.push(format!("{n} writes{iops}"));
        row("write phase", parts.join(", "));
    }
    if let Some(text) = flush_text(o, &get) {
        row("flush", text);
    }
    if let Some(text) = latency_text(&get) {
        row("latency", text);
    }
    if let (Some(b), Some(secs), Some(bad)) = (
        get("verified_bytes"),
        get("verify_s"),
        get("verify_bad_block_count"),
    ) {
        let rate = get("verify_bytes_per_s")
            .map_or(String::new(), |r| format!(", {}", format_bytes_per_s(r)));
        let read = format!(
            "{} read back in {}{rate}",
            format_bytes(b),
            format_seconds(secs)
        );
        row("verified", format!("{read}, {bad} bad blocks"));
    }
    out
}

/// The flush: the final one's time and how many flushes there were, with the periodic
/// ones' share (they count in the write phase).
fn flush_text(o: &Opts, get: &dyn Fn(&str) -> Option<f64>) -> Option<String> {
    let n = get("sync_count")?;
    let f = get("flush_s")?;
    if n == 0.0 {
        return Some(if o.dsync {
            "none (--dsync: each write durable as it returns)".into()
        } else {
            "none".into()
        });
    }
    let call = if o.fdatasync { "fdatasync" } else { "fsync" };
    let calls = if n == 1.0 {
        call.to_string()
    } else {
        format!("{n} {call}s")
    };
    Some(match get("periodic_flush_s") {
        Some(p) => format!(
            "{} at the end, {} between writes (in the write phase), {calls}",
            format_seconds(f),
            format_seconds(p)
        ),
        None => format!("{} ({calls})", format_seconds(f)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_says_how_far() {
        let k = Tick {
            elapsed_s: 2.0,
            interval_s: 1.0,
            bytes: 64 << 20,
            ops: 64,
            total_bytes: 256 << 20,
        };
        let p = progress(&k, 1 << 30);
        assert!(p.contains("256 MiB of 1.00 GiB (25%)"), "{p}");
        assert!(p.contains("2.0 s"), "{p}");
    }
}
