//! The README's install instructions: the Rust version it names is the workspace's
//! rust-version, and its install commands, run as written, put every tool, man page and
//! completion where it says, and the `benchmatrix` script on PATH (a scratch HOME stands in
//! for the user's).

use benchmatrix_tests::{TOOLS, path_str, run, skip, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use testkit::Spawned;
use testkit::skip::on_path;

/// The marker line the README puts before its install commands.
const MARKER: &str =
    "<!-- the install commands; tests/tests/integration/install.rs runs this block -->";

fn readme() -> String {
    std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md")
}

/// The `sh` block after the marker.
fn install_block(readme: &str) -> String {
    let (_, after) = readme
        .split_once(MARKER)
        .expect("the install marker in README.md");
    let body = after
        .trim_start()
        .strip_prefix("```sh\n")
        .and_then(|b| b.split_once("\n```"))
        .map(|(body, _)| body)
        .expect("a ```sh block after the marker");
    body.to_string()
}

/// "1.94" or "1.94.0" as numbers, for comparing.
fn version(v: &str) -> Vec<u32> {
    v.split('.')
        .map(|n| n.parse().unwrap_or_else(|e| panic!("version {v:?}: {e}")))
        .collect()
}

#[test]
fn readme_names_the_workspaces_rust_version() {
    let manifest =
        std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("Cargo.toml");
    let declared = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"'))
        .expect("rust-version in the root Cargo.toml");
    let text = readme();
    let named = text
        .split_once("- Rust ")
        .and_then(|(_, rest)| rest.split_once(" or newer"))
        .map(|(v, _)| v)
        .expect("README.md names the Rust it needs: \"- Rust X.Y or newer\"");
    // The README names the oldest Rust the workspace builds with: the declared rust-version.
    assert_eq!(
        version(named),
        version(declared),
        "README.md names Rust {named}, the root Cargo.toml rust-version = {declared}"
    );
}

/// A home folder of its own for the install, with cargo and rustup still found in the real one.
fn install_env(cmd: &mut Command, home: &Path) {
    let real_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".cargo"));
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".rustup"));
    cmd.env("HOME", home)
        .env("CARGO_HOME", cargo_home)
        .env("RUSTUP_HOME", rustup_home)
        .env("CARGO_NET_OFFLINE", "true")
        // cargo install builds the release profile: here unoptimized, in a target folder of
        // its own that stays for the next run, so that the test costs one debug-like build.
        .env("CARGO_TARGET_DIR", target_dir().join("install-check"))
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env_remove("MANPATH")
        .current_dir(workspace_root());
}

/// The sorted names of the files in `dir` that pass `keep`.
fn files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| keep(n))
        .collect();
    names.sort();
    names
}

/// Every man page and completion of the checkout is in its place under `prefix`.
fn check_pages_and_completions(prefix: &Path) {
    let root = workspace_root();
    for (section, folder) in [("1", "man1"), ("7", "man7")] {
        let want = files(&root.join("man"), |n| n.ends_with(&format!(".{section}")));
        assert!(!want.is_empty());
        assert_eq!(
            files(&prefix.join("share/man").join(folder), |_| true),
            want
        );
    }
    for (shell, folder) in [
        ("bash", "bash-completion/completions"),
        ("zsh", "zsh/site-functions"),
        ("fish", "fish/vendor_completions.d"),
    ] {
        let want = files(&root.join("completions").join(shell), |_| true);
        assert_eq!(files(&prefix.join("share").join(folder), |_| true), want);
    }
}

/// `man -w PAGE` as the user sees it with `prefix/bin` on PATH: the installed page.
fn check_man_finds(prefix: &Path, page: &[&str], file: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![prefix.join("bin")];
    paths.extend(std::env::split_paths(&path));
    let out = run(Command::new("man")
        .arg("-w")
        .args(page)
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env_remove("MANPATH"));
    let found = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        found.trim(),
        path_str(&prefix.join("share/man").join(file)),
        "man -w {page:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn readme_install_commands_install_every_tool_page_and_completion() {
    let home = tempfile::tempdir().expect("a scratch home");
    let log = home.path().join("install.log");
    let mut cmd = Command::new("sh");
    cmd.args(["-eu", "-c", &install_block(&readme())]);
    install_env(&mut cmd, home.path());
    let out = std::fs::File::create(&log).expect("the install log");
    let err = out.try_clone().expect("the install log");
    let mut child = Spawned::start(cmd.stdout(out).stderr(err));
    // Bounded: a first build on a busy 2-CPU machine takes minutes.
    let status = child.wait(Duration::from_secs(1800));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success(),
        "the README's install commands: {status}\n{text}"
    );

    let prefix = home.path().join(".local");
    let installed = files(&prefix.join("bin"), |_| true);
    let tools: Vec<String> = TOOLS.iter().map(|(t, _)| t.to_string()).collect();
    let mut want = tools.clone();
    want.push("benchmatrix".to_string());
    want.sort();
    assert_eq!(
        installed, want,
        "README's loop installs every tool, and the script beside them"
    );
    // The installed script is the checkout's, and finds its suite through the link, run
    // from any folder.
    let help = run(Command::new(prefix.join("bin/benchmatrix"))
        .arg("--help")
        .current_dir(home.path()));
    assert!(
        help.status.success()
            && String::from_utf8_lossy(&help.stdout).starts_with("Usage: ./benchmatrix"),
        "benchmatrix --help from the install: {}",
        String::from_utf8_lossy(&help.stderr)
    );
    let dry = run(Command::new(prefix.join("bin/benchmatrix"))
        .args(["--only", "cloud"])
        .current_dir(home.path()));
    assert!(
        String::from_utf8_lossy(&dry.stderr).contains("--only: unknown step cloud"),
        "the installed script parses its options: {}",
        String::from_utf8_lossy(&dry.stderr)
    );
    for tool in &tools {
        let version = run(Command::new(prefix.join("bin").join(tool)).arg("--version"));
        assert!(
            String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")),
            "{tool} --version"
        );
    }
    check_pages_and_completions(&prefix);
    if on_path("man") {
        check_man_finds(&prefix, &["benchmatrix"], "man1/benchmatrix.1");
        check_man_finds(&prefix, &["7", "benchmatrix"], "man7/benchmatrix.7");
        check_man_finds(&prefix, &["pingrt"], "man1/pingrt.1");
    } else {
        skip("man is not installed: the installed pages were not looked up");
    }
}
