//! ping's statistics (`N packets transmitted, M received, ...`, `rtt min/avg/max/mdev = ...
//! ms, pipe 3, ipg/ewma ...`), the replies checked against them, and the summary made of them.

use super::lines::{half_digit, seconds, unit_exp};
use crate::input::Input;
use crate::model::{End, Kind, Out};
use measure::Status;
use measure::parts::Values;
use serde_json::{Map, Value, json};

/// ping's statistics lines, as they were read; figures in seconds.
#[derive(Debug, Default)]
pub struct Stats {
    pub sent: Option<u64>,
    pub received: Option<u64>,
    pub duplicates: u64,
    pub errors: u64,
    pub corrupted: u64,
    /// The loss as printed, in percent (`33.3333` of `33.3333% packet loss`).
    pub loss: Option<String>,
    /// (values key, seconds, half a unit of its last printed digit).
    pub rtt: Vec<(&'static str, f64, f64)>,
    pub pipe: Option<u64>,
}

/// The values key of a statistics name (`avg`: `rtt_mean_s`).
fn key(name: &str) -> Option<&'static str> {
    Some(match name {
        "min" => "rtt_min_s",
        "avg" => "rtt_mean_s",
        "max" => "rtt_max_s",
        "mdev" => "rtt_mdev_s",
        "stddev" | "std-dev" => "rtt_stddev_s",
        "ewma" => "rtt_ewma_s",
        "ipg" => "ipg_s",
        _ => return None,
    })
}

/// `N packets transmitted, M [packets] received, +D duplicates, +C corrupted, +E errors, L%
/// packet loss, time Tms` (busybox: `D duplicates`).
fn counts(line: &str, st: &mut Stats) -> Result<(), String> {
    for part in line.split(", ") {
        let part = part.trim();
        let n = part
            .split([' ', '%'])
            .next()
            .unwrap_or("")
            .trim_start_matches('+');
        let count = || {
            n.parse::<u64>()
                .map_err(|_| format!("{part:?}: expected a count"))
        };
        if part.ends_with("packets transmitted") {
            st.sent = Some(count()?);
        } else if part.ends_with(" received") {
            st.received = Some(count()?);
        } else if part.ends_with(" duplicates") {
            st.duplicates = count()?;
        } else if part.ends_with(" errors") {
            st.errors = count()?;
        } else if part.ends_with(" corrupted") {
            st.corrupted = count()?;
        } else if let Some(pct) = part.strip_suffix("% packet loss") {
            crate::model::scale_text(pct, -2)
                .ok_or_else(|| format!("{part:?}: expected L% packet loss"))?;
            st.loss = Some(pct.to_string());
        }
    }
    match (st.sent, st.received) {
        (Some(_), Some(_)) => Ok(()),
        _ => Err("expected N packets transmitted, M received".into()),
    }
}

/// `names = a/b/c unit` (`rtt min/avg/max/mdev = 0.045/0.060/0.081/0.012 ms`, `ipg/ewma
/// 1.201/0.055 ms`): each figure into `st.rtt`.
fn figures(names: &str, nums: &str, st: &mut Stats) -> Result<(), String> {
    let (nums, unit) = nums.trim().split_once(' ').unwrap_or((nums, ""));
    let exp = unit_exp(unit.trim())?;
    let (names, nums): (Vec<_>, Vec<_>) = (names.split('/').collect(), nums.split('/').collect());
    if names.len() != nums.len() {
        return Err(format!("{} names for {} figures", names.len(), nums.len()));
    }
    for (name, n) in names.iter().zip(nums) {
        let k = key(name).ok_or_else(|| format!("an unknown statistic {name:?}"))?;
        let v = seconds(n, exp).ok_or_else(|| format!("{n:?} is not a number"))?;
        st.rtt.push((k, v, half_digit(n, exp)));
    }
    Ok(())
}

/// One statistics line into `st`, or what is wrong with it.
pub fn statistics(line: &str, st: &mut Stats) -> Result<(), String> {
    if line.contains("packets transmitted") {
        return counts(line, st);
    }
    for part in line.split(", ") {
        let part = part.trim();
        if let Some(n) = part.strip_prefix("pipe ") {
            st.pipe = Some(
                n.parse()
                    .map_err(|_| format!("{part:?}: expected pipe N"))?,
            );
        } else if let Some(rest) = part.strip_prefix("ipg/ewma ") {
            figures("ipg/ewma", rest, st)?;
        } else if let Some((names, nums)) = part.split_once(" = ") {
            let names = names.rsplit(' ').next().unwrap_or(names);
            figures(names, nums, st)?;
        } else {
            return Err(format!("{part:?}"));
        }
    }
    Ok(())
}

impl Stats {
    fn figure(&self, key: &str) -> Option<(f64, f64)> {
        self.rtt
            .iter()
            .find(|(k, ..)| *k == key)
            .map(|(_, v, h)| (*v, *h))
    }

    /// Whether a reply printed as `secs` (`half` is half a unit of its last printed digit)
    /// can lie within the printed min/max. The figures are each printed to their last digit:
    /// a reply rounded (iputils since 2018, BSD) is up to half a unit off either way, a reply
    /// cut (older iputils, as on CentOS 7 and Ubuntu 18.04: `time=23.3` for 23.359 ms) up to a
    /// whole unit below what was measured; a statistics figure, rounded or cut, a unit either
    /// way.
    pub fn fits(&self, secs: f64, half: f64) -> Result<(), String> {
        let (Some((min, hmin)), Some((max, hmax))) =
            (self.figure("rtt_min_s"), self.figure("rtt_max_s"))
        else {
            return Ok(());
        };
        let eps = 1e-12;
        let (lowest, highest) = (secs - half, secs + 2.0 * half);
        if lowest > max + 2.0 * hmax + eps || highest < min - 2.0 * hmin - eps {
            return Err(format!(
                "a reply of {secs} s lies outside the statistics' min/max ({min} s / {max} s): \
                 the output was edited, or mixes runs"
            ));
        }
        Ok(())
    }
}

/// The summary from ping's statistics; without them (output cut short) a partial one from
/// the samples read. `dups` and `errors` are the duplicate replies and the errors read.
pub fn summary(
    input: &Input,
    records: &[Out],
    stats: Option<Stats>,
    (dups, errors): (u64, u64),
    info: Map<String, Value>,
) -> End {
    let mut values = Values::new();
    let Some(st) = stats.filter(|s| s.sent.is_some()) else {
        let replies = records.iter().filter(|r| r.kind == Kind::Sample);
        values.set_count("received_count", replies.count() as u64);
        let rtts: Vec<f64> = records
            .iter()
            .filter_map(|r| r.values.0.get("rtt_s").and_then(Value::as_f64))
            .collect();
        if !rtts.is_empty() {
            values.set("rtt_mean_s", rtts.iter().sum::<f64>() / rtts.len() as f64);
        }
        let why = format!(
            "{}: no statistics line: the output ends early (an interrupted ping, or ping's stdout cut?)",
            input.place(input.lines())
        );
        return End::not_ok(Status::Partial, why, values, info);
    };
    let mut info = info;
    let (sent, received) = (st.sent.unwrap_or(0), st.received.unwrap_or(0));
    values.set_count("sent_count", sent);
    values.set_count("received_count", received);
    values.set_count("duplicates_count", st.duplicates.max(dups));
    values.set_count("errors_count", st.errors.max(errors));
    if st.corrupted > 0 {
        values.set_count("corrupted_count", st.corrupted);
    }
    // The loss as ping printed it, as every figure converted is; the counts are beside it.
    match st
        .loss
        .as_deref()
        .and_then(|pct| crate::model::scale_text(pct, -2))
    {
        Some(ratio) => values.set("loss_ratio", ratio),
        None if sent > 0 => values.set(
            "loss_ratio",
            (sent.saturating_sub(received)) as f64 / sent as f64,
        ),
        None => {}
    }
    for (key, v, _) in &st.rtt {
        values.set(key, *v);
    }
    if let Some(p) = st.pipe {
        info.insert("pipe".into(), json!(p));
    }
    if received == 0 || !values.0.contains_key("rtt_mean_s") {
        return End::not_ok(Status::Failed, "no reply".into(), values, info);
    }
    End::ok("rtt_mean_s", values, info)
}
