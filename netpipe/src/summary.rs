//! The end of a measuring run: what its sessions added up to, the verdict (status, error,
//! exit code), the summary record and the human summary.

use crate::cpu::Cpu;
use crate::plan::{Direction, Plan, Plans, Role};
use measure::Exit;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::units::{format_bits_per_s, format_bytes, format_seconds};
use measure::{Headline, Status};
use serde_json::json;

/// What the sessions of one direction measured, for the summary.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub sessions: u64,
    pub streams: u64,
    pub failed_streams: u64,
    pub bytes: u64,
    pub measured_bytes: u64,
    pub measured_s: f64,
    pub retrans: u64,
    pub rtt_sum_s: f64,
    pub rtt_n: u64,
    pub errors: Vec<String>,
    pub omit_short: bool,
}

/// What a run measured: each direction's counts, and what belongs to the run as a whole.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// The plan's own direction.
    pub fwd: Counts,
    /// The other direction's sessions (--bidir), counted apart; `None` until one has ended.
    pub back: Option<Counts>,
    pub cpu: Cpu,
    pub active_s: f64,
    pub interrupted: bool,
    /// Ctrl-C came while streams were moving data (not between sessions).
    pub cut: bool,
    /// Connections a listener refused for want of its --token.
    pub refused: u64,
}

impl Tally {
    /// The counts of direction `d`.
    pub fn of(&mut self, d: Direction) -> &mut Counts {
        match d {
            Direction::Forward => &mut self.fwd,
            Direction::Reverse => self.back.get_or_insert_default(),
        }
    }
}

/// The least measured transfer whose rate is a figure: one shorter than MIN_TIMED_S or
/// smaller than MIN_TIMED_BYTES (a few initial TCP windows on Ethernet) times the handshake,
/// the wake-ups and the clock, not the link, and its summary is partial.
pub const MIN_TIMED_S: f64 = 0.0002;
pub const MIN_TIMED_BYTES: u64 = 64 << 10;

/// Why a run that ended without an error measured no byte.
fn nothing_moved(plan: &Plan, t: &Counts) -> String {
    let verb = match plan.role {
        Role::Send => "sent",
        Role::Recv => "received",
    };
    if t.bytes > 0 {
        format!(
            "nothing was measured: all {} bytes were {verb} within the --omit warm-up ({}); give a shorter --omit or move more data",
            t.bytes,
            format_seconds(plan.omit.as_secs_f64())
        )
    } else {
        format!("nothing was {verb}: the connection closed before the first byte")
    }
}

/// Status, error and exit code from what happened, both directions' when there are two (the
/// worse one's, its error naming the direction).
pub fn verdict(plans: &Plans, t: &Tally) -> (Status, Option<String>, Exit) {
    let main = verdict_one(&plans.fwd, &t.fwd, t);
    let Some(r) = &t.back else {
        return main;
    };
    let rev = verdict_one(&plans.rev, r, t);
    let rank = |s: Status| match s {
        Status::Ok => 0,
        Status::Partial => 1,
        Status::Failed => 2,
    };
    if rank(rev.0) > rank(main.0) {
        let e = rev.1.map(|e| format!("the reverse direction: {e}"));
        (rev.0, e, rev.2)
    } else {
        main
    }
}

/// The verdict on one direction's counts `t`; `run` says whether and when Ctrl-C came.
fn verdict_one(plan: &Plan, t: &Counts, run: &Tally) -> (Status, Option<String>, Exit) {
    let unlimited = plan.bytes.is_none() && plan.time.is_none();
    if run.interrupted {
        // Ctrl-C is how an unlimited sender or a --keep-open listener is meant to end.
        let expected = !run.cut || (plan.role == Role::Send && unlimited);
        let clean = t.errors.is_empty() && t.measured_bytes > 0 && expected;
        let status = if clean {
            Status::Ok
        } else if t.bytes > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        let err = (status != Status::Ok).then(|| {
            format!(
                "interrupted after {} bytes{}",
                t.bytes,
                first_error(t).map(|e| format!("; {e}")).unwrap_or_default()
            )
        });
        return (status, err, Exit::Interrupted);
    }
    if !t.errors.is_empty() {
        let status = if t.bytes > 0 {
            Status::Partial
        } else {
            Status::Failed
        };
        let mut e = first_error(t).unwrap_or_default();
        if t.errors.len() > 1 {
            e.push_str(&format!(" (and {} more)", t.errors.len() - 1));
        }
        return (status, Some(e), Exit::MeasuredFailure);
    }
    if t.measured_bytes == 0 {
        return (
            Status::Failed,
            Some(nothing_moved(plan, t)),
            Exit::MeasuredFailure,
        );
    }
    if let (Some(want), Role::Recv) = (plan.bytes, plan.role)
        && t.bytes < want
        && !plan.keep_open
    {
        return (
            Status::Partial,
            Some(format!(
                "the peer closed after {} of the {want} bytes asked for (--bytes)",
                t.bytes
            )),
            Exit::MeasuredFailure,
        );
    }
    if t.measured_s < MIN_TIMED_S || t.measured_bytes < MIN_TIMED_BYTES {
        // The bytes moved as asked (exit 0, as nc's), but no rate is measured in so little.
        return (
            Status::Partial,
            Some(format!(
                "{} bytes in {}: too little to time as a rate (one of 64 KiB and {} or more is; give --time or a larger --bytes)",
                t.measured_bytes,
                measure::units::format_seconds(t.measured_s),
                measure::units::format_seconds(MIN_TIMED_S)
            )),
            Exit::Ok,
        );
    }
    (Status::Ok, None, Exit::Ok)
}

fn first_error(t: &Counts) -> Option<String> {
    t.errors.first().cloned()
}

/// The summary's figures: the rate, the bytes and streams, TCP's counters, the reverse
/// direction's (--bidir) and the CPU cost.
fn values(plans: &Plans, run: &Tally) -> Values {
    let (plan, t) = (&plans.fwd, &run.fwd);
    let mut v = Values::new();
    if t.measured_s > 0.0 && t.measured_bytes > 0 {
        v.set(
            "throughput_bits_per_s",
            t.measured_bytes as f64 * 8.0 / t.measured_s,
        );
        v.set(
            "throughput_bytes_per_s",
            t.measured_bytes as f64 / t.measured_s,
        );
    }
    v.set_count(plan.role.bytes_key(), t.bytes);
    v.set_count("measured_bytes", t.measured_bytes);
    v.set("duration_s", t.measured_s);
    v.set_count("stream_count", t.streams);
    v.set_count("failed_stream_count", t.failed_streams);
    v.set_count("session_count", t.sessions);
    if plan.listens() && plan.token.is_some() {
        v.set_count("refused_count", run.refused);
    }
    if plan.role == Role::Send && t.streams > 0 {
        v.set_count("retransmits_count", t.retrans);
        if t.rtt_n > 0 {
            v.set("rtt_s", t.rtt_sum_s / t.rtt_n as f64);
        }
    }
    if let Some(r) = &run.back {
        let rp = &plans.rev;
        if r.measured_s > 0.0 && r.measured_bytes > 0 {
            v.set(
                "reverse_throughput_bits_per_s",
                r.measured_bytes as f64 * 8.0 / r.measured_s,
            );
        }
        v.set_count(&format!("reverse_{}", rp.role.bytes_key()), r.bytes);
        v.set_count("reverse_stream_count", r.streams);
        v.set_count("reverse_failed_stream_count", r.failed_streams);
    }
    v.set("cpu_user_s", run.cpu.user_s);
    v.set("cpu_sys_s", run.cpu.sys_s);
    if run.active_s > 0.0 {
        v.set("cpu_seconds_per_s", run.cpu.total_s() / run.active_s);
    }
    v
}

/// With --bidir, a row for each direction from the one run: "NAME: this->peer" and
/// "NAME: peer->this".
fn headlines(plan: &Plan, t: &Tally) -> Vec<Headline> {
    if t.back.is_none() {
        return Vec::new();
    }
    let (fwd, rev) = match plan.role {
        Role::Send => ("this->peer", "peer->this"),
        Role::Recv => ("peer->this", "this->peer"),
    };
    vec![
        Headline::new("throughput_bits_per_s", fwd),
        Headline::new("reverse_throughput_bits_per_s", rev),
    ]
}

pub fn write_summary(
    out: &mut Session,
    plans: &Plans,
    t: &Tally,
    status: Status,
    error: Option<String>,
) -> Result<(), Failure> {
    let plan = &plans.fwd;
    let v = values(plans, t);
    let note = match plan.role {
        Role::Recv => "the receiver's figure: its own clock from the first byte to EOF",
        Role::Send => {
            "the sender's figure: from the first byte written until the peer closed after the half-close; the receiver's own figure is the reference"
        }
    };
    let mut errors = t.fwd.errors.clone();
    if let Some(r) = &t.back {
        errors.extend(
            r.errors
                .iter()
                .map(|e| format!("the reverse direction: {e}")),
        );
    }
    let i = info(json!({
        "role": plan.role.word(),
        "measured_by": plan.role.word(),
        "note": note,
        "reverse_measured_by": t.back.as_ref().map(|_| plans.rev.role.word()),
        "errors": errors,
        "omit_longer_than_transfer": t.fwd.omit_short,
    }));
    out.summary(Summary {
        status,
        error,
        headline: Some("throughput_bits_per_s".into()),
        headlines: headlines(plan, t),
        values: v,
        info: i,
    })
}

/// The summary for a person (on a terminal; the lifecycle prints it only then): the row and
/// its status, then what moved, how fast, by whose clock, and at what CPU cost. A failure's
/// reason follows on its own line (`netpipe: ...`), for everyone.
pub fn human_summary(out: &mut Session, plans: &Plans, run: &Tally, status: Status) {
    let (plan, t) = (&plans.fwd, &run.fwd);
    let status = match status {
        Status::Ok => "ok",
        Status::Partial => "partial",
        Status::Failed => "failed",
    };
    let mut text = format!("{}: {status}\n", out.name());
    if t.streams > 0 {
        let rate = if t.measured_s > 0.0 {
            format_bits_per_s(t.measured_bytes as f64 * 8.0 / t.measured_s)
        } else {
            "-".into()
        };
        let retr = if plan.role == Role::Send {
            format!(", {} retransmits", t.retrans)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "  {} {} in {} over {} stream(s) = {rate} (the {}'s clock){retr}\n",
            if plan.role == Role::Send {
                "sent"
            } else {
                "received"
            },
            format_bytes(t.bytes as f64),
            format_seconds(t.measured_s),
            t.streams,
            plan.role.word()
        ));
    }
    if let Some(r) = &run.back
        && r.measured_s > 0.0
    {
        text.push_str(&format!(
            "  the other direction: {} in {} over {} stream(s) = {} (the {}'s clock)\n",
            format_bytes(r.bytes as f64),
            format_seconds(r.measured_s),
            r.streams,
            format_bits_per_s(r.measured_bytes as f64 * 8.0 / r.measured_s),
            plans.rev.role.word()
        ));
    }
    if run.active_s > 0.0 {
        text.push_str(&format!(
            "  cpu {:.2} s per second of transfer ({} user, {} system)\n",
            run.cpu.total_s() / run.active_s,
            format_seconds(run.cpu.user_s),
            format_seconds(run.cpu.sys_s)
        ));
    }
    out.human().summary(&text);
}
