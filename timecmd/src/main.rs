//! The timecmd binary: parses nothing itself, see the library.

fn main() -> std::process::ExitCode {
    measure::cli::main("timecmd", timecmd::run)
}
