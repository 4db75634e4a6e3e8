//! Label, name and tags: the flags every tool shares and how they become the envelope.

use crate::exit::Failure;
use crate::parts::Envelope;
use clap::{Arg, ArgAction, ArgMatches, Command};
use std::collections::BTreeMap;

/// Adds `--label`, `--name` and `--tag` to a tool's command.
pub fn args(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("label")
            .long("label")
            .value_name("LABEL")
            .help_heading("Record")
            .help("Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)"),
    )
    .arg(
        Arg::new("name")
            .long("name")
            .value_name("NAME")
            .help_heading("Record")
            .help("What is measured, the matrix row (default: derived from the command)"),
    )
    .arg(
        Arg::new("tag")
            .long("tag")
            .value_name("KEY=VALUE")
            .action(ArgAction::Append)
            .help_heading("Record")
            .help("A further dimension for collate (repeatable), e.g. --tag disk=lvm"),
    )
}

/// Refuses text that would break a table or a line: control characters (a newline splits a
/// row of the matrix, an escape sequence rewrites the terminal) and, with `what` naming the
/// flag, an empty or blank value.
pub fn check_text(what: &str, value: &str) -> Result<(), Failure> {
    if value.trim().is_empty() {
        return Err(Failure::usage(format!(
            "{what} is empty: give a name such as para/lvm/san (a label) or 'icmp latency' (a name)"
        )));
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(Failure::usage(format!(
            "{what} {value:?} holds the control character {c:?}: labels, names and tags are one line of printable text"
        )));
    }
    Ok(())
}

/// The label: `--label`, else `BENCH_LABEL` (when set and not empty), else the host name.
pub fn resolve_label(
    flag: Option<&str>,
    env: Option<String>,
    host: &str,
) -> Result<String, Failure> {
    let label = match (flag, env) {
        (Some(l), _) => {
            if l.trim().is_empty() {
                return Err(Failure::usage(
                    "--label is empty: give an environment name such as para/lvm/san",
                ));
            }
            check_text("--label", l)?;
            l.to_string()
        }
        (None, Some(e)) if !e.trim().is_empty() => {
            check_text("BENCH_LABEL", &e)?;
            e
        }
        _ => host.to_string(),
    };
    Ok(label)
}

/// Parses `--tag KEY=VALUE` flags; a missing `=` or an empty key is an error that says so.
pub fn parse_tags<'a>(
    tags: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, String>, Failure> {
    let mut out = BTreeMap::new();
    for t in tags {
        let Some((k, v)) = t.split_once('=') else {
            return Err(Failure::usage(format!(
                "--tag {t}: expected KEY=VALUE, e.g. --tag disk=lvm"
            )));
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(Failure::usage(format!(
                "--tag {t}: the key before = is empty; write e.g. --tag disk=lvm"
            )));
        }
        if k.chars().any(|c| c.is_whitespace() || c == ',') {
            return Err(Failure::usage(format!(
                "--tag {t}: a key cannot hold spaces or commas"
            )));
        }
        if t.chars().any(|c| c.is_control()) {
            return Err(Failure::usage(format!(
                "--tag {t:?} holds a control character: a tag is one line of printable text"
            )));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// The envelope for a tool from its parsed flags (the one reader of `--label`, `--name`
/// and `--tag`, which [`args`] defines), checked as [`check_text`] and [`parse_tags`] say;
/// `default_name` is used without `--name`. Also whether `--name` was given.
pub fn envelope(
    tool: &str,
    version: &str,
    m: &ArgMatches,
    default_name: &str,
) -> Result<(Envelope, bool), Failure> {
    let mut env = Envelope::new(tool, version, default_name);
    env.label = resolve_label(
        m.get_one::<String>("label").map(String::as_str),
        std::env::var("BENCH_LABEL").ok(),
        &env.host,
    )?;
    let name = m.get_one::<String>("name");
    if let Some(n) = name {
        check_text("--name", n)?;
        env.name = n.clone();
    }
    env.tags = parse_tags(
        m.get_many::<String>("tag")
            .into_iter()
            .flatten()
            .map(String::as_str),
    )?;
    Ok((env, name.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_order() {
        assert_eq!(
            resolve_label(Some("a/b"), Some("env".into()), "h").unwrap(),
            "a/b"
        );
        assert_eq!(resolve_label(None, Some("env".into()), "h").unwrap(), "env");
        assert_eq!(resolve_label(None, Some("".into()), "h").unwrap(), "h");
        assert_eq!(resolve_label(None, None, "h").unwrap(), "h");
        assert!(resolve_label(Some(" "), None, "h").is_err());
    }

    #[test]
    fn tags() {
        let t = parse_tags(["disk=lvm", "peer=10.0.0.1", "empty="]).unwrap();
        assert_eq!(t["disk"], "lvm");
        assert_eq!(t["empty"], "");
        assert!(
            parse_tags(["novalue"])
                .unwrap_err()
                .to_string()
                .contains("KEY=VALUE")
        );
        assert!(
            parse_tags(["=v"])
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(parse_tags(["a b=v"]).is_err());
    }

    #[test]
    fn envelope_from_flags() {
        let cmd = args(Command::new("t"));
        let m = cmd
            .try_get_matches_from(["t", "--label", "x/y", "--tag", "k=v", "--name", "row"])
            .unwrap();
        let (e, given) = envelope("t", "0.1.0", &m, "default").unwrap();
        assert!(given);
        assert_eq!(e.label, "x/y");
        assert_eq!(e.name, "row");
        assert_eq!(e.tags["k"], "v");
    }

    #[test]
    fn control_characters_and_empty_names_are_refused() {
        assert!(resolve_label(Some("a\nb"), None, "h").is_err());
        assert!(resolve_label(None, Some("x\u{1b}[2J".into()), "h").is_err());
        assert!(parse_tags(["k=a\tb"]).is_err());
        assert!(check_text("--name", "").is_err());
        assert!(check_text("--name", "  ").is_err());
        let e = check_text("--name", "two\nrows").unwrap_err().to_string();
        assert!(
            e.contains("--name") && e.contains("control character"),
            "{e}"
        );
        assert!(check_text("--name", "icmp domU<->dom0 / ü").is_ok());
        let m = args(Command::new("t")).try_get_matches_from(["t", "--name", "a\nb"]);
        let e = envelope("t", "0.1.0", &m.unwrap(), "default").unwrap_err();
        assert!(e.to_string().contains("--name"), "{e}");
    }
}
