//! ingest: the classic tools' results join the matrix. Reads the output of iperf3 (`-J`,
//! `--json-stream`), fio (`--output-format=json`, `json+`), hyperfine (`--export-json`),
//! ping and fping (text), and writes it as `benchmatrix/1` records: `tool` is the source
//! tool, `info.converted_by` says ingest, the source's time stamps become `at`, and figures
//! are carried over exactly. collate stays tool-agnostic and reads only records.

mod cli;
pub(crate) mod detect;
mod emit;
mod figures;
mod fio;
mod fping;
mod hyperfine;
pub(crate) mod input;
mod iperf3;
mod json;
mod literal;
pub mod model;
mod ping;
mod read;
mod sanity;

pub use cli::{Options, command};
use detect::Format;
use input::Input;
use measure::lifecycle::{self, Session};
use measure::{Exit, Failure};
use std::ffi::OsString;
use std::path::PathBuf;

/// ingest on measure's lifecycle.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "ingest";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const BEGIN_IS_THIS_MACHINE: bool = false;
    type Options = Options;

    fn command() -> clap::Command {
        cli::command()
    }

    fn options(m: &clap::ArgMatches, sub: Option<&str>) -> Result<Options, Failure> {
        cli::options(m, sub)
    }

    fn name(o: &Options) -> String {
        match &o.file {
            Some(f) if f.as_os_str() != "-" => format!("ingest {}", f.display()),
            _ => "ingest stdin".to_string(),
        }
    }

    fn guarded(o: &Options) -> Vec<PathBuf> {
        o.file
            .iter()
            .filter(|f| f.as_os_str() != "-")
            .cloned()
            .collect()
    }

    fn run(o: Options, s: &mut Session) -> Result<Exit, Failure> {
        let input = Input::read(o.file.as_deref(), o.max_input)?;
        let conv = match o.format {
            Some(Format::Figures) => sanity::checked(figures::convert(&input, &o.source)?),
            format => convert(&input, format)?,
        };
        emit::write(conv, &input, s)
    }
}

/// The records of one source, in the format given or told from its content.
pub(crate) fn convert(input: &Input, format: Option<Format>) -> Result<model::Converted, Failure> {
    let format = match format {
        Some(Format::Iperf3 | Format::Iperf3Stream) => detect::iperf3_kind(input),
        Some(f) => f,
        None => detect::detect(input).ok_or_else(|| {
            Failure::usage(format!(
                "{}: cannot tell which tool wrote this: expected iperf3 -J or --json-stream, fio \
                 --output-format=json, hyperfine --export-json, ping or fping output; name the \
                 format first (ingest iperf3 FILE) to hear what does not fit",
                input.place(1)
            ))
        })?,
    };
    let conv = match format {
        Format::Iperf3 => iperf3::convert(input),
        Format::Iperf3Stream => iperf3::convert_stream(input),
        Format::Fio => fio::convert(input),
        Format::Hyperfine => hyperfine::convert(input),
        Format::Ping => ping::convert(input),
        Format::Fping => fping::convert(input),
        Format::Figures => Err(Failure::usage(
            "figures name their tool: ingest figures --tool NAME FILE",
        )),
    }?;
    Ok(sanity::checked(conv))
}

/// Runs ingest with `args` (the program name first), as the binary does.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}
