//! The samples of a session, one per connection, and what they add to the run's tally.

use crate::addr;
use crate::end::{End, Outcome};
use crate::plan::{Plan, Role};
use crate::summary::Counts;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Values, info};
use serde_json::{Map, Value, json};
use std::net::SocketAddr;

/// A stream that has ended: what it did, and between which addresses.
#[derive(Debug)]
pub struct Ended {
    pub out: Outcome,
    pub local: Option<SocketAddr>,
    pub peer: SocketAddr,
}

/// One stream's share of the session, for its sample.
struct Share<'a> {
    e: &'a Ended,
    index: usize,
    omitted: u64,
    measured: u64,
    /// Its first measured byte: the first byte, or the end of the warm-up if later.
    start: Option<u64>,
}

/// Writes one sample per stream of session number `sess` and adds the session to the tally. `omit` is the warm-up's end and each stream's bytes by then; `from_listener`
/// says whether the streams were accepted (the error text says "from", else "to").
pub fn write(
    plan: &Plan,
    sess: u64,
    ended: &[Ended],
    omit: Option<&(u64, Vec<u64>)>,
    from_listener: bool,
    out: &mut Session,
    t: &mut Counts,
) -> Result<(), Failure> {
    let mut s_first: Option<u64> = None;
    let mut s_end: Option<u64> = None;
    let mut s_bytes = 0u64;
    let mut s_measured = 0u64;
    let omit_at = omit.map(|(ns, _)| *ns);
    if !plan.omit.is_zero() && omit.is_none() && ended.iter().any(|e| e.out.bytes > 0) {
        t.omit_short = true;
        out.human()
            .line("the transfer was shorter than --omit: nothing was left out");
    }
    for (index, e) in ended.iter().enumerate() {
        let o = &e.out;
        t.streams += 1;
        s_bytes += o.bytes;
        let omitted = omit.and_then(|(_, v)| v.get(index).copied()).unwrap_or(0);
        let measured = o.bytes - omitted.min(o.bytes);
        s_measured += measured;
        let start = match (o.first_ns, omit_at) {
            (Some(f), Some(om)) => Some(f.max(om)),
            (f, _) => f,
        };
        if let Some(s) = start {
            s_first = Some(s_first.map_or(s, |x: u64| x.min(s)));
        }
        if let Some(e) = o.end_ns {
            s_end = Some(s_end.map_or(e, |x: u64| x.max(e)));
        }
        let share = Share {
            e,
            index,
            omitted,
            measured,
            start,
        };
        sample(plan, &share, sess, from_listener, out, t)?;
    }
    streams_agree(plan, ended, t);
    t.bytes += s_bytes;
    if let (Some(f), Some(e)) = (s_first, s_end)
        && e > f
    {
        t.measured_bytes += s_measured;
        t.measured_s += (e - f) as f64 / 1e9;
    }
    Ok(())
}

/// A netpipe sender says in its hello how many streams it opened: a receiver that took fewer
/// (its -P) left the others unread, which is a fault on both sides.
fn streams_agree(plan: &Plan, ended: &[Ended], t: &mut Counts) {
    let Some(h) = ended.iter().find_map(|e| e.out.peer_hello) else {
        return;
    };
    if plan.role == Role::Recv && usize::from(h.streams) > ended.len() {
        t.errors.push(format!(
            "the sender opened {} streams, this receiver took {} (-P): the others were never read",
            h.streams,
            ended.len()
        ));
    }
}

/// The sample's parameters, and the TCP_INFO totals it adds to the tally.
fn sample_info(plan: &Plan, s: &Share, sess: u64, t: &mut Counts) -> Map<String, Value> {
    let o = &s.e.out;
    let mut inf = info(json!({
        "session": sess,
        "stream": s.index,
        "role": plan.role.word(),
        "measured_by": plan.role.word(),
        "local": s.e.local.map(|a| addr::show(&a)),
        "peer": addr::show(&s.e.peer),
        "end": o.end.word(),
        "omitted_bytes": s.omitted,
    }));
    inf.insert(
        "peer_speaks".into(),
        json!(if o.peer_hello.is_some() {
            "netpipe/1"
        } else {
            "raw"
        }),
    );
    if plan.role == Role::Send {
        inf.insert("peer_closed".into(), json!(o.peer_closed));
        inf.insert("send_method".into(), json!(o.method));
    }
    if let Some(ti) = &o.tcp {
        t.retrans += u64::from(ti.total_retrans);
        if ti.rtt_s > 0.0 {
            t.rtt_sum_s += ti.rtt_s;
            t.rtt_n += 1;
        }
        inf.insert("mss_bytes".into(), json!(ti.snd_mss));
        inf.insert("pmtu_bytes".into(), json!(ti.pmtu));
    }
    inf
}

/// The sample's measurements.
fn sample_values(plan: &Plan, s: &Share) -> Values {
    let o = &s.e.out;
    let mut v = Values::new();
    v.set_count(plan.role.bytes_key(), o.bytes);
    v.set_count("measured_bytes", s.measured);
    if let (Some(start), Some(e)) = (s.start, o.end_ns)
        && e > start
    {
        let secs = (e - start) as f64 / 1e9;
        v.set("duration_s", secs);
        v.set("throughput_bits_per_s", s.measured as f64 * 8.0 / secs);
    }
    if let Some(n) = o.peer_count {
        let key = match plan.role {
            Role::Send => "peer_received_bytes",
            Role::Recv => "peer_sent_bytes",
        };
        v.set_count(key, n);
    }
    if let Some(ti) = &o.tcp {
        v.set_count("retransmits_count", u64::from(ti.total_retrans));
        v.set("rtt_s", ti.rtt_s);
        v.set("rttvar_s", ti.rttvar_s);
        v.set_count("cwnd_bytes", ti.cwnd_bytes());
    }
    v
}

/// Writes one stream's sample (a failed one when it moved nothing and did not end well) and
/// counts its fault, if any.
fn sample(
    plan: &Plan,
    s: &Share,
    sess: u64,
    from_listener: bool,
    out: &mut Session,
    t: &mut Counts,
) -> Result<(), Failure> {
    let o = &s.e.out;
    let mut inf = sample_info(plan, s, sess, t);
    // A sender without a limit sends until stopped: the receiver closing is its end.
    let receiver_ended = plan.role == Role::Send
        && plan.bytes.is_none()
        && plan.time.is_none()
        && matches!(o.end, End::PeerGone(_))
        && o.bytes > 0;
    if receiver_ended {
        inf.insert("ended_by".into(), json!("receiver"));
    }
    let ok_end = o.end.is_clean() || receiver_ended;
    let clean = ok_end || (o.end == End::Stopped && o.bytes > 0);
    if !ok_end && o.end != End::Stopped {
        t.failed_streams += 1;
        t.errors.push(format!(
            "{} {}: {} after {} bytes",
            if from_listener { "from" } else { "to" },
            addr::show(&s.e.peer),
            o.end.describe(),
            o.bytes
        ));
    }
    if o.bytes == 0 && !clean {
        return out.sample_failed(&o.end.describe(), inf);
    }
    if !ok_end {
        inf.insert("error".into(), json!(o.end.describe()));
    }
    out.sample(sample_values(plan, s), inf)
}
