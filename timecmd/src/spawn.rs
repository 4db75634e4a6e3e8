//! Starting a run: `posix_spawnp` into a process group of its own, stdout where `--stdout` says.
//!
//! The argument vector, the spawn attributes and the file actions are built once and reused
//! for every run, so the only work between the two clock readings is the spawn itself and
//! the reaping. `posix_spawnp` (glibc's runs `clone(CLONE_VM|CLONE_VFORK)`) never copies
//! timecmd's page tables, which keeps the per-run cost low; timecmd's own memory stays
//! small because a child's max RSS can never read below the spawner's.

use crate::{EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_OWN_FAILURE};
use std::ffi::{CString, OsStr};
use std::fs::OpenOptions;
use std::io::{self, Seek};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

unsafe extern "C" {
    /// The process environment, passed on to the child unchanged.
    static environ: *const *mut libc::c_char;
}

/// Where the child's standard output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stdout {
    /// timecmd's own stdout (the default, as time(1) does).
    Inherit,
    /// `/dev/null`.
    Null,
    /// A pipe that timecmd reads and discards (for programs that notice /dev/null).
    Pipe,
    /// A file, truncated before every run, so it holds the last run's output.
    File(PathBuf),
}

impl Stdout {
    /// Parses `--stdout`: `inherit`, `null`, `pipe`, or a file path.
    pub fn parse(s: &str) -> Result<Stdout, String> {
        Ok(match s {
            "" => return Err("--stdout is empty: give null, pipe, inherit or a file".into()),
            "inherit" => Stdout::Inherit,
            "null" => Stdout::Null,
            "pipe" => Stdout::Pipe,
            p => Stdout::File(PathBuf::from(p)),
        })
    }

    /// How `begin` records it.
    pub fn describe(&self) -> String {
        match self {
            Stdout::Inherit => "inherit".into(),
            Stdout::Null => "null".into(),
            Stdout::Pipe => "pipe".into(),
            Stdout::File(p) => p.display().to_string(),
        }
    }
}

/// Where the child's standard input comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stdin {
    /// timecmd's own stdin (the default).
    Inherit,
    /// `/dev/null`.
    Null,
    /// A file, read from its start by every run.
    File(PathBuf),
}

impl Stdin {
    /// Parses `--input`: `inherit`, `null`, or a file path.
    pub fn parse(s: &str) -> Result<Stdin, String> {
        Ok(match s {
            "" => return Err("--input is empty: give null, inherit or a file".into()),
            "inherit" => Stdin::Inherit,
            "null" => Stdin::Null,
            p => Stdin::File(PathBuf::from(p)),
        })
    }

    /// How `begin` records it.
    pub fn describe(&self) -> String {
        match self {
            Stdin::Inherit => "inherit".into(),
            Stdin::Null => "null".into(),
            Stdin::File(p) => p.display().to_string(),
        }
    }
}

/// Why a spawn failed, with the exit code env(1) would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnError {
    /// 127 not found, 126 not executable, 125 anything else.
    pub code: u8,
    pub message: String,
}

/// The spawn attributes, owned: destroyed on drop.
struct Attr(Box<libc::posix_spawnattr_t>);

impl Drop for Attr {
    fn drop(&mut self) {
        // SAFETY: the attribute object was initialised by posix_spawnattr_init in `new`.
        unsafe {
            libc::posix_spawnattr_destroy(&mut *self.0);
        }
    }
}

/// The file actions, owned: destroyed on drop.
struct Actions(Box<libc::posix_spawn_file_actions_t>);

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: initialised by posix_spawn_file_actions_init in `new`.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut *self.0);
        }
    }
}

/// Turns a posix_spawn return value into a Result.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Spawns one command line again and again, each time in a new process group.
pub struct Spawner {
    program: String,
    /// The executable found in PATH once, up front, so that no run pays for the search.
    resolved: Option<CString>,
    _args: Vec<CString>,
    argv: Vec<*mut libc::c_char>,
    attr: Attr,
    actions: Option<Actions>,
    /// The file or the pipe's write end that becomes the child's stdout.
    out_fd: Option<OwnedFd>,
    /// The pipe's read end, for `--stdout pipe`.
    pipe_read: Option<OwnedFd>,
    /// The output file, truncated before each run.
    out_file: Option<std::fs::File>,
    /// The file or /dev/null that becomes the child's stdin.
    in_file: Option<std::fs::File>,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner")
            .field("program", &self.program)
            .finish()
    }
}

impl Spawner {
    /// A spawner for `argv` (argv[0] looked up in PATH unless it holds a `/`).
    pub fn new<S: AsRef<OsStr>>(argv: &[S], stdin: &Stdin, stdout: &Stdout) -> io::Result<Spawner> {
        let Some(first) = argv.first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command"));
        };
        let program = first.as_ref().to_string_lossy().into_owned();
        let args = argv
            .iter()
            .map(|a| {
                CString::new(a.as_ref().as_bytes()).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte")
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        ptrs.push(std::ptr::null_mut());

        // SAFETY: posix_spawnattr_t is plain data that posix_spawnattr_init initialises.
        let mut attr = Attr(Box::new(unsafe { std::mem::zeroed() }));
        // SAFETY: the pointer is to a live, boxed attribute object.
        check(unsafe { libc::posix_spawnattr_init(&mut *attr.0) })?;
        // SAFETY: sigset_t is plain data, initialised by sigemptyset before use; the
        // attribute calls take pointers to live values.
        unsafe {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            check(libc::posix_spawnattr_setsigmask(&mut *attr.0, &empty))?;
            // Rust ignores SIGPIPE; the child gets the default back, as std's Command does.
            let mut dfl: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut dfl);
            libc::sigaddset(&mut dfl, libc::SIGPIPE);
            check(libc::posix_spawnattr_setsigdefault(&mut *attr.0, &dfl))?;
            check(libc::posix_spawnattr_setpgroup(&mut *attr.0, 0))?;
            let flags = libc::POSIX_SPAWN_SETPGROUP
                | libc::POSIX_SPAWN_SETSIGMASK
                | libc::POSIX_SPAWN_SETSIGDEF;
            check(libc::posix_spawnattr_setflags(
                &mut *attr.0,
                flags as libc::c_short,
            ))?;
        }

        let resolved = resolve_in_path(first.as_ref())
            .and_then(|p| CString::new(p.as_os_str().as_bytes()).ok());
        let mut sp = Spawner {
            program,
            resolved,
            _args: args,
            argv: ptrs,
            attr,
            actions: None,
            out_fd: None,
            pipe_read: None,
            out_file: None,
            in_file: None,
        };
        match stdin {
            Stdin::Inherit => {}
            Stdin::Null => sp.in_file = Some(std::fs::File::open("/dev/null")?),
            Stdin::File(p) => {
                sp.in_file = Some(std::fs::File::open(p).map_err(|e| {
                    io::Error::new(e.kind(), format!("--input {}: {e}", p.display()))
                })?);
            }
        }
        match stdout {
            Stdout::Inherit => {}
            Stdout::Null => {
                let f = OpenOptions::new().write(true).open("/dev/null")?;
                sp.out_fd = Some(OwnedFd::from(f));
            }
            Stdout::File(p) => {
                let f = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(p)
                    .map_err(|e| {
                        io::Error::new(e.kind(), format!("--stdout {}: {e}", p.display()))
                    })?;
                sp.out_fd = Some(OwnedFd::from(f.try_clone()?));
                sp.out_file = Some(f);
            }
            Stdout::Pipe => {
                let mut fds = [0 as RawFd; 2];
                // SAFETY: pipe2 writes two descriptors into the array on success.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0
                {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: both descriptors were just created and are owned by nobody else.
                let (r, w) =
                    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
                // The child's end blocks as a normal stdout would.
                // SAFETY: fcntl on a descriptor we own.
                unsafe {
                    let fl = libc::fcntl(w.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(w.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
                }
                sp.out_fd = Some(w);
                sp.pipe_read = Some(r);
            }
        }
        let dups: Vec<(RawFd, RawFd)> = [
            sp.in_file.as_ref().map(|f| (f.as_raw_fd(), 0)),
            sp.out_fd.as_ref().map(|f| (f.as_raw_fd(), 1)),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !dups.is_empty() {
            // SAFETY: as for the attributes: a boxed, initialised file actions object.
            let mut actions = Actions(Box::new(unsafe { std::mem::zeroed() }));
            // SAFETY: the pointer is to a live, boxed object.
            check(unsafe { libc::posix_spawn_file_actions_init(&mut *actions.0) })?;
            for (from, to) in dups {
                // SAFETY: dup2 of a descriptor that stays open as long as the spawner lives.
                check(unsafe {
                    libc::posix_spawn_file_actions_adddup2(&mut *actions.0, from, to)
                })?;
            }
            sp.actions = Some(actions);
        }
        Ok(sp)
    }

    /// The executable that runs: argv[0] as found in PATH, if it was looked up there.
    pub fn executable(&self) -> Option<String> {
        self.resolved
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned())
    }

    /// The read end of the `--stdout pipe` pipe, to drain while the child runs.
    pub fn pipe_fd(&self) -> Option<RawFd> {
        self.pipe_read.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Before a run (outside the timed span): rewinds the `--input` file and empties the
    /// `--stdout FILE` file.
    pub fn prepare_output(&mut self) {
        if let Some(f) = &mut self.in_file {
            let _ = f.rewind();
        }
        if let Some(f) = &mut self.out_file {
            let regular = f.metadata().map(|m| m.is_file()).unwrap_or(false);
            if regular {
                let _ = f.set_len(0);
                let _ = f.rewind();
            }
        }
    }

    /// Starts the command; the child's process group id is its pid.
    pub fn spawn(&mut self) -> Result<libc::pid_t, SpawnError> {
        let mut pid: libc::pid_t = 0;
        let actions = self
            .actions
            .as_ref()
            .map_or(std::ptr::null(), |a| &*a.0 as *const _);
        // SAFETY: argv is a NULL-terminated array of pointers into `_args`, which lives as
        // long as self; attr and actions are initialised; environ is the process environment.
        let rc = unsafe {
            match &self.resolved {
                Some(path) => libc::posix_spawn(
                    &mut pid,
                    path.as_ptr(),
                    actions,
                    &*self.attr.0,
                    self.argv.as_ptr(),
                    environ,
                ),
                None => libc::posix_spawnp(
                    &mut pid,
                    self.argv[0],
                    actions,
                    &*self.attr.0,
                    self.argv.as_ptr(),
                    environ,
                ),
            }
        };
        if rc == 0 {
            Ok(pid)
        } else {
            Err(explain(&self.program, rc))
        }
    }
}

/// The first executable regular file named `name` in PATH, as execvp(3) would find it; `None`
/// for a name with a `/`, or when there is none (then posix_spawnp reports why).
pub fn resolve_in_path(name: &OsStr) -> Option<PathBuf> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') {
        return None;
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        // An empty PATH entry means the current directory, as for execvp.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(name);
        let Ok(meta) = std::fs::metadata(&cand) else {
            continue;
        };
        let Ok(c) = CString::new(cand.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: access only reads the NUL-terminated path.
        if meta.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Some(cand);
        }
    }
    None
}

/// The first file or directory named `name` in PATH, executable or not (for messages).
fn existing_in_path(name: &OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| std::fs::metadata(c).is_ok())
}

/// The message and exit code for a failed spawn of `program` with errno `errno`.
pub fn explain(program: &str, errno: i32) -> SpawnError {
    let err = io::Error::from_raw_os_error(errno);
    let path = Path::new(program);
    let has_slash = program.contains('/');
    let (code, message) = match errno {
        libc::ENOENT if has_slash && path.exists() => (
            EXIT_NOT_FOUND,
            format!("{program}: cannot run it: the interpreter on its #! line was not found"),
        ),
        libc::ENOENT if has_slash => (EXIT_NOT_FOUND, format!("{program}: no such file")),
        libc::ENOENT => (
            EXIT_NOT_FOUND,
            format!("{program}: command not found (not in any directory of PATH)"),
        ),
        // posix_spawnp says EACCES when a PATH directory could not be searched even though
        // the command is nowhere: that is "not found" to the user.
        libc::EACCES if !has_slash => match existing_in_path(OsStr::new(program)) {
            None => (
                EXIT_NOT_FOUND,
                format!("{program}: command not found (not in any directory of PATH)"),
            ),
            Some(found) => (
                EXIT_NOT_EXECUTABLE,
                format!(
                    "{}: permission denied (not executable: chmod +x it, or it is on a noexec mount)",
                    found.display()
                ),
            ),
        },
        libc::EACCES if path.is_dir() => {
            (EXIT_NOT_EXECUTABLE, format!("{program}: is a directory"))
        }
        libc::EACCES => (
            EXIT_NOT_EXECUTABLE,
            format!(
                "{program}: permission denied (not executable: chmod +x it, or it is on a noexec mount)"
            ),
        ),
        libc::ENOEXEC => (
            EXIT_NOT_EXECUTABLE,
            format!(
                "{program}: cannot execute: not a binary this system runs and no #! line (try --shell)"
            ),
        ),
        _ => (
            EXIT_OWN_FAILURE,
            format!("{program}: cannot start it: {err}"),
        ),
    };
    SpawnError { code, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_policies() {
        assert_eq!(Stdout::parse("null").unwrap(), Stdout::Null);
        assert_eq!(Stdout::parse("pipe").unwrap(), Stdout::Pipe);
        assert_eq!(Stdout::parse("inherit").unwrap(), Stdout::Inherit);
        assert_eq!(
            Stdout::parse("out.txt").unwrap(),
            Stdout::File(PathBuf::from("out.txt"))
        );
        assert!(Stdout::parse("").is_err());
    }

    #[test]
    fn path_lookup() {
        let sh = resolve_in_path(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute() || sh.starts_with("."));
        assert!(resolve_in_path(OsStr::new("/bin/sh")).is_none());
        assert!(resolve_in_path(OsStr::new("no-such-command-timecmd")).is_none());
    }

    #[test]
    fn exit_codes_like_env() {
        assert_eq!(explain("no-such-cmd-x", libc::ENOENT).code, 127);
        assert_eq!(explain("/no/such/file", libc::ENOENT).code, 127);
        assert_eq!(explain("/etc", libc::EACCES).code, 126);
        assert!(explain("/etc", libc::EACCES).message.contains("directory"));
        assert_eq!(explain("/etc/passwd", libc::EACCES).code, 126);
        assert_eq!(explain("x", libc::ENOEXEC).code, 126);
        assert_eq!(explain("x", libc::E2BIG).code, 125);
    }
}
