//! The first step from argv to a plan: the matches of the command table (cli.rs) read into
//! plain structs, one per mode, holding what was given and nothing worked out from it.
//! config.rs checks them and makes the plans.

use crate::addr::Family;
use crate::plan::Role;
use clap::ArgMatches;
use std::time::Duration;

/// What `send` or `recv` was given.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureArgs {
    /// The subcommand: `send` or `recv`.
    pub role: Role,
    /// `-4` or `-6`.
    pub family: Family,
    pub listen: Option<String>,
    pub connect: Option<String>,
    pub bind: Option<String>,
    pub bytes: Option<u64>,
    pub time: Option<Duration>,
    pub interval: Option<Duration>,
    pub parallel: Option<u16>,
    pub bidir: bool,
    pub udp: bool,
    pub token: Option<String>,
    /// NETPIPE_TOKEN when set and not empty (what --token defaults to).
    pub token_env: Option<String>,
    pub omit: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    pub window: Option<u64>,
    pub no_delay: bool,
    pub congestion: Option<String>,
    pub mss: Option<u32>,
    pub keep_open: bool,
    /// `-b/--bs`.
    pub bs: Option<u64>,
    /// `--rate`, `--send-method` and `--pattern`: send's only.
    pub rate: Option<f64>,
    pub send_method: Option<String>,
    pub pattern: Option<String>,
}

/// What netcat mode was given: nc's letters and the flags it shares with send and recv.
#[derive(Clone, Debug, PartialEq)]
pub struct NetcatArgs {
    pub family: Family,
    /// `-l`.
    pub listen: bool,
    /// `-p PORT`.
    pub port: Option<String>,
    /// `-s ADDR`.
    pub source: Option<String>,
    /// `-k`.
    pub keep: bool,
    /// `-w SECS`.
    pub nc_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    /// `-d`.
    pub no_stdin: bool,
    pub window: Option<u64>,
    pub no_delay: bool,
    /// `[HOST] PORT`.
    pub positionals: Vec<String>,
}

/// The matches of `send` or `recv` (`name`).
pub fn measuring(name: &str, m: &ArgMatches) -> MeasureArgs {
    MeasureArgs {
        role: if name == "send" {
            Role::Send
        } else {
            Role::Recv
        },
        family: family(m),
        listen: string(m, "listen"),
        connect: string(m, "connect"),
        bind: string(m, "bind"),
        bytes: m.get_one::<u64>("bytes").copied(),
        time: dur(m, "time"),
        interval: dur(m, "interval"),
        parallel: m.get_one::<u16>("parallel").copied(),
        bidir: m.get_flag("bidir"),
        udp: m.get_flag("udp"),
        token: string(m, "token"),
        token_env: std::env::var("NETPIPE_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        omit: dur(m, "omit"),
        idle_timeout: dur(m, "idle-timeout"),
        connect_timeout: dur(m, "connect-timeout"),
        window: m.get_one::<u64>("window").copied(),
        no_delay: m.get_flag("no-delay"),
        congestion: string(m, "congestion"),
        mss: m.get_one::<u32>("mss").copied(),
        keep_open: m.get_flag("keep-open"),
        bs: m.get_one::<u64>("bs").copied(),
        rate: m.try_get_one::<f64>("rate").ok().flatten().copied(),
        send_method: send_only(m, "send-method"),
        pattern: send_only(m, "pattern"),
    }
}

/// The matches of netcat mode.
pub fn netcat(m: &ArgMatches) -> NetcatArgs {
    NetcatArgs {
        family: family(m),
        listen: m.get_flag("listen"),
        port: string(m, "port"),
        source: string(m, "source"),
        keep: m.get_flag("keep"),
        nc_timeout: dur(m, "nc-timeout"),
        idle_timeout: dur(m, "idle-timeout"),
        connect_timeout: dur(m, "connect-timeout"),
        no_stdin: m.get_flag("no-stdin"),
        window: m.get_one::<u64>("window").copied(),
        no_delay: m.get_flag("no-delay"),
        positionals: m
            .get_many::<String>("args")
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
    }
}

fn family(m: &ArgMatches) -> Family {
    if m.get_flag("ipv4") {
        Family::V4
    } else if m.get_flag("ipv6") {
        Family::V6
    } else {
        Family::Any
    }
}

fn dur(m: &ArgMatches, id: &str) -> Option<Duration> {
    m.get_one::<Duration>(id).copied()
}

fn string(m: &ArgMatches, id: &str) -> Option<String> {
    m.get_one::<String>(id).cloned()
}

/// A flag of a subcommand that may lack it (`--send-method` and `--pattern` are send's).
fn send_only(m: &ArgMatches, id: &str) -> Option<String> {
    m.try_get_one::<String>(id).ok().flatten().cloned()
}
