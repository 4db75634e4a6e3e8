//! fsmeta's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p fsmeta --test integration MODULE` runs one.

mod common;
mod runs;
