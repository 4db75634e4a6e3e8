//! Man pages and shell completions generated from each tool's clap `Command`, and the check
//! that the copies committed under man/ and completions/ are up to date.

use clap::Command;
use clap_complete::Shell;
use std::path::Path;

/// A section a clap Command cannot describe (ENVIRONMENT, EXIT STATUS): a titled list of
/// terms, each with its description.
pub struct Section {
    pub title: &'static str,
    pub items: &'static [(&'static str, &'static str)],
}

/// The roff man page for a command, with its subcommands as pages of their own
/// (`netpipe-recv.1`), as (file name, contents).
pub fn man_pages(cmd: Command) -> Vec<(String, Vec<u8>)> {
    man_pages_with(cmd, &[])
}

/// [`man_pages`], with `extra` sections on the command's own page, after its options.
pub fn man_pages_with(cmd: Command, extra: &[Section]) -> Vec<(String, Vec<u8>)> {
    let mut cmd = cmd;
    cmd.build();
    let mut pages = Vec::new();
    collect(&cmd, cmd.get_name().to_string(), extra, &mut pages);
    pages
}

fn collect(cmd: &Command, name: String, extra: &[Section], pages: &mut Vec<(String, Vec<u8>)>) {
    let page_cmd = cmd.clone().name(name.clone());
    if let Ok(page) = render_page(page_cmd, extra) {
        pages.push((format!("{name}.1"), tidy_roff(&page)));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, format!("{name}-{}", sub.get_name()), &[], pages);
    }
}

/// clap_mangen's sections, then the `extra` ones, with the after-help text as a real EXAMPLES
/// section (commands set as literal blocks) in place of its plain EXTRA section, and a SEE
/// ALSO section.
fn render_page(cmd: Command, extra: &[Section]) -> std::io::Result<Vec<u8>> {
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = cmd.has_subcommands();
    let has_version = cmd.get_version().is_some() || cmd.get_long_version().is_some();
    let after = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|s| s.to_string());
    let name = cmd.get_name().to_string();
    let synopsis = synopsis(&cmd);
    let man = clap_mangen::Man::new(cmd)
        .date("2026-11-30")
        .source(format!("benchmatrix {}", env!("CARGO_PKG_VERSION")));
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    buf.extend_from_slice(synopsis.as_bytes());
    man.render_description_section(&mut buf)?;
    if has_args {
        man.render_options_section(&mut buf)?;
    }
    if has_subs {
        man.render_subcommands_section(&mut buf)?;
    }
    for section in extra {
        buf.extend_from_slice(render_section(section).as_bytes());
    }
    if let Some(text) = after {
        buf.extend_from_slice(examples_section(&text).as_bytes());
    }
    if has_version {
        man.render_version_section(&mut buf)?;
    }
    buf.extend_from_slice(see_also(&name).as_bytes());
    Ok(buf)
}

/// The SYNOPSIS section: every option with its argument's name (`[-f|--format FMT]`),
/// then the positional arguments, where clap_mangen leaves the names out.
fn synopsis(cmd: &Command) -> String {
    let mut parts = vec![format!("\\fB{}\\fR", roff_escape(cmd.get_name()))];
    let value = |a: &clap::Arg| -> String {
        let names: Vec<String> = match a.get_value_names() {
            Some(v) => v.iter().map(|n| n.to_string()).collect(),
            None => vec![a.get_id().as_str().to_uppercase()],
        };
        names
            .iter()
            .map(|n| format!("\\fI{}\\fR", roff_escape(n)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let many = |a: &clap::Arg| {
        a.get_num_args().is_some_and(|n| n.max_values() > 1)
            || matches!(a.get_action(), clap::ArgAction::Append)
    };
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let mut spell: Vec<String> = Vec::new();
        if let Some(c) = a.get_short() {
            spell.push(format!("\\fB\\-{}\\fR", roff_escape(&c.to_string())));
        }
        if let Some(l) = a.get_long() {
            spell.push(format!("\\fB\\-\\-{}\\fR", roff_escape(l)));
        }
        let mut text = if spell.is_empty() {
            value(a)
        } else if a.get_action().takes_values()
            && a.get_num_args().is_none_or(|n| n.max_values() > 0)
        {
            let v = value(a);
            let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
            if optional {
                format!("{}[=\\fR{v}]", spell.join("|"))
            } else {
                format!("{} {v}", spell.join("|"))
            }
        } else {
            spell.join("|")
        };
        if many(a) && a.is_positional() {
            text.push_str("...");
        }
        parts.push(if a.is_required_set() {
            text
        } else {
            format!("[{text}]")
        });
    }
    format!(".SH SYNOPSIS\n{}\n", parts.join(" "))
}

/// Escapes text for roff: backslashes, hyphens (so that options copy as typed), and a
/// leading dot or quote that roff would read as a request.
fn roff_escape(line: &str) -> String {
    let s = line.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// An extra section as a roff list of tagged paragraphs.
fn render_section(section: &Section) -> String {
    let title = if section.title.contains(' ') {
        format!("\"{}\"", section.title)
    } else {
        section.title.to_string()
    };
    let mut out = format!(".SH {title}\n");
    for (term, text) in section.items {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_escape(term),
            roff_escape(text)
        ));
    }
    out
}

/// The EXAMPLES section from a tool's after-help text: the least indented lines say what an
/// example does, the more indented lines under them are the commands.
fn examples_section(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            !l.trim()
                .trim_end_matches(':')
                .eq_ignore_ascii_case("examples")
        })
        .collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let mut out = String::from(".SH EXAMPLES\n");
    let mut in_block = false;
    let mut first = true;
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        if indent(l) <= base {
            if in_block {
                out.push_str(".EE\n.RE\n");
                in_block = false;
            }
            if !first {
                out.push_str(".PP\n");
            }
        } else if !in_block {
            out.push_str(".RS 4\n.EX\n");
            in_block = true;
        }
        first = false;
        out.push_str(&roff_escape(l.trim()));
        out.push('\n');
    }
    if in_block {
        out.push_str(".EE\n.RE\n");
    }
    out
}

/// SEE ALSO: the record format page and the other tools.
fn see_also(name: &str) -> String {
    let tool = name.split('-').next().unwrap_or(name);
    let mut refs = vec![".BR benchmatrix (7)".to_string()];
    for &(other, _) in crate::TOOLS {
        if other != tool {
            refs.push(format!(".BR {other} (1)"));
        }
    }
    if name != tool {
        refs.push(format!(".BR {tool} (1)"));
    }
    format!(".SH \"SEE ALSO\"\n{}\n", refs.join(",\n"))
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
                Shell::Bash => {
                    buf = bash_lists(&cmd, &buf);
                    format!("bash/{name}")
                }
                Shell::Zsh => format!("zsh/_{name}"),
                _ => format!("fish/{name}.fish"),
            };
            (file, buf)
        })
        .collect()
}

/// The bash completion with each comma-separated list of values (an option with a value
/// delimiter and possible values, as `--only net,cpu`) completed item by item: the words
/// are offered for the text after the last comma, with what comes before it kept (clap's
/// generator offers them for the whole word, so `--only net,c` would find nothing).
fn bash_lists(cmd: &Command, script: &[u8]) -> Vec<u8> {
    let lists: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.get_value_delimiter() == Some(',') && !a.get_possible_values().is_empty())
        .filter_map(|a| a.get_long().map(|l| format!("--{l})")))
        .collect();
    let text = String::from_utf8_lossy(script);
    let mut out = String::with_capacity(text.len());
    let mut in_list = false;
    for line in text.split_inclusive('\n') {
        if in_list && line.contains("compgen -W ") && line.contains(r#" -- "${cur}")"#) {
            out.push_str(
                &line
                    .replacen("compgen -W ", r#"compgen -P "${cur%"${cur##*,}"}" -W "#, 1)
                    .replacen(r#" -- "${cur}")"#, r#" -- "${cur##*,}")"#, 1),
            );
            in_list = false;
            continue;
        }
        in_list = lists.iter().any(|l| line.trim() == l.as_str());
        out.push_str(line);
    }
    out.into_bytes()
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
