//! netpipe: a netcat-compatible TCP sink and source that measures throughput like iperf3.
//!
//! Two modes. Netcat mode (`netpipe -l [-p] PORT > file`, `netpipe HOST PORT < file`) moves
//! stdin and stdout byte for byte and reports its records on stderr (or `-o FILE`).
//! Measuring mode (`netpipe recv`, `netpipe send`) discards what it receives and sends a
//! pre-generated buffer, reporting records on stdout.

mod addr;
mod cli;
mod cpu;
mod ctl;
mod end;
mod fdio;
mod human;
mod interval;
mod live;
mod lowat;
mod netcat;
mod options;
mod plan;
mod relay;
mod samples;
mod session;
mod sock;
mod source;
mod stdin;
mod stream;
mod summary;

pub use cli::command;

use clap::ArgMatches;
use measure::Failure;
use measure::cli::{DefaultOutput, exit};
use std::ffi::OsString;
use std::process::ExitCode;

/// Runs netpipe with `args` (the first is the program name).
pub fn run(args: Vec<OsString>) -> Result<ExitCode, Failure> {
    let m = measure::cli::parse(command(), args)?;
    measure::cli::install_interrupt_handler()
        .map_err(|e| Failure::new(exit::CANNOT, "installing the Ctrl-C handler", e))?;
    let code = match m.subcommand() {
        Some((name, sub)) => run_measuring(name, sub)?,
        None => run_netcat(&m)?,
    };
    Ok(ExitCode::from(code))
}

fn run_measuring(name: &str, m: &ArgMatches) -> Result<u8, Failure> {
    let (plan, default_name) = options::measuring(name, m)?;
    let env = measure::label::envelope("netpipe", env!("CARGO_PKG_VERSION"), m, &default_name)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("output").map(String::as_str),
        DefaultOutput::Stdout,
    )?;
    let mut rep = measure::Reporter::new(env, out);
    session::run(plan, &mut rep)
}

fn run_netcat(m: &ArgMatches) -> Result<u8, Failure> {
    let (plan, name) = options::netcat(m)?;
    let env = measure::label::envelope("netpipe", env!("CARGO_PKG_VERSION"), m, &name)?;
    let out = measure::cli::open_output(
        m.get_one::<String>("output").map(String::as_str),
        DefaultOutput::Stderr,
    )?;
    let mut rep = measure::Reporter::new(env, out);
    netcat::run(plan, &mut rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_valid() {
        command().debug_assert();
    }

    #[test]
    fn usage_errors() {
        let r = |a: &[&str]| {
            let mut v: Vec<OsString> = vec!["netpipe".into()];
            v.extend(a.iter().map(OsString::from));
            run(v)
        };
        assert_eq!(r(&[]).unwrap_err().code, exit::CANNOT);
        assert_eq!(r(&["send"]).unwrap_err().code, exit::CANNOT);
        assert_eq!(
            r(&["recv", "--listen", "x:y:z"]).unwrap_err().code,
            exit::CANNOT
        );
        assert_eq!(r(&["-l", "99999"]).unwrap_err().code, exit::CANNOT);
        assert_eq!(
            r(&["send", "--connect", "127.0.0.1:1", "--time", "0"])
                .unwrap_err()
                .code,
            exit::CANNOT
        );
    }

    #[test]
    fn the_vocabulary() {
        let parse = |a: &[&str]| {
            let mut v = vec!["netpipe"];
            v.extend(a);
            command().try_get_matches_from(v)
        };
        let send = |a: &[&str]| {
            let mut v = vec!["send", "--connect", "h:1"];
            v.extend(a);
            parse(&v)
        };
        // -w and -N are nc's (netcat mode) only; send and recv spell them out.
        assert!(send(&["-w", "4M"]).is_err());
        assert!(send(&["-N"]).is_err());
        // -n is nc's (numeric) and ping's: the byte count is --bytes only.
        assert!(send(&["-n", "1M"]).is_err());
        assert!(send(&["--bytes", "1M"]).is_ok());
        assert!(send(&["--window", "4M", "--no-delay"]).is_ok());
        assert!(parse(&["-w", "5", "-N", "h", "1"]).is_ok());
        // -b/--bs, with --block-size as an alias.
        for b in [
            &["-b", "64k"][..],
            &["--bs", "64k"],
            &["--block-size", "64k"],
        ] {
            let m = send(b).unwrap();
            let (_, sub) = m.subcommand().unwrap();
            assert_eq!(sub.get_one::<u64>("bs"), Some(&65536), "{b:?}");
        }
        // --pattern zero|random, zeros accepted (and hidden).
        for p in ["zero", "zeros", "random"] {
            assert!(send(&["--pattern", p]).is_ok(), "{p}");
        }
        assert!(send(&["--pattern", "ones"]).is_err());
    }
}
