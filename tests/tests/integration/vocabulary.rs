//! The one flag vocabulary (measure::flags): every short flag of every tool and subcommand
//! means what the vocabulary says, or is a classic tool's flag that its drop-in keeps; every
//! tool that writes records takes `-o/--output FILE` and `--json`.

use benchmatrix_tests::TOOLS;
use clap::Command;
use measure::flags::{CLASSIC, VOCABULARY};

/// Every command with its path (`netpipe`, `netpipe send`, ...).
fn commands(cmd: &Command, path: String, out: &mut Vec<(String, Command)>) {
    for sub in cmd.get_subcommands() {
        commands(sub, format!("{path} {}", sub.get_name()), out);
    }
    out.push((path, cmd.clone()));
}

#[test]
fn short_flags_mean_one_thing() {
    let mut wrong = Vec::new();
    for (tool, command) in TOOLS {
        let mut all = Vec::new();
        commands(&command(), tool.to_string(), &mut all);
        for (path, cmd) in all {
            for arg in cmd.get_arguments() {
                let Some(c) = arg.get_short() else { continue };
                if CLASSIC
                    .iter()
                    .any(|k| k.tool == path && k.flags.contains(c))
                {
                    continue;
                }
                let long = arg.get_long().unwrap_or("");
                match VOCABULARY.iter().find(|s| s.flag == c) {
                    Some(s) if s.long.is_empty() || s.long == long => {}
                    Some(s) => wrong.push(format!(
                        "{path}: -{c} is --{long}, the vocabulary's -{c} is --{}",
                        s.long
                    )),
                    None => wrong.push(format!(
                        "{path}: -{c} (--{long}) is neither in the vocabulary nor a classic flag"
                    )),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn record_writers_take_output_and_json() {
    for (tool, command) in TOOLS {
        if *tool == "collate" {
            continue;
        }
        let mut all = Vec::new();
        commands(&command(), tool.to_string(), &mut all);
        for (path, cmd) in all {
            if cmd.get_subcommands().next().is_some()
                && cmd.get_arguments().all(|a| a.get_id() != "output")
            {
                continue;
            }
            let out = cmd.get_arguments().find(|a| a.get_id() == "output");
            let out = out.unwrap_or_else(|| panic!("{path}: no -o/--output"));
            assert_eq!(out.get_short(), Some('o'), "{path}");
            assert_eq!(out.get_long(), Some("output"), "{path}");
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some("json")),
                "{path}: no --json"
            );
        }
    }
}
