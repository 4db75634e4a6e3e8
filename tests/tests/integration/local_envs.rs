//! `fleet/local-envs` for real: the suite bare, in a limited container (25% of one CPU, a
//! 20 MiB/s write throttle, 1 GiB of memory) and in a QEMU guest (TCG here), collated; the
//! container's cgroup says the quota held it back and its CPU rows are slower, its O_DIRECT
//! write runs at the throttle, the guest's facts say qemu, virtio, its clocksource and its
//! clock's ratio to this machine's (its share between the tools is never negative) and its CPU rows
//! are marked worse, the facts that differ name the limits and the virtualization and
//! nothing that is the same, and nothing is left behind, also after a SIGHUP mid-run (two runs
//! at once: local_envs_together.rs). The run's token
//! is in no process's argv (bare and container), and the guest's job reads it into its
//! environment from a file of mode 0600.

use crate::local_envs_left::{container_processes, leftovers, listens, nothing_left};
use benchmatrix_tests::{bin_dir, empty_dir, explain, need_root, need_tool, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The throttle the test gives, bytes/s (`--write-bps 20M`).
const THROTTLE: f64 = 20.0 * 1048576.0;
/// The container's CPU quota, in CPUs (`--cpu-quota 25`).
const QUOTA: f64 = 0.25;

/// `fleet/local-envs ARGS` with the prebuilt tools, results in `res`, scratch in `tmp`; its
/// JSON matrix and its PID (which names what its container makes).
fn local_envs(res: &Path, tmp: &Path, args: &[&str]) -> (Value, u32) {
    let child = Command::new("sh")
        .arg(workspace_root().join("fleet/local-envs"))
        .args([
            "--results",
            &res.to_string_lossy(),
            "--dir",
            &tmp.to_string_lossy(),
        ])
        .args(["-f", "json", "--cache", &vm_cache().to_string_lossy()])
        .args([
            "--runs",
            "4",
            "--only",
            "net,icmp,cpu,disk",
            "--disk-size",
            "32M",
        ])
        .args(["--cpu-quota", "25", "--write-bps", "20M"])
        .args(args)
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fleet/local-envs");
    let pid = child.id();
    let out = child.wait_with_output().expect("wait for fleet/local-envs");
    assert!(out.status.success(), "fleet/local-envs: {}", explain(&out));
    let m = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the JSON matrix: {e}: {}", explain(&out)));
    (m, pid)
}

/// The guest's kernel and initramfs, kept between runs under the target directory.
fn vm_cache() -> std::path::PathBuf {
    testkit::release::target_dir().join("vm-cache")
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

/// The value of a row's cell `j`, in base units.
fn value(r: &Value, j: usize) -> f64 {
    r["cells"][j]["value"].as_f64().unwrap_or(f64::NAN)
}

/// The facts that set the container apart from bare: its limits, namespaces and container
/// (and the virtualization, which names the container first), nothing that is the same.
fn check_container_facts(m: &Value) {
    let (bare, boxed) = (&m["columns"][0]["facts"], &m["columns"][1]["facts"]);
    let mut differ: Vec<&str> = boxed
        .as_object()
        .expect("facts")
        .iter()
        .filter(|(k, v)| bare[k.as_str()] != **v)
        .map(|(k, _)| k.as_str())
        .collect();
    differ.sort_unstable();
    let mut want = vec![
        "container",
        "cpu_quota",
        "io_throttle",
        "memory_limit_bytes",
        "namespaces",
    ];
    if bare["virtualization"] != boxed["virtualization"] {
        want.push("virtualization");
    }
    // How busy the machine was, when a column's runs were: the machine's, not the container's.
    if boxed.get("load").is_some() && bare["load"] != boxed["load"] {
        want.push("load");
    }
    want.sort_unstable();
    assert_eq!(differ, want, "{boxed}");
    assert_eq!(boxed["cpu_quota"], "25000/100000");
    assert_eq!(boxed["memory_limit_bytes"], "1073741824");
    let throttle = boxed["io_throttle"].as_str().unwrap_or("");
    assert!(throttle.ends_with(" wbps=20971520"), "{throttle}");
    assert_eq!(boxed["container"], "benchmatrix-local-envs");
}

/// The facts block lists the quota, the throttle and the virtualization, and only facts
/// whose values are not the same in every column.
fn check_facts_block(m: &Value) {
    let columns = m["columns"].as_array().expect("columns");
    let keys = columns[0]["facts"].as_object().expect("facts");
    for want in ["cpu_quota", "io_throttle", "virtualization"] {
        assert!(keys.contains_key(want), "{want} not among {keys:?}");
    }
    for key in keys.keys() {
        let first = &columns[0]["facts"][key];
        assert!(
            columns.iter().any(|c| &c["facts"][key] != first),
            "{key} is the same in every column"
        );
    }
}

/// The fields of the container cgroup's cpu.stat, kept beside its records.
fn cpu_stat(res: &Path) -> std::collections::HashMap<String, u64> {
    let text = std::fs::read_to_string(res.join("container.cpu.stat"))
        .unwrap_or_else(|e| panic!("the container's cpu.stat: {e}"));
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The kernel's 1-minute load average (/proc/loadavg's first field).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The quota held the container back, by the cgroup's own account (periods throttled and
/// the time); its O_DIRECT write runs at the throttle; its CPU rows are slower than bare's
/// where the load (`busy`) left bare at least twice the quota's share of a CPU (under more,
/// bare is held back more than the container: the direction is then the load's).
fn check_container(m: &Value, res: &Path, busy: f64) {
    let stat = cpu_stat(res);
    let (periods, throttled) = (stat["nr_periods"], stat["nr_throttled"]);
    assert!(
        throttled > 0 && throttled <= periods,
        "throttled in {throttled} of {periods} periods: {stat:?}"
    );
    let held = stat
        .get("throttled_usec")
        .or_else(|| stat.get("throttled_time"))
        .copied()
        .unwrap_or(0);
    assert!(held > 0, "no time throttled: {stat:?}");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let bare_share = cpus / busy.max(cpus);
    if bare_share >= 2.0 * QUOTA {
        for metric in ["syscall_s", "clock_read_s"] {
            let r = row(m, "cpumem", metric);
            let (bare, boxed) = (value(r, 0), value(r, 1));
            assert!(boxed > bare, "{metric}: bare {bare}, container {boxed}");
        }
    } else {
        eprintln!(
            "local_envs: load {busy:.1} on {cpus} CPUs left bare {bare_share:.2} of a CPU, \
             under twice the container's {QUOTA}: the direction of the CPU rows is not checked"
        );
    }
    let direct = value(row(m, "disk write (O_DIRECT)", "throughput_bytes_per_s"), 1);
    assert!(
        (direct / THROTTLE - 1.0).abs() <= 0.10,
        "O_DIRECT write {direct} B/s under a {THROTTLE} B/s throttle"
    );
    check_container_facts(m);
}

/// The guest's blkwrite begin record, from its results file.
fn guest_begin(res: &Path) -> Value {
    let text = std::fs::read_to_string(res.join("vm.jsonl")).expect("the guest's records");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["type"] == "begin" && r["tool"] == "blkwrite")
        .expect("the guest's blkwrite begin record")
}

/// The guest: its column says qemu, its begin records its clocksource and a virtio disk,
/// and its emulated CPU's rows are marked worse (TCG runs about ten times slower). Where
/// bare's values were taken on a busy machine (collate counts them), their spread can hide
/// any difference: the guest's value is then only checked to be the higher.
fn check_vm(m: &Value, res: &Path) {
    assert_eq!(m["columns"][2]["facts"]["virtualization"], "qemu");
    for metric in ["syscall_s", "clock_read_s", "spawn_s"] {
        let r = row(m, "cpumem", metric);
        if r["cells"][0]["busy"].as_u64().unwrap_or(0) > 0 {
            let (bare, guest) = (value(r, 0), value(r, 2));
            eprintln!("local_envs: {metric}: bare's values taken busy, the verdict not checked");
            assert!(guest > bare, "{metric}: bare {bare}, guest {guest}");
            continue;
        }
        assert_eq!(
            r["cells"][2]["compare"]["verdict"], "worse",
            "{metric}: {}",
            r["cells"]
        );
    }
    let begin = guest_begin(res);
    let stack = begin["info"]["block_stack"].to_string();
    assert!(stack.contains("virtio_blk"), "{stack}");
    let clock = begin["info"]["clocksource"].as_str().unwrap_or("");
    assert!(!clock.is_empty(), "{begin}");
    assert_eq!(begin["info"]["vm"], "qemu", "{begin}");
    check_vm_clock(&begin, res);
    // A guest's state directory (its disk image among it) goes when it powers off.
    let runs: Vec<_> = std::fs::read_dir(vm_cache())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("run."))
        .map(|e| e.path())
        .collect();
    assert!(runs.is_empty(), "left behind: {runs:?}");
}

/// The guest's clock against this machine's: the ratio in its begin's given facts and over
/// the whole run in RESULTS/vm.clock, and collate --times gives its run no negative share
/// between the tools.
fn check_vm_clock(begin: &Value, res: &Path) {
    let given = begin["info"]["given"]["guest_clock_ratio"].as_str();
    let ratio: f64 = given.and_then(|r| r.parse().ok()).unwrap_or(0.0);
    assert!(ratio > 0.5 && ratio < 2.0, "the clock ratio: {begin}");
    let whole = std::fs::read_to_string(res.join("vm.clock")).unwrap_or_default();
    let whole: f64 = whole.trim().parse().unwrap_or(0.0);
    assert!(whole > 0.5 && whole < 2.0, "RESULTS/vm.clock: {whole}");
    no_negative_share(&res.join("vm.jsonl"));
}

/// collate --times gives the latest run in `file` no negative share between the tools.
pub(crate) fn no_negative_share(file: &Path) {
    let out = Command::new(bin_dir().join("collate"))
        .args(["--times", "--latest", "-f", "csv"])
        .arg(file)
        .output()
        .expect("collate --times");
    assert!(out.status.success(), "{}", explain(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for l in text.lines().skip(1) {
        let between: f64 = l
            .rsplit(',')
            .nth(1)
            .and_then(|f| f.parse().ok())
            .unwrap_or(-1.0);
        assert!(between >= 0.0, "a share between the tools: {l}\n{text}");
    }
}

/// Whether this machine can boot the guest (its packages: `.ci/run` installs them).
fn vm_possible() -> bool {
    ["qemu-system-x86_64", "busybox", "cpio", "depmod"]
        .iter()
        .all(|t| need_tool(t))
}

#[test]
fn bare_a_limited_container_and_a_guest_differ_by_what_makes_them_and_the_facts_say_why() {
    if !need_root("a container's cgroup and network namespace")
        || !["unshare", "nsenter", "ip", "findmnt", "ss"]
            .iter()
            .all(|t| need_tool(t))
    {
        return;
    }
    // Its figures compare timings: no other test's load may be in them.
    let _alone = testkit::alone();
    let with_vm = vm_possible();
    let envs = if with_vm {
        "bare,container,vm"
    } else {
        "bare,container"
    };
    let tmp = tempfile::tempdir_in("/var/tmp").expect("a scratch directory on a disk");
    let res = tempfile::tempdir().expect("results");
    let port = testkit::free_port().to_string();
    let before = load_average();
    let (m, pid) = local_envs(res.path(), tmp.path(), &["--envs", envs, "--port", &port]);
    let busy = before.max(load_average());
    let keys: Vec<&str> = m["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["key"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(keys.join(","), envs);
    check_container(&m, res.path(), busy);
    if with_vm {
        check_vm(&m, res.path());
        check_facts_block(&m);
    }
    assert!(
        leftovers(pid).is_empty(),
        "left behind: {:?}",
        leftovers(pid)
    );
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

/// The parent of each process, from /proc/PID/stat.
fn parents() -> std::collections::HashMap<u32, u32> {
    let mut m = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // The fields after the command's closing parenthesis: state, ppid, ...
        if let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
        {
            m.insert(pid, ppid);
        }
    }
    m
}

/// Adds the argv of every descendant of `root` to `argvs`, and the tokens in their
/// environments (BENCHMATRIX_TOKEN, NETPIPE_TOKEN) to `tokens`.
fn scan(root: u32, argvs: &mut Vec<String>, tokens: &mut std::collections::HashSet<String>) {
    let up = parents();
    for &pid in up.keys() {
        let mut p = pid;
        // Bounded by the depth of the process tree.
        for _ in 0..64 {
            if p == root || p <= 1 {
                break;
            }
            p = up.get(&p).copied().unwrap_or(0);
        }
        if p != root {
            continue;
        }
        let dir = std::path::PathBuf::from(format!("/proc/{pid}"));
        if let Ok(c) = std::fs::read(dir.join("cmdline")) {
            argvs.push(String::from_utf8_lossy(&c).replace('\0', " "));
        }
        for var in std::fs::read(dir.join("environ"))
            .unwrap_or_default()
            .split(|&b| b == 0)
        {
            let v = String::from_utf8_lossy(var);
            for name in ["BENCHMATRIX_TOKEN=", "NETPIPE_TOKEN="] {
                if let Some(t) = v.strip_prefix(name).filter(|t| !t.is_empty()) {
                    tokens.insert(t.to_string());
                }
            }
        }
    }
}

#[test]
fn the_run_token_is_in_no_process_argv() {
    // The container too where this machine can make one.
    let container = testkit::is_root()
        && ["unshare", "nsenter", "ip", "findmnt", "ss"]
            .iter()
            .all(|t| which(t));
    let envs = if container { "bare,container" } else { "bare" };
    let tmp = tempfile::tempdir_in("/var/tmp").expect("a scratch directory on a disk");
    let res = tempfile::tempdir().expect("results");
    let port = testkit::free_port().to_string();
    let mut child = Command::new("sh")
        .arg(workspace_root().join("fleet/local-envs"))
        .args(["--results", &res.path().to_string_lossy()])
        .args(["--dir", &tmp.path().to_string_lossy()])
        .args([
            "--envs", envs, "--port", &port, "--runs", "1", "--only", "net",
        ])
        .args(["--", "--net-time", "250ms"])
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp.path())
        .env_remove("BENCHMATRIX_TOKEN")
        .env_remove("NETPIPE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fleet/local-envs");
    let (mut argvs, mut tokens) = (Vec::new(), std::collections::HashSet::new());
    let started = std::time::Instant::now();
    // Bounded by the run's end and ten minutes.
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > std::time::Duration::from_secs(600) {
            let _ = child.kill();
            panic!("fleet/local-envs ran for ten minutes");
        }
        scan(child.id(), &mut argvs, &mut tokens);
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    assert!(status.success(), "fleet/local-envs --envs {envs}: {err}");
    assert_eq!(
        tokens.len(),
        1,
        "one run token in the processes' environments"
    );
    for t in &tokens {
        for a in &argvs {
            assert!(!a.contains(t.as_str()), "the token in an argv: {a}");
        }
        assert_eq!(t.len(), 32, "128 bits as hex: {t}");
    }
    assert!(
        argvs.iter().any(|a| a.contains("netpipe")),
        "the scan saw the run's netpipes: {argvs:?}"
    );
    assert!(
        // The launcher execs nsenter, which execs unshare at once: a scan sees either.
        !container
            || argvs
                .iter()
                .any(|a| a.contains("nsenter") || a.starts_with("unshare --mount")),
        "the scan saw the container's launcher: {argvs:?}"
    );
    let run = child.id();
    assert!(
        leftovers(run).is_empty(),
        "left behind: {:?}",
        leftovers(run)
    );
}

/// Whether `tool` is on PATH (without the skip line: the test runs without it too).
fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).exists()))
}

#[test]
fn the_guests_job_gives_the_token_in_its_environment_from_a_file_of_its_owner() {
    // vm_run's job, as the guest runs it (vm_boot shows it instead of booting).
    let cache = tempfile::tempdir().expect("cache");
    let token = "guest-token-0123456789abcdef";
    let out = Command::new("sh")
        .arg("-c")
        .arg(
            r#". "$1/fleet/envs/vm.sh"
vm_boot() { stat -c %a "$vm_state/token"; cat "$vm_state/token"; echo; cat "$vm_state/job.sh"; cat "$vm_state"/argv/*; rm -rf "$vm_state"; }
vm_run "$2" /repo /bin vm /res 5311 "$3" -- --runs 1"#,
        )
        .arg("sh")
        .arg(workspace_root())
        .arg(cache.path())
        .arg(token)
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    assert!(out.status.success(), "{}", explain(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("600"), "the token file's mode: {text}");
    assert_eq!(lines.next(), Some(token), "the token file: {text}");
    let job: String = lines.collect::<Vec<&str>>().join("\n");
    assert!(job.contains("export BENCHMATRIX_TOKEN"), "{text}");
    assert!(!job.contains(token) && !job.contains("--token"), "{job}");
}

#[test]
fn sighup_mid_run_leaves_no_namespace_cgroup_container_or_listener() {
    if !need_root("a container's cgroup and network namespace")
        || !["unshare", "nsenter", "ip", "findmnt", "ss"]
            .iter()
            .all(|t| need_tool(t))
    {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").expect("a scratch directory on a disk");
    let res = tempfile::tempdir().expect("results");
    let port = testkit::free_port();
    let mut c = Command::new("sh");
    c.arg(workspace_root().join("fleet/local-envs"))
        .args([
            "--envs",
            "container",
            "--results",
            &res.path().to_string_lossy(),
        ])
        .args([
            "--dir",
            &tmp.path().to_string_lossy(),
            "--port",
            &port.to_string(),
        ])
        .args(["--runs", "2", "--only", "cpu"])
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmp.path());
    let run = testkit::Captured::start(c.stdin(Stdio::null()));
    // The suite runs in the container once its records begin.
    let records = res.path().join("container.jsonl");
    let started = std::time::Instant::now();
    let begun =
        || std::fs::read_to_string(&records).is_ok_and(|t| t.contains("\"type\":\"begin\""));
    while !begun() && started.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(begun(), "the container's suite never began");
    let pid = run.pid();
    assert!(!leftovers(pid).is_empty() && !container_processes(pid).is_empty());
    run.signal(libc::SIGHUP);
    let (st, _, err) = run.wait_output(std::time::Duration::from_secs(60));
    assert_eq!(st.code(), Some(129), "{st}: {err}");
    nothing_left(pid);
    assert!(!listens(port) && !listens(port + 1), "a listener is left");
    empty_dir(tmp.path());
}
