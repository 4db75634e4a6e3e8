//! Two `fleet/local-envs --envs bare,container` at once on one host: each takes a /30 and
//! names of its own, both finish, their containers ran at the same time, and neither leaves
//! anything behind.

use crate::local_envs_left::{listens, nothing_left};
use benchmatrix_tests::{bin_dir, empty_dir, need_root, need_tool, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `fleet/local-envs` on bare and the container, measuring the network only.
fn start(tmp: &Path, res: &Path, port: u16, runs: &str, net_time: &str) -> testkit::Captured {
    let mut c = Command::new("sh");
    c.arg(workspace_root().join("fleet/local-envs"))
        .args(["--envs", "bare,container", "-f", "json"])
        .args(["--results", &res.to_string_lossy()])
        .args(["--dir", &tmp.to_string_lossy()])
        .args(["--port", &port.to_string(), "--runs", runs, "--only", "net"])
        .args(["--", "--net-time", net_time])
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp)
        .stdin(Stdio::null());
    testkit::Captured::start(&mut c)
}

/// The columns' keys of the JSON matrix `out`.
fn columns(out: &str) -> Vec<String> {
    let m: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    m["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["key"].as_str().map(str::to_string))
        .collect()
}

/// The `at` of every record the container wrote in `res`.
fn container_times(res: &Path) -> Vec<String> {
    std::fs::read_to_string(res.join("container.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| r["at"].as_str().map(str::to_string))
        .collect()
}

/// Waits (at most two minutes) until the container in `res` has written its begin.
fn wait_container_begin(res: &Path) {
    let begun = || {
        std::fs::read_to_string(res.join("container.jsonl"))
            .is_ok_and(|t| t.contains("\"type\":\"begin\""))
    };
    let started = Instant::now();
    while !begun() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(begun(), "the first run's container never began");
}

/// The `peer` tag of the container's network records in `res`: the host end's address.
fn container_peer(res: &Path) -> String {
    let text = std::fs::read_to_string(res.join("container.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|r| r["tags"]["peer"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no peer tag in the container's records: {text}"))
}

#[test]
fn two_runs_at_once_on_one_host_each_get_a_network_of_their_own_and_both_finish() {
    if !need_root("a container's cgroup and network namespace")
        || !["unshare", "nsenter", "ip", "findmnt", "ss", "flock"]
            .iter()
            .all(|t| need_tool(t))
    {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").expect("a scratch directory on a disk");
    let (res_a, res_b) = (
        tempfile::tempdir().expect("results"),
        tempfile::tempdir().expect("results"),
    );
    let port_a = testkit::free_port();
    // Two ports apart: each run's --serve listens on its port and the next.
    let port_b = (port_a..port_a.saturating_add(200))
        .skip(2)
        .find(|p| !listens(*p) && !listens(p + 1))
        .expect("a second pair of free ports");
    // The second starts once the first's container has begun, and its bare run is short
    // beside the first's container step (four transfers of 3 s): so its container is made
    // while the first's still holds its network.
    let a = start(tmp.path(), res_a.path(), port_a, "2", "3s");
    wait_container_begin(res_a.path());
    let b = start(tmp.path(), res_b.path(), port_b, "1", "250ms");
    let (pid_a, pid_b) = (a.pid(), b.pid());
    let limit = Duration::from_secs(600);
    let (st_a, out_a, err_a) = a.wait_output(limit);
    let (st_b, out_b, err_b) = b.wait_output(limit);
    assert!(st_a.success(), "the first run: {st_a}: {err_a}");
    assert!(st_b.success(), "the second run: {st_b}: {err_b}");
    for (out, res) in [(&out_a, &res_a), (&out_b, &res_b)] {
        assert_eq!(columns(out), ["bare", "container"], "{out}");
        assert!(res.path().join("container.jsonl").is_file());
    }
    let (peer_a, peer_b) = (container_peer(res_a.path()), container_peer(res_b.path()));
    assert!(
        peer_a.starts_with("10.213.") && peer_b.starts_with("10.213."),
        "{peer_a} {peer_b}"
    );
    assert_ne!(
        peer_a, peer_b,
        "the two containers' host ends share an address"
    );
    // The containers did run at once: the second's began before the first's ended.
    let (ta, tb) = (container_times(res_a.path()), container_times(res_b.path()));
    let a_last = ta.iter().max().expect("the first container's records");
    let b_first = tb.iter().min().expect("the second container's records");
    assert!(
        b_first < a_last,
        "the containers ran one after the other: {b_first} >= {a_last}"
    );
    for pid in [pid_a, pid_b] {
        nothing_left(pid);
    }
    for p in [port_a, port_a + 1, port_b, port_b + 1] {
        assert!(!listens(p), "a listener is left on port {p}");
    }
    empty_dir(tmp.path());
}
