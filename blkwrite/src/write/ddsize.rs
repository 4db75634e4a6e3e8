//! A size as dd reads it (`bs=64M`, `count=2x1K`): dd's own suffixes, which differ from
//! blkwrite's flags' in `c`, `w`, `b` and the `x` products.

/// A size as dd reads it: an integer with an optional suffix (c 1, w 2, b 512, K/KiB 1024,
/// kB 1000, M, MB, MiB, G... E), and products of them joined by `x` (`2x512K`).
pub fn dd_size(s: &str) -> Result<u64, String> {
    let mut total: u64 = 1;
    for factor in s.split('x') {
        let digits = factor.len()
            - factor
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        let (num, suffix) = factor.split_at(digits);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("\"{s}\" is not a size dd reads: give a whole number with an optional suffix (512, 4K, 64M, 1G, 1MB)"))?;
        let mult: u64 = match suffix {
            "" | "c" => 1,
            "w" => 2,
            "b" => 512,
            "K" | "k" | "KiB" => 1 << 10,
            "kB" | "KB" => 1_000,
            "M" | "MiB" => 1 << 20,
            "MB" => 1_000_000,
            "G" | "GiB" => 1 << 30,
            "GB" => 1_000_000_000,
            "T" | "TiB" => 1 << 40,
            "TB" => 1_000_000_000_000,
            "P" | "PiB" => 1 << 50,
            "PB" => 1_000_000_000_000_000,
            "E" | "EiB" => 1 << 60,
            "EB" => 1_000_000_000_000_000_000,
            other => {
                return Err(format!(
                    "\"{s}\": dd has no size suffix \"{other}\"; use c, w, b, K (1024), kB (1000), M, MB, G, GB, T, TB"
                ));
            }
        };
        total = n
            .checked_mul(mult)
            .and_then(|v| total.checked_mul(v))
            .ok_or_else(|| format!("\"{s}\" is too large"))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_dd_reads_them() {
        assert_eq!(dd_size("512").unwrap(), 512);
        assert_eq!(dd_size("2b").unwrap(), 1024);
        assert_eq!(dd_size("4K").unwrap(), 4096);
        assert_eq!(dd_size("1kB").unwrap(), 1000);
        assert_eq!(dd_size("64M").unwrap(), 64 << 20);
        assert_eq!(dd_size("1MB").unwrap(), 1_000_000);
        assert_eq!(dd_size("2x4KiB").unwrap(), 8192);
        assert_eq!(dd_size("3w").unwrap(), 6);
        assert!(dd_size("4q").unwrap_err().contains("suffix"));
        assert!(dd_size("1.5M").is_err());
    }
}
