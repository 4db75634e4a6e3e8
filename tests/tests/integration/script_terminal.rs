//! What `./benchmatrix` shows a person: on a terminal (a real pty from `script`) the plan, one
//! line per step with its estimate, figures and time, no JSON, the tools' own lines only with
//! -v, and cargo's own progress only when the tools need building; piped (CI, Ansible) the few
//! log lines it has always written.

use benchmatrix_tests::suite::{
    folders, script, script_env, script_on_pty, script_path, step, terminal_text,
};
use benchmatrix_tests::{bin_dir, decode, empty_dir, explain, need_tool, ok, path_str as s, run};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testkit::free_port;

/// The steps of `--only net,disk --disk-size 16M`, in the order they run: (tool, row name).
const STEPS: [(&str, &str); 8] = [
    ("netpipe", "network throughput this->loopback"),
    ("netpipe", "network throughput loopback->this"),
    ("blkwrite", "disk write (buffered+fsync)"),
    ("blkwrite", "disk write (O_DIRECT)"),
    ("blkread", "disk random read, one at a time (O_DIRECT)"),
    ("blkread", "disk random read, many in flight (O_DIRECT)"),
    ("blkread", "disk sequential read (O_DIRECT)"),
    ("fsmeta", "file metadata"),
];

/// A short run of the network and disk steps (any user can run them) into `res`.
fn short_run<'a>(res: &'a Path, port: &'a str, label: &'a str) -> Vec<&'a str> {
    vec![
        "--only",
        "net,disk",
        "--disk-size",
        "16M",
        "--runs",
        "2",
        "--net-time",
        "1s",
        "--port",
        port,
        "--results",
        s(res),
        "--label",
        label,
    ]
}

/// Every step's records are in the results file, whatever the terminal showed.
fn check_records(file: &Path) {
    let recs = decode(&std::fs::read_to_string(file).expect("the results file"));
    for (tool, name) in STEPS {
        step(&recs, tool, name);
    }
}

/// The script's own lines (`benchmatrix: ...`) in `text`, without the prefix.
fn own_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("benchmatrix: "))
        .collect()
}

/// What a terminal showed of a run of `args` (which must succeed), and its lines up to the
/// script's "records appended" (the tools' and the script's, before the matrix).
fn terminal_run(work: &Path, scratch: &Path, args: &[&str]) -> (String, Vec<String>) {
    let out = run(&mut script_on_pty(work, scratch, args));
    ok(&out, "the script on a terminal");
    let text = terminal_text(&out);
    assert!(
        !text.contains("\"schema\""),
        "JSON on the terminal:\n{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("benchmatrix: records appended to "))
        .unwrap_or_else(|| panic!("where the records went:\n{text}"));
    let before = lines[..=end].iter().map(|l| l.to_string()).collect();
    (text, before)
}

#[test]
fn on_a_terminal_each_step_is_one_line_with_its_figures_and_time() {
    if !need_tool("script") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let port = free_port().to_string();
    let args = short_run(&res, &port, "tty/run");
    let (text, before) = terminal_run(&work, &scratch, &args);
    let lines: Vec<&str> = before
        .iter()
        .map(|l| {
            l.strip_prefix("benchmatrix: ")
                .unwrap_or_else(|| panic!("not the script's: {l:?} in\n{text}"))
        })
        .collect();
    // The plan, a line per step, where the records went; then where the time went.
    assert_eq!(lines.len(), 1 + STEPS.len() + 1, "{text}");
    let plan = format!("; records are appended to {}/tty_run.jsonl", s(&res));
    assert!(
        lines[0].starts_with(&format!("{} steps (about ", STEPS.len()))
            && lines[0].ends_with(&format!(", a guess from typical speeds){plan}")),
        "the plan first, guessed with no earlier run: {text}"
    );
    // Each step's figure, as the matrix shows its unit.
    let figures = [
        "b/s",
        "b/s",
        "B/s",
        "B/s",
        "reads per second ",
        "reads per second ",
        "B/s",
        "create ",
    ];
    for (i, (line, (_, name))) in lines[1..=STEPS.len()].iter().zip(STEPS).enumerate() {
        let want = format!("[{}/{}] {name} (about ", i + 1, STEPS.len());
        assert!(line.starts_with(&want), "want {want:?}, got {line:?}");
        let (_, rest) = line.split_once(") ").expect("the estimate");
        let (figure, took) = rest.rsplit_once("; took ").expect("how long it took");
        assert!(figure.contains(figures[i]), "{line:?}: its figure");
        assert!(
            took.ends_with(" s") && took[..took.len() - 2].parse::<f64>().is_ok(),
            "{line:?}"
        );
    }
    let all: Vec<&str> = text.lines().collect();
    assert!(
        all[before.len()].starts_with("benchmatrix: ")
            && all[before.len()].contains(" s by the records, most of it in "),
        "where the time went, after the records:\n{text}"
    );
    // The share between the tools is collate's (the run less the union of the spans), never
    // negative.
    let between = all[before.len()]
        .split_once("; between the tools ")
        .and_then(|(_, r)| r.split_once('%'))
        .and_then(|(n, _)| n.parse::<f64>().ok());
    assert!(
        between.is_some_and(|b| b >= 0.0),
        "a share between the tools of 0% or more:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("{} (", STEPS[0].1))),
        "the matrix on the terminal:\n{text}"
    );
    check_records(&res.join("tty_run.jsonl"));

    check_estimates(tmp.path(), &work, &scratch, &res, &port);
    empty_dir(&work);
    empty_dir(&scratch);
}

#[test]
fn with_verbose_a_terminal_shows_the_tools_own_lines_and_every_steps_time() {
    if !need_tool("script") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let port = free_port().to_string();
    let args = [&short_run(&res, &port, "tty/verbose")[..], &["-v"]].concat();
    let (text, before) = terminal_run(&work, &scratch, &args);
    let announced: Vec<&String> = before
        .iter()
        .filter(|l| l.starts_with("benchmatrix: ["))
        .collect();
    assert_eq!(announced.len(), STEPS.len(), "{text}");
    for (i, (line, (_, name))) in announced.iter().zip(STEPS).enumerate() {
        let want = format!("benchmatrix: [{}/{}] {name}: ", i + 1, STEPS.len());
        assert!(line.starts_with(&want), "want {want:?}, got {line:?}");
    }
    assert!(
        before
            .iter()
            .filter(|l| !l.starts_with("benchmatrix: "))
            .count()
            > STEPS.len(),
        "the tools' own lines: {text}"
    );
    assert!(
        text.contains("s from its first record to its last"),
        "every step's time: {text}"
    );
    check_records(&res.join("tty_verbose.jsonl"));
    empty_dir(&work);
    empty_dir(&scratch);
}

#[test]
fn on_a_terminal_a_failed_steps_errors_follow_its_line() {
    if !need_tool("script") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let args = [
        "--only",
        "disk",
        "--disk-size",
        "16Q",
        "--runs",
        "2",
        "--results",
        s(&res),
    ];
    let out = run(&mut script_on_pty(&work, &scratch, &args));
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let text = terminal_text(&out);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("benchmatrix: [1/6] disk write (buffered+fsync) "))
        .unwrap_or_else(|| panic!("the step's line: {text}"));
    assert!(lines[at].contains(" no figures; took "), "{text}");
    let after = lines[at + 1..].join("\n");
    let failed = after
        .find("step failed: disk buffered")
        .expect("the failure");
    let said = after.find("'16Q'").expect("blkwrite's own error");
    let next = after.find("[2/6]").expect("the next step");
    assert!(
        failed < next && said < next,
        "what the step said follows its line:\n{text}"
    );
    empty_dir(&work);
    empty_dir(&scratch);
}

#[test]
fn piped_the_script_writes_its_few_log_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let port = free_port().to_string();
    let out = script(&work, &scratch, &[], &short_run(&res, &port, "piped/run"));
    ok(&out, "the script piped");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = own_lines(&err);
    let results = format!("{}/piped_run.jsonl", s(&res));
    assert_eq!(lines.len(), 4, "{err}");
    assert_eq!(
        lines[0],
        "network: loopback, 2 transfers of 1s each way (--peer HOST measures a link)"
    );
    assert!(
        lines[1].starts_with("disk: writing 16M into ./benchmatrix-disk.")
            && lines[1]
                .ends_with(", buffered+fsync, then O_DIRECT, and reading it back, 2 runs each"),
        "{err}"
    );
    assert_eq!(lines[2], "files: 16384 created, stat'ed and unlinked in .");
    assert_eq!(lines[3], format!("records appended to {results}"));
    assert!(!err.contains("\"schema\""), "JSON on stderr:\n{err}");
    check_records(Path::new(&results));
    empty_dir(&work);
    empty_dir(&scratch);
}

/// A stand-in for cargo: it notes how it was called and whether its stderr is a terminal,
/// shows a progress line unless told --quiet, and "builds" each missing tool as a link to the
/// harness's binary.
const CARGO_STAND_IN: &str = r#"#!/bin/sh
{ printf '%s\n' "$*"; if [ -t 2 ]; then echo 'stderr: terminal'; else echo 'stderr: pipe'; fi; } >>"$STAND_IN_LOG"
case " $* " in *" --quiet "*) ;; *) echo '   Compiling the tools (stand-in)' >&2 ;; esac
mkdir -p "$CARGO_TARGET_DIR/release"
for t in netpipe pingrt blkwrite blkread fsmeta timecmd cpumem collate; do
    [ -e "$CARGO_TARGET_DIR/release/$t" ] || ln -s "$STAND_IN_TOOLS/$t" "$CARGO_TARGET_DIR/release/$t"
done
"#;

/// The cargo stand-in in `dir` (its calls logged to `log`), building into `target`.
struct StandIn {
    dir: PathBuf,
    log: PathBuf,
    target: PathBuf,
}

impl StandIn {
    /// Writes the stand-in into a new folder `stand-in` under `root`.
    fn new(root: &Path) -> StandIn {
        let [dir] = folders(root, ["stand-in"]);
        let cargo = dir.join("cargo");
        std::fs::write(&cargo, CARGO_STAND_IN).expect("write the stand-in");
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755))
            .expect("make the stand-in executable");
        let (log, target) = (root.join("cargo.log"), root.join("target"));
        StandIn { dir, log, target }
    }

    /// Points `c` at the stand-in and its target folder, in place of the prebuilt tools.
    fn apply<'a>(&self, c: &'a mut Command) -> &'a mut Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.dir.clone()];
        paths.extend(std::env::split_paths(&path));
        c.env_remove("BENCHMATRIX_BIN")
            .env("PATH", std::env::join_paths(paths).expect("PATH"))
            .env("CARGO_TARGET_DIR", &self.target)
            .env("STAND_IN_LOG", &self.log)
            .env("STAND_IN_TOOLS", bin_dir())
    }

    /// The stand-in's calls since the last look: (arguments, where its stderr went).
    fn calls(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        std::fs::write(&self.log, "").expect("empty the log");
        let lines: Vec<&str> = text.lines().collect();
        lines
            .chunks(2)
            .map(|c| {
                (
                    c[0].to_string(),
                    c.get(1).copied().unwrap_or("").to_string(),
                )
            })
            .collect()
    }
}

/// Piped, the script says it builds, and cargo runs quietly.
fn check_piped_build(cargo: &StandIn, work: &Path, scratch: &Path, args: &[&str]) {
    let mut c = Command::new("sh");
    script_env(c.arg(script_path()).args(args), work, scratch);
    let piped = run(cargo.apply(&mut c));
    ok(&piped, "a run piped");
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(
        own_lines(&err).contains(&"building the tools (cargo build --release)"),
        "{}",
        explain(&piped)
    );
    assert_eq!(
        cargo.calls(),
        [(
            "build --release --quiet --workspace --bins".to_string(),
            "stderr: pipe".to_string()
        )]
    );
}

#[test]
fn cargo_shows_its_progress_on_a_terminal_only_when_the_tools_need_building() {
    if !need_tool("script") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let cargo = StandIn::new(tmp.path());
    let port = free_port().to_string();
    let args = [
        "--only",
        "net",
        "--runs",
        "1",
        "--net-time",
        "250ms",
        "--no-matrix",
    ];
    let args = [&args[..], &["--port", &port, "--results", s(&res)]].concat();
    let on_pty = || -> Output { run(cargo.apply(&mut script_on_pty(&work, &scratch, &args))) };
    let build = "building the tools (cargo build --release";

    // The first build: the script says so, and cargo's own progress reaches the terminal.
    let first = on_pty();
    ok(&first, "a first build on a terminal");
    let text = terminal_text(&first);
    assert!(
        own_lines(&text).iter().any(|l| l.starts_with(build)),
        "{text}"
    );
    assert!(text.contains("Compiling the tools (stand-in)"), "{text}");
    let first_calls = cargo.calls();
    assert_eq!(first_calls.len(), 1, "{first_calls:?}");
    assert_eq!(first_calls[0].0, "build --release --workspace --bins");
    assert_eq!(first_calls[0].1, "stderr: terminal");

    // Built: no build line, and cargo only checks, quietly.
    let again = on_pty();
    ok(&again, "an up-to-date run on a terminal");
    let text = terminal_text(&again);
    assert!(
        !text.contains(build) && !text.contains("Compiling"),
        "{text}"
    );
    let again_calls = cargo.calls();
    assert_eq!(again_calls.len(), 1, "{again_calls:?}");
    assert_eq!(
        again_calls[0].0,
        "build --release --quiet --workspace --bins"
    );

    check_piped_build(&cargo, &work, &scratch, &args);
    empty_dir(&work);
    empty_dir(&scratch);
}

/// The README's range for a first run's lines on a terminal: "prints N to M lines".
fn readme_line_range() -> (usize, usize) {
    let readme = std::fs::read_to_string(benchmatrix_tests::workspace_root().join("README.md"))
        .expect("README.md");
    let flat = readme.split_whitespace().collect::<Vec<&str>>().join(" ");
    let (_, rest) = flat
        .split_once("A first run on a terminal prints ")
        .expect("the README says how many lines a first run prints");
    let words: Vec<&str> = rest.splitn(4, ' ').collect();
    match words.as_slice() {
        [lo, "to", hi, tail] if tail.starts_with("lines") => (
            lo.parse().expect("the range's low end"),
            hi.parse().expect("the range's high end"),
        ),
        _ => panic!("\"A first run on a terminal prints N to M lines\": {rest:.60}"),
    }
}

#[test]
fn a_first_run_on_a_terminal_prints_as_many_lines_as_the_readme_says() {
    // Every default step runs (none left out for a missing program), with the default runs;
    // only the sizes and times are short, which changes no line.
    if !need_tool("script") || !need_tool("bzip2") || !need_tool("cc") {
        return;
    }
    let (lo, hi) = readme_line_range();
    let tmp = tempfile::tempdir().unwrap();
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let port = free_port().to_string();
    let args = [
        "--disk-size",
        "16M",
        "--net-time",
        "250ms",
        "--port",
        &port,
        "--results",
        s(&res),
        "--label",
        "tty/lines",
    ];
    let out = run(&mut script_on_pty(&work, &scratch, &args));
    ok(&out, "a default run on a terminal");
    let text = terminal_text(&out);
    // The notes of a busy machine (†) and of a row in two modes (‖), a blank line and the
    // note each, come on top of the README's range, as it says.
    let extra = 2 * text
        .lines()
        .filter(|l| l.starts_with("† marks") || l.starts_with("‖ marks"))
        .count();
    let n = text.lines().count() - extra;
    assert!(
        (lo..=hi).contains(&n),
        "the README says {lo} to {hi} lines besides {extra} of busy or two-mode notes, a real run printed {n}:\n{text}"
    );
    empty_dir(&work);
    empty_dir(&scratch);
}

/// After a first run under the label tty/run in `res`: a second run is estimated from it, so
/// is a new label's first run (this machine's runs count whatever their label), and a
/// folder holding only another machine's records gives a guess.
fn check_estimates(tmp: &Path, work: &Path, scratch: &Path, res: &Path, port: &str) {
    // A second run estimates from the first one's records.
    let args = short_run(res, port, "tty/run");
    let plan = format!("; records are appended to {}/tty_run.jsonl", s(res));
    let (text, before) = terminal_run(work, scratch, &args);
    assert!(
        before[0].ends_with(&format!(", from this machine's earlier runs){plan}")),
        "{text}"
    );
    // So does a new label's first run: this machine's runs count whatever their label.
    let args = short_run(res, port, "tty/new");
    let (text, before) = terminal_run(work, scratch, &args);
    let plan_new = format!("; records are appended to {}/tty_new.jsonl", s(res));
    assert!(
        before[0].ends_with(&format!(", from this machine's earlier runs){plan_new}")),
        "{text}"
    );
    // Another machine's records in the folder do not: they are its times, not this one's.
    let other = tmp.join("other");
    std::fs::create_dir(&other).expect("a results folder");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name");
    let theirs = std::fs::read_to_string(res.join("tty_run.jsonl"))
        .expect("the records")
        .replace(
            &format!(",\"host\":\"{}\",", host.trim()),
            ",\"host\":\"another-machine\",",
        );
    assert!(
        !theirs.contains(&format!("\"host\":\"{}\"", host.trim())),
        "every record's host renamed"
    );
    std::fs::write(other.join("another_machine.jsonl"), theirs).expect("their records");
    let args = short_run(&other, port, "tty/run");
    let (text, before) = terminal_run(work, scratch, &args);
    assert!(
        before[0].contains(", a guess from typical speeds)"),
        "{text}"
    );
}
