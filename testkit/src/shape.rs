//! The shape of a classic tool's text, to compare a drop-in's output with the classic tool's
//! own: every number becomes `#` and every size or rate prefix `?`, so that `4+0 records in`
//! and `268435456 bytes (268 MB, 256 MiB) copied, 0.3 s, 801 MB/s` compare equal to the same
//! lines with other figures.

/// `text` with each number (`12`, `0.335`, `8.9e-05`, `1:02.03`) as `#`, and the unit
/// prefixes of `kB`, `MB`, `GiB`, `MB/s`... as `?` (`?B`, `?iB`).
pub fn of(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_ascii_digit() {
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.' || c[i] == ':') {
                i += 1;
            }
            if i + 1 < c.len() && c[i] == 'e' && (c[i + 1] == '-' || c[i + 1] == '+') {
                i += 2;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push('#');
            continue;
        }
        let prefix = "kKMGTPE".contains(c[i]) && (i == 0 || c[i - 1] == ' ');
        let unit = |s: &str| c[i + 1..].iter().collect::<String>().starts_with(s);
        if prefix && (unit("B") || unit("iB")) {
            out.push('?');
        } else {
            out.push(c[i]);
        }
        i += 1;
    }
    // A byte count under 1 kB has no prefix: `3 B/s` reads as `? B/s` too.
    out.replace("# B/s", "# ?B/s")
}

/// The lines of `text`, each as [`of`] gives it.
pub fn lines(text: &str) -> Vec<String> {
    text.lines().map(of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_prefixes_go() {
        assert_eq!(
            of("268435456 bytes (268 MB, 256 MiB) copied, 8.9744e-05 s, 1.5 GB/s"),
            "# bytes (# ?B, # ?iB) copied, # s, # ?B/s"
        );
        assert_eq!(
            of("\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:00.01"),
            "\tElapsed (wall clock) time (h:mm:ss or m:ss): #"
        );
        assert_eq!(of("4+0 records in"), "#+# records in");
        assert_eq!(
            of("Maximum resident set size (kbytes): 1548"),
            "Maximum resident set size (kbytes): #"
        );
    }
}
