//! The ingest binary: measure's lifecycle running ingest's [`ingest::Tool`].
fn main() -> std::process::ExitCode {
    measure::lifecycle::main::<ingest::Tool>()
}
