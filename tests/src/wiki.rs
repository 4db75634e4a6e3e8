//! Reads a DokuWiki table as `collate --format dokuwiki` writes it, so that tests can check
//! its header levels and its cells against the records.

/// A DokuWiki table: header levels (the cells after the corner) and rows (title, cells).
pub struct Wiki {
    pub levels: Vec<Vec<String>>,
    pub header_lines: Vec<String>,
    pub rows: Vec<(String, Vec<String>)>,
}

/// The cells of one table line, between its first and last separator.
fn fields(line: &str, sep: char) -> Vec<String> {
    let f: Vec<&str> = line.split(sep).collect();
    assert!(
        f.len() >= 3 && f[0].is_empty() && f[f.len() - 1].is_empty(),
        "not a table line: {line:?}"
    );
    f[1..f.len() - 1]
        .iter()
        .map(|c| c.trim().to_string())
        .collect()
}

/// Parses the table lines of `text` (other lines are ignored); panics on a malformed one.
pub fn parse_wiki(text: &str) -> Wiki {
    let mut w = Wiki {
        levels: Vec::new(),
        header_lines: Vec::new(),
        rows: Vec::new(),
    };
    for line in text.lines() {
        if line.starts_with("^fact: ") {
            // A fact that differs between the columns, above the measurements: its title a
            // header cell, its values plain cells.
            continue;
        } else if line.starts_with('^') {
            assert!(w.rows.is_empty(), "a header line after the rows: {line}");
            let f = fields(line, '^');
            assert_eq!(f[0], "", "the corner cell is empty: {line}");
            w.levels.push(f[1..].to_vec());
            w.header_lines.push(line.to_string());
        } else if line.starts_with('|') {
            let f = fields(line, '|');
            w.rows.push((f[0].clone(), f[1..].to_vec()));
        }
    }
    w
}

/// "network throughput domU->dom0 (Mb/s) ↑" -> ("network throughput domU->dom0", "Mb/s"):
/// collate's arrow for which way is better, where it shows one, is left off.
pub fn split_title(title: &str) -> (&str, &str) {
    // After the unit, which way is better (collate's ↓ or ↑).
    let title = title.trim_end_matches([' ', '↓', '↑']);
    let Some((name, unit)) = title.rsplit_once(" (") else {
        panic!("no unit in the row title {title:?}");
    };
    match unit.strip_suffix(')') {
        Some(unit) => (name, unit),
        None => panic!("unit not in parentheses: {title:?}"),
    }
}
