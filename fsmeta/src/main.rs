//! The fsmeta binary: the library's Tool on measure's lifecycle.

fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<fsmeta::Tool>()
}
