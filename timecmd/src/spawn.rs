//! Starting a run: `posix_spawnp` into a process group of its own, stdout where `--stdout` says.
//!
//! The argument vector, the environment, the spawn attributes and the file actions are built
//! once and reused for every run, so the only work between the two clock readings is the
//! spawn itself (with nix's two pointer arrays for argv and envp) and the reaping.
//! `posix_spawnp` (glibc's runs `clone(CLONE_VM|CLONE_VFORK)`) never copies timecmd's page
//! tables, which keeps the per-run cost low; timecmd's own memory stays small because a
//! child's max RSS can never read below the spawner's.

use crate::exit::{EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_OWN_FAILURE};
use nix::spawn::{
    PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags, posix_spawn, posix_spawnp,
};
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{AccessFlags, Pid, access};
use std::ffi::{CString, OsStr};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

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

/// The `--stdout pipe` pipe's read end, drained while a run goes on, with a buffer kept
/// between reads so that draining never pays for zeroing one.
pub struct Drain {
    pipe: File,
    buf: Box<[u8]>,
}

impl Drain {
    /// The read end, to wait on.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.pipe.as_fd()
    }

    /// Reads and discards what is in the pipe now (its read end does not block).
    pub fn drain(&mut self) {
        while matches!(self.pipe.read(&mut self.buf), Ok(n) if n > 0) {}
    }
}

/// The spawn attributes of every run: a process group of its own, no blocked signals, and
/// SIGPIPE at its default (Rust ignores it; the child gets it back, as std's Command does).
fn attributes() -> io::Result<PosixSpawnAttr> {
    let mut attr = PosixSpawnAttr::init()?;
    attr.set_sigmask(&SigSet::empty())?;
    let mut dfl = SigSet::empty();
    dfl.add(Signal::SIGPIPE);
    attr.set_sigdefault(&dfl)?;
    attr.set_pgroup(Pid::from_raw(0))?;
    attr.set_flags(
        PosixSpawnFlags::POSIX_SPAWN_SETPGROUP
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
    )?;
    Ok(attr)
}

/// The process environment as `KEY=VALUE` strings, passed on to every run unchanged.
fn environment() -> Vec<CString> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            // One allocation of the final size per variable.
            let mut kv = Vec::with_capacity(k.len() + v.len() + 2);
            kv.extend_from_slice(k.as_bytes());
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            kv.push(0);
            CString::from_vec_with_nul(kv).ok()
        })
        .collect()
}

/// The file, or /dev/null, that becomes the child's stdin.
fn open_stdin(stdin: &Stdin) -> io::Result<Option<File>> {
    Ok(match stdin {
        Stdin::Inherit => None,
        Stdin::Null => Some(File::open("/dev/null")?),
        Stdin::File(p) => Some(
            File::open(p)
                .map_err(|e| io::Error::new(e.kind(), format!("--input {}: {e}", p.display())))?,
        ),
    })
}

/// Where the child's stdout goes: the descriptor it gets, the `--stdout FILE` file to empty
/// before each run, and the pipe to drain.
#[derive(Default)]
struct Out {
    fd: Option<OwnedFd>,
    file: Option<File>,
    drain: Option<Drain>,
}

fn open_stdout(stdout: &Stdout) -> io::Result<Out> {
    Ok(match stdout {
        Stdout::Inherit => Out::default(),
        Stdout::Null => Out {
            fd: Some(OpenOptions::new().write(true).open("/dev/null")?.into()),
            ..Out::default()
        },
        Stdout::File(p) => {
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(p)
                .map_err(|e| io::Error::new(e.kind(), format!("--stdout {}: {e}", p.display())))?;
            Out {
                fd: Some(f.try_clone()?.into()),
                file: Some(f),
                drain: None,
            }
        }
        Stdout::Pipe => {
            // The child's end blocks as a normal stdout would; timecmd's end does not.
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
            nix::fcntl::fcntl(
                &r,
                nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
            )?;
            Out {
                fd: Some(w),
                file: None,
                drain: Some(Drain {
                    pipe: r.into(),
                    buf: vec![0; 16384].into_boxed_slice(),
                }),
            }
        }
    })
}

/// Spawns one command line again and again, each time in a new process group.
pub struct Spawner {
    program: String,
    /// The executable found in PATH once, up front, so that no run pays for the search.
    resolved: Option<CString>,
    args: Vec<CString>,
    env: Vec<CString>,
    attr: PosixSpawnAttr,
    actions: PosixSpawnFileActions,
    /// The file, /dev/null or pipe write end that becomes the child's stdout, and the rest.
    out: Out,
    /// The file or /dev/null that becomes the child's stdin.
    in_file: Option<File>,
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
        let args = argv
            .iter()
            .map(|a| {
                CString::new(a.as_ref().as_bytes()).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte")
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let in_file = open_stdin(stdin)?;
        let out = open_stdout(stdout)?;
        let mut actions = PosixSpawnFileActions::init()?;
        if let Some(f) = &in_file {
            actions.add_dup2(f.as_raw_fd(), 0)?;
        }
        if let Some(fd) = &out.fd {
            actions.add_dup2(fd.as_raw_fd(), 1)?;
        }
        Ok(Spawner {
            program: first.as_ref().to_string_lossy().into_owned(),
            resolved: resolve_in_path(first.as_ref())
                .and_then(|p| CString::new(p.into_os_string().into_vec()).ok()),
            args,
            env: environment(),
            attr: attributes()?,
            actions,
            out,
            in_file,
        })
    }

    /// The executable that runs: argv[0] as found in PATH, if it was looked up there.
    pub fn executable(&self) -> Option<String> {
        self.resolved
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned())
    }

    /// The `--stdout pipe` pipe, to drain while the child runs.
    pub fn drain(&mut self) -> Option<&mut Drain> {
        self.out.drain.as_mut()
    }

    /// Before a run (outside the timed span): rewinds the `--input` file and empties the
    /// `--stdout FILE` file.
    pub fn prepare_output(&mut self) {
        if let Some(f) = &mut self.in_file {
            let _ = f.rewind();
        }
        if let Some(f) = &mut self.out.file {
            let regular = f.metadata().map(|m| m.is_file()).unwrap_or(false);
            if regular {
                let _ = f.set_len(0);
                let _ = f.rewind();
            }
        }
    }

    /// Starts the command; the child's process group id is its pid.
    pub fn spawn(&mut self) -> Result<libc::pid_t, SpawnError> {
        let spawned = match &self.resolved {
            Some(path) => posix_spawn(
                path.as_c_str(),
                &self.actions,
                &self.attr,
                &self.args,
                &self.env,
            ),
            None => posix_spawnp(
                &self.args[0],
                &self.actions,
                &self.attr,
                &self.args,
                &self.env,
            ),
        };
        spawned
            .map(Pid::as_raw)
            .map_err(|e| explain(&self.program, e as i32))
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
        if meta.is_file() && access(&cand, AccessFlags::X_OK).is_ok() {
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
