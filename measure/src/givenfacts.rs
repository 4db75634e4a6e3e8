//! Facts a wrapper gives every tool's begin record through the environment
//! (`BENCHMATRIX_FACTS`): what the tool cannot probe from inside, such as a guest's disk bus,
//! NIC model and backing as the host that made the guest knows them. They go in `info` as
//! the object `given` (one of the envfacts::FACT_KEYS, so collate shows them as `given.KEY`).

use serde_json::{Map, Value};

/// The variable: `key=value` pairs separated by `;` (a key is a lowercase letter, then
/// lowercase letters, digits or `_`; a value is not empty and holds no `;` or newline).
pub const FACTS_VAR: &str = "BENCHMATRIX_FACTS";

/// The facts in `text`, in order, or what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in text.split(';').filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?} is not key=value"))?;
        let key_ok = k.starts_with(|c: char| c.is_ascii_lowercase())
            && k.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !key_ok {
            return Err(format!(
                "{k:?} is not a fact's name: use a lowercase letter, then lowercase letters, digits or '_'"
            ));
        }
        if v.is_empty() || v.contains('\n') {
            return Err(format!("the fact {k} has an empty value or a newline"));
        }
        if out.iter().any(|(seen, _)| seen == k) {
            return Err(format!("the fact {k} is given twice"));
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// The facts `BENCHMATRIX_FACTS` gives (none when it is unset or empty), or a message that
/// names the variable, what is wrong and how to fix it.
pub fn from_env() -> Result<Vec<(String, String)>, String> {
    match std::env::var(FACTS_VAR) {
        Ok(v) => parse(&v)
            .map_err(|e| format!("{FACTS_VAR}: {e} (give key=value;key=value, or unset it)")),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!(
            "{FACTS_VAR} is not UTF-8: give key=value;key=value, or unset it"
        )),
    }
}

/// Adds the given facts to a begin's `info` as the object `given` (kept apart from the
/// measured facts, so that a given fact never hides one); nothing when none are given.
pub fn add_to(info: &mut Map<String, Value>) {
    let given: Map<String, Value> = from_env()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    if !given.is_empty() {
        info.insert("given".into(), Value::Object(given));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_read_in_order() {
        let f = parse("disk_bus=ide;nic=e1000;backing=file on tmpfs;").expect("parse");
        assert_eq!(
            f,
            vec![
                ("disk_bus".into(), "ide".into()),
                ("nic".into(), "e1000".into()),
                ("backing".into(), "file on tmpfs".into())
            ]
        );
        assert_eq!(parse(""), Ok(Vec::new()));
    }

    #[test]
    fn bad_pairs_say_what_is_wrong() {
        assert!(parse("nic").unwrap_err().contains("not key=value"));
        assert!(parse("Nic=x").unwrap_err().contains("fact's name"));
        assert!(parse("1nic=x").unwrap_err().contains("fact's name"));
        assert!(parse("nic=").unwrap_err().contains("empty value"));
        assert!(parse("nic=a;nic=b").unwrap_err().contains("twice"));
    }
}
