//! `fleet/local-envs` for real: the suite bare and in a limited container (25% of one CPU, a
//! 20 MiB/s write throttle, 1 GiB of memory), collated; the container's CPU rows are slower
//! by the quota and significantly so, its O_DIRECT write runs at the throttle, the facts that
//! differ name the limits and nothing else, and nothing is left behind.

use benchmatrix_tests::{bin_dir, empty_dir, explain, need_root, need_tool, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The throttle the test gives, bytes/s (`--write-bps 20M`).
const THROTTLE: f64 = 20.0 * 1048576.0;

/// `fleet/local-envs ARGS` with the prebuilt tools, results in `res`, scratch in `tmp`; its
/// JSON matrix.
fn local_envs(res: &Path, tmp: &Path, args: &[&str]) -> Value {
    let out = Command::new("sh")
        .arg(workspace_root().join("fleet/local-envs"))
        .args([
            "--results",
            &res.to_string_lossy(),
            "--dir",
            &tmp.to_string_lossy(),
        ])
        .args(["-f", "json"])
        .args(args)
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .output()
        .expect("run fleet/local-envs");
    assert!(out.status.success(), "fleet/local-envs: {}", explain(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the JSON matrix: {e}: {}", explain(&out)))
}

/// The row whose name and metric are these.
fn row<'a>(m: &'a Value, name: &str, metric: &str) -> &'a Value {
    m["rows"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["dims"]["name"] == name && r["dims"]["metric"] == metric)
        })
        .unwrap_or_else(|| panic!("no row {name} {metric} in {m}"))
}

/// Bare's and the container's values of a row, and whether the difference is significant.
fn pair(m: &Value, name: &str, metric: &str) -> (f64, f64, bool) {
    let r = row(m, name, metric);
    let v = |j: usize| r["cells"][j]["value"].as_f64().unwrap_or(f64::NAN);
    (v(0), v(1), r["cells"][1]["compare"]["significant"] == true)
}

/// What the container made and must not leave: network namespaces, veth ends and cgroups
/// named after local-envs' own prefix.
fn leftovers() -> Vec<String> {
    let mut left = Vec::new();
    for dir in ["/run/netns", "/sys/class/net"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("bmenv-") || n.starts_with("bmh") {
                left.push(format!("{dir}/{n}"));
            }
        }
    }
    for c in [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup/memory",
    ] {
        for e in std::fs::read_dir(c).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with("bmenv-") {
                left.push(e.path().to_string_lossy().into_owned());
            }
        }
    }
    left
}

/// The facts that differ: the limits, the namespaces and the container (and the
/// virtualization where the host's differs), and nothing that is the same in both.
fn check_facts(m: &Value) {
    let facts = &m["columns"][1]["facts"];
    let mut named: Vec<&str> = facts
        .as_object()
        .expect("facts")
        .keys()
        .map(String::as_str)
        .collect();
    named.sort_unstable();
    let mut want = vec![
        "container",
        "cpu_quota",
        "io_throttle",
        "memory_limit_bytes",
        "namespaces",
    ];
    if m["columns"][0]["facts"]["virtualization"] != facts["virtualization"] {
        want.push("virtualization");
    }
    want.sort_unstable();
    assert_eq!(named, want, "{facts}");
    assert_eq!(facts["cpu_quota"], "25000/100000");
    assert_eq!(facts["memory_limit_bytes"], "1073741824");
    let throttle = facts["io_throttle"].as_str().unwrap_or("");
    assert!(throttle.ends_with(" wbps=20971520"), "{throttle}");
    assert_eq!(facts["container"], "benchmatrix-local-envs");
    for f in facts.as_object().into_iter().flatten() {
        assert_ne!(
            &m["columns"][0]["facts"][f.0], f.1,
            "{} is the same in both",
            f.0
        );
    }
}

#[test]
fn a_limited_container_is_slower_by_its_limits_and_the_facts_say_why() {
    if !need_root("a container's cgroup and network namespace")
        || !["unshare", "nsenter", "ip", "findmnt", "ss"]
            .iter()
            .all(|t| need_tool(t))
    {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").expect("a scratch directory on a disk");
    let res = tempfile::tempdir().expect("results");
    let port = testkit::free_port().to_string();
    let m = local_envs(
        res.path(),
        tmp.path(),
        &[
            "--envs",
            "bare,container",
            "--runs",
            "4",
            "--only",
            "net,icmp,cpu,disk",
            "--disk-size",
            "32M",
            "--cpu-quota",
            "25",
            "--write-bps",
            "20M",
            "--port",
            &port,
        ],
    );
    let keys: Vec<&str> = m["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["key"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(keys, ["bare", "container"]);
    // The pure CPU loops: a 25% quota stretches each 100 ms batch about fourfold.
    for metric in ["syscall_s", "clock_read_s"] {
        let (bare, boxed, significant) = pair(&m, "cpumem", metric);
        assert!(
            boxed / bare >= 2.5 && significant,
            "{metric}: bare {bare}, container {boxed}"
        );
    }
    let (_, direct, _) = pair(&m, "disk write (O_DIRECT)", "throughput_bytes_per_s");
    assert!(
        (direct / THROTTLE - 1.0).abs() <= 0.10,
        "O_DIRECT write {direct} B/s under a {THROTTLE} B/s throttle"
    );
    check_facts(&m);
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
    empty_dir(tmp.path());
}

#[test]
fn bad_options_are_named_before_anything_runs() {
    let res = tempfile::tempdir().expect("results");
    for (args, says) in [
        (&["--envs", "bare,jail"][..], "unknown environment jail"),
        (&["--cpu-quota", "0"], "--cpu-quota 0"),
        (&["--write-bps", "fast"], "--write-bps fast"),
        (&["--dir", "/nonexistent/dir"], "--dir /nonexistent/dir"),
    ] {
        let out = Command::new("sh")
            .arg(workspace_root().join("fleet/local-envs"))
            .args(["--results", &res.path().to_string_lossy()])
            .args(args)
            .env("BENCHMATRIX_BIN", bin_dir())
            .stdin(Stdio::null())
            .output()
            .expect("run fleet/local-envs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    empty_dir(res.path());
}
