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

/// A tool crate's public face (ARCHITECTURE.md, "A tool crate's public face and its files"):
/// its modules are private unless a test outside the crate or another crate needs them, and
/// the public ones are the table's; `command()` is in `cli.rs` but where the table says not.
#[test]
fn tool_crates_public_modules_and_command_are_the_architecture_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // (file, its public modules), as ARCHITECTURE.md's table lists them, with who needs them.
    let public: &[(&str, &[&str])] = &[
        ("netpipe/src/lib.rs", &[]),
        ("pingrt/src/lib.rs", &[]),
        // blkread's main runs `read::Tool`; blkwrite's tests drive `blk::engine`.
        ("blkwrite/src/lib.rs", &["blk", "read"]),
        ("blkwrite/src/blk/mod.rs", &["engine", "pattern"]),
        ("blkwrite/src/read/mod.rs", &[]),
        ("blkwrite/src/write/mod.rs", &[]),
        ("fsmeta/src/lib.rs", &[]),
        ("timecmd/src/lib.rs", &[]),
        // The tests crate lists the probes.
        ("cpumem/src/lib.rs", &["probe"]),
        // ingest's tests use `model::scale_text`.
        ("ingest/src/lib.rs", &["model"]),
        // collate's tests, its fuzz target and the tests crate's reader properties.
        (
            "collate/src/lib.rs",
            &[
                "collect", "dims", "filter", "matrix", "read", "render", "stats",
            ],
        ),
    ];
    for (file, want) in public {
        let text = std::fs::read_to_string(root.join(file)).expect(file);
        let got: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("pub mod "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        assert_eq!(
            &got, want,
            "{file}: public modules differ from ARCHITECTURE.md's table: make a module \
             pub(crate) unless a test or another crate needs it, and update the table"
        );
    }
    // `command()` in cli.rs, but for the crates the table names.
    for file in [
        "netpipe/src/cli.rs",
        "pingrt/src/lib.rs",
        "blkwrite/src/write/cli.rs",
        "blkwrite/src/read/cli.rs",
        "fsmeta/src/cli.rs",
        "timecmd/src/lib.rs",
        "cpumem/src/cli.rs",
        "ingest/src/cli.rs",
        "collate/src/cli.rs",
    ] {
        let text = std::fs::read_to_string(root.join(file)).expect(file);
        assert!(
            text.contains("pub fn command() -> Command"),
            "{file}: no command()"
        );
    }
}
