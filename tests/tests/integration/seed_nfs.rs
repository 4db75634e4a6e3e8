//! The seed table's nas columns (hvm/nas/net, hvmp/nas/net, para/nas/net: the guest's image
//! file on an NFSv3 export from nfs-ganesha, opened by QEMU's libnfs client): their facts and
//! what the NFS round trips cost, checked on the main table run (seed_table.rs calls
//! `check_nas_columns`); nothing left after a SIGTERM, SIGINT or SIGHUP with the server up;
//! a host without nfs-ganesha leaves a nas column out with one line while the others run; a
//! --dir and TMPDIR with a space and a quote serve the export as plain ones do.

use crate::seed_table::{command, given, keys, leftovers, places, possible, start};
use benchmatrix_tests::{explain, median};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The processes a run started (QEMU, ganesha.nfsd, rpcbind, the shell that holds them): every
/// one whose environment has the run's TMPDIR, `tmp`, which each inherits.
pub(crate) fn processes_of(tmp: &Path) -> Vec<String> {
    let want = format!("TMPDIR={}", tmp.to_string_lossy());
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            found.push(format!(
                "a run's process: {} {}",
                e.file_name().to_string_lossy(),
                comm.trim()
            ));
        }
    }
    found
}

/// The three nas columns name their stack (the export, the server, the client) and the clock
/// each ran on, and the NFS COMMIT costs the O_DIRECT write's fsync against the tmpfs column.
pub(crate) fn check_nas_columns(res: &Path) {
    let facts = |label: &str| given(&res.join(format!("{}.jsonl", label.replace('/', "_"))));
    for label in ["hvm/nas/net", "hvmp/nas/net", "para/nas/net"] {
        let g = facts(label);
        let backing = g["backing"].as_str().unwrap_or("");
        for says in [
            "NFSv3 export",
            "nfs-ganesha",
            "FSAL VFS",
            "on 127.0.0.1",
            "libnfs",
        ] {
            assert!(
                backing.contains(says),
                "{label}: backing without {says}: {g}"
            );
        }
        assert!(g["clocksource"].is_string(), "{label}: no clocksource: {g}");
    }
    // hvm and hvmp run on the emulated timer the script forces; para on the kernel's own
    // choice: kvm-clock under KVM, and under TCG (no paravirtual clock) what hvmp has.
    let first = |g: &Value| {
        let c = g["clocksource"].as_str().unwrap_or("");
        c.split(' ').next().unwrap_or("").to_string()
    };
    let (hvm, hvmp, para) = (
        facts("hvm/nas/net"),
        facts("hvmp/nas/net"),
        facts("para/nas/net"),
    );
    assert_eq!(first(&hvm), "hpet", "{hvm}");
    assert_eq!(first(&hvmp), "hpet", "{hvmp}");
    if para["accel"] == "kvm" {
        assert_eq!(first(&para), "kvm-clock", "{para}");
    } else {
        assert_eq!(first(&para), first(&hvmp), "{para}");
    }
    // The block write on the tmpfs file against the same write on the NFS export: the
    // O_DIRECT write's closing fsync (its flush_s), which the guest's virtio-blk flush turns
    // into an NFS COMMIT that makes ganesha fsync the image on this machine's disk, where on
    // tmpfs it ends in memory (medians 1.9 against 11.1 ms here, 7.8 against 44.6 ms on a
    // loaded run). Not the rows' throughput: under TCG the emulated CPU bounds the write
    // phase of both, and their samples overlapped (O_DIRECT 530 to 800 against 480 to 589
    // MB/s, buffered+fsync 77 to 105 against 84 to 122 MB/s).
    let flush = |label: &str| {
        let path = res.join(format!("{}.jsonl", label.replace('/', "_")));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let v: Vec<f64> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["type"] == "summary" && r["name"] == "disk write (O_DIRECT)")
            .filter_map(|r| r["values"]["flush_s"].as_f64())
            .collect();
        assert!(
            !v.is_empty(),
            "{label}: no O_DIRECT write in {}",
            path.display()
        );
        median(&v)
    };
    let (ram, nas) = (flush("para/file/ram"), flush("para/nas/net"));
    assert!(
        ram < nas,
        "the O_DIRECT write's fsync: tmpfs {ram} s not below NFS {nas} s"
    );
}

/// Starts a table of para/nas/net, waits until ganesha, rpcbind and QEMU run, sends `signal`
/// to the script and checks its exit status (`code`) and that nothing is left. Its --dir and
/// TMPDIR hold a space and a quote, which neither ganesha's configuration nor QEMU's URL
/// sees (the export is bound at a plain path in the servers' mount namespace).
fn interrupt_with_the_export_up(signal: &str, code: i32) {
    let res = tempfile::tempdir().expect("results");
    let odd = |b: &mut tempfile::Builder| b.prefix("bm nfs 'q' ").tempdir_in("/var/tmp");
    let dir = odd(&mut tempfile::Builder::new()).expect("dir");
    let tmp = odd(&mut tempfile::Builder::new()).expect("tmp");
    let args = "--table seed --columns para/nas/net --runs 1 --only disk --disk-size 16M";
    let args: Vec<&str> = args.split(' ').collect();
    let mut child = start(res.path(), dir.path(), tmp.path(), &args);
    let run = child.id();
    let t0 = Instant::now();
    loop {
        let procs = processes_of(tmp.path());
        let has = |name: &str| procs.iter().any(|p| p.ends_with(name));
        if has("ganesha.nfsd") && has("rpcbind") && has("qemu-system-x86") {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("fleet/local-envs ended ({status}) before its NFS server and guest were up");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the NFS server and the guest did not start: {procs:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let sent = Command::new("kill")
        .args([format!("-{signal}"), run.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal} {run}");
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert_eq!(out.status.code(), Some(code), "{signal}: {}", explain(&out));
    let left = leftovers(run, res.path(), dir.path(), tmp.path());
    assert!(left.is_empty(), "left behind after SIG{signal}: {left:?}");
}

#[test]
fn sigterm_sigint_or_sighup_with_the_nfs_export_up_leaves_nothing() {
    if !possible() {
        return;
    }
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        interrupt_with_the_export_up(signal, code);
    }
}

#[test]
fn a_nas_column_that_cannot_export_is_left_out_in_one_line_and_the_rest_runs() {
    if !possible() {
        return;
    }
    // A host without nfs-ganesha: every program on PATH but ganesha.nfsd.
    let (res, dir, tmp) = places();
    let path = path_without("ganesha.nfsd");
    let args = "--table seed --columns para/nas/net,bare --runs 1 --only icmp";
    let args: Vec<&str> = args.split(' ').collect();
    let child = command(res.path(), dir.path(), tmp.path(), &args)
        .env("PATH", path.path())
        .spawn()
        .expect("run fleet/local-envs");
    let run = child.id();
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let why: Vec<&str> = err.lines().filter(|l| l.starts_with("seed:")).collect();
    assert_eq!(why.len(), 1, "{err}");
    assert!(
        why[0].contains("para/nas/net: left out: no ganesha.nfsd (install nfs-ganesha"),
        "{err}"
    );
    let m: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the JSON matrix: {e}: {}", explain(&out)));
    let keys = keys(&m);
    assert!(keys.len() == 1 && keys[0].starts_with("bare/"), "{keys:?}");
    let left = leftovers(run, res.path(), dir.path(), tmp.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A directory of links to every program on this PATH but `tool` (the first of each name, as
/// PATH finds it): a PATH for a host without that tool's package.
fn path_without(tool: &str) -> tempfile::TempDir {
    let bin = tempfile::tempdir().expect("a PATH directory");
    let path = std::env::var("PATH").unwrap_or_default();
    for d in path.split(':') {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let link = bin.path().join(e.file_name());
            if e.file_name() != tool && !link.exists() {
                let _ = std::os::unix::fs::symlink(e.path(), link);
            }
        }
    }
    bin
}
