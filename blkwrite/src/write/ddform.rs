//! dd's operands read as blkwrite's flags, so that `dd if=/dev/zero of=F bs=64M count=4
//! oflag=direct conv=fsync` runs with the word dd replaced: each operand becomes the flag that
//! means the same (bs= is --bs, oflag=direct is --direct...), and an operand blkwrite cannot
//! honour (a real file to copy, iflag=, skip=) is refused saying what to use instead.
//!
//! Mixing: a blkwrite flag that says something no operand says (--label, --verify, -o...)
//! goes with the operands; a flag that says the same thing as an operand (bs= and -b, of= and
//! a TARGET) is refused, as it could only mean one of the two.

use crate::write::ddsize::dd_size;
use clap::Command;
use measure::Failure;
use std::collections::BTreeSet;
use std::ffi::OsString;

/// The hidden flag that carries what dd form changes beyond the other flags.
pub const FLAG: &str = "--dd-form";

/// The operands dd has: the ones blkwrite reads, and the ones it refuses by name.
const READ: &[&str] = &[
    "if", "of", "bs", "count", "seek", "oseek", "oflag", "conv", "status",
];
const REFUSED: &[(&str, &str)] = &[
    (
        "ibs",
        "blkwrite reads no input: give bs= (the size of each write)",
    ),
    ("obs", "give bs= (the size of each write)"),
    ("cbs", "blkwrite does no block conversion"),
    ("skip", "blkwrite reads no input to skip into"),
    ("iseek", "blkwrite reads no input to seek into"),
    (
        "iflag",
        "blkwrite reads no input: its data is a pattern made in memory",
    ),
];

/// How a dd-form run reports at the end, and what it does to an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DdForm {
    /// status=: which of dd's closing lines are printed, and the progress line.
    pub status: Status,
    /// dd truncates an existing output file (at seek=) unless conv=notrunc.
    pub truncate: bool,
    /// conv=excl: an existing file is refused (blkwrite's own rule), else overwritten as dd does.
    pub excl: bool,
}

/// dd's status= levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The three closing lines.
    Default,
    /// The records lines only (status=noxfer).
    NoXfer,
    /// Nothing (status=none, or -q).
    None,
    /// The closing lines, and the progress line while writing (status=progress).
    Progress,
}

impl DdForm {
    /// The value of the hidden flag.
    fn text(&self) -> String {
        let status = match self.status {
            Status::Default => "default",
            Status::NoXfer => "noxfer",
            Status::None => "none",
            Status::Progress => "progress",
        };
        format!("{status},{},{}", self.truncate, self.excl)
    }

    /// Reads the hidden flag's value back.
    pub fn parse(s: &str) -> Option<DdForm> {
        let mut it = s.split(',');
        let status = match it.next()? {
            "default" => Status::Default,
            "noxfer" => Status::NoXfer,
            "none" => Status::None,
            "progress" => Status::Progress,
            _ => return None,
        };
        let truncate = it.next()? == "true";
        let excl = it.next()? == "true";
        Some(DdForm {
            status,
            truncate,
            excl,
        })
    }
}

/// The operands given, each once.
#[derive(Default)]
struct Operands {
    input: Option<String>,
    of: Option<OsString>,
    bs: Option<u64>,
    count: Option<u64>,
    seek: Option<u64>,
    oflag: Vec<String>,
    conv: Vec<String>,
    status: Option<String>,
}

/// The key of `arg` when it is one of dd's operands (`key=value`, key one of dd's).
fn operand_key(arg: &OsString) -> Option<&str> {
    let s = arg.to_str()?;
    let (key, _) = s.split_once('=')?;
    (READ.contains(&key) || REFUSED.iter().any(|(k, _)| *k == key)).then_some(key)
}

/// The flags of `cmd` that take their value as the next argument, by spelling.
fn valued_spellings(cmd: &Command) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in cmd.get_arguments() {
        if a.is_positional() || !a.get_action().takes_values() || a.is_require_equals_set() {
            continue;
        }
        out.extend(a.get_short().map(|c| format!("-{c}")));
        for l in a.get_long_and_visible_aliases().into_iter().flatten() {
            out.insert(format!("--{l}"));
        }
        for l in a.get_all_aliases().into_iter().flatten() {
            out.insert(format!("--{l}"));
        }
    }
    out
}

/// The id of the flag `arg` spells (`-b4M`, `--bs=4M`, `--block-size`), if any.
fn flag_id(cmd: &Command, arg: &str) -> Option<String> {
    let found = if let Some(long) = arg.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        cmd.get_arguments().find(|a| {
            a.get_long() == Some(name)
                || a.get_all_aliases().into_iter().flatten().any(|l| l == name)
        })
    } else {
        let c = arg.strip_prefix('-')?.chars().next()?;
        cmd.get_arguments().find(|a| a.get_short() == Some(c))
    };
    found.map(|a| a.get_id().to_string())
}

/// Rewrites dd's operands in `args` (the program name first) into blkwrite's flags; `args`
/// without any come back as they are.
pub fn translate(cmd: &Command, args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
    let valued = valued_spellings(cmd);
    let mut ops = Operands::default();
    let mut rest: Vec<OsString> = Vec::new();
    let mut given: BTreeSet<String> = BTreeSet::new();
    let mut any = false;
    let mut it = args.into_iter();
    let argv0 = it.next().unwrap_or_else(|| "blkwrite".into());
    let mut after_dashes = false;
    while let Some(arg) = it.next() {
        if after_dashes {
            rest.push(arg);
            continue;
        }
        if arg == "--" {
            after_dashes = true;
            rest.push(arg);
            continue;
        }
        if let Some(key) = operand_key(&arg) {
            let text = arg.to_string_lossy().into_owned();
            let value = text.split_once('=').map_or("", |(_, v)| v).to_string();
            let key = key.to_string();
            read_operand(&mut ops, &key, &value)?;
            any = true;
            continue;
        }
        let s = arg.to_string_lossy().into_owned();
        if s.starts_with('-') && s.len() > 1 {
            if let Some(id) = flag_id(cmd, &s) {
                given.insert(id);
            }
            let bare = !s.contains('=') && (s.starts_with("--") || s.len() == 2);
            rest.push(arg);
            if bare && valued.contains(&s) {
                rest.extend(it.next());
            }
            continue;
        }
        rest.push(arg);
    }
    if !any {
        let mut all = vec![argv0];
        all.extend(rest);
        return Ok(all);
    }
    let (flags, target) = flags_for(&ops, &given)?;
    let mut out = vec![argv0];
    out.extend(flags.into_iter().map(OsString::from));
    out.extend(rest);
    if !after_dashes && target.to_string_lossy().starts_with('-') {
        out.push("--".into());
    }
    out.push(target);
    Ok(out)
}

/// Notes one operand, refusing one given twice and those blkwrite cannot honour.
fn read_operand(ops: &mut Operands, key: &str, value: &str) -> Result<(), Failure> {
    if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == key) {
        return Err(Failure::usage(format!(
            "{key}=: {why}; blkwrite takes dd's if=/dev/zero or /dev/urandom, of=, bs=, count=, seek=, oflag=, conv= and status="
        )));
    }
    let twice = || Failure::usage(format!("{key}= is given twice: give it once"));
    let size = |v: &str| dd_size(v).map_err(|e| Failure::usage(format!("{key}={e}")));
    match key {
        "if" => {
            if ops.input.replace(value.to_string()).is_some() {
                return Err(twice());
            }
        }
        "of" => {
            if ops.of.replace(OsString::from(value)).is_some() {
                return Err(twice());
            }
        }
        "bs" => {
            if ops.bs.replace(size(value)?).is_some() {
                return Err(twice());
            }
        }
        "count" => {
            if ops.count.replace(size(value)?).is_some() {
                return Err(twice());
            }
        }
        "seek" | "oseek" => {
            if ops.seek.replace(size(value)?).is_some() {
                return Err(twice());
            }
        }
        "oflag" => ops.oflag.extend(value.split(',').map(str::to_string)),
        "conv" => ops.conv.extend(value.split(',').map(str::to_string)),
        _ => {
            if ops.status.replace(value.to_string()).is_some() {
                return Err(twice());
            }
        }
    }
    Ok(())
}

/// Refuses an operand given with the blkwrite flag that says the same thing.
fn clash(given: &BTreeSet<String>, operand: &str, ids: &[&str]) -> Result<(), Failure> {
    if let Some(id) = ids.iter().find(|id| given.contains(**id)) {
        let flag = match *id {
            "bs" => "-b/--bs",
            "count" => "-c/--count",
            "size" => "-s/--size",
            "quiet" => "-q",
            other => {
                return Err(Failure::usage(format!(
                    "{operand} and --{} say the same thing: give one of them",
                    other.replace('_', "-")
                )));
            }
        };
        return Err(Failure::usage(format!(
            "{operand} and {flag} say the same thing: give one of them"
        )));
    }
    Ok(())
}

/// blkwrite's flags for the operands, and the target.
fn flags_for(ops: &Operands, given: &BTreeSet<String>) -> Result<(Vec<String>, OsString), Failure> {
    let mut f: Vec<String> = Vec::new();
    let Some(target) = ops.of.clone() else {
        return Err(Failure::usage(
            "of= is missing: blkwrite writes a file or a block device, never stdout as dd does without of=; give of=FILE",
        ));
    };
    if let Some(input) = &ops.input {
        clash(given, "if=", &["pattern"])?;
        let pattern = match input.as_str() {
            "/dev/zero" => "zero",
            "/dev/urandom" | "/dev/random" => "random",
            other => {
                return Err(Failure::usage(format!(
                    "if={other}: blkwrite writes a pattern (if=/dev/zero or if=/dev/urandom), it does not copy a file; use dd to copy {other}"
                )));
            }
        };
        f.extend(["--pattern".into(), pattern.into()]);
    }
    // dd's default block is 512 bytes; blkwrite's own is 1M.
    let bs = ops.bs.unwrap_or(512);
    if ops.bs.is_some() {
        clash(given, "bs=", &["bs"])?;
    }
    if !given.contains("bs") {
        f.extend(["--bs".into(), bs.to_string()]);
    }
    match ops.count {
        Some(0) => {
            return Err(Failure::usage(
                "count=0 writes nothing (dd makes an empty file): give count=N with N >= 1",
            ));
        }
        Some(n) => {
            clash(given, "count=", &["count", "size"])?;
            f.extend(["--count".into(), n.to_string()]);
        }
        None if !["count", "size", "time"]
            .iter()
            .any(|id| given.contains(*id))
            && !is_block_device(&target) =>
        {
            return Err(Failure::usage(format!(
                "count= is missing: dd would write to {} until the disk is full; give count=N (N writes of bs=)",
                target.to_string_lossy()
            )));
        }
        None => {}
    }
    if let Some(n) = ops.seek {
        clash(given, "seek=", &["offset"])?;
        let bytes = n
            .checked_mul(bs)
            .ok_or_else(|| Failure::usage(format!("seek={n} times bs= is too large")))?;
        f.extend(["--offset".into(), bytes.to_string()]);
    }
    oflags(ops, given, &mut f)?;
    let form = convs(ops, given, &mut f)?;
    f.extend([FLAG.to_string(), form.text()]);
    Ok((f, target))
}

fn is_block_device(p: &OsString) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

/// oflag=direct, dsync, sync.
fn oflags(ops: &Operands, given: &BTreeSet<String>, f: &mut Vec<String>) -> Result<(), Failure> {
    let mut direct = false;
    let mut dsync = false;
    for o in &ops.oflag {
        match o.as_str() {
            "direct" => direct = true,
            // O_SYNC also waits for the metadata (mtime) on every write; O_DSYNC for the data
            // and what reading it back needs, which is what a write benchmark times.
            "dsync" | "sync" => dsync = true,
            other => {
                return Err(Failure::usage(format!(
                    "oflag={other}: blkwrite takes oflag=direct, dsync and sync (a comma list)"
                )));
            }
        }
    }
    if direct {
        clash(given, "oflag=direct", &["direct"])?;
        f.push("--direct".into());
    }
    if dsync {
        clash(given, "oflag=dsync", &["dsync"])?;
        f.push("--dsync".into());
    }
    Ok(())
}

/// conv=fsync, fdatasync, notrunc, excl; status=; the flush as dd does it (none without
/// conv=fsync or fdatasync).
fn convs(ops: &Operands, given: &BTreeSet<String>, f: &mut Vec<String>) -> Result<DdForm, Failure> {
    let (mut sync, mut notrunc, mut excl) = (None, false, false);
    for c in &ops.conv {
        match c.as_str() {
            "fsync" | "fdatasync" => {
                if sync.replace(c.as_str()).is_some() {
                    return Err(Failure::usage(
                        "conv=fsync and conv=fdatasync: give one of them",
                    ));
                }
            }
            "notrunc" => notrunc = true,
            "excl" => excl = true,
            other => {
                return Err(Failure::usage(format!(
                    "conv={other}: blkwrite takes conv=fsync, fdatasync, notrunc and excl (a comma list); it converts no data"
                )));
            }
        }
    }
    match sync {
        Some(c) => {
            clash(given, &format!("conv={c}"), &["flush", "fdatasync"])?;
            if c == "fdatasync" {
                f.push("--fdatasync".into());
            }
        }
        None if !given.contains("flush") && !given.contains("fdatasync") => {
            f.extend(["--flush".into(), "none".into()]);
        }
        None => {}
    }
    let status = match ops.status.as_deref() {
        None => Status::Default,
        Some("noxfer") => Status::NoXfer,
        Some("progress") => Status::Progress,
        Some("none") => {
            if !given.contains("quiet") {
                f.push("--quiet".into());
            }
            Status::None
        }
        Some(other) => {
            return Err(Failure::usage(format!(
                "status={other}: dd's levels are none, noxfer and progress"
            )));
        }
    };
    let status = if given.contains("quiet") {
        Status::None
    } else {
        status
    };
    Ok(DdForm {
        status,
        truncate: !notrunc && !excl,
        excl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(args: &[&str]) -> Result<Vec<String>, String> {
        let args = std::iter::once("blkwrite")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        translate(&crate::write::cli::command(), args)
            .map(|v| {
                v.into_iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            })
            .map_err(|f| f.message.unwrap_or_default())
    }

    #[test]
    fn the_issue_command_becomes_flags() {
        let v = tr(&["of=F", "bs=64M", "count=4", "oflag=direct", "conv=fsync"]).unwrap();
        assert_eq!(
            v,
            [
                "blkwrite",
                "--bs",
                "67108864",
                "--count",
                "4",
                "--direct",
                "--dd-form",
                "default,true,false",
                "F"
            ]
        );
        let v = tr(&[
            "if=/dev/zero",
            "of=F",
            "count=1",
            "status=none",
            "--label",
            "x",
        ])
        .unwrap();
        assert!(v.windows(2).any(|w| w == ["--pattern", "zero"]));
        assert!(v.windows(2).any(|w| w == ["--flush", "none"]));
        assert!(v.contains(&"--quiet".to_string()));
        assert!(v.windows(2).any(|w| w == ["--label", "x"]));
        // A flag's value that looks like an operand stays the flag's.
        let v = tr(&["--name", "of=x", "-s", "1M", "F"]).unwrap();
        assert_eq!(v, ["blkwrite", "--name", "of=x", "-s", "1M", "F"]);
    }

    #[test]
    fn refusals_say_what_to_do() {
        assert!(
            tr(&["if=/etc/passwd", "of=F", "count=1"])
                .unwrap_err()
                .contains("use dd")
        );
        assert!(
            tr(&["of=F", "count=1", "skip=3"])
                .unwrap_err()
                .contains("skip=")
        );
        assert!(
            tr(&["of=F", "count=1", "iflag=direct"])
                .unwrap_err()
                .contains("iflag=")
        );
        assert!(
            tr(&["of=F", "count=1", "oflag=append"])
                .unwrap_err()
                .contains("oflag=append")
        );
        assert!(
            tr(&["of=F", "count=1", "conv=ucase"])
                .unwrap_err()
                .contains("conv=ucase")
        );
        assert!(
            tr(&["of=F", "bs=1M"])
                .unwrap_err()
                .contains("count= is missing")
        );
        assert!(
            tr(&["bs=1M", "count=1"])
                .unwrap_err()
                .contains("of= is missing")
        );
        assert!(
            tr(&["of=F", "bs=1M", "-b", "4k", "count=1"])
                .unwrap_err()
                .contains("-b/--bs")
        );
        assert!(
            tr(&["of=F", "count=1", "-c", "2"])
                .unwrap_err()
                .contains("say the same")
        );
        assert!(
            tr(&["of=F", "count=1", "oflag=direct", "--direct"])
                .unwrap_err()
                .contains("--direct")
        );
        assert!(
            tr(&["of=F", "count=1", "conv=fsync", "--flush", "end"])
                .unwrap_err()
                .contains("--flush")
        );
        assert!(
            tr(&["of=F", "count=1", "count=2"])
                .unwrap_err()
                .contains("twice")
        );
    }

    #[test]
    fn hidden_flag_round_trips() {
        let d = DdForm {
            status: Status::NoXfer,
            truncate: false,
            excl: true,
        };
        assert_eq!(DdForm::parse(&d.text()), Some(d));
    }
}
