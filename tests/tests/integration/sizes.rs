//! Small files and small functions (ARCHITECTURE.md, Code): no Rust file of the workspace
//! over 600 lines, no function over 80 (a clap `command()` flag table aside), and unsafe only
//! where no safe crate reaches: at most 23 unsafe blocks in all, today's count.

use benchmatrix_tests::workspace_root;
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 80;
/// Today's count: it may only go down (lower it when an unsafe block goes).
const MAX_UNSAFE: usize = 23;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "target" || name.starts_with('.') || name == "fuzz" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            let shown = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            (shown, std::fs::read_to_string(f).unwrap_or_default())
        })
        .collect()
}

/// The name of the function a line starts, if it does (`pub(crate) async fn name<...>(`).
fn fn_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t
        .split_once("fn ")
        .filter(|(head, _)| {
            head.split_whitespace().all(|w| {
                [
                    "pub",
                    "pub(crate)",
                    "pub(super)",
                    "const",
                    "async",
                    "unsafe",
                    "extern",
                ]
                .contains(&w)
                    || w.starts_with("extern")
                    || w.starts_with('"')
            })
        })
        .map(|(_, r)| r)?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// Functions longer than the limit: a function starts at its `fn` line and ends at the first
/// later line that is `}` at the same indentation (rustfmt's layout).
fn long_functions(file: &str, text: &str, out: &mut Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        if name == "command" || l.trim_end().ends_with(';') {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(n) = lines[i + 1..].iter().position(|x| x.trim_end() == close) {
            let len = n + 2;
            if len > MAX_FN_LINES {
                out.push(format!("{file}:{}: fn {name} has {len} lines", i + 1));
            }
        }
    }
}

#[test]
fn files_and_functions_are_small() {
    let mut wrong = Vec::new();
    for (file, text) in sources() {
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            wrong.push(format!("{file}: {n} lines"));
        }
        long_functions(&file, &text, &mut wrong);
    }
    assert!(
        wrong.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FN_LINES} a function:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn unsafe_is_rare() {
    let mut count = 0;
    let mut per_file = Vec::new();
    for (file, text) in sources() {
        let n = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| {
                // The patterns are split so that this test's own lines are not counted.
                l.matches(concat!("unsafe", " {")).count()
                    + l.matches(concat!("unsafe", " fn ")).count()
                    + l.matches(concat!("unsafe", " impl ")).count()
            })
            .sum::<usize>();
        if n > 0 {
            per_file.push(format!("{file}: {n}"));
        }
        count += n;
    }
    assert!(
        count <= MAX_UNSAFE,
        "{count} unsafe blocks (at most {MAX_UNSAFE}):\n{}",
        per_file.join("\n")
    );
}

#[test]
fn the_function_finder_finds_functions() {
    assert_eq!(
        fn_name("    pub(crate) fn build_rows<'a>(x: u8) {"),
        Some("build_rows")
    );
    assert_eq!(fn_name("fn main() {"), Some("main"));
    assert_eq!(fn_name("    let fn_x = 1;"), None);
    assert_eq!(fn_name("    // fn not_code()"), None);
    let body = format!("fn f() {{\n{}}}\n", "    x();\n".repeat(MAX_FN_LINES));
    let mut out = Vec::new();
    long_functions("t.rs", &body, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
}
