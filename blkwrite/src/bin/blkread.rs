//! The blkread binary: measure's lifecycle running blkread's [`blkwrite::blkread::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<blkwrite::blkread::Tool>()
}
