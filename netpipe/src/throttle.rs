//! A token listener's answer to guessing: after each refusal, the next connection from the
//! same source is heard only after a delay that doubles with its refusals (100 ms, 200 ms,
//! ... up to [`MOST_HELD`]). Connections from other sources are heard at once, so one bad
//! client stalls no other; the listener's loop never blocks on a held one.

use crate::agree::MOST_HELD;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The delay after a source's first refusal.
const FIRST: Duration = Duration::from_millis(100);
/// A source without a refusal for this long starts again from [`FIRST`].
const FORGET: Duration = Duration::from_secs(600);
/// The most sources remembered: past it the longest-quiet one is forgotten.
const SOURCES: usize = 4096;
/// The most connections of one held source kept waiting; more are refused at once.
pub const HELD_PER_SOURCE: usize = 16;

/// A source's refusals so far and when its next connection may be heard.
#[derive(Clone, Copy, Debug)]
struct Mark {
    refusals: u32,
    until: Instant,
    last: Instant,
}

/// The delays of a listener's sources.
#[derive(Debug, Default)]
pub struct Throttle {
    marks: HashMap<IpAddr, Mark>,
}

/// Where a connection comes from, as the throttle counts it: an IPv4 address (an IPv4-mapped
/// IPv6 one as IPv4), or an IPv6 address's /64, which one host commonly owns whole.
pub fn source(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

/// The delay after `n` refusals: doubling from [`FIRST`], at most [`MOST_HELD`].
pub fn delay(n: u32) -> Duration {
    let d = FIRST.saturating_mul(1u32 << n.saturating_sub(1).min(16));
    d.min(MOST_HELD)
}

impl Throttle {
    /// Whether a connection from `ip` is held (its source's delay runs) at `now`.
    pub fn holds(&self, ip: IpAddr, now: Instant) -> bool {
        self.marks.get(&source(ip)).is_some_and(|m| now < m.until)
    }

    /// Counts a refusal of a connection from `ip` at `now`; returns the delay before the
    /// source's next connection is heard.
    pub fn refused(&mut self, ip: IpAddr, now: Instant) -> Duration {
        let key = source(ip);
        if !self.marks.contains_key(&key) && self.marks.len() >= SOURCES {
            self.forget(now);
        }
        let m = self.marks.entry(key).or_insert(Mark {
            refusals: 0,
            until: now,
            last: now,
        });
        if now.saturating_duration_since(m.last) >= FORGET {
            m.refusals = 0;
        }
        m.refusals = m.refusals.saturating_add(1);
        let d = delay(m.refusals);
        m.until = now + d;
        m.last = now;
        d
    }

    /// Makes room: drops the sources quiet for [`FORGET`], else the longest-quiet one.
    fn forget(&mut self, now: Instant) {
        self.marks
            .retain(|_, m| now.saturating_duration_since(m.last) < FORGET);
        if self.marks.len() >= SOURCES
            && let Some(k) = self
                .marks
                .iter()
                .min_by_key(|(_, m)| m.last)
                .map(|(k, _)| *k)
        {
            self.marks.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_per_source_and_are_bounded() {
        assert_eq!(delay(1), FIRST);
        assert_eq!(delay(2), FIRST * 2);
        assert_eq!(delay(3), FIRST * 4);
        assert_eq!(delay(40), MOST_HELD);
        let mut t = Throttle::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let now = Instant::now();
        assert!(!t.holds(a, now));
        assert_eq!(t.refused(a, now), FIRST);
        assert_eq!(t.refused(a, now), FIRST * 2);
        assert!(t.holds(a, now) && !t.holds(b, now));
        assert!(!t.holds(a, now + FIRST * 2));
        assert_eq!(t.refused(b, now), FIRST);
        // One host's IPv6 /64 is one source; a mapped IPv4 address is the IPv4 one.
        let v6 = |s: &str| source(s.parse().unwrap());
        assert_eq!(v6("2001:db8::1"), v6("2001:db8::ffff:2"));
        assert_ne!(v6("2001:db8::1"), v6("2001:db8:0:1::1"));
        assert_eq!(v6("::ffff:127.0.0.1"), a);
    }
}
