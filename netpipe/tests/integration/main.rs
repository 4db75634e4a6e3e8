//! netpipe's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p netpipe --test integration MODULE` runs one.

mod agree;
mod caps;
mod clients;
mod common;
mod faults;
mod measuring;
mod netcat;
mod netns;
mod terminal;
mod token;
mod udp;
