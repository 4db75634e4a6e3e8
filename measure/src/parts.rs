//! The parts a tool fills in for its records: the envelope every line of an invocation
//! shares, values, info and the summary's parts, and run ids; the reporter writes them.

use crate::record::{Status, has_unit_suffix};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// What every line of one invocation shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub tool: String,
    pub version: String,
    pub run: String,
    pub host: String,
    pub label: String,
    pub name: String,
    pub tags: BTreeMap<String, String>,
    /// The suite invocation this run is part of ([`invocation_from_env`]).
    pub invocation: Option<String>,
}

impl Envelope {
    /// An envelope with a fresh run id and this machine's host name as host and label.
    pub fn new(tool: &str, version: &str, name: &str) -> Self {
        let host = crate::envfacts::hostname();
        Envelope {
            tool: tool.to_string(),
            version: version.to_string(),
            run: new_run_id(),
            label: host.clone(),
            host,
            name: name.to_string(),
            tags: BTreeMap::new(),
            invocation: invocation_from_env(),
        }
    }
}

/// The variable a suite sets for every tool it runs: one id per invocation of the suite.
pub const INVOCATION_VAR: &str = "BENCHMATRIX_INVOCATION";

/// The suite invocation from [`INVOCATION_VAR`]: its value when it is 1 to 64 characters of
/// letters, digits and `.`, `_`, `:`, `-`; else none (a tool run by hand is its own).
pub fn invocation_from_env() -> Option<String> {
    let v = std::env::var(INVOCATION_VAR).ok()?;
    let ok = (1..=64).contains(&v.len())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    ok.then_some(v)
}

/// 64 random bits from the kernel (/dev/urandom), or from the clock and the process id where
/// it gives none: run ids, seeds, payload cookies.
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    let flags = rustix::rand::GetRandomFlags::NONBLOCK;
    if let Ok(8) = rustix::rand::getrandom(&mut buf, flags) {
        return u64::from_le_bytes(buf);
    }
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos as u64) ^ (u64::from(std::process::id()) << 40)
}

/// A new run id: 12 lower-case hex digits, random where the kernel gives randomness.
pub fn new_run_id() -> String {
    format!("{:012x}", random_u64() & 0xffff_ffff_ffff)
}

/// Measurements for a record's `values`: finite numbers under keys with a unit suffix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Values(pub Map<String, Value>);

impl Values {
    pub fn new() -> Self {
        Values(Map::new())
    }

    /// Sets `key` to `v`; a NaN or infinite value is left out (JSON has no such numbers).
    pub fn set(&mut self, key: &str, v: f64) {
        debug_assert!(has_unit_suffix(key), "values key {key} lacks a unit suffix");
        if let Some(n) = serde_json::Number::from_f64(v) {
            self.0.insert(key.to_string(), Value::Number(n));
        }
    }

    /// Sets a count (an integer in the JSON).
    pub fn set_count(&mut self, key: &str, n: u64) {
        debug_assert!(has_unit_suffix(key), "values key {key} lacks a unit suffix");
        self.0.insert(key.to_string(), Value::from(n));
    }

    /// Builder form of [`Values::set`].
    pub fn with(mut self, key: &str, v: f64) -> Self {
        self.set(key, v);
        self
    }

    /// Builder form of [`Values::set_count`].
    pub fn with_count(mut self, key: &str, n: u64) -> Self {
        self.set_count(key, n);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Turns `json!({...})` into the map a record's `info` takes; anything but an object is
/// stored under the key `"value"`.
pub fn info(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("value".to_string(), other);
            m
        }
    }
}

/// What a summary says besides its values.
#[derive(Clone, Debug)]
pub struct Summary {
    pub status: Status,
    pub error: Option<String>,
    pub headline: Option<String>,
    /// Every figure headlined, each a row (`headline` is then the first's key).
    pub headlines: Vec<crate::record::Headline>,
    pub values: Values,
    pub info: Map<String, Value>,
}
