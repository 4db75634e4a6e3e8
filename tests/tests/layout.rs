//! The workspace's shape: every tool crate depends on `measure` (and `testkit` for its
//! tests) and on no other tool crate, so that what tools share lives in the library.

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
