//! Every flag has one definition and one reader: for each tool's clap `Command`, each
//! argument id is read by id (`get_one("id")`, `get_flag("id")`, measure's `flag(m, "id")`...)
//! in exactly one source file of that tool or of `measure` (whose lifecycle reads the shared
//! record flags for every tool). Two readers of one flag drift apart (one learns a new
//! default, the other does not); a flag nobody reads is a flag that does nothing; a renamed
//! id leaves its reader asking for a name clap does not know, which this test catches here
//! rather than at run time.

use benchmatrix_tests::{TOOLS, workspace_root};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `ArgMatches` methods that read an argument by its id.
const READERS: &[&str] = &[
    "get_one",
    "get_many",
    "get_flag",
    "get_count",
    "try_get_one",
    "try_get_many",
    "contains_id",
    "value_source",
    "get_raw",
    "remove_one",
];

/// A file's own helpers that read by an id they are given are readers too: measure's
/// lifecycle's `flag(m, "id")`/`switch(m, "id")`, netpipe's `dur(m, "id")`, collate's
/// `let get = |k| m.get_one(k)`. They are found, per file, as a `fn NAME` or `let NAME = |`
/// whose body calls a reader with a name rather than a literal; a call of NAME with the id as
/// its first argument, or after one plain argument (the matches), reads that id.
fn helpers_of(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (intro, closure) in [("fn ", false), ("let ", true)] {
        let mut from = 0;
        while let Some(at) = code[from..].find(intro) {
            let start = from + at;
            from = start + intro.len();
            if code[..start].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let rest = &code[from..];
            let n = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            if n == 0 {
                continue;
            }
            let name = &rest[..n];
            let after = rest[n..].trim_start();
            if closure
                && !after
                    .strip_prefix('=')
                    .is_some_and(|a| a.trim_start().starts_with('|'))
            {
                continue;
            }
            let body = item_body(&rest[n..]);
            if calls(body, READERS, false)
                .iter()
                .any(|a| a.chars().next().is_some_and(|c| is_ident(c) || c == '&'))
            {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// The text of an item from just after its name to its end: the closing brace of its body,
/// or a `;` outside any bracket (a closure without braces, a declaration without a body).
fn item_body(text: &str) -> &str {
    let mut depth = 0i64;
    let mut braced = false;
    for (i, c) in text.char_indices() {
        match c {
            '{' | '(' | '[' => {
                if c == '{' && depth == 0 {
                    braced = true;
                }
                depth += 1;
            }
            '}' | ')' | ']' => {
                depth -= 1;
                if depth <= 0 && braced {
                    return &text[..=i];
                }
            }
            ';' if depth == 0 => return &text[..i],
            _ => {}
        }
    }
    text
}

/// Ids with more than one reading file on purpose, each with why: (tool, id, why).
/// Empty: every flag found with two readers was brought down to one (pingrt's and timecmd's
/// `quiet`: the lifecycle reads it, timecmd asks the session).
const SHARED_READERS: &[(&str, &str, &str)] = &[];

/// Ids that no source reads because accepting them is all they do: (tool, id, why). clap's
/// own `help` and `version` (`ArgAction::Help`/`Version`) are left out before this list is
/// asked. An entry must name a flag the tool has (a stale entry fails).
const CLAP_ONLY: &[(&str, &str, &str)] = &[
    (
        "netpipe",
        "nc-N",
        "nc's -N, accepted so nc command lines run: netpipe always half-closes after stdin's end",
    ),
    (
        "netpipe",
        "nc-n",
        "nc's -n, accepted so nc command lines run: netpipe never looks names up in reverse",
    ),
    (
        "netpipe",
        "nc-v",
        "nc's -v, accepted so nc command lines run: the human summary shows on a terminal anyway",
    ),
    (
        "pingrt",
        "numeric",
        "ping's -n, accepted so ping command lines run: pingrt never looks names up in reverse",
    ),
];

/// The source directories (and single files) of `tool`, besides measure's.
fn tool_sources(tool: &str) -> Vec<PathBuf> {
    let root = workspace_root();
    match tool {
        // One crate, two binaries: each binary's own module, the shared `blk`, and the
        // crate's lib.rs (blkwrite's library face, `blkwrite::command` and its Tool).
        "blkread" => vec![
            root.join("blkwrite/src/read"),
            root.join("blkwrite/src/blk"),
            root.join("blkwrite/src/bin/blkread.rs"),
        ],
        "blkwrite" => vec![
            root.join("blkwrite/src/write"),
            root.join("blkwrite/src/blk"),
            root.join("blkwrite/src/lib.rs"),
            root.join("blkwrite/src/main.rs"),
        ],
        _ => vec![root.join(tool).join("src")],
    }
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(rd) = std::fs::read_dir(path) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        // Unit tests read flags of commands they build themselves; a demo binary is its own
        // command. Neither is a reader of the tool's flags.
        if name.as_deref() == Some("tests.rs") || name.as_deref() == Some("bin") {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comment lines and without items under `#[cfg(test)]` (a test module
/// builds commands of its own and reads their flags).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            // Skip the next item: to its `;` when it has no body, else to its closing brace.
            let mut depth = 0i64;
            let mut opened = false;
            for l in lines.by_ref() {
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first arguments of every call of one of `names` in `code` (through a turbofish), as
/// the text from the argument on; with `skip_one`, also the argument after a first plain one.
fn calls<'a>(code: &'a str, names: &[&str], skip_one: bool) -> Vec<&'a str> {
    let mut found = Vec::new();
    for name in names {
        let mut from = 0;
        while let Some(at) = code[from..].find(name) {
            let start = from + at;
            from = start + name.len();
            if code[..start].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let mut rest = &code[from..];
            if rest.chars().next().is_some_and(is_ident) {
                continue;
            }
            if let Some(r) = rest.strip_prefix("::<") {
                // A turbofish: skip to its closing `>`, counting nested ones.
                let mut depth = 1;
                let mut end = None;
                for (i, c) in r.char_indices() {
                    match c {
                        '<' => depth += 1,
                        '>' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i + 1);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else { continue };
                rest = &r[end..];
            }
            let Some(args) = rest.trim_start().strip_prefix('(') else {
                continue;
            };
            let args = args.trim_start();
            found.push(args);
            if skip_one {
                // A plain first argument (`m`, `&sub`), then a comma.
                let plain = args.trim_start_matches('&');
                let n = plain.find(|c: char| !is_ident(c)).unwrap_or(plain.len());
                if n > 0
                    && let Some(a) = plain[n..].trim_start().strip_prefix(',')
                {
                    found.push(a.trim_start());
                }
            }
        }
    }
    found
}

/// The ids read in `code`: `READER(::<T>)?("id"`, and `HELPER("id"` or `HELPER(m, "id"` for
/// the file's own helpers.
fn ids_read(code: &str) -> BTreeSet<String> {
    let helpers = helpers_of(code);
    let helpers: Vec<&str> = helpers.iter().map(String::as_str).collect();
    calls(code, READERS, false)
        .into_iter()
        .chain(calls(code, &helpers, true))
        .filter_map(|a| {
            let q = a.strip_prefix('"')?;
            Some(q[..q.find('"')?].to_string())
        })
        .collect()
}

/// Every argument id of `cmd` and of its subcommands, but clap's own help and version.
fn arg_ids(cmd: &clap::Command, out: &mut BTreeSet<String>) {
    for a in cmd.get_arguments() {
        let id = a.get_id().as_str();
        let clap_acts = matches!(
            a.get_action(),
            clap::ArgAction::Help
                | clap::ArgAction::HelpShort
                | clap::ArgAction::HelpLong
                | clap::ArgAction::Version
        );
        if !clap_acts {
            out.insert(id.to_string());
        }
    }
    for s in cmd.get_subcommands() {
        arg_ids(s, out);
    }
}

/// For each tool, each id -> the files that read it, relative to the workspace.
fn table() -> BTreeMap<&'static str, BTreeMap<String, Vec<String>>> {
    let root = workspace_root();
    let mut measure = Vec::new();
    rust_files(&root.join("measure/src"), &mut measure);
    let mut all = BTreeMap::new();
    for (tool, command) in TOOLS {
        let mut files = measure.clone();
        for s in tool_sources(tool) {
            rust_files(&s, &mut files);
        }
        let read: Vec<(String, BTreeSet<String>)> = files
            .iter()
            .map(|f| {
                let text =
                    std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
                (rel, ids_read(&code_of(&text)))
            })
            .collect();
        let mut cmd = command();
        cmd.build();
        let mut ids = BTreeSet::new();
        arg_ids(&cmd, &mut ids);
        let rows = ids
            .into_iter()
            .map(|id| {
                let places = read
                    .iter()
                    .filter(|(_, r)| r.contains(&id))
                    .map(|(f, _)| f.clone())
                    .collect();
                (id, places)
            })
            .collect();
        all.insert(*tool, rows);
    }
    all
}

fn render(all: &BTreeMap<&str, BTreeMap<String, Vec<String>>>) -> String {
    let mut s = String::new();
    for (tool, rows) in all {
        for (id, places) in rows {
            let places = if places.is_empty() {
                "(no reader)".to_string()
            } else {
                places.join(", ")
            };
            s.push_str(&format!("{tool:<9} {id:<22} {places}\n"));
        }
    }
    s
}

#[test]
fn every_flag_has_exactly_one_reading_file() {
    let all = table();
    let shown = render(&all);
    print!("{shown}");
    let mut wrong = Vec::new();
    for (tool, rows) in &all {
        assert!(!rows.is_empty(), "{tool}: no arguments found");
        for (id, places) in rows {
            let excused =
                |list: &[(&str, &str, &str)]| list.iter().any(|(t, i, _)| t == tool && i == id);
            match places.len() {
                1 => {}
                0 if excused(CLAP_ONLY) => {}
                0 => wrong.push(format!(
                    "{tool} --{id}: defined but read nowhere (a renamed id? a dead flag?)"
                )),
                _ if excused(SHARED_READERS) => {}
                _ => wrong.push(format!(
                    "{tool} --{id}: read in {} files: {} (read it in one place and pass the value)",
                    places.len(),
                    places.join(", ")
                )),
            }
        }
    }
    for (tool, id, why) in SHARED_READERS.iter().chain(CLAP_ONLY) {
        let places = all.get(tool).and_then(|rows| rows.get(*id));
        match places {
            None => wrong.push(format!(
                "{tool} --{id} is excused ({why}) but the tool has no such flag: drop the entry"
            )),
            Some(p) if CLAP_ONLY.iter().any(|(t, i, _)| t == tool && i == id) && !p.is_empty() => {
                wrong.push(format!(
                    "{tool} --{id} is excused as read by nobody but {} reads it: drop the entry",
                    p.join(", ")
                ))
            }
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n\nid -> reading file, every tool:\n{shown}",
        wrong.join("\n")
    );
}

/// The scanner itself: a reader is found through a turbofish and through measure's helpers,
/// and a different id (a rename) is not found.
#[test]
fn the_scanner_finds_readers_by_id() {
    let code = code_of(
        "let a = m.get_one::<Vec<String>>(\"bs\");\n\
         let b = m.get_flag(\"quiet\");\n\
         // m.get_flag(\"commented\")\n\
         let c = m.get_flag( \"json\" );\n\
         let d = my_get_flag(\"other\");\n\
         fn dur(m: &ArgMatches, id: &str) -> u64 { m.get_one::<u64>(id).copied() }\n\
         let t = dur(m, \"time\");\n\
         let get = |k: &str| m.get_one::<String>(k).map(String::as_str);\n\
         let r = get(\"rows\");\n\
         let p = parse_port(port, \"port\");\n\
         #[cfg(test)]\nmod tests {\n fn t() { m.get_one::<u64>(\"in_test\"); }\n}\n",
    );
    let ids = ids_read(&code);
    let want: BTreeSet<String> = ["bs", "quiet", "json", "time", "rows"]
        .map(String::from)
        .into();
    assert_eq!(ids, want);
}

#[test]
fn a_renamed_id_has_no_reader() {
    let code = "m.get_one::<u64>(\"block-size\")";
    assert!(!ids_read(code).contains("bs"));
}
