//! ingest's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p ingest --test integration MODULE` runs one.

mod common;
mod figures;
mod fping;
mod hyperfine;
mod ping;
mod reading;
mod real;
mod stored;
