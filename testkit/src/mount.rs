//! File systems for the disk tools' tests: a loop device with a file system made on it, and a
//! mount on a fresh directory that is unmounted and removed on drop.

use crate::LoopDev;
use crate::netns::{cmd, unique};
use std::path::{Path, PathBuf};

/// A block device mounted on a new directory under the system's temporary directory.
pub struct Mount {
    dir: PathBuf,
}

impl Mount {
    /// Mounts `dev` with the mount options `opts` (`rw`, `ro`, ...).
    pub fn new(dev: &str, opts: &str) -> Result<Mount, String> {
        let dir = std::env::temp_dir().join(unique("mnt"));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let at = dir.to_string_lossy().into_owned();
        if let Err(e) = cmd("mount", &["-o", opts, dev, &at]) {
            let _ = std::fs::remove_dir(&dir);
            return Err(e);
        }
        Ok(Mount { dir })
    }

    /// Where the file system is mounted.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let at = self.dir.to_string_lossy().into_owned();
        // A file still open in it keeps it busy: then it is detached lazily.
        if cmd("umount", &[&at]).is_err() {
            let _ = cmd("umount", &["-l", &at]);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A loop device of `size` bytes over a scratch file in `dir`, with a file system made by
/// `mkfs` (a command line such as `mkfs.ext4 -q -F`, given the device as its last argument).
pub fn loop_with_fs(dir: &Path, size: u64, mkfs: &str) -> Result<LoopDev, String> {
    let mut words = mkfs.split_whitespace();
    let program = words.next().ok_or("an empty mkfs command")?;
    let mut args: Vec<&str> = words.collect();
    let dev = LoopDev::new(dir, size)?;
    args.push(&dev.dev);
    cmd(program, &args)?;
    Ok(dev)
}
