//! The private directory fsmeta works in: made inside DIR as mkdtemp makes one (fsmeta.XXXXXX,
//! mode 0700), its subdirectories, which of its files exist, and the removal of all of it.
//! Every call is relative to a directory descriptor, so a rename or a symlink swapped in under
//! DIR during the run cannot send a create or an unlink anywhere else.

use measure::{Exit, Failure};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, CWD, Mode, OFlags};
use rustix::io::Errno;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How many names a new private directory tries before giving up (each collision is a
/// directory of that name already there, which is left alone).
const TRIES: u32 = 100;

/// The private directory, its subdirectories and the files in them.
pub struct Scratch {
    parent: OwnedFd,
    name: String,
    root: Option<OwnedFd>,
    subdirs: Vec<OwnedFd>,
    /// Subdirectories made (a made one whose open failed is still removed).
    made: u32,
    /// Where it is, for messages.
    pub path: PathBuf,
    /// Which file numbers exist now.
    present: Vec<bool>,
    removed: bool,
}

/// `DIR: what: cause (hint)`, exit 2.
fn fail(dir: &Path, what: &str, e: Errno) -> Failure {
    Failure::new(
        Exit::Cannot,
        dir.display(),
        format!("{what}: {}{}", std::io::Error::from(e), hint(e)),
    )
}

/// What a person can do about an error fsmeta may meet.
pub fn hint(e: Errno) -> &'static str {
    match e {
        Errno::NOSPC => {
            " (the file system is full, of blocks or of inodes: give a smaller -n or --size)"
        }
        Errno::DQUOT => " (the disk quota is used up: give a smaller -n or --size)",
        Errno::MFILE | Errno::NFILE => {
            " (too many open files: give fewer --dirs, or raise ulimit -n)"
        }
        Errno::ROFS => {
            " (the file system is mounted read-only: give a directory on a writable one)"
        }
        Errno::ACCESS | Errno::PERM => " (no permission: give a directory you may write in)",
        Errno::IO => " (the device reported an I/O error: check dmesg)",
        _ => "",
    }
}

/// A call retried after EINTR unless Ctrl-C or SIGTERM caused it.
pub fn retry<T>(mut f: impl FnMut() -> rustix::io::Result<T>) -> rustix::io::Result<T> {
    loop {
        match f() {
            Err(Errno::INTR) if !measure::signal::interrupted() => continue,
            r => return r,
        }
    }
}

impl Scratch {
    /// Opens DIR and makes the private directory in it, with `dirs` subdirectories, for
    /// `files` files. A failure leaves DIR as it was.
    pub fn make(dir: &Path, files: u32, dirs: u32) -> Result<Scratch, Failure> {
        let parent = open_parent(dir)?;
        let (name, root) = make_private(dir, &parent)?;
        let mut sc = Scratch {
            parent,
            path: dir.join(&name),
            name,
            root: Some(root),
            subdirs: Vec::new(),
            made: 0,
            present: vec![false; files as usize],
            removed: false,
        };
        // On a failure here the Drop below removes what was made.
        for k in 0..dirs {
            let sub = format!("d{k}");
            let made =
                retry(|| rustix::fs::mkdirat(sc.root()?, sub.as_str(), Mode::from_raw_mode(0o700)));
            made.map_err(|e| fail(dir, &format!("making {}/{sub}", sc.name), e))?;
            sc.made += 1;
            let fd =
                retry(|| rustix::fs::openat(sc.root()?, sub.as_str(), dir_flags(), Mode::empty()))
                    .map_err(|e| fail(dir, &format!("opening {}/{sub}", sc.name), e))?;
            sc.subdirs.push(fd);
        }
        Ok(sc)
    }

    /// The private directory's descriptor (EBADF once it is removed).
    fn root(&self) -> rustix::io::Result<&OwnedFd> {
        self.root.as_ref().ok_or(Errno::BADF)
    }

    /// The directory that holds file `i`: the subdirectories in turn, or the private one.
    pub fn dir_of(&self, i: u32) -> Option<&OwnedFd> {
        if self.subdirs.is_empty() {
            self.root.as_ref()
        } else {
            self.subdirs.get(i as usize % self.subdirs.len())
        }
    }

    /// File `i`'s name in its directory, written into `buf`.
    pub fn name(i: u32, buf: &mut String) {
        buf.clear();
        let _ = write!(buf, "f{i}");
    }

    /// File `i`'s path, for messages.
    pub fn shown(&self, i: u32) -> String {
        let mut n = String::new();
        Scratch::name(i, &mut n);
        match self.subdirs.len() {
            0 => format!("{}/{n}", self.path.display()),
            d => format!("{}/d{}/{n}", self.path.display(), i as usize % d),
        }
    }

    /// Says that file `i` now exists (or no longer does).
    pub fn set_present(&mut self, i: u32, yes: bool) {
        if let Some(p) = self.present.get_mut(i as usize) {
            *p = yes;
        }
    }

    /// Removes every file it created that still exists, its subdirectories and the private
    /// directory itself (never anything else: a name it did not create stays, and then so
    /// does the directory). Ctrl-C does not stop it. Says what could not be removed.
    pub fn remove(&mut self) -> Result<(), String> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let mut first: Option<String> = None;
        let mut left = 0u64;
        let mut name = String::new();
        for i in 0..self.present.len() as u32 {
            if !self.present[i as usize] {
                continue;
            }
            Scratch::name(i, &mut name);
            let r = match self.dir_of(i) {
                Some(d) => unlink_always(d, &name, AtFlags::empty()),
                None => Err(Errno::BADF),
            };
            match r {
                Ok(()) | Err(Errno::NOENT) => self.present[i as usize] = false,
                Err(e) => {
                    left += 1;
                    first.get_or_insert_with(|| {
                        format!("{}: {}", self.shown(i), std::io::Error::from(e))
                    });
                }
            }
        }
        self.subdirs.clear();
        if let Some(root) = self.root.take() {
            for k in 0..self.made {
                if let Err(e) = unlink_always(&root, &format!("d{k}"), AtFlags::REMOVEDIR) {
                    first.get_or_insert_with(|| {
                        format!("{}/d{k}: {}", self.path.display(), std::io::Error::from(e))
                    });
                }
            }
        }
        if let Err(e) = unlink_always(&self.parent, &self.name, AtFlags::REMOVEDIR) {
            first.get_or_insert_with(|| {
                format!("{}: {}", self.path.display(), std::io::Error::from(e))
            });
        }
        match first {
            None => Ok(()),
            Some(f) if left > 0 => Err(format!("{left} files could not be removed, the first {f}")),
            Some(f) => Err(format!("could not remove {f}")),
        }
    }
}

impl Drop for Scratch {
    /// The private directory goes on every path, an early return or a panic included.
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// unlinkat, retried after EINTR even after Ctrl-C (the removal must finish).
fn unlink_always(dir: &OwnedFd, name: &str, flags: AtFlags) -> rustix::io::Result<()> {
    loop {
        match rustix::fs::unlinkat(dir, name, flags) {
            Err(Errno::INTR) => continue,
            r => return r,
        }
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// DIR itself, opened as a directory; a clear refusal when it is missing or not one.
fn open_parent(dir: &Path) -> Result<OwnedFd, Failure> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    retry(|| rustix::fs::openat(CWD, dir, flags, Mode::empty())).map_err(|e| {
        let why = match e {
            Errno::NOENT => "does not exist: give an existing directory".to_string(),
            Errno::NOTDIR if dir.exists() => {
                "is not a directory: give the directory to measure in (fsmeta makes its files in a private directory there)".to_string()
            }
            Errno::NOTDIR => "a part of the path is not a directory: give an existing directory".to_string(),
            e => format!("cannot open it: {}{}", std::io::Error::from(e), hint(e)),
        };
        Failure::new(Exit::Cannot, dir.display(), why)
    })
}

/// Makes `fsmeta.XXXXXX` (mode 0700) in `parent` and opens it; checks that what it opened is
/// the directory it made (a directory owned by this user), as mkdtemp's callers should.
fn make_private(dir: &Path, parent: &OwnedFd) -> Result<(String, OwnedFd), Failure> {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for _ in 0..TRIES {
        let mut bits = measure::parts::random_u64();
        let mut name = String::from("fsmeta.");
        for _ in 0..6 {
            name.push(CHARS[(bits % CHARS.len() as u64) as usize] as char);
            bits /= CHARS.len() as u64;
        }
        match retry(|| rustix::fs::mkdirat(parent, name.as_str(), Mode::from_raw_mode(0o700))) {
            Ok(()) => {}
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(fail(dir, "cannot make a private directory in it", e)),
        }
        let opened =
            retry(|| rustix::fs::openat(parent, name.as_str(), dir_flags(), Mode::empty()))
                .and_then(|fd| {
                    let st = rustix::fs::fstat(&fd)?;
                    let ours = st.st_uid == rustix::process::geteuid().as_raw()
                        && rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir();
                    if !ours {
                        return Err(Errno::PERM);
                    }
                    rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
                    Ok(fd)
                });
        return match opened {
            Ok(fd) => Ok((name, fd)),
            Err(e) => {
                let _ = unlink_always(parent, &name, AtFlags::REMOVEDIR);
                Err(fail(
                    dir,
                    &format!("cannot open the private directory {name}"),
                    e,
                ))
            }
        };
    }
    Err(Failure::new(
        Exit::Cannot,
        dir.display(),
        format!("{TRIES} names fsmeta.XXXXXX taken: remove the old ones"),
    ))
}
