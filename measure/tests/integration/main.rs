//! measure's integration tests, one test binary (one link, not one per file); each module is a
//! subject: `cargo test -p measure --test integration MODULE` runs one.

mod agreement;
mod envfacts;
mod golden;
mod headlines;
mod lifecycle;
mod limits;
mod properties;
