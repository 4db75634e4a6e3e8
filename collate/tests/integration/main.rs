//! collate's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p collate --test integration MODULE` runs one.

mod browser;
mod busy;
mod cli;
mod common;
mod conflicts;
mod drift;
mod facts;
mod formats;
mod headlines;
mod history;
mod modes;
mod odd_input;
mod runs;
mod scale;
mod terminal;
mod times;
mod verdicts;
