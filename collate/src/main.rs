//! The collate binary: parses nothing itself, see the library.

// Parsing a million lines allocates a few million small strings and maps across threads;
// mimalloc does that several times faster than glibc's malloc (see bench/collate.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    measure::cli::main("collate", collate::run)
}
