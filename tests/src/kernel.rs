//! What the kernel workload's tests share: small made-up kernel tarballs (a Makefile with the
//! kernel's version lines and the targets the script runs, built in a moment), a memory
//! cgroup to run the script in, the script's tmpfs mounts and the processes of a run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The made-up tree's Makefile: the kernel's version lines and the targets the script runs
/// (the default goal first, then the config and clean targets).
const MAKEFILE: &str = "VERSION = 0\nPATCHLEVEL = 1\nSUBLEVEL = 2\n\
all:\n\tcp .config vmlinux\n\
tinyconfig:\n\techo y > .config\n\
clean:\n\trm -f vmlinux\n";

/// What goes into a made-up tarball beside its Makefile.
#[derive(Clone, Copy)]
pub enum Filler {
    /// Nothing else.
    None,
    /// A member of this many zero bytes (a sparse file here, all its bytes in the tar
    /// stream, a few hundred bytes once compressed).
    Zeros(u64),
    /// A member of this many bytes that do not compress, after the Makefile.
    Noise(usize),
}

/// Makes `dir/NAME.tar.xz`: the Makefile and `filler` under the top directory `top`, or
/// at the archive's root beside a subdirectory `arch/` when `top` is empty. The files it
/// tars go again once the tarball is made.
pub fn fake_tarball(dir: &Path, name: &str, top: &str, filler: Filler) -> PathBuf {
    let tree = dir.join(format!("{name}.tree"));
    let root = if top.is_empty() {
        tree.clone()
    } else {
        tree.join(top)
    };
    let made = std::fs::create_dir_all(root.join("arch"))
        .and_then(|()| std::fs::write(root.join("Makefile"), MAKEFILE))
        .and_then(|()| std::fs::write(root.join("arch/Kconfig"), "# arch\n"))
        .and_then(|()| match filler {
            Filler::None => Ok(()),
            Filler::Zeros(n) => std::fs::File::create(root.join("zeros"))?.set_len(n),
            Filler::Noise(n) => std::fs::write(root.join("noise"), noise(n)),
        });
    if let Err(e) = made {
        panic!("cannot make {}: {e}", tree.display());
    }
    let out = dir.join(format!("{name}.tar.xz"));
    let mut members: Vec<String> = ["Makefile", "arch"].map(String::from).to_vec();
    match filler {
        Filler::None => {}
        Filler::Zeros(_) => members.push("zeros".into()),
        Filler::Noise(_) => members.push("noise".into()),
    }
    let mut c = Command::new("tar");
    c.arg("-cJf")
        .arg(&out)
        .arg("-C")
        .arg(&tree)
        .env("XZ_OPT", "-0");
    if top.is_empty() {
        c.args(&members);
    } else {
        c.args(members.iter().map(|m| format!("{top}/{m}")));
    }
    let st = c.status().expect("tar");
    assert!(st.success(), "tar -cJf {}", out.display());
    std::fs::remove_dir_all(&tree).expect("remove the tarred tree");
    out
}

/// `n` bytes that xz cannot shrink (an LCG's high bytes).
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

/// The script's kernel tmpfs mounts under `scratch` (the run's TMPDIR) still in the mount
/// table; another test's run has its own.
pub fn kernel_mounts(scratch: &Path) -> Vec<String> {
    let under = crate::path_str(scratch).replace(' ', "\\040");
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.strip_prefix("benchmatrix-kernel ")
                .is_some_and(|rest| rest.starts_with(&under))
        })
        .map(str::to_string)
        .collect()
}

/// The processes whose command line mentions `path` (a run's scratch directory): the tools
/// of a run that did not end them.
pub fn processes_naming(path: &Path) -> Vec<String> {
    let want = crate::path_str(path).as_bytes().to_vec();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            cmd.windows(want.len())
                .any(|w| w == want.as_slice())
                .then(|| {
                    format!(
                        "{}: {}",
                        e.file_name().to_string_lossy(),
                        String::from_utf8_lossy(&cmd).replace('\0', " ")
                    )
                })
        })
        .collect()
}

/// A memory cgroup of the test's own (a child of the one it runs in) with a limit; removed
/// on drop once the processes in it have ended.
pub struct MemCgroup {
    dir: PathBuf,
    procs: PathBuf,
}

impl MemCgroup {
    /// A child of this process's memory cgroup (v1's memory hierarchy, else v2's unified
    /// one) limited to `limit` bytes; `None` where none can be made here.
    pub fn new(limit: u64) -> Option<MemCgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let name = testkit::unique("bm-test-");
        for line in own.lines() {
            let mut f = line.splitn(3, ':');
            let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
            let (base, limit_file) = if ctl.split(',').any(|c| c == "memory") {
                ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
            } else if ctl.is_empty() && Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
                ("/sys/fs/cgroup", "memory.max")
            } else {
                continue;
            };
            let dir = Path::new(base)
                .join(path.trim_start_matches('/'))
                .join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let g = MemCgroup {
                procs: dir.join("cgroup.procs"),
                dir,
            };
            if std::fs::write(g.dir.join(limit_file), limit.to_string()).is_ok() {
                return Some(g);
            }
        }
        None
    }

    /// `cmd` as a command that joins this cgroup first: `sh -c` with constant text, the
    /// cgroup's procs file and the command as its arguments.
    pub fn wrap(&self, cmd: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", "echo $$ >\"$0\" && exec \"$@\""])
            .arg(&self.procs)
            .args(cmd);
        c
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Whether the script's kernel steps can run here (else a skip saying what is missing): the
/// programs and the header its kernel check asks for.
pub fn can_build() -> bool {
    if !["make", "flex", "bison", "bc", "perl", "xz", "cc", "tar"]
        .iter()
        .all(|t| crate::need_tool(t))
    {
        return false;
    }
    let header = Command::new("sh")
        .args([
            "-c",
            "printf '#include <libelf.h>\\n' | cc -E -x c - >/dev/null 2>&1",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !header {
        crate::skip("no libelf.h (install libelf-dev)");
    }
    header
}
