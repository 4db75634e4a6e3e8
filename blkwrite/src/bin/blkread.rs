//! The blkread binary: measure's lifecycle running blkread's [`blkwrite::read::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<blkwrite::read::Tool>()
}
