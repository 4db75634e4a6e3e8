//! Storage stacks for real, in a QEMU guest running Debian's stock kernel (this machine's has
//! no device-mapper, md or nfsd): `fleet/envs/vm-stacks` makes an LVM volume, an md raid1 and
//! an NFS 4.2 mount; blkwrite, blkread and fsmeta run on each, their facts name every layer
//! (dm/LVM over virtio, md raid1 over two virtio disks, nfs4 with its server and options),
//! collate's facts block tells the three apart, and blkwrite refuses the LVM physical volume
//! and an md member.

use benchmatrix_tests::{bin_dir, explain, need_tool, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// What the guest and its stacks need from this machine (`.ci/run` installs them).
fn possible() -> bool {
    [
        "qemu-system-x86_64",
        "busybox",
        "cpio",
        "depmod",
        "pvcreate",
        "mdadm",
        "rpc.nfsd",
        "exportfs",
        "mount.nfs4",
    ]
    .iter()
    .all(|t| need_tool(t))
}

/// Runs vm-stacks in a guest with the release tools, results into `res`.
fn stacks(res: &Path) {
    let cache = testkit::release::target_dir().join("vm-cache");
    let root = workspace_root();
    let out = Command::new("sh")
        .arg("-c")
        .arg(". fleet/envs/vm.sh && vm_check && vm_prepare \"$1\" && vm_stacks \"$1\" \"$2\" \"$3\" \"$4\"")
        .arg("sh")
        .arg(&cache)
        .arg(&root)
        .arg(bin_dir())
        .arg(res)
        .current_dir(&root)
        .stdin(Stdio::null())
        .output()
        .expect("run vm_stacks");
    let log = std::fs::read_to_string(res.join("stacks.log")).unwrap_or_default();
    assert!(out.status.success(), "vm_stacks: {}\n{log}", explain(&out));
}

/// The records of `path`, one per line.
fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the guest's records")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect()
}

/// The block stack of `tool`'s begin under `label`, as (name, kind, detail, driver).
fn stack(recs: &[Value], label: &str, tool: &str) -> Vec<(String, String, String, String)> {
    let begin = recs
        .iter()
        .find(|r| r["type"] == "begin" && r["label"] == label && r["tool"] == tool)
        .unwrap_or_else(|| panic!("no {tool} begin for {label}"));
    let text = |l: &Value, k: &str| l[k].as_str().unwrap_or("").to_string();
    begin["info"]["block_stack"]
        .as_array()
        .unwrap_or_else(|| panic!("{label}: no block stack in {begin}"))
        .iter()
        .map(|l| {
            let ids = (text(l, "name"), text(l, "kind"));
            (ids.0, ids.1, text(l, "detail"), text(l, "driver"))
        })
        .collect()
}

/// Every layer of each stack is named, for each tool.
fn check_layers(recs: &[Value]) {
    for tool in ["blkwrite", "blkread", "fsmeta"] {
        let lvm = stack(recs, "lvm", tool);
        assert_eq!(
            (lvm[0].1.as_str(), lvm[0].2.as_str()),
            ("lvm", "bmvg-data"),
            "{lvm:?}"
        );
        assert_eq!(
            (lvm[1].0.as_str(), lvm[1].3.as_str()),
            ("vdb", "virtio_blk"),
            "{lvm:?}"
        );
        let md = stack(recs, "md", tool);
        assert_eq!(
            (md[0].1.as_str(), md[0].2.as_str()),
            ("md", "raid1"),
            "{md:?}"
        );
        let members: Vec<&str> = md[1..].iter().map(|l| l.0.as_str()).collect();
        assert_eq!(members, ["vdc", "vdd"], "{md:?}");
        assert!(md[1..].iter().all(|l| l.3 == "virtio_blk"), "{md:?}");
        let nfs = stack(recs, "nfs", tool);
        assert_eq!(
            (nfs[0].0.as_str(), nfs[0].1.as_str()),
            ("127.0.0.1:/", "nfs")
        );
        assert!(
            nfs[0].2.contains("vers=4.2") && nfs[0].2.contains("addr=127.0.0.1"),
            "{nfs:?}"
        );
    }
}

/// Each tool finished on each stack.
fn check_summaries(recs: &[Value]) {
    for label in ["lvm", "md", "nfs"] {
        for tool in ["blkwrite", "blkread", "fsmeta"] {
            assert!(
                recs.iter().any(|r| r["type"] == "summary"
                    && r["label"] == label
                    && r["tool"] == tool
                    && r["status"] == "ok"),
                "no ok {tool} summary on {label}"
            );
        }
    }
}

/// collate's matrix of the three stacks lists the block stack among the facts that differ.
fn check_matrix(file: &Path) {
    let out = Command::new(bin_dir().join("collate"))
        .args(["-f", "json", "--cols", "label"])
        .arg(file)
        .output()
        .expect("run collate");
    assert!(out.status.success(), "collate: {}", explain(&out));
    let m: Value = serde_json::from_slice(&out.stdout).expect("the JSON matrix");
    let facts: Vec<String> = m["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["facts"]["block_stack"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(facts.len(), 3, "{facts:?}");
    for want in ["lvm bmvg-data", "md raid1", "nfs vers=4.2"] {
        assert!(
            facts.iter().any(|f| f.contains(want)),
            "{want} not in {facts:?}"
        );
    }
}

#[test]
fn lvm_md_and_nfs_stacks_are_named_measured_and_their_parts_refused() {
    if !possible() {
        return;
    }
    let res = tempfile::tempdir().expect("results");
    stacks(res.path());
    let recs = records(&res.path().join("stacks.jsonl"));
    check_layers(&recs);
    check_summaries(&recs);
    check_matrix(&res.path().join("stacks.jsonl"));
    let refusals = std::fs::read_to_string(res.path().join("refusals.txt")).expect("refusals");
    for (what, says) in [
        ("pv exit=2 ", "in use by LVM logical volume bmvg-data"),
        ("md-member exit=2 ", "in use by md array md0 (raid1)"),
    ] {
        assert!(
            refusals
                .lines()
                .any(|l| l.starts_with(what) && l.contains(says)),
            "{what}{says}: {refusals}"
        );
    }
}
