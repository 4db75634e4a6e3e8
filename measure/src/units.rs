//! Units: parsing sizes and durations from flags, and scaling values for humans.
//!
//! Sizes follow dd: `4k`, `4K` and `4KiB` are 4096; `4kB` is 4000; `B` alone is bytes.
//! Durations take a unit (`250ms`, `2s`, `1m`, `1.5h`); a bare number is an error that names
//! the fix, except through [`parse_seconds`], for flags that take bare seconds in the classic
//! tool (`ping -i 0.2`).

use std::time::Duration;

/// Splits `"1.5GiB"` into `("1.5", "GiB")`; the number is digits with at most one dot.
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map_or(s.len(), |(i, _)| i);
    (&s[..end], &s[end..])
}

/// A decimal number as an exact fraction: (digits as integer, number of decimal places).
fn parse_decimal(num: &str, whole: &str) -> Result<(u128, u32), String> {
    if num.is_empty() {
        return Err(format!("\"{whole}\" does not start with a number"));
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(format!("\"{whole}\" is not a number"));
    }
    if frac.len() > 18 {
        return Err(format!("\"{whole}\" has too many decimal places"));
    }
    let digits = format!("{int}{frac}");
    let value: u128 = digits
        .parse()
        .map_err(|_| format!("\"{whole}\" is too large"))?;
    // frac.len() <= 18 was checked above.
    Ok((value, frac.len() as u32))
}

/// `value / 10^places * mult`, exactly, or an error when it is not whole or overflows.
fn scale_exact(
    value: u128,
    places: u32,
    mult: u128,
    whole: &str,
    what: &str,
) -> Result<u64, String> {
    let product = value
        .checked_mul(mult)
        .ok_or_else(|| format!("\"{whole}\" is too large"))?;
    let div = 10u128.pow(places);
    if product % div != 0 {
        return Err(format!("\"{whole}\" is not a whole number of {what}"));
    }
    u64::try_from(product / div).map_err(|_| format!("\"{whole}\" is too large"))
}

fn check_sign(s: &str, what: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("empty {what}: give a number such as 4k or 250ms"));
    }
    if s.starts_with('-') {
        return Err(format!(
            "\"{s}\" is negative: a {what} must be zero or more"
        ));
    }
    Ok(())
}

/// Parses a size in bytes: `512`, `4k`/`4K`/`4KiB` (4096), `4kB` (4000), `2G`, `1.5GiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    check_sign(s, "size")?;
    let (num, suffix) = split_number(s);
    let (value, places) = parse_decimal(num, s)?;
    let mult: u128 = match suffix {
        "" | "B" | "c" => 1,
        "k" | "K" | "KiB" | "kiB" => 1 << 10,
        "M" | "m" | "MiB" => 1 << 20,
        "G" | "g" | "GiB" => 1 << 30,
        "T" | "t" | "TiB" => 1 << 40,
        "P" | "p" | "PiB" => 1 << 50,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "PB" => 1_000_000_000_000_000,
        other => {
            return Err(format!(
                "\"{s}\": unknown size suffix \"{other}\"; use K/KiB (1024), kB (1000), M, MB, G, GB, T, TB"
            ));
        }
    };
    scale_exact(value, places, mult, s, "bytes")
}

fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Parses a duration that carries its unit: `250ms`, `2s`, `1.5s`, `1m`, `2h`, `100us`, `50ns`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    check_sign(s, "duration")?;
    let (num, unit) = split_number(s);
    let (value, places) = parse_decimal(num, s)?;
    if unit.is_empty() {
        return Err(format!(
            "\"{s}\" has no unit: write {s}s for seconds or {s}ms for milliseconds"
        ));
    }
    let mult = unit_nanos(unit).ok_or_else(|| {
        format!("\"{s}\": unknown duration unit \"{unit}\"; use ns, us, ms, s, m or h")
    })?;
    let nanos = scale_exact(value, places, mult, s, "nanoseconds")?;
    Ok(Duration::from_nanos(nanos))
}

/// Parses a duration where a bare number means seconds (`0.2` = 200ms), as `ping -i` does;
/// a number with a unit is read as [`parse_duration`] reads it.
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    check_sign(t, "duration")?;
    let (num, unit) = split_number(t);
    if unit.is_empty() {
        let (value, places) = parse_decimal(num, t)?;
        let nanos = scale_exact(value, places, 1_000_000_000, t, "nanoseconds")?;
        return Ok(Duration::from_nanos(nanos));
    }
    parse_duration(t)
}

/// A display unit for a row of values: the name shown and the factor that divides a base value.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    pub unit: &'static str,
    pub factor: f64,
}

impl Scale {
    pub fn apply(&self, v: f64) -> f64 {
        v / self.factor
    }
}

/// Chooses the display unit for values with the given key suffix, so that `typical` shows as
/// a number of at least 1 in it where possible.
pub fn choose_scale(suffix: &str, typical: f64) -> Scale {
    let t = typical.abs();
    let pick = |ladder: &[(&'static str, f64)]| {
        let mut best = ladder[0];
        for &(unit, factor) in ladder {
            if t >= factor {
                best = (unit, factor);
            }
        }
        Scale {
            unit: best.0,
            factor: best.1,
        }
    };
    match suffix {
        "_s" => pick(&[("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)]),
        "_bytes" => pick(&[
            ("B", 1.0),
            ("KiB", 1024.0),
            ("MiB", 1048576.0),
            ("GiB", 1073741824.0),
            ("TiB", 1099511627776.0),
        ]),
        "_bits_per_s" => pick(&[
            ("b/s", 1.0),
            ("Kb/s", 1e3),
            ("Mb/s", 1e6),
            ("Gb/s", 1e9),
            ("Tb/s", 1e12),
        ]),
        "_bytes_per_s" => pick(&[("B/s", 1.0), ("kB/s", 1e3), ("MB/s", 1e6), ("GB/s", 1e9)]),
        "_per_s" => pick(&[("/s", 1.0), ("k/s", 1e3), ("M/s", 1e6)]),
        "_ratio" => Scale {
            unit: "%",
            factor: 0.01,
        },
        _ => Scale {
            unit: "",
            factor: 1.0,
        },
    }
}

/// The power of ten of the leading digit of a finite, non-zero `v` (floor(log10|v|), exact):
/// read from Rust's own shortest decimal form, so that it is never off by one where a float
/// log10 rounds up across a power of ten (999.9999999999999 has exponent 2, not 3).
pub fn decimal_exponent(v: f64) -> i32 {
    format!("{:e}", v.abs())
        .rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0)
}

/// Three significant digits, without an exponent (`104`, `12.3`, `0.104`).
pub fn sig3(v: f64) -> String {
    sig(v, 3)
}

/// `digits` significant digits, without an exponent (with 4: `1001`, `812.4`, `1.001`).
pub fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = decimal_exponent(v);
    let decimals = (digits - 1 - mag).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

fn human(suffix: &str, v: f64) -> String {
    let s = choose_scale(suffix, v);
    format!("{} {}", sig3(s.apply(v)), s.unit)
}

/// Seconds for humans: `104 us`, `1.50 ms`, `2.00 s`.
pub fn format_seconds(s: f64) -> String {
    human("_s", s)
}

/// Bytes for humans: `512 B`, `4.00 KiB`, `1.50 GiB`.
pub fn format_bytes(b: f64) -> String {
    human("_bytes", b)
}

/// Bits per second for humans: `941 Mb/s`, `9.41 Gb/s`.
pub fn format_bits_per_s(b: f64) -> String {
    human("_bits_per_s", b)
}

/// Bytes per second for humans: `512 MB/s`.
pub fn format_bytes_per_s(b: f64) -> String {
    human("_bytes_per_s", b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_exponent_is_floor_log10() {
        for (v, e) in [
            (1.0, 0),
            (9.999, 0),
            (10.0, 1),
            (-1234.5, 3),
            (0.001, -3),
            (0.000999, -4),
            (1e300, 300),
            (5e-324, -324),
        ] {
            assert_eq!(decimal_exponent(v), e, "{v}");
        }
        // Against libm's log10 away from the powers of ten, where rounding could differ.
        let mut x = 1.234e-12;
        while x < 1e15 {
            assert_eq!(decimal_exponent(x), x.log10().floor() as i32, "{x}");
            x *= 3.7;
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kB"), Ok(4000));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size(" 8B "), Ok(8));
    }

    #[test]
    fn size_rejections() {
        for bad in [
            "-1",
            "4X",
            "",
            "99999999999999999999G",
            "1.2.3k",
            "0.3k",
            "k",
            ".",
            "1e3",
        ] {
            let e = parse_size(bad).expect_err(bad);
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(
            parse_size("4X")
                .unwrap_err()
                .contains("unknown size suffix")
        );
        assert!(parse_size("-1").unwrap_err().contains("negative"));
        assert!(
            parse_size("99999999999999999999G")
                .unwrap_err()
                .contains("too large")
        );
        assert!(
            parse_size("18446744073709551616")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("50ns"), Ok(Duration::from_nanos(50)));
    }

    #[test]
    fn duration_rejections() {
        let e = parse_duration("5").unwrap_err();
        assert!(e.contains("no unit") && e.contains("5s"), "{e}");
        for bad in ["-1s", "4X", "", "99999999999999999999h", "1.5ns", "s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bare_seconds() {
        assert_eq!(parse_seconds("0.2"), Ok(Duration::from_millis(200)));
        assert_eq!(parse_seconds("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_seconds("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("").is_err());
    }

    #[test]
    fn human_formats() {
        assert_eq!(format_seconds(0.000104), "104 us");
        assert_eq!(format_seconds(0.0015), "1.50 ms");
        assert_eq!(format_seconds(2.0), "2.00 s");
        assert_eq!(format_seconds(5e-8), "50.0 ns");
        assert_eq!(format_bytes(4096.0), "4.00 KiB");
        assert_eq!(format_bytes(1.5 * 1073741824.0), "1.50 GiB");
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bits_per_s(941e6), "941 Mb/s");
        assert_eq!(format_bits_per_s(9.41e9), "9.41 Gb/s");
        assert_eq!(format_bits_per_s(5e3), "5.00 Kb/s");
        assert_eq!(format_bytes_per_s(512e6), "512 MB/s");
    }

    #[test]
    fn scales() {
        assert_eq!(choose_scale("_s", 0.0002).unit, "us");
        assert_eq!(choose_scale("_ratio", 0.25).apply(0.25), 25.0);
        assert_eq!(choose_scale("_count", 7.0).unit, "");
        assert_eq!(choose_scale("_bits_per_s", 0.0).unit, "b/s");
    }
}
