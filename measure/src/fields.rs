//! The field rules of the record reader that serde's types alone do not make, each the
//! same as `record.schema.json` says it: `at` an RFC 3339 date-time in UTC, `seq` a JSON
//! Schema integer (`1.0` is one) from 0 to 2^53 - 1. (The optional fields, present as their
//! type or absent, never `null`, are the record reader's: `record/de.rs`.)

use serde::{Deserializer, de};
use std::fmt;

/// The largest `seq` (2^53 - 1): every reader of JSON, jq's doubles too, holds it exactly.
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// `seq` as JSON Schema's `integer` with `minimum` 0 and `maximum` 2^53 - 1: any JSON
/// number whose value is a whole number in range (`7`, `7.0`, `7e0`).
pub fn seq<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(SeqVisitor)
}

/// The `seq` of a parsed JSON value, by the same rule.
pub fn seq_of(v: &serde_json::Value) -> Option<u64> {
    seq(v).ok()
}

struct SeqVisitor;

const SEQ_WANT: &str = "a whole number from 0 to 2^53 - 1";

impl de::Visitor<'_> for SeqVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SEQ_WANT)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<u64, E> {
        if n <= MAX_SEQ {
            Ok(n)
        } else {
            Err(E::invalid_value(de::Unexpected::Unsigned(n), &SEQ_WANT))
        }
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<u64, E> {
        match u64::try_from(n) {
            Ok(n) => self.visit_u64(n),
            Err(_) => Err(E::invalid_value(de::Unexpected::Signed(n), &SEQ_WANT)),
        }
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<u64, E> {
        // -0.0 is a whole number not below 0, as JSON Schema's minimum sees it.
        if f.fract() == 0.0 && (0.0..=MAX_SEQ as f64).contains(&f) {
            Ok(f as u64)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(f), &SEQ_WANT))
        }
    }
}

/// Whether `at` is an RFC 3339 date-time in UTC, as `record.schema.json` states it
/// (`format: date-time` and a pattern for `YYYY-MM-DDTHH:MM:SS[.fraction]Z`): a real day of
/// its month, hours to 23, minutes to 59, seconds to 59, and 60 only at 23:59 (a leap second).
pub fn valid_at(at: &str) -> bool {
    let b = at.as_bytes();
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = b.get(r)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
    };
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b[i] != c) {
        return false;
    }
    let frac = &b[19..b.len() - 1];
    if !frac.is_empty()
        && (frac[0] != b'.' || frac.len() < 2 || !frac[1..].iter().all(u8::is_ascii_digit))
    {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) = (digits(11..13), digits(14..16), digits(17..19))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
        && hour <= 23
        && minute <= 59
        && (second <= 59 || (second == 60 && hour == 23 && minute == 59))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_is_rfc3339_utc() {
        for ok in [
            "2026-11-30T13:00:00.123456Z",
            "2026-11-30T13:00:00Z",
            "2024-02-29T00:00:00.1Z",
            "2016-12-31T23:59:60Z",
            "0000-01-01T00:00:00Z",
        ] {
            assert!(valid_at(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "2026-11-30 13:00:00Z",
            "2026-11-30T13:00:00.123456",
            "2026-11-30T13:00:00+00:00",
            "2026-11-30t13:00:00Z",
            "2026-11-30T13:00:00.Z",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T12:59:60Z",
            "2026-11-30T13:00:00.12a4Z",
            "2026-11-30T13:00:00.123456Z\n",
        ] {
            assert!(!valid_at(bad), "{bad:?}");
        }
    }

    #[test]
    fn seq_is_a_schema_integer() {
        for (text, want) in [
            ("7", Some(7)),
            ("7.0", Some(7)),
            ("7e0", Some(7)),
            ("-0.0", Some(0)),
            ("9007199254740991", Some(MAX_SEQ)),
            ("9007199254740992", None),
            ("7.5", None),
            ("-1", None),
            ("1e300", None),
        ] {
            let v: serde_json::Value = serde_json::from_str(text).expect("json");
            assert_eq!(seq_of(&v), want, "{text}");
        }
    }
}
