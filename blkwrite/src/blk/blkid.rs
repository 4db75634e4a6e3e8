//! What a block device holds, as the system's own prober sees it: libblkid, through
//! `wipefs --no-act`, which lists every superblock, RAID, crypto and partition-table signature
//! that mkfs, mount and wipefs would see. Where wipefs cannot run, the built-in list in
//! `signature` is the fallback, and the prober's name in begin says which one looked.

use crate::blk::signature;
use serde_json::Value;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The signatures found on a device and which prober found them.
pub struct Probed {
    /// One description per signature ("ext4 (filesystem) at offset 0x438"); empty when none.
    pub found: Vec<String>,
    /// Which prober looked, for begin: `libblkid (wipefs from util-linux 2.38.1)`, or the
    /// built-in list with the reason libblkid could not be asked.
    pub prober: String,
}

/// Probes the device at `path` (already open as `file`, `size` bytes) with libblkid, or with
/// the built-in list where wipefs is missing or fails.
pub fn probe(path: &Path, file: &File, size: u64) -> std::io::Result<Probed> {
    let Some(wipefs) = find_wipefs() else {
        return builtin(file, size, "wipefs not found: install util-linux".into());
    };
    match ask_wipefs(&wipefs, path) {
        Ok(found) => Ok(Probed {
            found,
            prober: format!("libblkid ({})", wipefs_version(&wipefs)),
        }),
        Err(why) => builtin(file, size, why),
    }
}

/// The built-in list over the device's first and last blocks.
fn builtin(file: &File, size: u64, why: String) -> std::io::Result<Probed> {
    let mut head = vec![0u8; signature::HEAD_BYTES.min(size as usize)];
    let tail_len = signature::TAIL_BYTES.min(size as usize);
    let mut tail = vec![0u8; tail_len];
    file.read_exact_at(&mut head, 0)?;
    file.read_exact_at(&mut tail, size - tail_len as u64)?;
    Ok(Probed {
        found: signature::scan(&head, &tail, size),
        prober: format!("built-in list ({why})"),
    })
}

/// wipefs on PATH, or in the sbin directories that a plain user's PATH often lacks.
fn find_wipefs() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join("wipefs"))
        .find(|p| p.is_file())
}

fn wipefs_version(wipefs: &Path) -> String {
    Command::new(wipefs)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "wipefs".into())
}

/// Runs `wipefs --no-act --json` on the device (it only reads) and describes each signature,
/// or says why it could not.
fn ask_wipefs(wipefs: &Path, dev: &Path) -> Result<Vec<String>, String> {
    let out = Command::new(wipefs)
        .args(["--no-act", "--json", "--output", "OFFSET,TYPE,USAGE"])
        .arg(dev)
        .output()
        .map_err(|e| format!("running {}: {e}", wipefs.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let said = match err.trim() {
            "" => "it printed no reason".to_string(),
            e => e.to_string(),
        };
        return Err(format!("wipefs failed ({}): {said}", out.status));
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// The signatures in wipefs's JSON (empty output, or an empty list, when there are none).
fn parse(text: &str) -> Result<Vec<String>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("wipefs printed what is not JSON: {e}"))?;
    let list = v["signatures"]
        .as_array()
        .ok_or("wipefs's JSON has no \"signatures\" list")?;
    let field = |s: &Value, k: &str| s[k].as_str().unwrap_or("?").to_string();
    Ok(list
        .iter()
        .map(|s| {
            format!(
                "{} ({}) at offset {}",
                field(s, "type"),
                field(s, "usage"),
                field(s, "offset")
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipefs_json_is_read() {
        let text = r#"{"signatures": [
            {"offset": "0x410", "type": "minix", "usage": "filesystem"},
            {"offset": "0x3fffe00", "type": "gpt", "usage": "partition-table"}]}"#;
        assert_eq!(
            parse(text).expect("parses"),
            [
                "minix (filesystem) at offset 0x410",
                "gpt (partition-table) at offset 0x3fffe00"
            ]
        );
        assert!(parse("").expect("empty").is_empty());
        assert!(parse("{\"signatures\": [\n\n]}").expect("none").is_empty());
        assert!(parse("{\"other\": 1}").is_err());
        assert!(parse("not json").is_err());
    }

    #[test]
    fn without_wipefs_the_builtin_list_looks_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("img");
        let mut b = vec![0u8; 1 << 20];
        b[0..4].copy_from_slice(b"XFSB");
        std::fs::write(&p, &b).expect("write");
        let f = File::open(&p).expect("open");
        let r = builtin(&f, 1 << 20, "wipefs not found: install util-linux".into()).expect("reads");
        assert_eq!(r.found, ["an xfs file system"]);
        assert!(r.prober.starts_with("built-in list (wipefs not found"));
        // A program that is not wipefs is a failure to ask, never "nothing found".
        let why = ask_wipefs(Path::new("/bin/false"), &p).expect_err("false is no wipefs");
        assert!(
            why.contains("exit status: 1") && why.contains("no reason"),
            "{why}"
        );
    }
}
