//! The workspace's shape: every tool crate depends on `measure` (and `testkit` for its
//! tests) and on no other tool crate, so that what tools share lives in the library; each
//! crate's integration tests are one test binary.

use std::path::Path;

#[test]
fn no_tool_crate_depends_on_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tools = [
        "netpipe", "pingrt", "blkwrite", "fsmeta", "timecmd", "cpumem", "ingest", "collate",
    ];
    for tool in tools {
        let text = std::fs::read_to_string(root.join(tool).join("Cargo.toml")).expect("Cargo.toml");
        for line in text.lines() {
            let dep = line.split(['=', ' ']).next().unwrap_or("");
            assert!(
                !tools.contains(&dep) || dep == tool,
                "{tool} depends on {dep}: move what they share into measure ({line})"
            );
            if line.contains("path = \"../") {
                assert!(
                    line.contains("../measure") || line.contains("../testkit"),
                    "{tool}: {line}"
                );
            }
        }
    }
}

/// Each crate's integration tests are modules of one binary, `tests/integration/main.rs`:
/// a file directly under `tests/` would be a binary of its own, linked apart (with 90 of them
/// a cold `cargo test` spent half its time linking).
#[test]
fn each_crate_has_one_integration_test_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = [
        "measure", "netpipe", "pingrt", "blkwrite", "fsmeta", "timecmd", "cpumem", "ingest",
        "collate", "testkit", "tests",
    ];
    for c in crates {
        let Ok(dir) = std::fs::read_dir(root.join(c).join("tests")) else {
            continue;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let binary = name.ends_with(".rs") || path.join("main.rs").is_file();
            assert!(
                !binary || name == "integration",
                "{c}/tests/{name} is a test binary of its own: make it a module of \
                 {c}/tests/integration/main.rs"
            );
        }
    }
}
