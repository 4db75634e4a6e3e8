//! blkwrite's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p blkwrite --test integration MODULE` runs one.

mod blkread;
mod blkread_devices;
mod common;
mod ddform;
mod devices;
mod files;
mod signatures;
mod streams;
mod terminal;
