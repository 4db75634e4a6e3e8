//! ping's lines for a person, through the session's human handle (on only when a person
//! watches): a line per probe, or in flood mode ping's row of dots for the probes without a
//! reply yet, and ping's summary at the end.

use measure::human::Human;
use std::time::{Duration, Instant};

/// How often the flood line is redrawn at most.
const FLOOD_REDRAW: Duration = Duration::from_millis(100);
/// The most dots the flood line shows.
const FLOOD_WIDTH: u64 = 72;

/// Milliseconds as ping prints them: three decimals below 100 ms, fewer above.
pub fn ms(s: f64) -> String {
    let m = s * 1e3;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.3}")
    }
}

fn ms3(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// What ping's summary reports.
#[derive(Clone, Copy, Debug)]
pub struct Tally {
    pub sent: u64,
    pub received: u64,
    pub duplicates: u64,
    pub errors: u64,
    pub elapsed_s: f64,
    /// min, avg, max, mdev in seconds, when a reply came.
    pub rtt: Option<(f64, f64, f64, f64)>,
}

/// ping's statistics, as its last lines say them.
pub fn summary_text(host: &str, t: &Tally) -> String {
    let mut s = format!("\n--- {host} pingrt statistics ---\n");
    s.push_str(&format!(
        "{} packets transmitted, {} received",
        t.sent, t.received
    ));
    if t.duplicates > 0 {
        s.push_str(&format!(", +{} duplicates", t.duplicates));
    }
    if t.errors > 0 {
        s.push_str(&format!(", +{} errors", t.errors));
    }
    let loss = if t.sent > 0 {
        100.0 * t.sent.saturating_sub(t.received) as f64 / t.sent as f64
    } else {
        0.0
    };
    s.push_str(&format!(
        ", {}% packet loss, time {:.0}ms\n",
        measure::units::sig3(loss),
        t.elapsed_s * 1e3
    ));
    if let Some((min, avg, max, mdev)) = t.rtt {
        s.push_str(&format!(
            "rtt min/avg/max/mdev = {}/{}/{}/{} ms\n",
            ms3(min),
            ms3(avg),
            ms3(max),
            ms3(mdev)
        ));
    }
    s
}

/// ping's lines on the session's human handle.
#[derive(Debug)]
pub struct PingLines<'h> {
    h: &'h mut Human,
    flood: bool,
    /// -D: each probe's line starts with `[UNIX seconds.microseconds] `.
    stamp: bool,
    /// Flood: when the dots were last drawn, and how many.
    drawn_at: Option<Instant>,
    dots: u64,
}

impl<'h> PingLines<'h> {
    pub fn new(h: &'h mut Human, flood: bool, stamp: bool) -> Self {
        PingLines {
            h,
            flood,
            stamp,
            drawn_at: None,
            dots: 0,
        }
    }

    /// Whether a person watches (the lines cost nothing otherwise).
    #[inline]
    pub fn on(&self) -> bool {
        self.h.on()
    }

    /// A per-probe line (in flood mode the dots stand for them), after the time with -D.
    fn line(&mut self, s: &str) {
        if !self.flood {
            self.probe_line(s);
        }
    }

    /// A line about one probe, after the time it is printed with -D (as ping -D).
    fn probe_line(&mut self, s: &str) {
        if self.stamp {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let stamped = format!("[{}.{:06}] {s}", t.as_secs(), t.subsec_micros());
            self.h.line(&stamped);
        } else {
            self.h.line(s);
        }
    }

    pub fn header(&mut self, host: &str, addr: &str, size: usize, ip_header: usize) {
        if self.on() {
            let total = size + 8 + ip_header;
            self.h.line(&format!(
                "PING {host} ({addr}) {size}({total}) bytes of data."
            ));
        }
    }

    /// Flood: a dot for each probe without its reply yet, as ping -f leaves them, redrawn
    /// at most every [`FLOOD_REDRAW`] (and when `now`).
    pub fn flood_dots(&mut self, unanswered: u64, now: bool) {
        if !self.flood || !self.on() {
            return;
        }
        let dots = unanswered.min(FLOOD_WIDTH);
        let due = now || self.drawn_at.is_none_or(|t| t.elapsed() >= FLOOD_REDRAW);
        if due && dots != self.dots {
            self.h.progress(&".".repeat(dots as usize));
            self.dots = dots;
            self.drawn_at = Some(Instant::now());
        } else if due {
            self.drawn_at = Some(Instant::now());
        }
    }

    #[inline]
    pub fn reply(&mut self, bytes: usize, from: &str, seq: u16, ttl: Option<u8>, rtt: f64) {
        if self.on() && !self.flood {
            let ttl = ttl.map(|t| format!(" ttl={t}")).unwrap_or_default();
            self.probe_line(&format!(
                "{bytes} bytes from {from}: icmp_seq={seq}{ttl} time={} ms",
                ms(rtt)
            ));
        }
    }

    pub fn duplicate(&mut self, bytes: usize, from: &str, seq: u16, ttl: Option<u8>, rtt: f64) {
        if self.on() && !self.flood {
            let ttl = ttl.map(|t| format!(" ttl={t}")).unwrap_or_default();
            self.probe_line(&format!(
                "{bytes} bytes from {from}: icmp_seq={seq}{ttl} time={} ms (DUP!)",
                ms(rtt)
            ));
        }
    }

    pub fn error(&mut self, from: &str, seq: u16, text: &str) {
        if self.on() {
            self.line(&format!("From {from} icmp_seq={seq} {text}"));
        }
    }

    pub fn timeout(&mut self, seq: u16) {
        if self.on() {
            self.line(&format!("no answer for icmp_seq={seq}"));
        }
    }

    /// -O: probe `seq` has no reply yet as the next one goes out.
    pub fn outstanding(&mut self, seq: u16) {
        if self.on() {
            self.line(&format!("no answer yet for icmp_seq={seq}"));
        }
    }

    pub fn note(&mut self, s: &str) {
        if self.on() {
            self.line(s);
        }
    }

    /// ping's summary, as the run's own human summary (the lifecycle then prints none).
    pub fn summary(&mut self, host: &str, t: &Tally) {
        self.h.summary(&summary_text(host, t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_like_ping() {
        assert_eq!(ms(0.000045), "0.045");
        assert_eq!(ms(0.0123), "12.3");
        assert_eq!(ms(0.25), "250");
    }

    #[test]
    fn summary_like_ping() {
        let t = Tally {
            sent: 4,
            received: 3,
            duplicates: 1,
            errors: 0,
            elapsed_s: 3.0021,
            rtt: Some((0.000045, 0.0001, 0.0002, 0.00005)),
        };
        let s = summary_text("::1", &t);
        assert!(s.contains("--- ::1 pingrt statistics ---"), "{s}");
        assert!(
            s.contains(
                "4 packets transmitted, 3 received, +1 duplicates, 25.0% packet loss, time 3002ms"
            ),
            "{s}"
        );
        assert!(
            s.contains("rtt min/avg/max/mdev = 0.045/0.100/0.200/0.050 ms"),
            "{s}"
        );
    }
}
