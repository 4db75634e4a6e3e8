//! The fleet end to end: fleet/playbook.yml driven by a real ansible-playbook over real ssh
//! to three hosts (network namespaces on one bridge, each with an sshd of its own), one of
//! them behind `tc tbf`, a lab host that makes a part of the seed's table
//! (`benchmatrix_table=seed`: fleet/local-envs --table seed over ssh, a TCG guest), and one
//! whose sshd is stopped. Each live host gets a column, the
//! shaped one's throughput is its link's rate, nothing is left listening or running on any
//! host, and the dead host costs only its column: the play names it and exits non-zero.
//! ansible-playbook runs with Ansible's defaults, as a user's controller has them (shared ssh
//! connections that persist, a terminal per task), the test's inventory and keys aside.

use benchmatrix_tests::suite::listening;
use benchmatrix_tests::wiki::{parse_wiki, split_title};
use benchmatrix_tests::{
    bin_dir, decode, explain, file_names, median, need_root, need_tool, ok, path_str as s, run,
    workspace_root,
};
use measure::Kind;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::{Bridge, Captured, NetPair, Spawned};

/// The shaped host's link rate, in tc's syntax and in bits per second: low enough that a
/// busy machine's scheduling does not leave the link idle.
const RATE: (&str, f64) = ("50mbit", 50e6);
/// What a TCP transfer gets from a shaped Ethernet link: tbf counts whole frames (1514 bytes
/// for 1448 of payload with TCP timestamps).
const GOODPUT: f64 = 1448.0 / 1514.0;
/// The hosts: inventory name, bridge host index, peer, label. Host 0 of the bridge is the
/// controller; `dead` has a namespace and an address but its sshd is stopped.
const HOSTS: &[(&str, usize, Option<&str>, &str)] = &[
    ("h1", 1, Some("h2"), "lan/h1"),
    ("h2", 2, Some("h1"), "lan/h2"),
    ("shaped", 3, Some("h1"), "tbf/shaped"),
    ("lab", 4, None, "lab"),
    ("dead", 5, None, "lan/dead"),
];
/// The bridge index of the host behind tbf.
const SHAPED: usize = 3;
/// The host that makes the seed's table (`benchmatrix_table=seed`): a part of it, small.
const LAB: &str = "lab";
/// The bridge index of the host whose sshd is stopped.
const DEAD: usize = 5;
/// The marker line the README puts before the fleet's command, which this test runs.
const README_MARK: &str = "<!-- tests/tests/integration/fleet.rs runs this command -->";

/// sshd's privilege separation folder, which its package makes at boot: made when missing,
/// and then removed on drop (after the daemons, declared later, have ended).
struct PrivsepDir(bool);

impl PrivsepDir {
    const PATH: &str = "/run/sshd";

    fn make() -> PrivsepDir {
        let made = !Path::new(Self::PATH).exists();
        if made {
            std::fs::create_dir(Self::PATH).expect("/run/sshd");
        }
        PrivsepDir(made)
    }
}

impl Drop for PrivsepDir {
    fn drop(&mut self) {
        if self.0 {
            let _ = std::fs::remove_dir(Self::PATH);
        }
    }
}

/// The ssh key pair `name` (ed25519, no passphrase) made in `dir`; returns the private key.
fn keygen(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    ok(
        &run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)),
        "ssh-keygen",
    );
    key
}

/// Starts an sshd of its own in namespace `ns` on `addr`: its own host key, config and pid
/// file in `dir`, key authentication only (the keys in `authorized`); waits until it listens.
/// Returns it with its host key line for known_hosts.
fn start_sshd(
    sshd: &Path,
    ns: &str,
    addr: &str,
    dir: &Path,
    authorized: &Path,
) -> (Spawned, String) {
    let host_key = keygen(dir, "ssh_host_ed25519_key");
    let config = dir.join("sshd_config");
    let text = format!(
        "ListenAddress {addr}\nPort 22\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
         PermitRootLogin prohibit-password\nPubkeyAuthentication yes\nPasswordAuthentication no\n\
         KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
         Subsystem sftp internal-sftp\nLogLevel ERROR\n",
        s(&host_key),
        s(&dir.join("sshd.pid")),
        s(authorized),
    );
    std::fs::write(&config, text).expect("sshd_config");
    let log = File::create(dir.join("sshd.log")).expect("sshd.log");
    let mut d = Spawned::start(
        NetPair::exec(ns, sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stderr(log),
    );
    d.wait_listening(22, Duration::from_secs(10));
    let public = std::fs::read_to_string(host_key.with_extension("pub")).expect("host key");
    let mut words = public.split_whitespace();
    let line = format!(
        "{addr} {} {}",
        words.next().unwrap_or(""),
        words.next().unwrap_or("")
    );
    (d, line)
}

/// The inventory of the test: each host's address, peer, label and own benchmatrix_dir under
/// `tmp`; ssh with the client key and the hosts' own host keys, and otherwise as Ansible sets
/// it up (a shared connection per host that persists after the play: [`Masters`]).
fn inventory(tmp: &Path, key: &Path, known: &Path) -> String {
    let mut text = String::from("[fleet]\n");
    for (name, i, peer, label) in HOSTS {
        text += &format!(
            "{name} ansible_host={} benchmatrix_dir={} benchmatrix_label={label}",
            Bridge::addr(*i),
            s(&tmp.join(name))
        );
        if let Some(p) = peer {
            text += &format!(" benchmatrix_peer={p}");
        }
        if *name == LAB {
            let disk = tmp.join("lab disk");
            std::fs::create_dir_all(&disk).expect("the lab's --dir");
            // The lab's namespace has no route to fetch the guest's kernel: made here first.
            let cache = crate::seed_table::prepare_vm_cache();
            text += &format!(
                " benchmatrix_table=seed benchmatrix_columns=para/file/ram,bare \
                 benchmatrix_vm_disk_size=256M benchmatrix_table_dir='{}' \
                 benchmatrix_table_args='--cache {} --runs 1 --only net --disk-size 16M'",
                s(&disk),
                s(&cache)
            );
        }
        text.push('\n');
    }
    text += &format!(
        "\n[fleet:vars]\nansible_user=root\nansible_ssh_private_key_file={}\n\
         ansible_ssh_common_args='-o UserKnownHostsFile={} -o StrictHostKeyChecking=yes \
         -o IdentitiesOnly=yes'\n\
         ansible_python_interpreter=/usr/bin/python3\n\
         benchmatrix_args='--only net,icmp --runs 3 --net-time 1s'\n",
        s(key),
        s(known)
    );
    text
}

/// The README's command line (the one line of the sh block after [`README_MARK`], also in
/// fleet/README.md), its inventory the test's.
fn readme_command(inventory: &Path) -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README");
    let line = readme
        .split_once(README_MARK)
        .and_then(|(_, rest)| rest.split_once("```sh\n"))
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(block, _)| block)
        .expect("the fleet's command in README.md");
    assert_eq!(line.lines().count(), 1, "one command: {line}");
    let fleet = std::fs::read_to_string(workspace_root().join("fleet/README.md")).expect("fleet");
    assert!(fleet.contains(line), "fleet/README.md runs {line}");
    line.split_whitespace()
        .map(|w| match w {
            "fleet/inventory.ini" => s(inventory).to_string(),
            w => w.to_string(),
        })
        .collect()
}

/// The ssh masters of the play: Ansible's defaults share one connection per host
/// (ControlMaster=auto) and keep it for 60 s after the play (ControlPersist), its socket in
/// `~/.ansible/cp` of the play's HOME. Each is asked to exit through its socket
/// (`ssh -O exit`), at [`Masters::end`] and on drop, when the test fails too.
struct Masters(PathBuf);

impl Masters {
    /// Asks each master to exit; how many there were.
    fn end(&self) -> usize {
        let socks: Vec<PathBuf> = std::fs::read_dir(&self.0)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        for sock in &socks {
            let _ = Command::new("ssh")
                .arg("-o")
                .arg(format!("ControlPath={}", s(sock)))
                .args(["-O", "exit", "fleet-host"])
                .output();
        }
        socks.len()
    }
}

impl Drop for Masters {
    fn drop(&mut self) {
        self.end();
    }
}

/// Runs the README's command from the controller's namespace `ns` in the repository's root,
/// with the results in `tmp/results` (not the repository's), bounded in time, and with
/// Ansible's defaults: HOME and ANSIBLE_CONFIG (an empty one) keep the machine's own user
/// settings out, and change nothing of ssh. Its status and output.
fn run_playbook(ns: &str, tmp: &Path, inventory: &Path) -> (std::process::ExitStatus, String) {
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(tmp.join("ansible.cfg"), "[defaults]\n").expect("ansible.cfg");
    let argv = readme_command(inventory);
    let mut c = NetPair::exec(ns, &argv[0]);
    c.args(&argv[1..])
        .arg("-e")
        .arg(format!("benchmatrix_results={}", s(&tmp.join("results"))))
        .current_dir(workspace_root())
        .env("HOME", &home)
        .env("LC_ALL", "C.UTF-8")
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("ANSIBLE_CONFIG", tmp.join("ansible.cfg"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCAL_TEMP", tmp.join("ansible-local"))
        .env("ANSIBLE_REMOTE_TMP", tmp.join("ansible-remote"));
    let (st, out, err) = Captured::start(&mut c).wait_output(Duration::from_secs(600));
    (st, format!("{out}\n{err}"))
}

/// Waits (at most 10 s: an ssh session ends just after its client) until the only process
/// in namespace `ns` is `pid` (its sshd, or none when `pid` is None) and returns the others.
fn others_in(ns: &str, pid: Option<u32>) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let out = run(Command::new("ip").args(["netns", "pids", ns]));
        let others: Vec<u32> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter(|p| Some(*p) != pid)
            .collect();
        if others.is_empty() || Instant::now() > end {
            return others;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The median throughput, in bits per second, of the samples of row `name` in `file` (the
/// matrix's figure: one transfer slowed down by a busy machine does not move it).
fn throughput(file: &Path, name: &str) -> f64 {
    let recs = decode(&std::fs::read_to_string(file).expect("the host's results"));
    let v: Vec<f64> = recs
        .iter()
        .filter(|r| r.kind == Kind::Sample && r.name == name)
        .filter_map(|r| r.value("throughput_bits_per_s"))
        .collect();
    assert_eq!(v.len(), 3, "{name} in {}: three transfers", file.display());
    eprintln!("{name} in {}: {v:?} b/s", file.display());
    median(&v)
}

/// Why the runs in `file` were on a busy machine, by their begin records (a load average or
/// tasks runnable besides the tool above the CPUs, as collate marks them), or None.
fn busy(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["type"] == "begin")
        .find_map(|r| {
            let info = &r["info"];
            let cpus = info["cpu_count"].as_f64()?;
            let load = info["load_1m"].as_f64().unwrap_or(0.0);
            let others = info["procs_running_count"].as_f64().unwrap_or(1.0) - 1.0;
            (load > cpus || others > cpus)
                .then(|| format!("load {load}, {others} other tasks runnable, {cpus} CPUs"))
        })
}

/// The results: a file per live host, none for the dead one, the matrices with a column per
/// live host, and the shaped host's throughput at its link's rate both ways.
fn check_results(res: &Path) {
    let files = file_names(res);
    let want = ["h1.jsonl", "h2.jsonl", LAB, "matrix.dokuwiki.txt"];
    assert_eq!(files, [&want[..], &["matrix.txt", "shaped.jsonl"]].concat());
    check_table(&res.join(LAB));
    let text = std::fs::read_to_string(res.join("matrix.dokuwiki.txt")).expect("the matrix");
    let wiki = parse_wiki(&text);
    assert_eq!(wiki.levels.last().map(Vec::len), Some(3), "{text}");
    let mut last = wiki.levels.last().cloned().unwrap_or_default();
    last.sort();
    assert_eq!(last, ["h1", "h2", "shaped"], "{text}");
    let rows: Vec<&str> = wiki.rows.iter().map(|(t, _)| split_title(t).0).collect();
    for name in [
        "network throughput this->peer",
        "network throughput peer->this",
    ] {
        assert!(rows.contains(&name), "{name} in\n{text}");
        let want = RATE.1 * GOODPUT;
        let got = throughput(&res.join("shaped.jsonl"), name);
        eprintln!(
            "shaped {name}: {:.2} Mb/s, want {:.2}",
            got / 1e6,
            want / 1e6
        );
        // The shaper caps the rate whatever the machine does; reaching it needs the CPU, which
        // a busy machine (by the run's own begin records) may not give.
        assert!(
            got < want * 1.05,
            "{name}: {got} b/s, over the link's {want}"
        );
        match busy(&res.join("shaped.jsonl")) {
            None => assert!(
                got > want * 0.95,
                "{name}: {got} b/s, want {want} on a machine that was not busy"
            ),
            Some(why) => eprintln!("shaped {name}: below the rate not checked: {why}"),
        }
        let free = throughput(&res.join("h1.jsonl"), name);
        assert!(free > RATE.1 * 1.5, "h1 is not shaped: {free} b/s");
    }
    let matrix = std::fs::read_to_string(res.join("matrix.txt")).expect("matrix.txt");
    assert!(matrix.contains("network throughput this->peer"), "{matrix}");
}

/// The lab host's seed table, made over ssh: its records in a folder of its own, not in the
/// fleet's matrix, and its matrix in the seed's layout with the columns it was asked for.
fn check_table(lab: &Path) {
    let files = file_names(lab);
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        files[0].starts_with("bare_") && files[0].ends_with("_disc.jsonl"),
        "{files:?}"
    );
    assert_eq!(files[1..], ["matrix.dokuwiki.txt", "para_file_ram.jsonl"]);
    let text = std::fs::read_to_string(lab.join("matrix.dokuwiki.txt")).expect("the table");
    let wiki = parse_wiki(&text);
    assert_eq!(wiki.levels.len(), 3, "{text}");
    assert_eq!(wiki.levels[0], ["para", "bare"], "{text}");
    assert_eq!(wiki.levels[2], ["ram", "disc"], "{text}");
    let rows: Vec<&str> = wiki.rows.iter().map(|(t, _)| split_title(t).0).collect();
    assert!(rows.contains(&"network throughput this->peer"), "{text}");
}

#[test]
fn playbook_measures_three_hosts_over_ssh_and_a_dead_one_costs_only_its_column() {
    if !need_root("the fleet (namespaces, a bridge, sshd, tc)") {
        return;
    }
    if !["ansible-playbook", "ssh", "ssh-keygen", "ip", "tc"]
        .iter()
        .all(|t| need_tool(t))
    {
        return;
    }
    let sshd = PathBuf::from("/usr/sbin/sshd");
    if !sshd.exists() {
        testkit::skip("sshd is not installed (openssh-server)");
        return;
    }
    let _privsep = PrivsepDir::make();
    let tmp = tempfile::tempdir().expect("tempdir");
    let net = Bridge::new(HOSTS.len() + 1).expect("namespaces on a bridge");
    net.shape(SHAPED, RATE.0).expect("tc tbf");
    let key = keygen(tmp.path(), "id_ed25519");
    let authorized = tmp.path().join("authorized_keys");
    std::fs::copy(key.with_extension("pub"), &authorized).expect("authorized_keys");
    let mut daemons = Vec::new();
    let mut known = String::new();
    for (name, i, _, _) in HOSTS {
        let dir = tmp.path().join(format!("sshd-{name}"));
        std::fs::create_dir(&dir).expect("sshd dir");
        let (d, line) = start_sshd(&sshd, &net.hosts[*i], &Bridge::addr(*i), &dir, &authorized);
        daemons.push(d);
        known += &line;
        known.push('\n');
    }
    // The dead host: its namespace and address stay, its sshd is stopped (by its pid).
    let mut dead = daemons.pop().expect("the dead host's sshd");
    assert!(
        dead.signal(libc::SIGTERM),
        "SIGTERM to the dead host's sshd"
    );
    dead.wait(Duration::from_secs(10));
    let known_file = tmp.path().join("known_hosts");
    std::fs::write(&known_file, known).expect("known_hosts");
    let inv = tmp.path().join("inventory.ini");
    std::fs::write(&inv, inventory(tmp.path(), &key, &known_file)).expect("inventory");

    let masters = Masters(tmp.path().join("home/.ansible/cp"));
    let (st, out) = run_playbook(&net.hosts[0], tmp.path(), &inv);
    let shared = masters.end();
    let _shown = ShownOnFailure::play(tmp.path(), &out);
    assert!(
        shared > 0,
        "Ansible's defaults share ssh connections (the play's output follows)"
    );
    assert!(
        !st.success() && out.contains("benchmatrix failed on dead "),
        "the dead host fails the play, which names it (its output follows)"
    );
    check_results(&tmp.path().join("results"));

    check_serve_logs(tmp.path());
    for ((name, i, _, _), d) in HOSTS.iter().zip(&daemons) {
        let ns = &net.hosts[*i];
        assert_eq!(listening(ns), [22], "only sshd listens on {name}");
        assert_eq!(
            others_in(ns, Some(d.pid())),
            [0u32; 0],
            "processes left on {name}"
        );
    }
    assert_eq!(
        others_in(&net.hosts[0], None),
        [0u32; 0],
        "left on the controller"
    );
    assert_eq!(listening(&net.hosts[DEAD]), [0u16; 0], "the dead host");
    drop(daemons);
    check_example_inventory(tmp.path());
}

/// Text printed when the test fails, after the failure's message (a drop while panicking):
/// the play's output is long, and a report that keeps the first lines keeps the message.
struct ShownOnFailure(String);

impl ShownOnFailure {
    /// The play's output, each sshd's log (an sshd that refused a connection says why), each
    /// peer's serve.log, and the records that hold an error (a failed step says why there).
    fn play(tmp: &Path, out: &str) -> ShownOnFailure {
        let mut shown = out.to_string();
        for (name, _, _, _) in HOSTS {
            let log = std::fs::read_to_string(tmp.join(format!("sshd-{name}/sshd.log")));
            shown += &format!("\nsshd on {name}: {}", log.unwrap_or_default());
            let log = std::fs::read_to_string(tmp.join(name).join("serve.log"));
            shown += &format!("\nserve.log on {name}: {}", log.unwrap_or_default());
        }
        let records = std::fs::read_dir(tmp.join("results")).into_iter().flatten();
        for f in records.flatten().map(|e| e.path()) {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for l in text.lines().filter(|l| l.contains("\"error\":")) {
                shown += &format!("\n{}: {l}", f.display());
            }
        }
        ShownOnFailure(shown)
    }
}

impl Drop for ShownOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.0);
        }
    }
}

/// Each peer's serve.log says its serving stopped, and holds no token: the run's token
/// reached the peer in its environment, and only a terminal is shown it.
fn check_serve_logs(tmp: &Path) {
    for peer in ["h1", "h2"] {
        let log = std::fs::read_to_string(tmp.join(peer).join("serve.log"));
        let log = log.expect("the peer's serve.log");
        assert!(
            log.contains("stopped serving: no listener left"),
            "{peer}: {log}"
        );
        // The run's token reached the peer in its environment: the log says so, and holds
        // no token (only a terminal is shown it).
        assert!(
            log.contains("BENCHMATRIX_TOKEN=(the token this --serve was given)"),
            "{peer}: {log}"
        );
    }
}

/// fleet/inventory.example.ini is an inventory Ansible reads, whose hosts set the variables
/// the playbook reads.
fn check_example_inventory(tmp: &Path) {
    let out = run(Command::new("ansible-inventory")
        .args(["--list", "-i"])
        .arg(workspace_root().join("fleet/inventory.example.ini"))
        .env("HOME", tmp.join("home"))
        .env("LC_ALL", "C.UTF-8")
        .env("ANSIBLE_CONFIG", tmp.join("ansible.cfg")));
    ok(&out, "ansible-inventory --list of the example");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let hosts = v["_meta"]["hostvars"].as_object().expect("hostvars");
    for var in ["benchmatrix_peer", "benchmatrix_label", "benchmatrix_dir"] {
        assert!(
            hosts.values().any(|h| h.get(var).is_some()),
            "{var} in the example: {}",
            explain(&out)
        );
    }
}
