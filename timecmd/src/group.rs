//! What is left of a run's process group after its leader ended: waited for, then killed.
//!
//! After an interrupt, the leader's end does not end the run: a process it started (a
//! compiler a shell started, removing its temporary files on SIGINT) may still be at work.
//! timecmd returns once none is, so that what runs after it (a script's cleanup) finds the
//! run's files settled.

use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::clock::now_ns;

/// Waits until no live process is left in group `pgrp`, or until `until_ns`
/// (CLOCK_MONOTONIC), when what is left gets SIGKILL. Each wait is short and the whole is
/// bounded by `until_ns`.
pub fn settle(pgrp: Pid, until_ns: u64) {
    while live(pgrp) {
        if now_ns() >= until_ns {
            let _ = killpg(pgrp, Signal::SIGKILL);
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether a process of group `pgrp` is running. Signal 0 finds any member, zombies too (an
/// orphan waits for init to reap it, which may take a while); /proc then tells whether one is
/// more than a zombie.
fn live(pgrp: Pid) -> bool {
    if killpg(pgrp, None).is_err() {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| stat_live_in(&stat, pgrp.as_raw()))
}

/// Whether a /proc/PID/stat line is of a process in group `pgrp` that is not a zombie: after
/// the parenthesised command name (which may hold anything) come the state, the parent and
/// the group.
fn stat_live_in(stat: &str, pgrp: i32) -> bool {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut f = rest.split_whitespace();
    let state = f.next();
    let group = f.nth(1).and_then(|g| g.parse::<i32>().ok());
    group == Some(pgrp) && state != Some("Z") && state != Some("X")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_command_name() {
        let line = "4242 (a) b) 3) S 1 777 777 0 -1 4194560 100";
        assert!(stat_live_in(line, 777));
        assert!(!stat_live_in(line, 1));
        assert!(!stat_live_in(&line.replace(" S ", " Z "), 777));
        assert!(!stat_live_in("garbage", 777));
    }

    #[test]
    fn a_group_is_live_while_a_process_of_it_runs() {
        // This test's own group holds this process; a group id above pid_max holds none.
        assert!(live(nix::unistd::getpgrp()));
        assert!(!live(Pid::from_raw(i32::MAX)));
    }
}
