//! The facts that differ between the matrix's columns: for each environment fact some shown
//! column's begin records name, the columns' values, kept when at least two columns name it
//! and they do not all say the same (a fact every column shares explains no difference);
//! then the `load` line, when a shown column had a busy run ([`crate::busy`]): the load of
//! a quiet machine varies from run to run and explains nothing, a busy one explains a lot.

use super::include::Include;
use super::table::Fact;
use crate::busy::ColumnLoad;
use crate::collect::Collector;
use crate::facts::{Values, order};
use std::collections::BTreeSet;

/// The differing facts of the shown columns, `ids[j]` the collected id of shown column `j`.
pub(super) fn differing(c: &Collector, ids: &[usize], inc: &Include<'_>) -> Vec<Fact> {
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
    out.extend(load(c, ids, inc));
    out
}

/// The load of each shown column's runs that count, when one of them was busy.
fn load(c: &Collector, ids: &[usize], inc: &Include<'_>) -> Option<Fact> {
    let mut runs: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); ids.len()];
    for s in &c.series {
        let Some(j) = ids.iter().position(|&id| id == s.col as usize) else {
            continue;
        };
        let segs = s.samples.segs.iter().chain(&s.summaries.segs);
        runs[j].extend(segs.map(|g| g.run).filter(|&r| inc.run(r)));
    }
    let cols: Vec<ColumnLoad> = runs
        .iter()
        .map(|rs| {
            let mut cl = ColumnLoad::default();
            for &r in rs {
                cl.add(&inc.runs[r as usize].load);
            }
            cl
        })
        .collect();
    if ids.len() < 2 || !cols.iter().any(|cl| cl.busy > 0) {
        return None;
    }
    Some(Fact {
        key: "load".into(),
        values: cols.iter().map(ColumnLoad::text).collect(),
    })
}
