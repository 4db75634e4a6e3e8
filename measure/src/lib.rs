//! The benchmatrix record: the contract between the tools, and the plumbing they share.
//!
//! # The record, `benchmatrix/1`
//!
//! Every line a benchmatrix tool reports is one compact JSON object that stands alone, so that
//! `cat`, `grep` and `tail` of many files keep their meaning. Each line is flushed as it is
//! written; a high-rate stream (`pingrt --flood`) may hold lines back for a bounded time (a
//! fraction of a second), and its summary flushes them all ([`Reporter::batch`]). Every tool
//! writes through the one [`Reporter`] and runs through [`lifecycle`]. For example:
//!
//! ```json
//! {"schema":"benchmatrix/1","tool":"pingrt","version":"0.1.0","type":"sample","run":"7f3a9c1e0b2d",
//!  "seq":7,"at":"2026-11-30T13:00:00.123456Z","host":"domu1","label":"para/lvm/san",
//!  "name":"icmp latency domU<->dom0","tags":{"peer":"10.0.0.1"},
//!  "values":{"rtt_s":0.000104},"info":{"icmp_seq":7,"ttl":64,"bytes":64}}
//! ```
//!
//! ## Envelope (on every line)
//!
//! | field     | meaning |
//! |-----------|---------|
//! | `schema`  | always `"benchmatrix/1"`. Additive changes keep it; a removal or a change of meaning bumps it. Readers reject an unknown schema and ignore unknown fields. |
//! | `tool`    | the tool that wrote the line (`netpipe`, `pingrt`, `blkwrite`, `timecmd`, ...). |
//! | `version` | the tool's version. |
//! | `type`    | `begin`, `sample`, `interval` or `summary` (below). |
//! | `run`     | an id unique to one invocation (12 lower-case hex digits; never empty). |
//! | `seq`     | 0-based counter within the run and the type; a whole number up to 2^53 - 1. |
//! | `at`      | when the line was written (a converter: when the source measured it), RFC 3339 in UTC (`Z`) with microseconds. |
//! | `host`    | the host name. |
//! | `label`   | the environment, the matrix column by default; levels separated by `/` (`para/lvm/san`). From `--label`, else `BENCH_LABEL`, else the host name. |
//! | `name`    | what is measured, the matrix row by default; from `--name`, else derived from the command. |
//! | `tags`    | optional object of further string dimensions, from `--tag k=v` (repeatable). |
//! | `invocation` | optional: the suite invocation (one `./benchmatrix`) the run belongs to, from `BENCHMATRIX_INVOCATION`; a matrix pools runs by it. |
//! | `values`  | measurements only: JSON numbers in base units, the unit a suffix of the key (below). |
//! | `info`    | everything else: parameters, sequence numbers, addresses, exit codes, environment facts. |
//!
//! ## Types
//!
//! - `begin`: once, first: the parameters and environment facts in `info` (kernel, CPU model
//!   and count, memory, virtualization; for disk targets the filesystem and the block stack),
//!   and how busy the machine is as the run starts (below).
//! - `sample`: one repetition of the measured thing (a probe, a command run, a transfer, a
//!   file written); collate aggregates samples into a cell. A failed sample has no `values`
//!   and a top-level `error` string.
//! - `interval`: progress over time (per second of a transfer); not aggregated by default.
//! - `summary`: once, last, always written (at the end, on Ctrl-C, after an error), with the
//!   top-level `status` (`ok`, `partial`, `failed`), `error` (text; required when the status is
//!   not `ok`) and `headline` (the key in `values` that a matrix shows by default; required
//!   when the status is `ok`). A summary whose run measures several things at once (a read's
//!   rate and its latency percentiles, one cpumem probe each) also carries `headlines`: a
//!   list of `{"key": K, "role": R}`, each a key in `values` and the role of the row it makes
//!   (named "NAME: ROLE", e.g. "random read 4k depth 1: latency p99"); `headline` is the
//!   first's key, so that a reader that knows only `headline` sees that row and no other. A
//!   headline that aggregates a per-sample metric (`syscall_median_s` over the samples'
//!   `syscall_s`) takes its cell from those samples. A headline may add `"stat": "mean"`
//!   where its samples are equal-time slices of a rate: their mean, not their median, is the
//!   tool's figure (the work over the time).
//!
//! ## The load over a run (in `info`, every measuring tool's)
//!
//! A figure measured beside other work (a busy host, a neighbour that the hypervisor runs
//! instead) is not the environment's alone, so every tool that measures this machine records
//! the load through [`lifecycle::Session::begin`] and its [`Reporter`]
//! (`envfacts::LoadNow`); a converter's records (ingest) have none.
//!
//! | record | key | what |
//! |---|---|---|
//! | begin | `cpu_count` | CPUs online (`/sys/devices/system/cpu/online`) |
//! | begin | `cpu_usable_count` | CPUs in the process's affinity mask (sched_getaffinity) |
//! | begin | `load_1m` | the 1-minute load average (`/proc/loadavg`; the kernel's mean of tasks running or waiting, no unit) |
//! | begin | `procs_running_count` | tasks runnable now (`procs_running` of `/proc/stat`), the tool among them |
//! | summary | `load_1m_end`, `procs_running_end_count` | the same at the summary |
//! | summary | `steal_ratio` | steal time over the run: the `steal` ticks of `/proc/stat`'s `cpu` line from begin to summary over all its ticks then (user to steal), i.e. a share of wall time × online CPUs; left out when no tick passed |
//! | summary | `tool_involuntary_switches_count` | the tool's own involuntary context switches over the run (getrusage's ru_nivcsw, every thread) |
//!
//! collate counts a run as busy when `load_1m` or `load_1m_end`, or `procs_running_count` or
//! `procs_running_end_count` less one (the tool), exceeds `cpu_count`, or `steal_ratio`
//! exceeds 0.05; it marks the cells with values of such runs.
//!
//! ## Units: the suffix of every key in `values`
//!
//! `_s` seconds, `_bytes`, `_bytes_per_s`, `_bits_per_s`, `_per_s` (events per second),
//! `_ratio`, `_count`. A key without one of these suffixes is rejected, and so is a value
//! that is not a finite JSON number or that is negative (no unit here is ever below zero).
//! An optional field (`tags`, `invocation`, `status`, `error`, `headline`) is left out or given, never
//! `null`, and a `headline` names a key in `values`.
//!
//! A line that holds a key twice in any of its objects (the envelope, `values`, `info`,
//! `tags`) is rejected: JSON leaves duplicates undefined and a reader would keep one of them
//! silently.
//!
//! [`record::parse_line`] is the strict reader, and [`record::parse_view`] the same reader
//! for a reader of many lines: its record borrows the line's texts and builds `info` only
//! for a begin and a summary (every sample's and interval's is checked, not kept); one
//! reader serves both: a hand scanner for a line of the usual shape, serde for any other
//! (and for every error's words).
//! `measure/record.schema.json` is the same
//! contract as a JSON Schema (with format assertion on), which accepts exactly the lines the
//! reader accepts but for the rules a schema cannot state: the duplicate keys above, a
//! headline (or a `headlines` key) that names no value, a `headlines` key twice, and a first
//! `headlines` key that is not `headline`.

pub mod envfacts;
pub mod exit;
pub mod fields;
pub mod flags;
pub mod givenfacts;
pub mod headline;
pub mod human;
pub mod label;
pub mod latency;
pub mod lifecycle;
pub mod linefile;
pub mod overlap;
pub mod parts;
pub mod reading;
pub mod record;
pub mod reporter;
pub mod signal;
pub mod stats;
pub(crate) mod sysfacts;
pub mod units;

pub use exit::{Exit, Failure};
pub use lifecycle::{Session, Stdout, Tool};
pub use record::{Headline, Kind, Record, RecordView, SCHEMA, Status, parse_line, parse_view};
pub use reporter::Reporter;
