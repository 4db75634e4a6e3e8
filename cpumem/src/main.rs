//! The cpumem binary: measure's lifecycle running cpumem's [`cpumem::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<cpumem::Tool>()
}
