//! The netpipe binary: the lifecycle runs the library's Tool.
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<netpipe::Tool>()
}
