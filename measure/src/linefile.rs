//! Records into a regular file, whole lines only: a write that fails part way (a full file
//! system) is cut back to the last whole line it wrote, and the first record starts on a
//! line of its own when the file ends in a fragment left by someone else, so that a reader
//! never finds a torn line glued to the next run's first record.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;

/// A regular file that records go to (`-o FILE`, or stdout or stderr redirected to a file).
#[derive(Debug)]
pub struct LineFile {
    file: File,
    /// Opened with O_APPEND: every write lands at the end, wherever the offset is.
    append: bool,
    /// Whether the first write has looked at how the file ends.
    checked: bool,
}

/// `file` as the destination of records: a [`LineFile`] when it is a regular file, else
/// as it is (a pipe, a terminal, a device: nothing there to cut back).
pub fn records_to(file: File) -> Box<dyn Write + Send> {
    match LineFile::new(file) {
        Ok(f) => Box::new(f),
        Err(file) => Box::new(file),
    }
}

/// Records to stdout: a [`LineFile`] on a duplicate of it when it is a regular file (the
/// same open file, offset and O_APPEND shared), else the process's buffered stdout.
pub fn stdout() -> Box<dyn Write + Send> {
    match stream_file(io::stdout().as_fd()) {
        Some(f) => Box::new(f),
        None => Box::new(io::stdout()),
    }
}

/// Records to stderr, as [`stdout`].
pub fn stderr() -> Box<dyn Write + Send> {
    match stream_file(io::stderr().as_fd()) {
        Some(f) => Box::new(f),
        None => Box::new(io::stderr()),
    }
}

fn stream_file(fd: std::os::fd::BorrowedFd<'_>) -> Option<LineFile> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    LineFile::new(file).ok()
}

impl LineFile {
    /// `file` when it is a regular file; else it is handed back.
    pub fn new(file: File) -> Result<LineFile, File> {
        match file.metadata() {
            Ok(m) if m.file_type().is_file() => {
                let append = rustix::fs::fcntl_getfl(&file)
                    .is_ok_and(|f| f.contains(rustix::fs::OFlags::APPEND));
                Ok(LineFile {
                    file,
                    append,
                    checked: false,
                })
            }
            _ => Err(file),
        }
    }

    /// Where the next write lands: the end for O_APPEND, else the offset.
    fn position(&mut self) -> io::Result<u64> {
        if self.append {
            Ok(self.file.metadata()?.len())
        } else {
            io::Seek::stream_position(&mut self.file)
        }
    }

    /// Whether the byte before `at` is a newline (true at the start of the file, and when
    /// the file cannot be read back: a newline would then be a guess).
    fn after_newline(&self, at: u64) -> bool {
        if at == 0 {
            return true;
        }
        let mut b = [0u8; 1];
        let read = match self.file.read_at(&mut b, at - 1) {
            Ok(n) => Ok(n),
            // Opened for writing only (`-o`, `>>`): read it through another open of the file.
            Err(_) => File::open(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
                .and_then(|f| f.read_at(&mut b, at - 1)),
        };
        !matches!(read, Ok(1)) || b[0] == b'\n'
    }

    /// After a write that failed once `written` bytes of `data` (written at `start`) were in
    /// the file: cuts the file back to the last whole line among them, when nobody else
    /// wrote after them (the file ends where they end).
    fn cut_back(&mut self, start: u64, data: &[u8], written: usize) {
        let keep = data[..written]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if keep == written {
            return;
        }
        let end = start + written as u64;
        let ends_here = self.file.metadata().is_ok_and(|m| m.len() == end);
        if ends_here && self.file.set_len(start + keep as u64).is_ok() && !self.append {
            let _ = io::Seek::seek(&mut self.file, io::SeekFrom::Start(start + keep as u64));
        }
    }
}

impl Write for LineFile {
    /// Writes `buf` whole (see [`Write::write_all`] below): records are never split.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    /// Writes whole lines: on a failure, what was written of an unfinished line is cut off.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let start = self.position()?;
        let mut joined = Vec::new();
        let data = if !self.checked && !self.after_newline(start) {
            // A fragment ends the file: it becomes a line of its own, not our record's start.
            joined.push(b'\n');
            joined.extend_from_slice(buf);
            &joined[..]
        } else {
            buf
        };
        self.checked = true;
        let mut written = 0;
        while written < data.len() {
            match self.file.write(&data[written..]) {
                Ok(0) => {
                    self.cut_back(start, data, written);
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the file took no more bytes",
                    ));
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.cut_back(start, data, written);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(path: &std::path::Path) -> String {
        let mut s = String::new();
        File::open(path).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn a_fragment_at_the_end_gets_its_own_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"torn\":").unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut w = records_to(f);
        w.write_all(b"{\"a\":1}\n").unwrap();
        w.write_all(b"{\"b\":2}\n").unwrap();
        assert_eq!(read(&path), "{\"torn\":\n{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn a_whole_file_gets_no_extra_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"a\":1}\n").unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut w = records_to(f);
        w.write_all(b"{\"b\":2}\n").unwrap();
        assert_eq!(read(&path), "{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn a_failed_write_is_cut_back_to_the_last_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let f = File::create(&path).unwrap();
        let mut w = LineFile::new(f).unwrap();
        w.write_all(b"one\n").unwrap();
        // What a write cut short by a full disk leaves: a line and a half of a batch.
        let data = b"two\nthree\n";
        w.file.write_all(&data[..6]).unwrap();
        w.cut_back(4, data, 6);
        assert_eq!(read(&path), "one\ntwo\n");
        w.write_all(b"four\n").unwrap();
        assert_eq!(read(&path), "one\ntwo\nfour\n");
    }
}
