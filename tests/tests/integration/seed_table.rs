//! `fleet/local-envs --table seed` for real (root, QEMU, TCG here, small sizes): each guest
//! column's begin facts name its disk bus, NIC and backing and carry the guest/host clock
//! ratio and no negative share between the tools; the emulated column (IDE, e1000) moves less
//! over the network and reads fewer blocks with many in flight than the virtio one on the
//! same tmpfs backing, significantly, and the tap network is above QEMU's user mode (those
//! rows' checks in seed_rows.rs); the NBD and iSCSI columns name their servers; the matrix has the
//! seed's three header levels in its order; nothing is left behind (no namespace, mount,
//! loop device, file, QEMU, qemu-nbd, tgtd, qemu-storage-daemon or NFS server), also after a
//! signal at three points. The nas columns' own checks (their NFS export's facts, their
//! clocks, tmpfs against NFS) are in seed_nfs.rs.

use benchmatrix_tests::kernel::{Filler, fake_tarball};
use benchmatrix_tests::{bin_dir, empty_dir, explain, need_root, need_tool, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// `fleet/local-envs --table seed` (and ARGS) with small sizes, started: results in `res`,
/// the disk files in `dir`, scratch (TMPDIR) in `tmp`.
pub(crate) fn start(res: &Path, dir: &Path, tmp: &Path, args: &[&str]) -> Child {
    command(res, dir, tmp, args)
        .spawn()
        .expect("run fleet/local-envs")
}

/// The command [`start`] runs, for a test that changes its environment.
pub(crate) fn command(res: &Path, dir: &Path, tmp: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg(workspace_root().join("fleet/local-envs"))
        .args(["--results", &res.to_string_lossy()])
        .args(["--dir", &dir.to_string_lossy()])
        .args(["-f", "json", "--cache", &vm_cache().to_string_lossy()])
        // A port of its own (and the next): the vm run's --serve is on this machine's
        // loopback, which another run at the same time may share.
        .args(["--port", &testkit::process::free_port().to_string()])
        .args(args)
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp)
        .env("VM_DISK_SIZE", "256M")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A run's results directory (its name holds a space and a quote, as a user's may), its
/// --dir (on a disk: /var/tmp) and its TMPDIR.
pub(crate) fn places() -> (TempDir, TempDir, TempDir) {
    (
        tempfile::Builder::new()
            .prefix("bm res 'q' ")
            .tempdir()
            .expect("results"),
        tempfile::tempdir_in("/var/tmp").expect("dir"),
        tempfile::tempdir().expect("tmp"),
    )
}

/// The guest's kernel and initramfs, kept between runs (shared with local_envs.rs).
fn vm_cache() -> std::path::PathBuf {
    testkit::release::target_dir().join("vm-cache")
}

/// Makes the guest's kernel and initramfs in [`vm_cache`] now (fleet/envs/vm.sh's vm_prepare,
/// which fetches Debian's kernel package with apt-get the first time) and returns it: for a
/// run that cannot fetch it itself, such as the fleet test's lab host, a namespace with no
/// route beyond its bridge.
pub(crate) fn prepare_vm_cache() -> std::path::PathBuf {
    let cache = vm_cache();
    let out = Command::new("sh")
        .args(["-c", ". fleet/envs/vm.sh && vm_prepare \"$1\"", "sh"])
        .arg(&cache)
        .current_dir(workspace_root())
        .output()
        .expect("run vm_prepare");
    assert!(out.status.success(), "vm_prepare: {}", explain(&out));
    cache
}

/// Whether the table can run here: root, QEMU and its packages, xfsprogs.
pub(crate) fn possible() -> bool {
    need_root("--table seed (a network namespace, tmpfs, loop devices)")
        && [
            "qemu-system-x86_64",
            "busybox",
            "cpio",
            "depmod",
            "mkfs.xfs",
            "losetup",
        ]
        .iter()
        .all(|t| need_tool(t))
}

/// The column whose label is `label`, and its index.
pub(crate) fn column<'a>(m: &'a Value, label: &str) -> (usize, &'a Value) {
    m["columns"]
        .as_array()
        .and_then(|c| c.iter().enumerate().find(|(_, c)| c["key"] == label))
        .unwrap_or_else(|| panic!("no column {label} in {}", m["columns"]))
}

/// The `given` facts of the first begin record in the records file `path`.
pub(crate) fn given(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["type"] == "begin")
        .map(|r| r["info"]["given"].clone())
        .unwrap_or_else(|| panic!("no begin record in {}", path.display()))
}

/// The value of row (name, metric) in column `j`.
pub(crate) fn cell(m: &Value, name: &str, metric: &str, j: usize) -> f64 {
    m["rows"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["dims"]["name"] == name && r["dims"]["metric"] == metric)
        })
        .and_then(|r| r["cells"][j]["value"].as_f64())
        .unwrap_or_else(|| panic!("no value of {name} {metric} in column {j}"))
}

/// What a run of PID `run` made and must not leave: its namespace, mounts (tmpfs, xfs, the
/// LUN's FUSE file), loop devices over its files, those files in `dir` and `tmp`, and its
/// processes: QEMU (its arguments name `res`, `dir` or `tmp`), qemu-nbd and
/// qemu-storage-daemon (theirs name `dir` or `tmp`), tgtd (its control port is the run's
/// PID's) and the NFS server.
pub(crate) fn leftovers(run: u32, res: &Path, dir: &Path, tmp: &Path) -> Vec<String> {
    let mut left = Vec::new();
    let ns = format!("bmseed-{run}");
    if Path::new("/run/netns").join(&ns).exists() {
        left.push(format!("namespace {ns}"));
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let tmp_s = tmp.to_string_lossy().into_owned();
    for l in mounts.lines() {
        if l.split(' ')
            .nth(4)
            .is_some_and(|m| m.starts_with(&tmp_s) || m.ends_with(&format!("/{ns}")))
        {
            left.push(format!("a mount: {l}"));
        }
    }
    let loops = Command::new("losetup")
        .arg("-a")
        .output()
        .expect("losetup -a");
    for l in String::from_utf8_lossy(&loops.stdout).lines() {
        if l.contains(&format!("bmseed-{run}-")) || l.contains(&tmp_s) {
            left.push(format!("a loop device: {l}"));
        }
    }
    for d in [dir, tmp] {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            left.push(e.path().to_string_lossy().into_owned());
        }
    }
    let ps = Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .expect("ps");
    let dir_s = dir.to_string_lossy().into_owned();
    let res_s = res.to_string_lossy().into_owned();
    let tgtd = format!("tgtd -f -C {} ", run % 60000 + 1);
    for l in String::from_utf8_lossy(&ps.stdout).lines() {
        let ours = l.contains(&tmp_s) || l.contains(&dir_s) || l.contains(&res_s);
        if (["qemu-system", "qemu-nbd", "qemu-storage-daemon"]
            .iter()
            .any(|p| l.contains(p))
            && ours)
            || l.starts_with(&tgtd)
        {
            left.push(format!("a process: {l}"));
        }
    }
    left.extend(crate::seed_nfs::processes_of(tmp));
    left
}

/// Each guest names its stack and carries the clock ratio, in its begin records (the facts
/// block shows only the facts that differ, so a ratio the same in every guest is not there)
/// and in the matrix's facts where they differ (the bus, NIC and backing do).
fn check_guest_stacks(m: &Value, res: &Path) {
    for (label, bus, nic, backing) in [
        ("hvm/nas/net", "ide", "e1000", &["NFSv3 export"][..]),
        (
            "hvmp/nas/net",
            "virtio-blk",
            "virtio-net",
            &["NFSv3 export"],
        ),
        (
            "para/nas/net",
            "virtio-blk",
            "virtio-net",
            &["NFSv3 export"],
        ),
        ("hvm/file/ram", "ide", "e1000", &["tmpfs"]),
        (
            "para/lvm/san",
            "virtio-blk",
            "virtio-net",
            &["NBD export", "qemu-nbd"],
        ),
        ("para/file/ram", "virtio-blk", "virtio-net", &["tmpfs"]),
        (
            "para/lvm/iscsi",
            "virtio-blk",
            "virtio-net",
            &["iSCSI LUN 1", "tgtd"],
        ),
        (
            "para/xfs/iscsi",
            "virtio-blk",
            "virtio-net",
            &["xfs", "qemu-storage-daemon", "iSCSI LUN 1", "tgtd"],
        ),
        (
            "para/lvm/disc",
            "virtio-blk",
            "virtio-net",
            &["host_device"],
        ),
        ("para/xfs/disc", "virtio-blk", "virtio-net", &["xfs"]),
    ] {
        let stem = label.replace('/', "_");
        let g = given(&res.join(format!("{stem}.jsonl")));
        let text = |k: &str| g[k].as_str().unwrap_or("").to_string();
        assert!(text("disk_bus").starts_with(bus), "{label}: {g}");
        assert!(text("nic").starts_with(nic), "{label}: {g}");
        for b in backing {
            assert!(text("backing").contains(b), "{label}: no {b}: {g}");
        }
        for k in ["accel", "disk_cache", "seed_column"] {
            assert!(!text(k).is_empty(), "{label}: no {k}: {g}");
        }
        let ratio: f64 = text("guest_clock_ratio").parse().unwrap_or(0.0);
        assert!(
            ratio > 0.5 && ratio < 2.0,
            "{label}: clock ratio {ratio}: {g}"
        );
        let f = &column(m, label).1["facts"];
        assert_eq!(
            f["given.backing"].as_str(),
            Some(text("backing").as_str()),
            "{f}"
        );
        let clock = res.join(format!("{stem}.clock"));
        assert!(clock.exists(), "{label}: no {}", clock.display());
        crate::local_envs::no_negative_share(&res.join(format!("{stem}.jsonl")));
    }
}

/// The table's columns in the seed's order: a guest's label, or the host's (`dom0/`,
/// `bare/`: the file system of --dir follows).
const SEED_ORDER: [&str; 12] = [
    "hvm/nas/net",
    "hvmp/nas/net",
    "para/nas/net",
    "para/lvm/san",
    "hvm/file/ram",
    "para/file/ram",
    "para/lvm/iscsi",
    "para/xfs/iscsi",
    "para/lvm/disc",
    "para/xfs/disc",
    "dom0/",
    "bare/",
];

/// The keys of the JSON matrix `m`'s columns, in its order.
pub(crate) fn keys(m: &Value) -> Vec<&str> {
    m["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["key"].as_str())
        .collect()
}

/// The matrix has `order`'s columns in that order, and the seed's three header levels.
fn check_order(m: &Value, order: &[&str]) {
    let keys = keys(m);
    assert_eq!(keys.len(), order.len(), "{keys:?}");
    for (k, want) in keys.iter().zip(order) {
        let host = want.ends_with('/') && k.starts_with(want) && k.ends_with("/disc");
        assert!(host || k == want, "{keys:?} is not in the order {order:?}");
    }
    assert_eq!(
        m["levels"].as_array().map(Vec::len),
        Some(3),
        "{}",
        m["levels"]
    );
}

#[test]
fn seed_columns_name_their_stacks_and_emulated_devices_cost_on_the_same_backing() {
    if !possible() {
        return;
    }
    let (res, dir, tmp) = places();
    let child = start(
        res.path(),
        dir.path(),
        tmp.path(),
        &[
            "--table",
            "seed",
            "--runs",
            "5",
            "--only",
            "net,icmp,disk",
            "--disk-size",
            "16M",
        ],
    );
    let run = child.id();
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert!(out.status.success(), "{}", explain(&out));
    let m: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the JSON matrix: {e}: {}", explain(&out)));

    check_order(&m, &SEED_ORDER);
    crate::seed_rows::check_dom0(&m);
    check_guest_stacks(&m, res.path());
    crate::seed_nfs::check_nas_columns(res.path());
    let sda = column(&m, "hvm/file/ram").1["facts"]["block_stack"].to_string();
    assert!(sda.contains("sda") && sda.contains("sd"), "{sda}");

    crate::seed_rows::check_emulated_costs(res.path());
    let para = column(&m, "para/file/ram").0;
    assert!(
        leftovers(run, res.path(), dir.path(), tmp.path()).is_empty(),
        "{:?}",
        leftovers(run, res.path(), dir.path(), tmp.path())
    );

    crate::seed_rows::check_tap_against_user_mode(&m, para, dir.path(), tmp.path());
    empty_dir(tmp.path());
}

/// Runs the table's `columns` with small sizes, waits until `ready` says the point to
/// interrupt at has come (given what is alive and the results directory), sends `sig` and
/// checks the exit status (128 + sig) and that nothing is left.
fn interrupt_at(columns: &str, sig: i32, what: &str, ready: impl Fn(&[String], &Path) -> bool) {
    let (res, dir, tmp) = places();
    let args = ["--table", "seed", "--columns", columns, "--runs", "1"];
    let child = start(
        res.path(),
        dir.path(),
        tmp.path(),
        &[&args[..], &["--only", "net,disk", "--disk-size", "16M"]].concat(),
    );
    let run = child.id();
    let t0 = Instant::now();
    loop {
        let left = leftovers(run, res.path(), dir.path(), tmp.path());
        if ready(&left, res.path()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "{what}: the point did not come: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        testkit::signal::signal(run, sig),
        "{what}: signal {sig} to {run}"
    );
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert_eq!(
        out.status.code(),
        Some(128 + sig),
        "{what}: {}",
        explain(&out)
    );
    let left = leftovers(run, res.path(), dir.path(), tmp.path());
    assert!(left.is_empty(), "{what}: left behind: {left:?}");
}

/// Whether `left` (what a run has alive) holds a thing whose description starts with `kind`.
fn has(left: &[String], kind: &str) -> bool {
    left.iter().any(|l| l.starts_with(kind))
}

#[test]
fn interrupts_at_three_points_leave_nothing() {
    if !possible() {
        return;
    }
    // SIGTERM while a guest runs on its xfs on the iSCSI LUN (tgtd, qemu-storage-daemon's
    // FUSE export, the loop device over it, the xfs mount and QEMU all up).
    interrupt_at(
        "para/xfs/iscsi,bare",
        libc::SIGTERM,
        "a guest on xfs on iSCSI",
        |left, _| has(left, "a loop device") && has(left, "namespace") && has(left, "a process"),
    );
    // Ctrl-C while the host measures as dom0 with its idle guest beside it.
    interrupt_at(
        "dom0,bare",
        libc::SIGINT,
        "dom0 with its idle guest",
        |left, res| {
            has(left, "a process")
                && std::fs::read_dir(res)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("dom0_"))
        },
    );
    // A dropped session's SIGHUP as the run sets up: its namespace is there, no column has
    // started.
    interrupt_at(
        "para/file/ram,bare",
        libc::SIGHUP,
        "the setup",
        |left, _| has(left, "namespace"),
    );
}

#[test]
fn bad_table_options_are_named_before_anything_runs() {
    for (args, says) in [
        (
            &["--table", "nope"][..],
            "--table nope: the one table is seed",
        ),
        (&["--columns", "para/file/ram"][..], "give --table seed too"),
        (
            &["--table", "seed", "--columns", "para/tape/net"][..],
            "--columns: unknown column para/tape/net",
        ),
    ] {
        let out = Command::new("sh")
            .arg(workspace_root().join("fleet/local-envs"))
            .args(args)
            .env("BENCHMATRIX_BIN", bin_dir())
            .stdin(Stdio::null())
            .output()
            .expect("run fleet/local-envs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn given_facts_reach_the_begin_record_and_a_bad_one_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("dir");
    let target = dir.path().join("f");
    let run = |facts: &str| {
        Command::new(bin_dir().join("blkwrite"))
            .args(["-s", "1M", &target.to_string_lossy()])
            .env("BENCHMATRIX_FACTS", facts)
            .stdin(Stdio::null())
            .output()
            .expect("run blkwrite")
    };
    let out = run("disk_bus=ide (PIIX, ata_piix);nic=e1000");
    assert!(out.status.success(), "{}", explain(&out));
    let begin: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["type"] == "begin")
        .expect("a begin record");
    assert_eq!(begin["info"]["given"]["disk_bus"], "ide (PIIX, ata_piix)");
    assert_eq!(begin["info"]["given"]["nic"], "e1000");
    let out = run("Bus=ide");
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("BENCHMATRIX_FACTS: \"Bus\" is not a fact's name"),
        "{}",
        explain(&out)
    );
}

#[test]
fn the_kernel_workload_runs_in_the_guests_own_ram() {
    if !possible() || !need_tool("make") || !need_tool("xz") {
        return;
    }
    let (res, dir, tmp) = places();
    // A made-up kernel tree, where the guest sees it: its root is this machine's /usr, /etc
    // and /var (read-only over 9p), not /tmp.
    let src = tempfile::tempdir_in("/var/tmp").expect("src");
    let tarball = fake_tarball(src.path(), "linux", "linux-0.1.2", Filler::None);
    let child = start(
        res.path(),
        dir.path(),
        tmp.path(),
        &[
            "--table",
            "seed",
            "--columns",
            "para/file/ram",
            "--runs",
            "1",
            "--only",
            "kernel",
            "--",
            "--kernel-tarball",
            &tarball.to_string_lossy(),
            "--jobs",
            "2",
        ],
    );
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert!(out.status.success(), "{}", explain(&out));
    let text = std::fs::read_to_string(res.path().join("para_file_ram.jsonl")).expect("records");
    let records: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    for row in ["time tar xJf linux", "time make linux (tinyconfig)"] {
        let sums: Vec<&Value> = records
            .iter()
            .filter(|r| r["type"] == "summary" && r["name"] == row)
            .collect();
        assert_eq!(sums.len(), 1, "{row}: {text}");
        let s = sums[0];
        assert_eq!(s["status"], "ok", "{row}: {s}");
        // The guest's own RAM: a tmpfs in the guest, whose host name is the guest's.
        assert_eq!(s["tags"]["fs"], "tmpfs", "{row}: {s}");
        let host = s["host"].as_str().unwrap_or("");
        assert!(
            host.ends_with("para/file/ram") && host != me.trim(),
            "{row}: {s}"
        );
    }
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("4G"),
        "the guest gets 4G for the kernel: {}",
        explain(&out)
    );
}
