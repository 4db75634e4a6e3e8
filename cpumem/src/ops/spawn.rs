//! The spawn probe: posix_spawn(3) of a tiny static program, and waitpid(2) for it.
//!
//! The program is made here, at run time: a static ELF executable of about 130 bytes whose
//! only instructions are `exit_group(0)` (for x86_64 and aarch64), written into a memfd and
//! spawned through `/proc/self/fd/N`. So the probe needs no C toolchain and no file of the
//! system's: /bin/true is dynamic (its figure would include ld.so loading the C library,
//! which varies by distribution), Cargo cannot link one binary of a crate statically on
//! stable Rust (a `no_std` binary needs `panic = "abort"` for the whole workspace, a static
//! glibc needs its static archives), and a file under /tmp may sit on a noexec mount. Where
//! the kernel refuses to execute a memfd (vm.memfd_noexec), the program is written to a
//! private temporary file instead; on other CPUs the probe spawns `/bin/true` and says so.

use super::{Op, since};
use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, posix_spawn};
use nix::sys::wait::{WaitStatus, waitpid};
use rustix::fs::MemfdFlags;
use serde_json::{Map, Value, json};
use std::ffi::CString;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::Instant;

/// Where the program's image lives in memory (a classic static-executable address).
const BASE: u64 = 0x40_0000;
/// The ELF header and one program header: the code follows at this offset.
const HEADERS: usize = 64 + 56;

/// `exit_group(0)` in this CPU's instructions, with the ELF machine number.
fn exit_code() -> Option<(u16, &'static [u8])> {
    if cfg!(target_arch = "x86_64") {
        // xor edi, edi; mov eax, 231; syscall
        Some((62, &[0x31, 0xff, 0xb8, 0xe7, 0, 0, 0, 0x0f, 0x05]))
    } else if cfg!(target_arch = "aarch64") {
        // mov x0, #0; mov x8, #94; svc #0
        Some((
            183,
            &[
                0x00, 0x00, 0x80, 0xd2, 0xc8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
            ],
        ))
    } else {
        None
    }
}

/// A static little-endian ELF64 executable that runs `code`: one loadable segment holding
/// the headers and the code, entry right after the headers.
pub fn tiny_elf(machine: u16, code: &[u8]) -> Vec<u8> {
    let size = (HEADERS + code.len()) as u64;
    let mut e = Vec::with_capacity(HEADERS + code.len());
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]); // ELF64, LSB, version 1, SysV
    e.extend_from_slice(&[0; 8]);
    e.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    e.extend_from_slice(&machine.to_le_bytes());
    e.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
    e.extend_from_slice(&(BASE + HEADERS as u64).to_le_bytes()); // entry
    e.extend_from_slice(&64u64.to_le_bytes()); // program headers' offset
    e.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    e.extend_from_slice(&0u32.to_le_bytes()); // flags
    for half in [64u16, 56, 1, 64, 0, 0] {
        // header size, program header size and count, section header size, count, names
        e.extend_from_slice(&half.to_le_bytes());
    }
    e.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    e.extend_from_slice(&5u32.to_le_bytes()); // PF_R | PF_X
    e.extend_from_slice(&0u64.to_le_bytes()); // offset
    e.extend_from_slice(&BASE.to_le_bytes()); // virtual address
    e.extend_from_slice(&BASE.to_le_bytes()); // physical address
    e.extend_from_slice(&size.to_le_bytes()); // size in the file
    e.extend_from_slice(&size.to_le_bytes()); // size in memory
    e.extend_from_slice(&0x1000u64.to_le_bytes()); // alignment
    e.extend_from_slice(code);
    e
}

/// Where the program to spawn is: a memfd kept open, a temporary file removed on drop, or
/// the system's `true`.
#[derive(Debug)]
enum Program {
    /// Kept open: the path names its descriptor.
    Memfd {
        _open: std::fs::File,
    },
    File(PathBuf),
    System,
}

/// The spawn probe: the program and its path as posix_spawn takes it.
#[derive(Debug)]
pub struct Spawn {
    program: Program,
    path: CString,
}

impl Spawn {
    pub fn new() -> io::Result<Self> {
        let Some((machine, code)) = exit_code() else {
            return Ok(Spawn {
                program: Program::System,
                path: CString::from(c"/bin/true"),
            });
        };
        let elf = tiny_elf(machine, code);
        let mut s = match in_memfd(&elf) {
            Ok(f) => {
                let path = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
                Spawn {
                    program: Program::Memfd { _open: f },
                    path,
                }
            }
            Err(_) => in_file(&elf)?,
        };
        // A memfd the kernel will not execute: the file instead.
        if matches!(s.program, Program::Memfd { .. }) && s.run(1).is_err() {
            s = in_file(&elf)?;
        }
        Ok(s)
    }

    fn spawn_once(&self, fa: &PosixSpawnFileActions, attr: &PosixSpawnAttr) -> io::Result<()> {
        let argv = [self.path.as_c_str()];
        let env: [&std::ffi::CStr; 0] = [];
        let pid = posix_spawn(self.path.as_c_str(), fa, attr, &argv, &env)?;
        match waitpid(pid, None)? {
            WaitStatus::Exited(_, 0) => Ok(()),
            other => Err(io::Error::other(format!(
                "{}: ended with {other:?}",
                self.path.to_string_lossy()
            ))),
        }
    }
}

/// The program in a memfd (executable where the kernel asks memfds to say so).
fn in_memfd(elf: &[u8]) -> io::Result<std::fs::File> {
    let exec = MemfdFlags::CLOEXEC | MemfdFlags::EXEC;
    let fd = rustix::fs::memfd_create("cpumem-spawnee", exec)
        .or_else(|_| rustix::fs::memfd_create("cpumem-spawnee", MemfdFlags::CLOEXEC))?;
    let mut f = std::fs::File::from(fd);
    f.write_all(elf)?;
    Ok(f)
}

/// The program in a private temporary file.
fn in_file(elf: &[u8]) -> io::Result<Spawn> {
    let path = std::env::temp_dir().join(format!(
        "cpumem-spawnee-{}-{:x}",
        std::process::id(),
        measure::parts::random_u64()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&path)?;
    f.write_all(elf)?;
    drop(f);
    let c = CString::new(path.as_os_str().as_encoded_bytes())?;
    Ok(Spawn {
        program: Program::File(path),
        path: c,
    })
}

impl Op for Spawn {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let fa = PosixSpawnFileActions::init()?;
        let attr = PosixSpawnAttr::init()?;
        let t0 = Instant::now();
        for _ in 0..n {
            self.spawn_once(&fa, &attr)?;
        }
        Ok(since(t0))
    }

    fn info(&self) -> Map<String, Value> {
        let (program, bytes) = match &self.program {
            Program::Memfd { .. } => ("static exit(0) ELF in a memfd", tiny_len()),
            Program::File(_) => ("static exit(0) ELF in a temporary file", tiny_len()),
            Program::System => ("/bin/true (no tiny program for this CPU)", 0),
        };
        measure::parts::info(json!({"program": program, "program_bytes": bytes}))
    }
}

fn tiny_len() -> usize {
    exit_code().map_or(0, |(_, c)| HEADERS + c.len())
}

impl Drop for Spawn {
    fn drop(&mut self) {
        if let Program::File(p) = &self.program {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tiny_program_runs_and_exits_zero() {
        let mut s = Spawn::new().expect("the spawn probe");
        s.run(3).expect("three spawns");
        let elf = exit_code().map(|(m, c)| tiny_elf(m, c));
        if let Some(e) = elf {
            assert_eq!(&e[..4], b"\x7fELF");
            assert_eq!(e.len(), tiny_len());
        }
    }
}
