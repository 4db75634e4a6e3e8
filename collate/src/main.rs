//! The collate binary: measure's reader lifecycle running collate's [`collate::Tool`].

// Parsing a million lines allocates a few million small strings and maps across threads;
// mimalloc does that several times faster than glibc's malloc (see bench/collate.sh). It is
// built without transparent huge pages (collate/Cargo.toml says why).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    measure::reading::main::<collate::Tool>()
}
