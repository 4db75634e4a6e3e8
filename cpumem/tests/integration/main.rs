//! cpumem's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p cpumem --test integration MODULE` runs one.

mod pipes;
mod records;
mod slowdown;
