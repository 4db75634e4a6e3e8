//! pingrt's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p pingrt --test integration MODULE` runs one.

mod common;
mod loopback;
mod netns;
mod ping_flags;
mod terminal;
mod wire;
