//! ping-like human lines on stderr (only when stderr is a terminal and not --quiet).

use std::io::Write;

/// Writes human lines to stderr when enabled; write errors on stderr are ignored.
#[derive(Debug)]
pub struct Human {
    pub enabled: bool,
    pub flood: bool,
}

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

impl Human {
    fn put(&self, s: &str) {
        if self.enabled {
            let mut e = std::io::stderr().lock();
            let _ = e.write_all(s.as_bytes());
            let _ = e.flush();
        }
    }

    /// Per-probe lines are replaced by dots in flood mode.
    fn line(&self, s: &str) {
        if !self.flood {
            self.put(&format!("{s}\n"));
        }
    }

    pub fn header(&self, host: &str, addr: &str, size: usize, ip_header: usize) {
        self.put(&format!(
            "PING {host} ({addr}) {size}({}) bytes of data.\n",
            size + 8 + ip_header
        ));
    }

    #[inline]
    pub fn sent(&self) {
        if self.enabled && self.flood {
            self.put(".");
        }
    }

    #[inline]
    pub fn reply(
        &self,
        bytes: usize,
        from: &str,
        seq: u16,
        ttl: Option<u8>,
        rtt_s: f64,
        dup: bool,
    ) {
        if !self.enabled {
            return;
        }
        if self.flood {
            if !dup {
                self.put("\x08 \x08");
            }
            return;
        }
        let ttl = ttl.map(|t| format!(" ttl={t}")).unwrap_or_default();
        let dup = if dup { " (DUP!)" } else { "" };
        self.line(&format!(
            "{bytes} bytes from {from}: icmp_seq={seq}{ttl} time={} ms{dup}",
            ms(rtt_s)
        ));
    }

    pub fn error(&self, from: &str, seq: u16, text: &str) {
        if !self.enabled {
            return;
        }
        if self.flood {
            self.put("\x08E");
            return;
        }
        self.line(&format!("From {from} icmp_seq={seq} {text}"));
    }

    pub fn timeout(&self, seq: u16) {
        if !self.enabled {
            return;
        }
        self.line(&format!("no answer for icmp_seq={seq}"));
    }

    pub fn note(&self, s: &str) {
        self.line(s);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn summary(
        &self,
        host: &str,
        sent: u64,
        received: u64,
        dups: u64,
        errors: u64,
        elapsed_s: f64,
        rtt: Option<(f64, f64, f64, f64)>,
    ) {
        let mut s = String::new();
        s.push_str(&format!("\n--- {host} pingrt statistics ---\n"));
        s.push_str(&format!("{sent} packets transmitted, {received} received"));
        if dups > 0 {
            s.push_str(&format!(", +{dups} duplicates"));
        }
        if errors > 0 {
            s.push_str(&format!(", +{errors} errors"));
        }
        let loss = if sent > 0 {
            100.0 * (sent.saturating_sub(received)) as f64 / sent as f64
        } else {
            0.0
        };
        s.push_str(&format!(
            ", {}% packet loss, time {:.0}ms\n",
            measure::units::sig3(loss),
            elapsed_s * 1e3
        ));
        if let Some((min, avg, max, mdev)) = rtt {
            s.push_str(&format!(
                "rtt min/avg/max/mdev = {}/{}/{}/{} ms\n",
                ms3(min),
                ms3(avg),
                ms3(max),
                ms3(mdev)
            ));
        }
        self.put(&s);
    }
}

fn ms3(s: f64) -> String {
    format!("{:.3}", s * 1e3)
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
}
