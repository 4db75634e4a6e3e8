//! The seed's own commands, each run as written and again with the word replaced by the
//! benchmatrix tool, comparing what a person reads (the shape of the lines: numbers aside):
//! `dd ... oflag=direct conv=fsync` and `blkwrite` with the same operands, `/usr/bin/time -v`
//! and `time -p` and `timecmd`, `ping -D` and `pingrt`, and `dd | nc` into `nc -l` and into
//! `netpipe recv --listen` (nc hears nothing back from either).

use std::process::{Command, Stdio};
use testkit::shape;

/// What `program args` printed: (exit code, stdout, stderr).
fn run(program: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn dd_and_blkwrite() {
    if !testkit::need_tool("dd") {
        return;
    }
    let d = tempfile::tempdir_in(testkit::release::target_dir()).expect("tempdir");
    let ops = [
        "if=/dev/zero",
        "bs=64M",
        "count=4",
        "oflag=direct",
        "conv=fsync",
    ];
    let mut outs = Vec::new();
    for (program, file) in [("dd", "dd.out"), (testkit::tool("blkwrite"), "bw.out")] {
        let of = format!("of={}", d.path().join(file).display());
        let mut args: Vec<&str> = ops.to_vec();
        args.push(&of);
        let (code, out, err) = run(program, &args);
        assert_eq!(code, 0, "{program}: {err}");
        let len = std::fs::metadata(d.path().join(file))
            .expect("written")
            .len();
        outs.push((out, err, len));
    }
    let ((dout, derr, dlen), (bout, berr, blen)) = (&outs[0], &outs[1]);
    assert_eq!(
        shape::lines(berr),
        shape::lines(derr),
        "{berr}\nagainst dd's\n{derr}"
    );
    assert_eq!((*dlen, *blen), (256 << 20, 256 << 20));
    // dd's stdout is empty; blkwrite's records go where they always go (a pipe here).
    assert!(dout.is_empty());
    assert!(bout.lines().all(|l| l.starts_with("{\"schema\"")) && bout.lines().count() >= 3);
}

#[test]
fn time_and_timecmd() {
    if !std::path::Path::new("/usr/bin/time").is_file() {
        testkit::skip("GNU time is not installed at /usr/bin/time");
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    let rec = d.path().join("r.jsonl");
    let rec = rec.to_str().expect("utf-8");
    for flags in [&["-v"][..], &["-p"], &["-f", "%e %M"]] {
        let mut a: Vec<&str> = flags.to_vec();
        a.extend(["tar", "cf", "/dev/null", "Cargo.toml"]);
        let (tc, _, terr) = run("/usr/bin/time", &a);
        let mut b = vec!["--records", rec];
        b.extend(&a);
        let (oc, _, oerr) = run(testkit::tool("timecmd"), &b);
        assert_eq!((oc, tc), (0, 0), "{oerr}\n{terr}");
        assert_eq!(
            shape::lines(&oerr),
            shape::lines(&terr),
            "{a:?}:\n{oerr}\nagainst time's\n{terr}"
        );
    }
}

#[test]
fn ping_and_pingrt() {
    if !testkit::need_root("ping's raw socket beside pingrt's")
        || !testkit::need_tool("ping")
        || !testkit::need_tool("script")
    {
        return;
    }
    let (code, ping, err) = run("ping", &["-D", "-c", "3", "-i", "0.2", "127.0.0.1"]);
    assert_eq!(code, 0, "{err}");
    let cmdline = r#""$PINGRT" -D -c 3 -i 0.2 127.0.0.1"#;
    let env = [("PINGRT", std::ffi::OsStr::new(testkit::tool("pingrt")))];
    let (code, ours) = testkit::on_terminal(cmdline, &env).expect("script(1) is installed");
    assert_eq!(code, 0, "{ours}");
    // The word replaced: the statistics line names the tool.
    let ours = ours.replace("pingrt statistics", "ping statistics");
    assert_eq!(
        shape::lines(&ours),
        shape::lines(&ping),
        "{ours}\nagainst ping's\n{ping}"
    );
}

/// What nc prints on stdout when `dd | nc` sends to `port` (and how it ended).
fn dd_into_nc(port: u16) -> (bool, Vec<u8>) {
    let mut dd = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=16", "status=none"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("dd runs");
    let nc = Command::new("nc")
        .args(["-N", "127.0.0.1", &port.to_string()])
        .stdin(Stdio::from(dd.stdout.take().expect("piped")))
        .output()
        .expect("nc runs");
    let ok = dd.wait().is_ok_and(|s| s.success()) && nc.status.success();
    (ok, nc.stdout)
}

#[test]
fn nc_and_netpipe_as_the_listener() {
    if !testkit::need_tool("nc") || !testkit::need_tool("dd") {
        return;
    }
    let limit = std::time::Duration::from_secs(60);
    let port = testkit::free_port();
    let mut classic = testkit::Spawned::start(
        Command::new("nc")
            .args(["-l", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    classic.wait_listening(port, limit);
    let (ok, back) = dd_into_nc(port);
    assert!(ok && classic.wait(limit).success());
    assert!(back.is_empty(), "nc -l says nothing");
    let d = tempfile::tempdir().expect("tempdir");
    let rec = d.path().join("r.jsonl");
    let port = testkit::free_port();
    let mut ours = testkit::Spawned::start(
        Command::new(testkit::tool("netpipe"))
            .args(["recv", "--listen", &port.to_string(), "-o"])
            .arg(&rec)
            .stdin(Stdio::null()),
    );
    ours.wait_listening(port, limit);
    let (ok, back) = dd_into_nc(port);
    assert!(ok && ours.wait(limit).success());
    assert!(
        back.is_empty(),
        "netpipe said {:?}",
        String::from_utf8_lossy(&back)
    );
    let text = std::fs::read_to_string(&rec).expect("records");
    assert!(text.contains("\"received_bytes\":16777216"), "{text}");
}
