//! timecmd's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p timecmd --test integration MODULE` runs one.

mod common;
mod exit;
mod gnu_time;
mod linking;
mod output_policy;
mod redirect;
mod series;
mod signals;
mod terminal;
