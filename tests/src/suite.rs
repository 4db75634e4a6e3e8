//! Runs the `./benchmatrix` script the way its tests need (prebuilt tools, a scratch TMPDIR,
//! optionally as another host) and checks the records of one of its steps.

use crate::{bin_dir, run, workspace_root};
use measure::{Kind, Record, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The script's path in the workspace.
pub fn script_path() -> PathBuf {
    workspace_root().join("benchmatrix")
}

/// Sets up `c` to run the script as its tests do: in `cwd`, scratch under `tmpdir`, with the
/// harness's prebuilt tools, no BENCH_LABEL from the caller, and no input.
pub fn script_env<'a>(c: &'a mut Command, cwd: &Path, tmpdir: &Path) -> &'a mut Command {
    c.current_dir(cwd)
        .env("BENCHMATRIX_BIN", bin_dir())
        .env("TMPDIR", tmpdir)
        .env_remove("BENCH_LABEL")
        .env_remove("BENCHMATRIX_TOKEN")
        .env_remove("NETPIPE_TOKEN")
        .env_remove("BENCHMATRIX_INVOCATION")
        .stdin(Stdio::null())
}

/// `sh ./benchmatrix ARGS` in `cwd`, scratch under `tmpdir`, with prebuilt tools, its output
/// piped; `wrap` is a command prefix (`ip netns exec NS`, [`OTHER_HOST`]) or empty.
pub fn script(cwd: &Path, tmpdir: &Path, wrap: &[&str], args: &[&str]) -> Output {
    let mut c = match wrap.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg("sh");
            c
        }
        None => Command::new("sh"),
    };
    c.arg(script_path()).args(args);
    run(script_env(&mut c, cwd, tmpdir))
}

/// `arg` quoted for sh.
fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

/// A command that runs `sh ./benchmatrix ARGS` on a terminal of its own: `script` gives it a
/// pty for its stdin, stdout and stderr, and copies what that terminal shows to its own
/// stdout. The environment is [`script_env`]'s.
pub fn script_on_pty(cwd: &Path, tmpdir: &Path, args: &[&str]) -> Command {
    let path = script_path();
    let line: Vec<String> = ["sh", crate::path_str(&path)]
        .iter()
        .chain(args)
        .map(|a| sh_quote(a))
        .collect();
    let mut c = Command::new("script");
    c.args(["-qec", &line.join(" "), "/dev/null"])
        .env("SHELL", "/bin/sh");
    script_env(&mut c, cwd, tmpdir);
    c
}

/// What a terminal showed (`script`'s stdout), with its CR LF line ends made LF.
pub fn terminal_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

/// A prefix that runs the script as another machine: its own UTS namespace and host name.
pub const OTHER_HOST: &[&str] = &[
    "unshare",
    "--uts",
    "--",
    "sh",
    "-c",
    "hostname \"$0\" && exec \"$@\"",
    "bm-other-host",
];

/// The summaries named `name` of `tool` (one per invocation: a keep-open listener serves
/// several transfers in one, a connecting side runs once per transfer), each checked ok and
/// with its begin record; the samples of all of them.
pub fn step<'a>(recs: &'a [Record], tool: &str, name: &str) -> Vec<&'a Record> {
    let sums: Vec<&Record> = recs
        .iter()
        .filter(|r| r.kind == Kind::Summary && r.tool == tool && r.name == name)
        .collect();
    assert!(!sums.is_empty(), "{name}: a {tool} run");
    for sum in &sums {
        assert_eq!(sum.status, Some(Status::Ok), "{name}: {}", sum.to_line());
        assert!(
            recs.iter()
                .any(|r| r.kind == Kind::Begin && r.run == sum.run),
            "{name}: a begin record"
        );
    }
    let samples: Vec<&Record> = recs
        .iter()
        .filter(|r| r.kind == Kind::Sample && sums.iter().any(|s| s.run == r.run))
        .collect();
    assert!(!samples.is_empty(), "{name}: samples");
    samples
}

/// Checks the peer tag of every record of the run named `name`.
pub fn peer_tag(recs: &[Record], name: &str, peer: &str) {
    for r in recs.iter().filter(|r| r.name == name) {
        assert_eq!(
            r.tags.get("peer").map(String::as_str),
            Some(peer),
            "{}",
            r.to_line()
        );
    }
}

/// Makes the named folders under `root`, in order.
pub fn folders<const N: usize>(root: &Path, names: [&str; N]) -> [PathBuf; N] {
    names.map(|d| {
        let p = root.join(d);
        if let Err(e) = std::fs::create_dir(&p) {
            panic!("cannot make {}: {e}", p.display());
        }
        p
    })
}

/// The script's network step on loopback, which any user can run: fresh folders work, tmp
/// and results under `root` (returned in that order), `--only only`, two 1 s transfers on a
/// free port, the results into the results folder, `--label label`, then `extra`.
pub fn loopback_run(
    root: &Path,
    only: &str,
    label: &str,
    extra: &[&str],
) -> ([PathBuf; 3], Output) {
    let [work, scratch, res] = folders(root, ["work", "tmp", "results"]);
    let port = testkit::free_port().to_string();
    let net = [
        "--only",
        only,
        "--net-time",
        "1s",
        "--runs",
        "2",
        "--port",
        &port,
        "--results",
        crate::path_str(&res),
        "--label",
        label,
    ];
    let out = script(&work, &scratch, &[], &[&net[..], extra].concat());
    ([work, scratch, res], out)
}

/// The TCP ports something listens on in network namespace `ns` (its /proc/net/tcp and tcp6),
/// sorted, each once.
pub fn listening(ns: &str) -> Vec<u16> {
    let out = run(Command::new("ip").args([
        "netns",
        "exec",
        ns,
        "cat",
        "/proc/net/tcp",
        "/proc/net/tcp6",
    ]));
    let mut ports: Vec<u16> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let port = cols.get(1)?.rsplit_once(':')?.1;
            (cols.get(3) == Some(&"0A")).then(|| u16::from_str_radix(port, 16).ok())?
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}
