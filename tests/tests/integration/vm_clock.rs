//! fleet/envs/vm.sh's check of a guest's clock against this machine's: the ratio from the
//! guest's uptime lines as this machine stamps them (vm_stamp, vm_cal_ratio), taken between the
//! least late line of the first third and of the last, so that a line read late on a loaded host does not read as
//! a drifting clock, and a clock that does run fast still does.

use benchmatrix_tests::{explain, workspace_root};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `script` in sh with fleet/envs/vm.sh sourced, `input` on its stdin; its stdout.
fn vm_sh(script: &str, input: &str, args: &[&str]) -> String {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(". \"$1/fleet/envs/vm.sh\" && shift && {script}"))
        .arg("sh")
        .arg(workspace_root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the lines");
    let out = child.wait_with_output().expect("sh");
    assert!(out.status.success(), "{}", explain(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// 13 lines a quarter second apart by the guest's clock, which runs `rate` times this
/// machine's, each read `late[i]` seconds after it was written.
fn lines(rate: f64, late: &[f64; 13]) -> String {
    (0..13)
        .map(|i| {
            let host = 500.0 + 0.25 * i as f64;
            let guest = 20.0 + 0.25 * rate * i as f64;
            format!("{guest:.2} {:.2}\n", host + late[i])
        })
        .collect()
}

fn ratio(out: &str) -> f64 {
    out.split_whitespace()
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no ratio in {out:?}"))
}

#[test]
fn a_line_read_late_does_not_read_as_a_drifting_clock() {
    // A steady guest whose last line this machine read 80 ms late: its first and last lines
    // would give 3 / 3.08 = 0.974, beyond 2%; the least late line of the first third and
    // of the last gives 1.
    let mut late = [0.01; 13];
    late[12] = 0.09;
    late[3] = 0.05;
    let out = vm_sh("vm_cal_ratio", &lines(1.0, &late), &[]);
    assert_eq!(ratio(&out), 1.0, "{out}");
    // The line it measures from, for the ratio over the whole run: the first third's least
    // late (its guest and host times).
    assert_eq!(out.split_whitespace().nth(1), Some("20.00"), "{out}");
}

#[test]
fn a_guest_clock_five_percent_fast_reads_so_whatever_the_lines_delays() {
    let late = [
        0.02, 0.06, 0.01, 0.03, 0.04, 0.02, 0.05, 0.01, 0.07, 0.02, 0.03, 0.01, 0.04,
    ];
    // The times are to 10 ms, as /proc/uptime gives them: 0.7% of 1.5 s.
    let r = ratio(&vm_sh("vm_cal_ratio", &lines(1.05, &late), &[]));
    assert!((r - 1.05).abs() < 0.015, "{r}");
    // Too few lines give no ratio (the guest then says the host did not answer).
    let few = Command::new("sh")
        .arg("-c")
        .arg(". \"$1/fleet/envs/vm.sh\" && printf '1 2\\n2 3\\n3 4\\n4 5\\n5 6\\n' | vm_cal_ratio")
        .arg("sh")
        .arg(workspace_root())
        .output()
        .expect("sh");
    assert!(
        !few.status.success() && few.stdout.is_empty(),
        "{}",
        explain(&few)
    );
}

#[test]
fn this_machines_own_clock_stamped_by_vm_stamp_reads_as_steady() {
    // This machine stands for the guest: its uptime written every quarter second for 4 s,
    // then calend and end, through vm_stamp, which stamps each line as it reads it. The two
    // clocks are one, so the ratio is 1 but for how late the lines were read; it must not
    // read as drifting (more than 2% from 1), however loaded the machine is. The ratio over
    // the run rests on one late line over a span of seconds here (minutes in a real run),
    // so it is only checked to be there and near 1.
    let dir = tempfile::tempdir().expect("state");
    let state = dir.path().to_str().expect("a UTF-8 path");
    let script = r#"{ i=0
        while [ $i -le 16 ]; do
            read -r up _ </proc/uptime; echo "benchmatrix-vm: clock cal $up"; sleep 0.25; i=$((i + 1))
        done
        read -r up _ </proc/uptime; echo "benchmatrix-vm: clock calend $up"
        sleep 1
        read -r up _ </proc/uptime; echo "benchmatrix-vm: clock end $up"
    } | vm_stamp "$1" >/dev/null
    cat "$1/clock_ratio" "$1/clock_run""#;
    let out = vm_sh(script, "", &[state]);
    let got: Vec<f64> = out
        .split_whitespace()
        .filter_map(|r| r.parse().ok())
        .collect();
    assert_eq!(
        got.len(),
        2,
        "the ratio before the job and over the run: {out}"
    );
    assert!((got[0] - 1.0).abs() <= 0.02, "before the job: {out}");
    assert!((got[1] - 1.0).abs() <= 0.1, "over the run: {out}");
}
