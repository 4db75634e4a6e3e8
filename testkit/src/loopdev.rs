//! A loop device over a sparse scratch file: a real block device for the disk tools' tests.

use crate::netns::{cmd, unique};
use std::path::{Path, PathBuf};

/// A loop device over a sparse scratch file; detached and the file removed on drop.
pub struct LoopDev {
    pub dev: String,
    file: PathBuf,
}

impl LoopDev {
    /// Creates `size` bytes of file in `dir` and attaches it to a free loop device.
    pub fn new(dir: &Path, size: u64) -> Result<LoopDev, String> {
        LoopDev::with_args(dir, size, &[])
    }

    /// As [`LoopDev::new`], with further losetup options (`-b 4096` for 4 KiB sectors, `-P`
    /// for the kernel to scan partitions).
    pub fn with_args(dir: &Path, size: u64, args: &[&str]) -> Result<LoopDev, String> {
        let file = dir.join(format!("{}.img", unique("loop")));
        let f = std::fs::File::create(&file)
            .map_err(|e| format!("cannot create {}: {e}", file.display()))?;
        let sized = f.set_len(size);
        drop(f);
        if let Err(e) = sized {
            let _ = std::fs::remove_file(&file);
            return Err(format!("cannot size {}: {e}", file.display()));
        }
        let path = file.to_string_lossy().into_owned();
        let mut losetup = vec!["-f", "--show"];
        losetup.extend_from_slice(args);
        losetup.push(&path);
        match cmd("losetup", &losetup) {
            Ok(out) => Ok(LoopDev {
                dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
                file,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&file);
                Err(e)
            }
        }
    }
}

impl LoopDev {
    /// The scratch file behind the device.
    pub fn file(&self) -> &Path {
        &self.file
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = cmd("losetup", &["-d", &self.dev]);
        let _ = std::fs::remove_file(&self.file);
    }
}
