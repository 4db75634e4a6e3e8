//! The kernel workload's input checked before it runs: a truncated tarball and a tarball
//! with no kernel Makefile fail the step with one error naming it, and no build runs; a tree
//! without a `linux-*` top directory builds; a tarball whose tree and build do not fit in the
//! memory the script may take (here a memory cgroup's limit) is refused with both figures,
//! and nothing is mounted.

use benchmatrix_tests::kernel::{Filler, MemCgroup, can_build, fake_tarball, kernel_mounts};
use benchmatrix_tests::suite::{folders, script, script_env, script_path};
use benchmatrix_tests::{decode, empty_dir, explain, need_root, path_str as s, run};
use measure::{Kind, Status};
use std::path::Path;
use std::process::{Command, Output};

/// `./benchmatrix --only kernel` on `tarball`, one run, the records into `res`, with `extra`.
fn kernel_run(work: &Path, scratch: &Path, res: &Path, tarball: &Path, extra: &[&str]) -> Output {
    let args = [
        &[
            "--only",
            "kernel",
            "--runs",
            "1",
            "--jobs",
            "2",
            "--label",
            "k",
            "--no-matrix",
        ][..],
        &["--results", s(res), "--kernel-tarball", s(tarball)],
        extra,
    ]
    .concat();
    script(work, scratch, &[], &args)
}

/// The summaries in `res/k.jsonl` named `name`, each with its status.
fn summaries(res: &Path, name: &str) -> Vec<Option<Status>> {
    let text = std::fs::read_to_string(res.join("k.jsonl")).unwrap_or_default();
    decode(&text)
        .into_iter()
        .filter(|r| r.kind == Kind::Summary && r.name == name)
        .map(|r| r.status)
        .collect()
}

/// The run failed with exit 1, its one kernel error says `says`, and no build ran.
fn refused(out: &Output, res: &Path, says: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", explain(out));
    let err = String::from_utf8_lossy(&out.stderr);
    let fails: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("step failed: kernel"))
        .collect();
    assert_eq!(fails.len(), 1, "one kernel error: {err}");
    assert!(fails[0].contains(says), "{says:?} in {err}");
    assert!(
        summaries(res, "time make linux (tinyconfig)").is_empty(),
        "the build ran: {err}"
    );
}

#[test]
fn a_truncated_tarball_or_one_without_a_kernel_makefile_fails_the_step_before_the_build() {
    if !can_build() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res, tree, src] =
        folders(tmp.path(), ["work", "tmp", "res", "tree", "src"]);
    // The Makefile comes first in the archive, whole; the member after it is cut.
    let cut = fake_tarball(&src, "linux-0.1", "linux-0.1", Filler::Noise(512 * 1024));
    let len = std::fs::metadata(&cut).expect("the tarball").len();
    std::fs::File::options()
        .write(true)
        .open(&cut)
        .and_then(|f| f.set_len(len / 2))
        .expect("truncate the tarball");
    let out = kernel_run(&work, &scratch, &res, &cut, &["--tree-dir", s(&tree)]);
    let says = format!(
        "kernel: cannot unpack {}: tar cannot read it to its end (truncated or corrupt?)",
        s(&cut)
    );
    refused(&out, &res, &says);

    // A tree with no Makefile of a kernel at its top.
    let plain = src.join("plain.tar.xz");
    std::fs::create_dir_all(src.join("plain/docs")).expect("a tree");
    std::fs::write(src.join("plain/docs/README"), "no kernel\n").expect("a file");
    let st = Command::new("tar")
        .arg("-cJf")
        .arg(&plain)
        .arg("-C")
        .arg(src.join("plain"))
        .arg("docs")
        .status()
        .expect("tar");
    assert!(st.success());
    let out = kernel_run(&work, &scratch, &res, &plain, &["--tree-dir", s(&tree)]);
    refused(
        &out,
        &res,
        &format!("kernel: {} holds no kernel tree", s(&plain)),
    );
    empty_dir(&tree);
    empty_dir(&scratch);
    empty_dir(&work);
}

#[test]
fn a_tree_without_a_linux_top_directory_builds() {
    if !can_build() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, tree, src] = folders(tmp.path(), ["work", "tmp", "tree", "src"]);
    for (name, top) in [("src-tree", "src-tree"), ("flat", "")] {
        let res = tmp.path().join(format!("res-{name}"));
        let tarball = fake_tarball(&src, name, top, Filler::None);
        let out = kernel_run(&work, &scratch, &res, &tarball, &["--tree-dir", s(&tree)]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", explain(&out));
        for row in ["time tar xJf linux", "time make linux (tinyconfig)"] {
            assert_eq!(summaries(&res, row), [Some(Status::Ok)], "{name}: {row}");
        }
    }
    empty_dir(&tree);
    empty_dir(&scratch);
}

/// The memory limit of the cgroup the refusal test runs the script in.
const LIMIT: u64 = 1700 << 20;

#[test]
fn a_tree_and_build_bigger_than_the_memory_the_script_may_take_is_refused_with_both_figures() {
    if !need_root("the kernel workload's tmpfs and a memory cgroup") || !can_build() {
        return;
    }
    let Some(cg) = MemCgroup::new(LIMIT) else {
        testkit::skip("cannot make a memory cgroup here");
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, src] = folders(tmp.path(), ["work", "tmp", "src"]);
    // 300 MiB of tree, 954 MiB of room for the build and 512 MiB for the compilers are more
    // than the cgroup's 1700 MiB; the tarball itself is a few hundred bytes.
    let big = fake_tarball(&src, "big", "linux-0.1", Filler::Zeros(300 << 20));
    let small = fake_tarball(&src, "small", "linux-0.1", Filler::None);
    let path = script_path();
    let in_cgroup = |tarball: &Path, res: &Path| {
        let res = s(res);
        let cmd = [
            s(&path),
            "--only",
            "kernel",
            "--runs",
            "1",
            "--label",
            "k",
            "--no-matrix",
        ];
        let mut c = cg.wrap(
            &[
                &["sh"][..],
                &cmd,
                &["--results", res, "--kernel-tarball", s(tarball)],
            ]
            .concat(),
        );
        run(script_env(&mut c, &work, &scratch))
    };
    let res = tmp.path().join("res-big");
    let out = in_cgroup(&big, &res);
    let says = format!("kernel: {} needs more than ", s(&big));
    refused(&out, &res, &says);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(" MiB available (MemAvailable, or its memory cgroup's limit less its use)"),
        "{err}"
    );
    assert!(
        kernel_mounts(&scratch).is_empty(),
        "{:?}",
        kernel_mounts(&scratch)
    );

    // What fits under the same limit runs.
    let res = tmp.path().join("res-small");
    let out = in_cgroup(&small, &res);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    assert_eq!(
        summaries(&res, "time make linux (tinyconfig)"),
        [Some(Status::Ok)]
    );
    assert!(
        kernel_mounts(&scratch).is_empty(),
        "{:?}",
        kernel_mounts(&scratch)
    );
    empty_dir(&scratch);
    empty_dir(&work);
}
