//! Before any record: the target opened (every safety check), the plan worked out (every
//! size and alignment check), and the run's default name.

use crate::blk::engine::{Dir, Flush, Plan};
use crate::blk::lines::compact_size;
use crate::blk::pattern::{Order, Pattern};
use crate::blk::target::{self, OpenSpec, Target};
use crate::write::cli::{self, Opts};
use measure::Failure;

/// How much to write to a target that has no size of its own.
fn no_size(o: &Opts) -> Failure {
    Failure::usage(format!(
        "how much to write to {}? give -s SIZE (e.g. -s 1G) or -c N with -b SIZE",
        o.target.display()
    ))
}

/// Opens the target (every safety check) and works out the plan (every alignment check).
pub(crate) fn setup(o: &Opts, seed: u64) -> Result<(Target, Plan), Failure> {
    // Asked before the target is opened, so that a missing file is not created for nothing.
    if o.size.is_none() && o.count.is_none() && !o.target.exists() {
        return Err(no_size(o));
    }
    let wanted = o.size.or(o.count.map(|c| c.saturating_mul(o.bs)));
    // dd's form sets --force to overwrite as dd does, not to skip this check.
    let unchecked = o.force && o.dd.is_none();
    if let Some(bytes) = wanted.filter(|_| !unchecked && !o.verify_only && !o.target.exists()) {
        crate::blk::space::check(
            &o.target,
            bytes,
            &format!("-s {}", crate::blk::lines::compact_size(bytes)),
        )?;
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
    if o.dd.is_some_and(|d| d.truncate) && t.kind == target::Kind::ExistingFile {
        // dd truncates its output at seek= unless conv=notrunc.
        t.file.set_len(o.offset).map_err(|e| {
            Failure::new(
                measure::Exit::Cannot,
                format!("truncating {}", o.target.display()),
                e,
            )
        })?;
    }
    let size = plan_size(o, &t)?;
    if t.direct_effective {
        check_direct_fit(o, &t, size)?;
    }
    let blocks = size.div_ceil(o.bs);
    let plan = Plan {
        start: o.offset,
        size,
        bs: o.bs,
        blocks,
        order: Order::chosen(o.random, blocks, seed),
        iodepth: o.iodepth,
        flush: o.flush,
        datasync: o.fdatasync,
        time: o.time,
        engine: o.engine,
        dir: Dir::Write,
        wrap: false,
        interval: std::time::Duration::from_secs(1),
    };
    Ok((t, plan))
}

/// The bytes to write: --size, else --count times --bs, else the whole device; never 0 and
/// never more than the device holds.
fn plan_size(o: &Opts, t: &Target) -> Result<u64, Failure> {
    let size = match (o.size, o.count, t.device_size) {
        (Some(s), _, _) => s,
        (None, Some(c), _) => c
            .checked_mul(o.bs)
            .ok_or_else(|| Failure::usage(format!("-c {c} times --bs {} overflows", o.bs)))?,
        (None, None, Some(d)) => d.saturating_sub(o.offset),
        (None, None, None) => return Err(no_size(o)),
    };
    if size == 0 {
        return Err(Failure::usage(
            "nothing to write: --size is 0; give e.g. -s 1G",
        ));
    }
    if let Some(d) = t.device_size
        && size.saturating_add(o.offset) > d
    {
        return Err(Failure::usage(format!(
            "{} bytes ({}) from offset {} do not fit on {}, which holds {d} bytes ({}): give a smaller -s or -c",
            size,
            compact_size(size),
            o.offset,
            o.target.display(),
            compact_size(d)
        )));
    }
    Ok(size)
}

/// Refuses a --bs or --size that O_DIRECT on this target would reject, naming the fix.
fn check_direct_fit(o: &Opts, t: &Target, size: u64) -> Result<(), Failure> {
    let shown = o.target.display();
    let a = &t.align;
    let src = match a.source {
        "statx" => "statx STATX_DIOALIGN",
        "BLKSSZGET" => "the logical block size, BLKSSZGET",
        "block-device" => "the logical block size of the device beneath",
        _ => "assumed",
    };
    if !o.bs.is_multiple_of(a.offset) {
        return Err(Failure::usage(format!(
            "--bs {} does not fit O_DIRECT on {shown}: writes there must be a multiple of {} bytes ({src}); \
             use --bs {} or another multiple of {}, or drop --direct",
            o.bs,
            a.offset,
            compact_size(o.bs.div_ceil(a.offset) * a.offset),
            a.offset
        )));
    }
    if !o.offset.is_multiple_of(a.offset) {
        return Err(Failure::usage(format!(
            "--offset {} does not fit O_DIRECT on {shown}: it must be a multiple of {} bytes ({src})",
            o.offset, a.offset
        )));
    }
    if !size.is_multiple_of(a.offset) {
        return Err(Failure::usage(format!(
            "--size {size} does not fit O_DIRECT on {shown}: the last write would not be a multiple of {} bytes ({src}); \
             use a size that is a multiple of {}, or drop --direct",
            a.offset, a.offset
        )));
    }
    if a.mem > 4096 && !o.bs.is_multiple_of(a.mem) {
        return Err(Failure::usage(format!(
            "O_DIRECT on {shown} wants buffers aligned to {} bytes: use a --bs that is a multiple of it",
            a.mem
        )));
    }
    Ok(())
}

/// The row name when --name is not given: `write 1G bs=1M direct seq fsync-end`.
pub(crate) fn default_name(o: &cli::Opts, plan: &Plan, t: &Target) -> String {
    let mut s = crate::blk::records::name_head("write", plan, t, o.random);
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
