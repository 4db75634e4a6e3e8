//! Man pages and shell completions generated from each tool's clap `Command`, and the check
//! that the copies committed under man/ and completions/ are up to date.

use clap::Command;
use clap_complete::Shell;
use std::path::Path;

/// The roff man page for a command, with its subcommands as pages of their own
/// (`netpipe-recv.1`), as (file name, contents).
pub fn man_pages(cmd: Command) -> Vec<(String, Vec<u8>)> {
    let mut cmd = cmd;
    cmd.build();
    let mut pages = Vec::new();
    collect(&cmd, cmd.get_name().to_string(), &mut pages);
    pages
}

fn collect(cmd: &Command, name: String, pages: &mut Vec<(String, Vec<u8>)>) {
    let page_cmd = cmd.clone().name(name.clone());
    let mut buf = Vec::new();
    let man = clap_mangen::Man::new(page_cmd)
        .date("2026-11-30")
        .source(format!("benchmatrix {}", env!("CARGO_PKG_VERSION")));
    if man.render(&mut buf).is_ok() {
        pages.push((format!("{name}.1"), tidy_roff(&buf)));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, format!("{name}-{}", sub.get_name()), pages);
    }
}

/// clap_mangen writes a blank line between two `.br` requests before a list of possible
/// values, which mandoc warns about; one `.sp` says the same.
fn tidy_roff(page: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(page)
        .replace("\n.br\n\n.br\n", "\n.sp\n")
        .into_bytes()
}

/// Completion scripts for bash, zsh and fish, as (file name, contents).
pub fn completions(cmd: Command) -> Vec<(String, Vec<u8>)> {
    let name = cmd.get_name().to_string();
    [Shell::Bash, Shell::Zsh, Shell::Fish]
        .into_iter()
        .map(|shell| {
            let mut c = cmd.clone();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut c, name.clone(), &mut buf);
            let file = match shell {
                Shell::Bash => format!("bash/{name}"),
                Shell::Zsh => format!("zsh/_{name}"),
                _ => format!("fish/{name}.fish"),
            };
            (file, buf)
        })
        .collect()
}

/// Compares generated files with the committed ones under `dir`; with `BLESS=1` in the
/// environment, writes them instead. Returns the names of the files that differ.
pub fn check_or_bless(dir: &Path, files: &[(String, Vec<u8>)]) -> Vec<String> {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, want) in files {
        let path = dir.join(name);
        if bless {
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            if let Err(e) = std::fs::write(&path, want) {
                stale.push(format!("{}: cannot write: {e}", path.display()));
            }
            continue;
        }
        if std::fs::read(&path).ok().as_deref() != Some(want.as_slice()) {
            stale.push(path.display().to_string());
        }
    }
    stale
}
