//! A child whose stdout and stderr are kept in scratch files, to read once it has ended:
//! unlike pipes, files never fill up and stall a child that writes more than the test reads.

use crate::netns::unique;
use crate::process::Spawned;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// A [`Spawned`] child with its output in files; the files go on drop.
pub struct Captured {
    proc: Spawned,
    dir: PathBuf,
}

impl Captured {
    /// Starts `c` with its stdout and stderr into scratch files (any stdin the caller set).
    pub fn start(c: &mut Command) -> Captured {
        let dir = std::env::temp_dir().join(unique("testkit-out"));
        let files = std::fs::create_dir_all(&dir).and_then(|()| {
            Ok((
                File::create(dir.join("out"))?,
                File::create(dir.join("err"))?,
            ))
        });
        let (out, err) = files.unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        c.stdout(out).stderr(err);
        Captured {
            proc: Spawned::start(c),
            dir,
        }
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// Sends signal `sig` (a `libc::SIG*` number) to the process.
    pub fn signal(&self, sig: i32) -> bool {
        self.proc.signal(sig)
    }

    /// Waits at most `limit` for the process to end (panics naming it when it does not) and
    /// returns its status, stdout and stderr.
    pub fn wait_output(mut self, limit: Duration) -> (ExitStatus, String, String) {
        let st = self.proc.wait(limit);
        let read = |f: &str| {
            String::from_utf8_lossy(&std::fs::read(self.dir.join(f)).unwrap_or_default())
                .into_owned()
        };
        (st, read("out"), read("err"))
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
