//! The environment facts of each column, from its begin records: the `info` entries that
//! measure names as facts (`measure::envfacts::FACT_KEYS`: kernel, virtualization, cgroup
//! limits, clocksource, file system, block stack...), as display texts, a few distinct
//! values per (column, fact). The matrix shows those that differ between its columns.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// Distinct values kept per (column, fact); a fact with more varies too much to explain a
/// column and shows as "N values".
const MAX_VALUES: usize = 4;

/// The facts of a begin record's `info` as (key, text) pairs: an object's entries (the
/// mitigations) as `key.entry`, a block stack as its layers top first.
pub fn texts(info: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for key in measure::envfacts::FACT_KEYS {
        match info.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(o)) => {
                for (k, v) in o {
                    if let Some(t) = scalar(v) {
                        out.push((format!("{key}.{k}"), t));
                    }
                }
            }
            Some(Value::Array(layers)) if *key == "block_stack" => {
                out.push((key.to_string(), stack_text(layers)));
            }
            Some(v) => {
                if let Some(t) = scalar(v) {
                    out.push((key.to_string(), t));
                }
            }
        }
    }
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    }
}

/// `dm-0 (lvm vg0-root) on vda2 (partition) on vda (disk, virtio_blk)`.
fn stack_text(layers: &[Value]) -> String {
    let part = |l: &Value| {
        let field = |k: &str| l.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let name = field("name").unwrap_or("?");
        let mut what = field("kind").unwrap_or("?").to_string();
        if let Some(d) = field("detail") {
            what.push(' ');
            what.push_str(d);
        }
        if let Some(d) = field("driver") {
            what.push_str(", ");
            what.push_str(d);
        }
        format!("{name} ({what})")
    };
    if layers.is_empty() {
        return "none".into();
    }
    layers.iter().map(part).collect::<Vec<_>>().join(" on ")
}

/// One column's values of one fact.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Values {
    pub seen: Vec<String>,
    /// More distinct values than were kept.
    pub more: bool,
}

impl Values {
    /// The display text: the value, or the values joined by ` | `, or how many there are.
    pub fn text(&self) -> String {
        if self.more {
            return format!("{}+ values", self.seen.len() + 1);
        }
        self.seen.join(" | ")
    }
}

/// The facts seen per column (its collector key: the column dimensions' values).
#[derive(Debug, Default)]
pub struct ColumnFacts {
    map: HashMap<String, BTreeMap<String, Values>>,
}

impl ColumnFacts {
    pub fn add(&mut self, column: &str, key: &str, text: &str) {
        let facts = match self.map.get_mut(column) {
            Some(f) => f,
            None => self.map.entry(column.to_string()).or_default(),
        };
        let v = match facts.get_mut(key) {
            Some(v) => v,
            None => facts.entry(key.to_string()).or_default(),
        };
        if v.seen.iter().any(|s| s == text) {
            return;
        }
        if v.seen.len() < MAX_VALUES {
            v.seen.push(text.to_string());
        } else {
            v.more = true;
        }
    }

    pub fn of(&self, column: &str) -> Option<&BTreeMap<String, Values>> {
        self.map.get(column)
    }
}

/// Where a fact key sorts: in `FACT_KEYS`' order (machine, limits, then the disk target),
/// an object's entries after their key.
pub fn order(key: &str) -> (usize, &str) {
    let head = key.split('.').next().unwrap_or(key);
    let i = measure::envfacts::FACT_KEYS
        .iter()
        .position(|k| *k == head)
        .unwrap_or(usize::MAX);
    (i, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_flatten_objects_and_stacks_and_skip_the_rest() {
        let info = json!({
            "kernel": "6.1.0", "cpu_count": 2, "hypervisor": true, "seed": 7,
            "governor": null,
            "mitigations": {"meltdown": "Mitigation: PTI"},
            "block_stack": [
                {"name": "dm-0", "kind": "lvm", "detail": "vg0-root"},
                {"name": "vda", "kind": "disk", "driver": "virtio_blk"}
            ]
        });
        let t = texts(info.as_object().expect("an object"));
        let get = |k: &str| t.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(get("kernel"), Some("6.1.0"));
        assert_eq!(get("cpu_count"), Some("2"));
        assert_eq!(get("hypervisor"), Some("true"));
        assert_eq!(get("mitigations.meltdown"), Some("Mitigation: PTI"));
        assert_eq!(
            get("block_stack"),
            Some("dm-0 (lvm vg0-root) on vda (disk, virtio_blk)")
        );
        // A parameter is no fact; an unknown (null) fact says nothing.
        assert_eq!(get("seed"), None);
        assert_eq!(get("governor"), None);
    }

    #[test]
    fn a_column_keeps_a_few_distinct_values() {
        let mut f = ColumnFacts::default();
        for v in ["a", "a", "b"] {
            f.add("col", "kernel", v);
        }
        assert_eq!(f.of("col").expect("col")["kernel"].text(), "a | b");
        for v in ["c", "d", "e", "f"] {
            f.add("col", "kernel", v);
        }
        assert_eq!(f.of("col").expect("col")["kernel"].text(), "5+ values");
    }
}
