//! The seed table's NBD and iSCSI servers (fleet/envs/seed-nbd.sh, seed-iscsi.sh) when they
//! cannot listen: with their ports taken on a namespace's loopback, each start says why in
//! one line naming the server, its address and the server's own error, and its stop leaves
//! no process, file or socket behind. Real qemu-nbd and tgtd, no guest (that is seed_table).

use benchmatrix_tests::{bin_dir, explain, need_root, need_tool, workspace_root};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::netns::NetPair;
use testkit::process::Spawned;

/// Starts each server with its port taken and prints `started` or `why: REASON`, then stops
/// it. $1 the repository, $2 the namespace, $3 the directory for the servers' files.
const SCRIPT: &str = r#"
. "$1/fleet/envs/vm.sh" && . "$1/fleet/envs/seed-nbd.sh" && . "$1/fleet/envs/seed-iscsi.sh" || exit 2
seed_ns=$2
if seed_nbd_start para/lvm/san "$3" 16777216 ext4; then echo started; else echo "why: $seed_why"; fi
seed_nbd_stop
if seed_iscsi_start para/lvm/iscsi "$3" 16777216 ext4; then echo started; else echo "why: $seed_why"; fi
seed_iscsi_stop
"#;

/// What the servers of the script of pid `run` left: files in `dir` or `tmp`, and a tgtd
/// with the run's control port or a qemu-nbd serving a file in `dir`.
fn left(run: u32, dir: &Path, tmp: &Path) -> Vec<String> {
    let mut left: Vec<String> = [dir, tmp]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    let ps = Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .expect("ps");
    let tgtd = format!("tgtd -f -C {} ", run % 60000 + 1);
    for l in String::from_utf8_lossy(&ps.stdout).lines() {
        if l.starts_with(&tgtd) || (l.contains("qemu-nbd") && l.contains(&*dir.to_string_lossy())) {
            left.push(format!("a process: {l}"));
        }
    }
    left
}

#[test]
fn a_server_that_cannot_listen_says_why_in_one_line_and_leaves_nothing() {
    if !(need_root("network namespaces and tgtd")
        && ["qemu-nbd", "tgtd", "tgtadm", "ss", "mkfs.ext4"]
            .iter()
            .all(|t| need_tool(t)))
    {
        return;
    }
    let net = NetPair::new().expect("a network namespace");
    // Something else listens on the export's and the portal's addresses (a start that took
    // any listener there for its server's would say it started).
    let mut holders: Vec<Spawned> = [10809_u16, 3260]
        .iter()
        .map(|p| {
            let mut h = Spawned::start(
                NetPair::exec(&net.a, bin_dir().join("netpipe"))
                    .args(["-l", "-s", "127.0.0.1", &p.to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            );
            h.wait_listening(*p, Duration::from_secs(10));
            h
        })
        .collect();
    let (dir, tmp) = (
        tempfile::tempdir_in("/var/tmp").expect("dir"),
        tempfile::tempdir().expect("tmp"),
    );
    let child = Command::new("sh")
        .args(["-c", SCRIPT, "sh"])
        .arg(workspace_root())
        .arg(&net.a)
        .arg(dir.path())
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the servers' script");
    let run = child.id();
    let out = child.wait_with_output().expect("wait for the script");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{}", explain(&out));
    for (line, says) in lines.iter().zip([
        ["why: qemu-nbd did not listen on 127.0.0.1:10809", "in use"],
        ["why: tgtd did not listen on 127.0.0.1:3260", "bind"],
    ]) {
        for s in says {
            assert!(line.contains(s), "{line:?} does not say {s:?}");
        }
    }
    let left = left(run, dir.path(), tmp.path());
    assert!(left.is_empty(), "left behind: {left:?}");
    holders.clear();
}
