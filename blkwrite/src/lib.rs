//! blkwrite: a block writer that replaces `dd ...; sync`, with fio's measurement and dd's
//! simplicity. See [`command`] for the interface and README.md for the records.

pub mod cli;
pub mod engine;
pub mod pattern;
pub mod signature;
pub mod target;
pub mod verify;

use engine::{Flush, Outcome, Plan, Stop, Tick};
use measure::exit;
use measure::writer::{Reporter, Summary, Values, info};
use measure::{Failure, Status};
use pattern::{Order, Pattern, Pool};
use serde_json::{Map, Value, json};
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use target::{Direct, OpenSpec, Target};

pub use cli::command;

/// Runs blkwrite with `args` (the program name first).
pub fn run(args: Vec<OsString>) -> Result<ExitCode, Failure> {
    let m = measure::cli::parse(command(), args)?;
    let o = cli::Opts::from(&m)?;
    let env = measure::label::envelope("blkwrite", env!("CARGO_PKG_VERSION"), &m, "blkwrite")?;
    let out = measure::cli::open_output(o.output.as_deref(), measure::cli::DefaultOutput::Stdout)?;
    let mut rep = Reporter::new(env, out);
    measure::cli::install_interrupt_handler()
        .map_err(|e| Failure::io("installing the Ctrl-C handler", &e))?;
    let seed = o.seed.unwrap_or_else(measure::writer::random_u64);
    let mut begin = options_info(&o, seed);
    match setup(&o, seed) {
        Ok((t, plan)) => {
            if m.get_one::<String>("name").is_none() {
                rep.set_name(&default_name(&o, &plan, &t));
            }
            execute(&mut rep, &o, t, plan, seed, begin)
        }
        Err(f) => {
            if m.get_one::<String>("name").is_none() {
                rep.set_name(&format!("write to {}", o.target.display()));
            }
            begin.extend(measure::envfacts::Probe::system().machine());
            let msg = f.to_string();
            rep.begin(begin).map_err(|e| Failure::io("output", &e))?;
            fail_summary(&mut rep, &msg, Values::new(), Map::new())?;
            Err(f)
        }
    }
}

fn options_info(o: &cli::Opts, seed: u64) -> Map<String, Value> {
    info(json!({
        "target": o.target.display().to_string(),
        "bs_bytes": o.bs,
        "direct": match o.direct { Direct::Off => "off", Direct::On => "on", Direct::Try => "try" },
        "flush": o.flush_text,
        "fdatasync": o.fdatasync,
        "dsync": o.dsync,
        "pattern": o.pattern.as_str(),
        "random": o.random,
        "fallocate": o.fallocate,
        "seed": seed,
        "iodepth": o.iodepth,
        "engine": o.engine.as_str(),
        "time_limit_s": o.time.map(|t| t.as_secs_f64()),
        "verify": o.verify,
        "verify_only": o.verify_only,
        "keep": o.keep,
        "force": o.force,
        "force_device": o.force_device,
    }))
}

/// Opens the target (every safety check) and works out the plan (every alignment check).
fn setup(o: &cli::Opts, seed: u64) -> Result<(Target, Plan), Failure> {
    // How much to write to a target that has no size of its own.
    let no_size = || {
        Failure::usage(format!(
            "how much to write to {}? give -s SIZE (e.g. -s 1G) or -c N with -b SIZE",
            o.target.display()
        ))
    };
    // Asked before the target is opened, so that a missing file is not created for nothing.
    if o.size.is_none() && o.count.is_none() && !o.target.exists() {
        return Err(no_size());
    }
    if o.verify_only && o.pattern == Pattern::Random && o.seed.is_none() {
        return Err(Failure::usage(
            "--verify-only with random data needs the --seed the file was written with (see its begin record's info.seed)",
        ));
    }
    let t = target::open(&OpenSpec {
        path: o.target.clone(),
        direct: o.direct,
        dsync: o.dsync,
        force: o.force,
        force_device: o.force_device,
        keep: o.keep,
        read_only: o.verify_only,
    })?;
    let shown = o.target.display();
    let size = match (o.size, o.count, t.device_size) {
        (Some(s), _, _) => s,
        (None, Some(c), _) => c
            .checked_mul(o.bs)
            .ok_or_else(|| Failure::usage(format!("-c {c} times --bs {} overflows", o.bs)))?,
        (None, None, Some(d)) => d,
        (None, None, None) => return Err(no_size()),
    };
    if size == 0 {
        return Err(Failure::usage(
            "nothing to write: --size is 0; give e.g. -s 1G",
        ));
    }
    if let Some(d) = t.device_size
        && size > d
    {
        return Err(Failure::usage(format!(
            "{} bytes ({}) do not fit on {shown}, which holds {d} bytes ({}): give a smaller -s or -c",
            size,
            cli::compact_size(size),
            cli::compact_size(d)
        )));
    }
    if t.direct_effective {
        let a = &t.align;
        let src = match a.source {
            "statx" => "statx STATX_DIOALIGN",
            "BLKSSZGET" => "the logical block size, BLKSSZGET",
            "block-device" => "the logical block size of the device beneath",
            _ => "assumed",
        };
        if o.bs % a.offset != 0 {
            return Err(Failure::usage(format!(
                "--bs {} does not fit O_DIRECT on {shown}: writes there must be a multiple of {} bytes ({src}); \
                 use --bs {} or another multiple of {}, or drop --direct",
                o.bs,
                a.offset,
                cli::compact_size(o.bs.div_ceil(a.offset) * a.offset),
                a.offset
            )));
        }
        if size % a.offset != 0 {
            return Err(Failure::usage(format!(
                "--size {size} does not fit O_DIRECT on {shown}: the last write would not be a multiple of {} bytes ({src}); \
                 use a size that is a multiple of {}, or drop --direct",
                a.offset, a.offset
            )));
        }
        if a.mem > 4096 && o.bs % a.mem != 0 {
            return Err(Failure::usage(format!(
                "O_DIRECT on {shown} wants buffers aligned to {} bytes: use a --bs that is a multiple of it",
                a.mem
            )));
        }
    }
    let blocks = size.div_ceil(o.bs);
    let plan = Plan {
        size,
        bs: o.bs,
        blocks,
        order: if o.random {
            Order::random(blocks, seed)
        } else {
            Order::Sequential
        },
        iodepth: o.iodepth,
        flush: o.flush,
        datasync: o.fdatasync,
        time: o.time,
        engine: o.engine,
    };
    Ok((t, plan))
}

fn default_name(o: &cli::Opts, plan: &Plan, t: &Target) -> String {
    let mut s = format!(
        "write {} bs={} {} {}",
        cli::compact_size(plan.size),
        cli::compact_size(plan.bs),
        if t.direct_effective {
            "direct"
        } else {
            "buffered"
        },
        if o.random { "rand" } else { "seq" },
    );
    if o.iodepth > 1 {
        s.push_str(&format!(" depth={}", o.iodepth));
    }
    if o.dsync {
        s.push_str(" dsync");
    }
    let sync = if o.fdatasync { "fdatasync" } else { "fsync" };
    match o.flush {
        Flush::End => s.push_str(&format!(" {sync}-end")),
        Flush::Every(n) => s.push_str(&format!(" {sync}-every={n}")),
        Flush::None => s.push_str(" no-flush"),
    }
    if o.verify_only {
        s = s.replacen("write", "verify", 1);
    }
    s
}

fn write_values(out: &Outcome, plan: &Plan) -> Values {
    let total = out.write_s + out.flush_s;
    let mut v = Values::new()
        .with_count("written_bytes", out.bytes)
        .with_count("write_count", out.writes)
        .with_count("sync_count", out.sync_count)
        .with("write_s", out.write_s)
        .with("flush_s", out.flush_s)
        .with("total_s", total);
    if total > 0.0 {
        v.set("throughput_bytes_per_s", out.bytes as f64 / total);
        v.set("writes_per_s", out.writes as f64 / total);
    }
    if out.write_s > 0.0 {
        v.set("write_phase_bytes_per_s", out.bytes as f64 / out.write_s);
    }
    if matches!(plan.flush, Flush::Every(_)) {
        v.set("periodic_flush_s", out.periodic_flush_s);
    }
    let h = &out.hist;
    if !h.is_empty() {
        let s = |ns: u64| ns as f64 / 1e9;
        v.set("latency_min_s", s(h.min()));
        v.set("latency_mean_s", h.mean() / 1e9);
        v.set("latency_p50_s", s(h.value_at_quantile(0.50)));
        v.set("latency_p90_s", s(h.value_at_quantile(0.90)));
        v.set("latency_p99_s", s(h.value_at_quantile(0.99)));
        v.set("latency_p99_9_s", s(h.value_at_quantile(0.999)));
        v.set("latency_max_s", s(h.max()));
    }
    v
}

fn execute(
    rep: &mut Reporter,
    o: &cli::Opts,
    t: Target,
    plan: Plan,
    seed: u64,
    mut begin: Map<String, Value>,
) -> Result<ExitCode, Failure> {
    let outerr = |e: std::io::Error| Failure::io("output", &e);
    let slots = Pool::slots_for(plan.bs, plan.blocks, o.pattern);
    begin.insert("size_bytes".into(), json!(plan.size));
    begin.insert("blocks".into(), json!(plan.blocks));
    begin.insert("target_kind".into(), json!(t.kind.as_str()));
    begin.insert("created".into(), json!(t.kind == target::Kind::NewFile));
    begin.insert("direct_effective".into(), json!(t.direct_effective));
    if let Some(n) = &t.direct_note {
        begin.insert("direct_note".into(), json!(n));
    }
    if t.direct_effective {
        begin.insert("dio_offset_align".into(), json!(t.align.offset));
        begin.insert("dio_mem_align".into(), json!(t.align.mem));
        begin.insert("dio_align_source".into(), json!(t.align.source));
    }
    begin.insert("pool_bytes".into(), json!(slots * plan.bs));
    begin.insert("pool_slots".into(), json!(slots));
    begin.extend(t.facts.clone());
    begin.extend(measure::envfacts::Probe::system().machine());
    if o.fallocate && t.kind == target::Kind::NewFile && !o.verify_only {
        let f0 = std::time::Instant::now();
        // SAFETY: fallocate on the descriptor the target holds open.
        let rc = unsafe { libc::fallocate(t.file.as_raw_fd(), 0, 0, plan.size as libc::off_t) };
        let ok = rc == 0;
        begin.insert("preallocated".into(), json!(ok));
        if ok {
            begin.insert("fallocate_s".into(), json!(f0.elapsed().as_secs_f64()));
        } else {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSPC) {
                let f = Failure::new(
                    exit::CANNOT,
                    o.target.display(),
                    format!(
                        "preallocating {} bytes: {e} (the target is full: give a smaller --size)",
                        plan.size
                    ),
                );
                rep.begin(begin).map_err(outerr)?;
                fail_summary(rep, &f.to_string(), Values::new(), Map::new())?;
                return Err(f);
            }
            begin.insert("fallocate_error".into(), json!(e.to_string()));
        }
    } else {
        begin.insert("preallocated".into(), json!(false));
    }
    let t0 = std::time::Instant::now();
    let pool = Pool::new(plan.bs, plan.blocks, o.pattern, seed);
    begin.insert("pool_fill_s".into(), json!(t0.elapsed().as_secs_f64()));
    rep.begin(begin).map_err(outerr)?;
    let pool = match pool {
        Ok(p) => p,
        Err(e) => {
            let f = Failure::new(exit::CANNOT, "allocating the data buffer", e);
            fail_summary(rep, &f.to_string(), Values::new(), Map::new())?;
            return Err(f);
        }
    };

    if o.verify_only {
        return verify_phase(
            rep,
            o,
            &t,
            &pool,
            &plan,
            plan.blocks,
            true,
            Values::new(),
            Map::new(),
        );
    }

    let progress = !o.quiet && measure::cli::is_terminal(2);
    let mut out_err: Option<std::io::Error> = None;
    let mut tick = |k: &Tick| {
        let secs = k.interval_s.max(1e-9);
        let v = Values::new()
            .with("elapsed_s", k.elapsed_s)
            .with("interval_s", k.interval_s)
            .with_count("written_bytes", k.bytes)
            .with_count("write_count", k.writes)
            .with("throughput_bytes_per_s", k.bytes as f64 / secs)
            .with("writes_per_s", k.writes as f64 / secs);
        if progress {
            let _ = write!(
                std::io::stderr(),
                "\rblkwrite: {:>10} written, {}   ",
                measure::units::format_bytes(k.total_bytes as f64),
                measure::units::format_bytes_per_s(k.bytes as f64 / secs)
            );
        }
        match rep.interval(v, Map::new()) {
            Ok(()) => true,
            Err(e) => {
                out_err = Some(e);
                false
            }
        }
    };
    let out = engine::run(t.file.as_raw_fd(), &pool, &plan, &mut tick);
    if progress {
        let _ = writeln!(std::io::stderr());
    }
    if let Some(e) = out_err {
        return Err(Failure::io("output", &e));
    }
    let values = write_values(&out, &plan);
    let mut sinfo = info(json!({
        "stop": out.stop.as_str(),
        "engine": plan.engine.as_str(),
        "fixed_buffers": out.fixed_buffers,
        "direct_effective": t.direct_effective,
        "issued_count": out.issued,
        "complete": out.writes == plan.blocks,
    }));
    if let Some(e) = out.errno {
        sinfo.insert("errno".into(), json!(e));
    }
    match out.stop {
        Stop::Done | Stop::Time => {
            rep.sample(values.clone(), sinfo.clone()).map_err(outerr)?;
            if o.verify {
                let flushed = plan.flush != Flush::None || o.dsync;
                return verify_phase(rep, o, &t, &pool, &plan, out.writes, flushed, values, sinfo);
            }
            ok_summary(rep, "throughput_bytes_per_s", values, sinfo)?;
            Ok(ExitCode::SUCCESS)
        }
        Stop::Interrupted => {
            // The file goes (when blkwrite made it and --keep was not given) as `t` is dropped.
            let msg = if t.cleanup.removes() {
                "interrupted before the end: partial figures, test file removed"
            } else {
                "interrupted before the end: partial figures"
            };
            rep.sample_failed(msg, sinfo.clone()).map_err(outerr)?;
            fail_summary(rep, msg, values, sinfo)?;
            Ok(ExitCode::from(exit::INTERRUPTED))
        }
        Stop::OutputGone => Ok(ExitCode::SUCCESS),
        Stop::Failed => {
            let raw = out.error.unwrap_or_else(|| "write failed".into());
            let hint = match out.errno {
                Some(libc::ENOSPC) => " (the target is full: give a smaller --size)",
                Some(libc::EROFS) => " (the target is read-only)",
                Some(libc::EIO) => " (the device reported an I/O error: check dmesg)",
                Some(libc::EINVAL) if t.direct_effective => {
                    " (O_DIRECT refused this write: check --bs and --size against the alignment in begin)"
                }
                _ => "",
            };
            let msg = format!("{raw}{hint}");
            rep.sample_failed(&msg, sinfo.clone()).map_err(outerr)?;
            fail_summary(rep, &msg, values, sinfo)?;
            Err(Failure::new(exit::CANNOT, o.target.display(), msg))
        }
    }
}

fn ok_summary(
    rep: &mut Reporter,
    headline: &str,
    values: Values,
    sinfo: Map<String, Value>,
) -> Result<(), Failure> {
    rep.summary(Summary {
        status: Status::Ok,
        error: None,
        headline: Some(headline.into()),
        values,
        info: sinfo,
    })
    .map_err(|e| Failure::io("output", &e))
}

fn fail_summary(
    rep: &mut Reporter,
    msg: &str,
    values: Values,
    sinfo: Map<String, Value>,
) -> Result<(), Failure> {
    rep.summary(Summary {
        status: Status::Failed,
        error: Some(msg.to_string()),
        headline: None,
        values,
        info: sinfo,
    })
    .map_err(|e| Failure::io("output", &e))
}

#[allow(clippy::too_many_arguments)]
fn verify_phase(
    rep: &mut Reporter,
    o: &cli::Opts,
    t: &Target,
    pool: &Pool,
    plan: &Plan,
    written: u64,
    flushed: bool,
    mut values: Values,
    mut sinfo: Map<String, Value>,
) -> Result<ExitCode, Failure> {
    let direct = t.direct_effective;
    match verify::check(&t.path, direct, flushed, pool, plan, written) {
        Ok(c) => {
            values.set_count("verified_bytes", c.bytes);
            values.set_count("verify_bad_block_count", c.bad_blocks);
            values.set("verify_s", c.secs);
            if c.secs > 0.0 {
                values.set("verify_bytes_per_s", c.bytes as f64 / c.secs);
            }
            sinfo.insert("verify_source".into(), json!(c.source));
            if let Some(off) = c.first_bad_offset {
                sinfo.insert("verify_first_bad_offset".into(), json!(off));
            }
            let headline = if o.verify_only {
                "verify_bytes_per_s"
            } else {
                "throughput_bytes_per_s"
            };
            if c.bad_blocks > 0 {
                let msg = format!(
                    "verify: {} of {} blocks differ from what was written, the first at offset {}",
                    c.bad_blocks,
                    c.blocks,
                    c.first_bad_offset.unwrap_or(0)
                );
                fail_summary(rep, &msg, values, sinfo)?;
                let _ = writeln!(std::io::stderr(), "blkwrite: {}: {msg}", o.target.display());
                return Ok(ExitCode::from(exit::MEASURED_FAILURE));
            }
            ok_summary(rep, headline, values, sinfo)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            fail_summary(rep, "interrupted while verifying", values, sinfo)?;
            Ok(ExitCode::from(exit::INTERRUPTED))
        }
        Err(e) => {
            let msg = format!("verify: reading {} back: {e}", o.target.display());
            fail_summary(rep, &msg, values, sinfo)?;
            Err(Failure::new(exit::CANNOT, "verify", e))
        }
    }
}
