//! Man pages and shell completions: generated from each tool's clap Command and from the
//! `./benchmatrix` script's (benchmatrix_tests::suite_cli), committed under man/ and
//! completions/, and checked here to be up to date and clean under `mandoc -T lint`.

use benchmatrix_tests::docs::{check_or_bless, completions, man_pages, man_pages_with};
use benchmatrix_tests::{TOOLS, need_tool, run, skip, suite_cli, workspace_root};
use std::process::Command;

#[test]
fn man_pages_and_completions_are_up_to_date() {
    let root = workspace_root();
    let mut stale = Vec::new();
    for (_, command) in TOOLS {
        stale.extend(check_or_bless(&root.join("man"), &man_pages(command())));
        stale.extend(check_or_bless(
            &root.join("completions"),
            &completions(command()),
        ));
    }
    let script = suite_cli::command();
    stale.extend(check_or_bless(
        &root.join("man"),
        &man_pages_with(script.clone(), &suite_cli::sections()),
    ));
    stale.extend(check_or_bless(
        &root.join("completions"),
        &completions(script),
    ));
    assert!(
        stale.is_empty(),
        "out of date: {stale:?}\nregenerate with: BLESS=1 cargo test -p benchmatrix-tests --test integration manpages"
    );
}

#[test]
fn every_tool_page_shows_examples() {
    for (tool, command) in TOOLS {
        let pages = man_pages(command());
        let (_, main) = pages.first().expect("a page");
        let text = String::from_utf8_lossy(main);
        assert!(
            text.contains("EXAMPLES"),
            "{tool}.1 has no EXAMPLES (put them in after_help)"
        );
    }
}

#[test]
fn the_script_page_has_its_own_sections() {
    let pages = man_pages_with(suite_cli::command(), &suite_cli::sections());
    assert_eq!(pages.len(), 1);
    let (file, page) = &pages[0];
    assert_eq!(file, "benchmatrix.1");
    let text = String::from_utf8_lossy(page);
    for section in [
        "OPTIONS",
        "ENVIRONMENT",
        "FILES",
        "\"EXIT STATUS\"",
        "EXAMPLES",
        "\"SEE ALSO\"",
    ] {
        assert!(
            text.contains(&format!("\n.SH {section}")),
            "benchmatrix.1 lacks {section}"
        );
    }
}

#[test]
fn pages_pass_mandoc_lint() {
    if std::env::var_os("BLESS").is_some() {
        skip("pages are being regenerated (BLESS); run again to lint them");
        return;
    }
    if !need_tool("mandoc") {
        return;
    }
    let man = workspace_root().join("man");
    let mut pages: Vec<_> = std::fs::read_dir(&man)
        .expect("man/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "1" || x == "7"))
        .collect();
    pages.sort();
    assert!(pages.len() > TOOLS.len());
    for page in pages {
        let out = run(Command::new("mandoc")
            .args(["-T", "lint", "-W", "warning"])
            .arg(&page));
        assert!(
            out.status.success(),
            "mandoc -T lint {}:\n{}{}",
            page.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn synopses_name_every_value_and_help_keeps_its_escapes() {
    for (tool, command) in TOOLS {
        let cmd = command();
        let pages = man_pages(cmd.clone());
        let (_, main) = pages.first().expect("a page");
        let text = String::from_utf8_lossy(main);
        let synopsis = text
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.lines().next())
            .unwrap_or_else(|| panic!("{tool}: no SYNOPSIS"));
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = a.get_long() else { continue };
            if !a.get_action().takes_values() {
                continue;
            }
            let name = a
                .get_value_names()
                .and_then(|v| v.first().map(|n| n.to_string()))
                .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
            let shown = format!("\\-\\-{}\\fR", long.replace('-', "\\-"));
            let at = synopsis
                .find(&shown)
                .unwrap_or_else(|| panic!("{tool}: --{long} not in {synopsis}"));
            let after = &synopsis[at + shown.len()..];
            let value = format!("\\fI{}", name.replace('-', "\\-"));
            assert!(
                after.starts_with(&format!(" {value}"))
                    || after.starts_with(&format!("[=\\fR{value}")),
                "{tool}: --{long} without {name} in {synopsis}"
            );
        }
        // No "\n" in a help text became a line break of the page.
        assert!(
            !text.contains("(\n, "),
            "{tool}: a broken escape in\n{text}"
        );
    }
    let help = collate::command().render_long_help().to_string();
    assert!(
        help.contains("show escaped (\\n, \\x1b, \\u{fffe});"),
        "{help}"
    );
}
