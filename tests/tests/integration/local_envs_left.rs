//! What a `fleet/local-envs` run makes and must not leave behind (its container's namespace,
//! veths, cgroups and processes, named for the run's PID, and the listeners of its --serve),
//! and the check that it left nothing: shared by the local-envs tests.

/// What the container of the local-envs run `run` (its PID) made and must not leave: its
/// network namespace (and the mount that holds it), veth ends and cgroups, named for that
/// PID; another run's are not this one's.
pub(crate) fn leftovers(run: u32) -> Vec<String> {
    let names = [
        format!("bmenv-{run}"),
        format!("bmh{run}"),
        format!("bmc{run}"),
    ];
    let mut left = Vec::new();
    for dir in ["/run/netns", "/sys/class/net"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if names.contains(&n) {
                left.push(format!("{dir}/{n}"));
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for l in mounts.lines() {
        if l.split(' ')
            .nth(4)
            .is_some_and(|m| m.ends_with(&format!("/{}", names[0])))
        {
            left.push(format!("a mount: {l}"));
        }
    }
    for c in [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup/memory",
    ] {
        for e in std::fs::read_dir(c).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy() == names[0] {
                left.push(e.path().to_string_lossy().into_owned());
            }
        }
    }
    left
}

/// Nothing of run `pid` is left: no namespace, veth, cgroup, mount or container process.
pub(crate) fn nothing_left(pid: u32) {
    assert!(
        leftovers(pid).is_empty(),
        "left behind: {:?}",
        leftovers(pid)
    );
    assert!(
        container_processes(pid).is_empty(),
        "{:?}",
        container_processes(pid)
    );
}

/// The processes of the container of the local-envs run `run` (its PID): their environment
/// names the container, and their cgroup is that run's.
pub(crate) fn container_processes(run: u32) -> Vec<String> {
    let mark = b"container=benchmatrix-local-envs\0";
    let cgroup = format!("/bmenv-{run}");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let env = std::fs::read(e.path().join("environ")).ok()?;
            let groups = std::fs::read_to_string(e.path().join("cgroup")).ok()?;
            (env.windows(mark.len()).any(|w| w == mark)
                && groups.lines().any(|l| l.ends_with(&cgroup)))
            .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

/// Whether this machine's network namespace listens on TCP `port`.
pub(crate) fn listens(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
            })
    })
}
