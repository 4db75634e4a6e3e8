//! The facts that differ between the matrix's columns: for each environment fact some shown
//! column's begin records name, the columns' values, kept when at least two columns name it
//! and they do not all say the same (a fact every column shares explains no difference).

use super::table::Fact;
use crate::collect::Collector;
use crate::facts::{Values, order};
use std::collections::BTreeSet;

/// The differing facts of the shown columns, `ids[j]` the collected id of shown column `j`.
pub(super) fn differing(c: &Collector, ids: &[usize]) -> Vec<Fact> {
    let of: Vec<_> = ids.iter().map(|&id| c.facts.of(&c.cols.list[id])).collect();
    let keys: BTreeSet<&str> = of
        .iter()
        .flatten()
        .flat_map(|m| m.keys())
        .map(String::as_str)
        .collect();
    let mut keys: Vec<&str> = keys.into_iter().collect();
    keys.sort_by_key(|k| order(k));
    let mut out = Vec::new();
    for key in keys {
        let vals: Vec<Option<&Values>> = of.iter().map(|m| m.and_then(|m| m.get(key))).collect();
        let present: Vec<&Values> = vals.iter().flatten().copied().collect();
        if present.len() < 2 || present.iter().all(|v| *v == present[0]) {
            continue;
        }
        out.push(Fact {
            key: key.to_string(),
            values: vals.iter().map(|v| v.map(Values::text)).collect(),
        });
    }
    out
}
