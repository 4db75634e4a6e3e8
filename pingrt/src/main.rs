//! The pingrt binary: the lifecycle runs pingrt's Tool (see the library).
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<pingrt::Tool>()
}
