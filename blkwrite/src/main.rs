//! The blkwrite binary: measure's lifecycle running blkwrite's [`blkwrite::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<blkwrite::Tool>()
}
