//! The timecmd binary: measure's lifecycle running timecmd's [`timecmd::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<timecmd::Tool>()
}
