//! dd's closing lines, for a run given in dd's form: `N+P records in`, `N+P records out` and
//! `X bytes (S, I) copied, T s, R/s`, in the layout GNU dd prints them on stderr.

use crate::write::ddform::Status;

/// The lines for `written` bytes in writes of `bs`, over `secs` (the writes and the flush,
/// as dd's time covers conv=fsync), as `status` asks; empty for status=none.
pub fn lines(status: Status, written: u64, bs: u64, secs: f64) -> String {
    if status == Status::None {
        return String::new();
    }
    let full = written / bs.max(1);
    let partial = u64::from(!written.is_multiple_of(bs.max(1)));
    let mut out = format!("{full}+{partial} records in\n{full}+{partial} records out\n");
    if status != Status::NoXfer {
        out.push_str(&format!(
            "{} copied, {} s, {}\n",
            bytes(written),
            g6(secs),
            rate(written as f64, secs)
        ));
    }
    out
}

/// `268435456 bytes (268 MB, 256 MiB)`; the IEC part only from 1 KiB, both from 1 kB.
fn bytes(b: u64) -> String {
    if b < 1000 {
        return format!("{b} bytes");
    }
    let si = scaled(b as f64, 1000.0, &["kB", "MB", "GB", "TB", "PB", "EB"]);
    if b < 1024 {
        return format!("{b} bytes ({si})");
    }
    let iec = scaled(
        b as f64,
        1024.0,
        &["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"],
    );
    format!("{b} bytes ({si}, {iec})")
}

/// A value in the largest unit it reaches: one decimal below 10, else whole.
fn scaled(v: f64, base: f64, units: &[&str]) -> String {
    let mut x = v / base;
    let mut i = 0;
    while x >= base && i + 1 < units.len() {
        x /= base;
        i += 1;
    }
    if x < 10.0 {
        format!("{x:.1} {}", units[i])
    } else {
        format!("{x:.0} {}", units[i])
    }
}

/// The rate in SI units, one decimal below 100: `801 MB/s`, `33.4 MB/s`.
fn rate(bytes: f64, secs: f64) -> String {
    if secs <= 0.0 {
        return "Infinity B/s".into();
    }
    let mut x = bytes / secs;
    let mut unit = "B/s";
    for u in ["kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"] {
        if x < 1000.0 {
            break;
        }
        x /= 1000.0;
        unit = u;
    }
    if x < 100.0 {
        format!("{x:.1} {unit}")
    } else {
        format!("{x:.0} {unit}")
    }
}

/// A number as C's `%g` prints it: six significant digits, trailing zeros dropped, an
/// exponent below 1e-4 or from 1e6.
fn g6(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&exp) {
        let s = format!("{v:.5e}");
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = trim(mant);
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim(&format!("{v:.decimals$}")).to_string()
}

fn trim(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_gnu_dd_prints_them() {
        // The lines GNU dd 9.1 printed for the same transfers (times and rates aside).
        let l = lines(Status::Default, 268_435_456, 64 << 20, 0.335137);
        assert_eq!(
            l,
            "4+0 records in\n4+0 records out\n268435456 bytes (268 MB, 256 MiB) copied, 0.335137 s, 801 MB/s\n"
        );
        assert!(
            lines(Status::Default, 512, 512, 0.000176974)
                .ends_with("512 bytes copied, 0.000176974 s, 2.9 MB/s\n")
        );
        assert!(
            lines(Status::Default, 1000, 1000, 0.000132318).contains("1000 bytes (1.0 kB) copied")
        );
        assert!(
            lines(Status::Default, 3000, 1000, 8.9744e-05)
                .contains("3000 bytes (3.0 kB, 2.9 KiB) copied, 8.9744e-05 s, 33.4 MB/s")
        );
        assert!(
            lines(Status::Default, 1_048_576_000, 1 << 20, 5.18029)
                .contains("(1.0 GB, 1000 MiB) copied, 5.18029 s, 202 MB/s")
        );
        assert_eq!(
            lines(Status::NoXfer, 1536, 1024, 1.0),
            "1+1 records in\n1+1 records out\n"
        );
        assert_eq!(lines(Status::None, 1, 1, 1.0), "");
    }
}
