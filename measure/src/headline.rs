//! A summary's headlines: each figure it headlines, the row it makes, and the statistic of
//! that row's cells where it is not the samples' median.

use serde::{Deserialize, Serialize};

/// A figure a summary headlines: the key in `values` and the role of the row it makes
/// ("reads per second", "latency p99"), which names the row as "NAME: ROLE"; and, where the
/// tool's figure is not the samples' median, the statistic that is (`stat`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headline {
    pub key: String,
    pub role: String,
    /// `mean`: the samples are equal-time slices of a rate, so their mean is the work over
    /// the time (the tool's own figure) where their median is only a typical slice's.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given_stat"
    )]
    pub stat: Option<CellStat>,
}

/// The statistic a headline names for its row's cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStat {
    Median,
    Mean,
}

/// The names [`CellStat`] takes on the wire.
pub const HEADLINE_STATS: [&str; 2] = ["median", "mean"];

/// A `stat` that is there is one of [`CellStat`] (null is not: leave it out).
fn given_stat<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<CellStat>, D::Error> {
    CellStat::deserialize(d).map(Some)
}

impl Headline {
    pub fn new(key: &str, role: &str) -> Headline {
        Headline {
            key: key.to_string(),
            role: role.to_string(),
            stat: None,
        }
    }

    /// A headline whose row's cells are the samples' mean (equal-time slices of a rate).
    pub fn mean(key: &str, role: &str) -> Headline {
        Headline {
            stat: Some(CellStat::Mean),
            ..Headline::new(key, role)
        }
    }
}
