//! netpipe: a netcat-compatible TCP sink and source that measures throughput like iperf3.
//!
//! Two modes, both on `measure::lifecycle` ([`Tool`]). Netcat mode (`netpipe -l [-p] PORT >
//! file`, `netpipe HOST PORT < file`) moves stdin and stdout byte for byte; its records go to
//! stderr when that is not a terminal, else to `-o FILE` or nowhere. Measuring mode (`netpipe
//! recv`, `netpipe send`) discards what it receives and sends a pre-generated buffer; its
//! records go to stdout when that is a pipe or a file, and a terminal gets human lines.
//!
//! Two netpipes in measuring mode agree on what was sent (netpipe/1, `agree.rs`): the
//! receiver says hello first on the direction that carries no data; a sender that hears it
//! answers with its own hello (its streams and limits) at the head of the stream and ends it
//! with an end mark (what it sent), and the receiver reports what it got before it closes. A
//! sender that hears no hello sends nothing but the pattern, and a receiver whose first bytes
//! are no hello counts them all as data, so nc, socat or dd on the other end see raw bytes.

mod addr;
mod agree;
mod args;
mod cli;
mod config;
mod cpu;
mod ctl;
mod end;
mod fdio;
mod human;
mod interval;
mod live;
mod lowat;
mod netcat;
mod plan;
mod relay;
mod running;
mod samples;
mod serve;
mod session;
mod sock;
mod source;
mod stdin;
mod stream;
mod summary;
mod throttle;
mod udp;
mod udprun;
mod udpsend;
mod wire;

pub use cli::command;

use clap::ArgMatches;
use measure::lifecycle::{Session, Stdout};
use measure::{Exit, Failure};
use std::ffi::OsString;

/// netpipe on the lifecycle: netcat mode (payload on stdout) or send/recv (records on it).
#[derive(Debug)]
pub struct Tool;

/// What a run was asked to do, with its default row name.
#[derive(Debug)]
pub enum Options {
    Measure(Box<plan::Plans>, String),
    Netcat(Box<netcat::NcPlan>, String),
}

impl measure::lifecycle::Tool for Tool {
    const NAME: &'static str = "netpipe";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = Options;

    fn command() -> clap::Command {
        cli::command()
    }

    /// `m` is the matches of send or recv when `sub` names one, else netcat mode's. Two steps:
    /// args.rs reads what was given, config.rs checks it and makes the plans.
    fn options(m: &ArgMatches, sub: Option<&str>) -> Result<Options, Failure> {
        match sub {
            Some(name) => {
                let (p, n) = config::measuring(&args::measuring(name, m))?;
                Ok(Options::Measure(Box::new(p), n))
            }
            None => {
                let (p, n) = config::netcat(&args::netcat(m))?;
                Ok(Options::Netcat(Box::new(p), n))
            }
        }
    }

    fn name(o: &Options) -> String {
        match o {
            Options::Measure(_, n) | Options::Netcat(_, n) => n.clone(),
        }
    }

    fn stdout(o: &Options) -> Stdout {
        match o {
            Options::Measure(..) => Stdout::Records,
            Options::Netcat(..) => Stdout::Payload,
        }
    }

    fn run(o: Options, s: &mut Session) -> Result<Exit, Failure> {
        match o {
            Options::Measure(p, _) => session::run(*p, s),
            Options::Netcat(p, _) => netcat::run(*p, s),
        }
    }
}

/// Runs netpipe with `args` (the first is the program name) through the lifecycle.
pub fn run(args: Vec<OsString>) -> Exit {
    measure::lifecycle::run::<Tool>(args)
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
            measure::lifecycle::invoke::<Tool>(v)
        };
        assert_eq!(r(&[]).unwrap_err().code, Exit::Cannot);
        assert_eq!(r(&["send"]).unwrap_err().code, Exit::Cannot);
        assert_eq!(
            r(&["recv", "--listen", "x:y:z"]).unwrap_err().code,
            Exit::Cannot
        );
        assert_eq!(r(&["-l", "99999"]).unwrap_err().code, Exit::Cannot);
        assert_eq!(
            r(&["send", "--connect", "127.0.0.1:1", "--time", "0"])
                .unwrap_err()
                .code,
            Exit::Cannot
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
