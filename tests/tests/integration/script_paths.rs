//! Paths are data, never shell text: a TMPDIR, --dir, --results and --tree-dir holding quotes,
//! spaces, `$(...)`, a newline and a leading `-` are used as they are, by every step that
//! takes them (tar, make, disk, kernel), and a directory beside them that a quote could
//! name is left alone.

use benchmatrix_tests::kernel::{Filler, can_build, fake_tarball};
use benchmatrix_tests::suite::script;
use benchmatrix_tests::{decode, empty_dir, explain, path_str as s};
use measure::{Kind, Status};
use std::path::Path;

/// A directory name that ends a single-quoted string, names `victim` and runs a command
/// substitution that makes `pwned`, over two lines; `lead` goes first (`-` for an option).
fn hostile(lead: &str, victim: &Path, pwned: &Path) -> String {
    format!("{lead}a' {} '$(touch {})\n-x", s(victim), s(pwned))
}

#[test]
fn quotes_newlines_and_a_leading_dash_in_paths_are_data() {
    let kernel = can_build();
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let victim = root.join("victim");
    let pwned = root.join("pwned");
    let work = root.join("work");
    for d in [&victim, &work] {
        std::fs::create_dir(d).expect("a folder");
    }
    std::fs::write(victim.join("keep"), "keep\n").expect("the victim's file");
    // TMPDIR absolute; --dir, --results and --tree-dir relative to the run's folder, each
    // starting with a dash.
    let tmpdir = root.join(hostile("", &victim, &pwned));
    let [dir, res, tree] = ["-d", "-r", "-t"].map(|lead| hostile(lead, &victim, &pwned));
    for d in [&tmpdir, &work.join(&dir), &work.join(&tree)] {
        std::fs::create_dir_all(d).expect("a hostile folder");
    }
    let mut args = vec![
        "--runs",
        "2",
        "--disk-size",
        "1M",
        "--dir",
        &dir,
        "--results",
        &res,
    ];
    args.extend(["--label", "p", "--no-matrix", "--only"]);
    let src = root.join("src");
    std::fs::create_dir(&src).expect("a folder");
    let tarball = fake_tarball(&src, "linux-0.1", "linux-0.1", Filler::None);
    if kernel {
        args.extend(["tar,make,disk,kernel", "--tree-dir", &tree]);
        args.extend(["--kernel-tarball", s(&tarball)]);
    } else {
        args.push("tar,make,disk");
    }
    let out = script(&work, &tmpdir, &[], &args);
    assert!(
        victim.join("keep").exists(),
        "the victim's file went: {}",
        explain(&out)
    );
    assert!(
        !pwned.exists(),
        "a path ran as a command: {}",
        explain(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let text = std::fs::read_to_string(work.join(&res).join("p.jsonl")).expect("the records");
    let recs = decode(&text);
    let mut rows = vec![
        "time tar xjf tree.tar.bz2",
        "time make",
        "disk write (O_DIRECT)",
    ];
    if kernel {
        rows.extend(["time tar xJf linux", "time make linux (tinyconfig)"]);
    }
    for row in rows {
        let sum = recs
            .iter()
            .find(|r| r.kind == Kind::Summary && r.name == row)
            .unwrap_or_else(|| panic!("{row}: no summary: {}", explain(&out)));
        assert_eq!(sum.status, Some(Status::Ok), "{row}: {}", sum.to_line());
    }
    for d in [&tmpdir, &work.join(&dir), &work.join(&tree)] {
        empty_dir(d);
    }
}

/// `fleet/envs/vm.sh`'s job for the guest, written by `vm_run` (its boot left out) and run
/// here as the guest runs it: the fake `benchmatrix` in `repo` records its directory, the
/// token in its environment and its arguments, NUL-separated, into `out`.
fn guest_job(tmp: &Path, repo: &Path, results: &str, extra: &[&str], out: &Path) -> String {
    let cache = tmp.join("cache");
    std::fs::create_dir_all(&cache).expect("a cache");
    let vm_sh = benchmatrix_tests::workspace_root().join("fleet/envs/vm.sh");
    let wrote = benchmatrix_tests::run(
        std::process::Command::new("sh")
            .args([
                "-c",
                ". \"$0\"; vm_boot() { return 0; }; vm_run \"$@\" && printf %s \"$vm_state\"",
            ])
            .arg(&vm_sh)
            .args([
                s(&cache),
                s(repo),
                "/opt/bin'",
                "l'x",
                results,
                "5311",
                "t0k",
            ])
            .arg("--")
            .args(extra),
    );
    assert!(wrote.status.success(), "vm_run: {}", explain(&wrote));
    let state = String::from_utf8_lossy(&wrote.stdout).into_owned();
    let ran = benchmatrix_tests::run(
        std::process::Command::new("sh")
            .arg(Path::new(&state).join("job.sh"))
            .env("OUT", out),
    );
    assert!(ran.status.success(), "job.sh: {}", explain(&ran));
    std::fs::remove_dir_all(&cache).expect("remove the cache");
    String::from_utf8_lossy(&std::fs::read(out).expect("the job's arguments")).into_owned()
}

#[test]
fn the_guests_job_gets_every_argument_exactly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pwned = tmp.path().join("pwned");
    let repo = tmp
        .path()
        .join(hostile("r", &tmp.path().join("victim"), &pwned) + "\n");
    std::fs::create_dir_all(&repo).expect("a repository folder");
    let fake = repo.join("benchmatrix");
    std::fs::write(
        &fake,
        "#!/bin/sh\nprintf '%s\\0' \"$PWD\" \"$BENCHMATRIX_TOKEN\" \"$@\" >\"$OUT\"\n",
    )
    .expect("a fake");
    let made = std::process::Command::new("chmod")
        .arg("755")
        .arg(&fake)
        .status();
    assert!(made.is_ok_and(|st| st.success()));
    let results = "/res'\n";
    let extra = ["a'b\n", &format!("$(touch {})", s(&pwned)), "-x y"];
    let got = guest_job(tmp.path(), &repo, results, &extra, &tmp.path().join("args"));
    // The token comes in the environment (from the job's 0600 file), never as an argument.
    let mut want = vec![
        s(&repo),
        "t0k",
        "--label",
        "l'x",
        "--results",
        results,
        "--dir",
    ];
    want.extend(["/mnt/bench", "--peer", "10.0.2.2", "--port", "5311"]);
    want.push("--no-matrix");
    want.extend(extra.iter().map(|a| &**a));
    let want: String = want.iter().map(|a| format!("{a}\0")).collect();
    assert_eq!(got, want);
    assert!(!pwned.exists(), "an argument ran as a command");
}
