//! The workspace's integration tests, one test binary (one link, not one per file); each
//! module is a subject: `cargo test -p benchmatrix-tests --test integration MODULE` runs one.

mod bench_smoke;
mod busy_runs;
mod cells_match;
mod conventions;
mod cpumem_matrix;
mod e2e;
mod every_mode;
mod fleet;
mod install;
mod layout;
mod local_envs;
mod manpages;
mod names;
mod reader_props;
mod readme_ingest;
mod records_file;
mod run_tests;
mod script_cli;
mod script_invocations;
mod script_kernel;
mod script_kernel_input;
mod script_paths;
mod script_report;
mod script_serve;
mod script_signals;
mod script_suite;
mod script_terminal;
mod seed_json;
mod signal_rule;
mod signal_runs;
mod sizes;
mod stopped;
mod torn_lines;
mod vm_stacks;
mod vocabulary;
