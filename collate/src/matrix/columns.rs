//! The matrix's columns: one per collected column value, its header levels (the label's `/`
//! levels padded to one depth), and which show in what order (first appearance, or
//! `--columns`).

use super::include::Include;
use super::table::Column;
use super::titles::visible;
use crate::collect::Collector;
use crate::dims::Dim;
use measure::Failure;

/// The shown columns, and `pos[id]`: where collected column `id` shows, if it does. The
/// columns whose every run was left out (`unfinished`) follow the shown ones in `pos`: they
/// show in no matrix, but the tidy CSV gives their cells a line each.
pub(super) struct Chosen {
    pub columns: Vec<Column>,
    pub unfinished: Vec<Column>,
    pub pos: Vec<Option<usize>>,
}

/// The most levels any column's label has (0 when the label is no column dimension).
pub(super) fn label_depth(c: &Collector) -> usize {
    c.spec
        .cols
        .iter()
        .position(|d| *d == Dim::Label)
        .map(|i| {
            c.col_vals
                .iter()
                .map(|v| v[i].split('/').count())
                .max()
                .unwrap_or(1)
        })
        .unwrap_or(0)
}

/// The columns that show: those that hold a kept series, in order of first appearance, or
/// exactly the ones `--columns` names (all missing if they hold no data).
pub(super) fn choose(
    c: &Collector,
    keep: &[bool],
    label_depth: usize,
    names: Option<&[String]>,
    inc: &Include<'_>,
) -> Result<Chosen, Failure> {
    let all: Vec<Column> = (0..c.cols.list.len())
        .map(|id| column(&c.spec.cols, &c.col_vals[id], label_depth))
        .collect();
    let mut unfinished = Vec::new();
    let map: Vec<usize> = match names {
        None => {
            // In order of the first value that counts: an old failed attempt moves nothing.
            let mut first: Vec<Option<u64>> = vec![None; all.len()];
            for (s, k) in c.series.iter().zip(keep) {
                if let (true, Some(f)) = (*k, inc.first(s)) {
                    let slot = &mut first[s.col as usize];
                    *slot = Some(slot.map_or(f, |g| g.min(f)));
                }
            }
            let mut ids: Vec<usize> = (0..all.len()).filter(|&id| first[id].is_some()).collect();
            ids.sort_by_key(|&id| first[id]);
            let mut held = vec![false; all.len()];
            for (s, _) in c.series.iter().zip(keep).filter(|(_, k)| **k) {
                held[s.col as usize] = true;
            }
            unfinished = (0..all.len())
                .filter(|&id| first[id].is_none() && held[id])
                .collect();
            ids
        }
        Some(names) => named(&all, names)?,
    };
    let mut pos = vec![None; all.len()];
    for (k, &id) in map.iter().chain(&unfinished).enumerate() {
        pos[id].get_or_insert(k);
    }
    Ok(Chosen {
        columns: map.iter().map(|&id| all[id].clone()).collect(),
        unfinished: unfinished.iter().map(|&id| all[id].clone()).collect(),
        pos,
    })
}

/// The collected columns that `--columns` names, in its order.
fn named(all: &[Column], names: &[String]) -> Result<Vec<usize>, Failure> {
    let mut map = Vec::new();
    for name in names {
        let Some(id) = all.iter().position(|col| &col.key == name) else {
            let known: Vec<&str> = all.iter().map(|c| c.key.as_str()).collect();
            return Err(Failure::usage(format!(
                "--columns: no column \"{name}\" in the input; the columns are: {}",
                known.join(", ")
            )));
        };
        map.push(id);
    }
    Ok(map)
}

/// A column from the values of the column dimensions; the label's levels are padded with
/// empty ones at the bottom to `label_depth`, so that the dimensions after it line up.
fn column(dims: &[Dim], vals: &[String], label_depth: usize) -> Column {
    let mut levels = Vec::new();
    let mut kv = Vec::new();
    for (d, v) in dims.iter().zip(vals) {
        kv.push((d.key(), v.clone()));
        let mut ls: Vec<String> = d.levels(v).iter().map(|l| visible(l)).collect();
        if *d == Dim::Label {
            for (i, l) in ls.iter().enumerate() {
                kv.push((format!("label.{}", i + 1), l.clone()));
            }
            ls.resize(label_depth.max(ls.len()), String::new());
        }
        levels.extend(ls);
    }
    Column {
        key: vals.join("/"),
        levels,
        dims: kv,
    }
}

/// The names of the header levels: one per column dimension, the label's one per level.
pub(super) fn level_keys(dims: &[Dim], label_depth: usize) -> Vec<String> {
    let mut keys = Vec::new();
    for d in dims {
        if *d == Dim::Label {
            keys.extend((1..=label_depth.max(1)).map(|i| format!("label.{i}")));
        } else {
            keys.push(d.key());
        }
    }
    keys
}
