//! Dimensions: the keys a matrix's rows and columns (and `--filter`) are made of: envelope
//! fields, the label and its `/` levels, tags, and the metric (the key in `values`).

use measure::RecordView;

/// One dimension of a record's value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Name,
    /// The whole label; as columns it is stacked in one header row per level.
    Label,
    /// One level of the label, 1-based (`label.2` of `para/lvm/san` is `lvm`).
    Level(usize),
    Host,
    Tool,
    Version,
    Run,
    /// `sample` or `summary`.
    Type,
    /// The key in `values` (`rtt_s`).
    Metric,
    /// The unit suffix of the metric, without the underscore (`s`, `bits_per_s`).
    Unit,
    Tag(String),
    /// The unit of pooling: the suite invocation the record names, else its run. No key of
    /// the command line: `--history` adds it to the columns, one per run.
    RunUnit,
}

/// The key names, for messages.
pub const KEYS_HELP: &str = "name, label, label.N (a level, from 1), host, tool, version, run, type, metric, unit, tag.KEY (or a bare tag KEY)";

impl Dim {
    /// Parses a key: `name`, `label`, `label.2`, `host`, `tool`, `version`, `run`, `type`,
    /// `metric`, `unit`, `tag.disk` or a bare tag key `disk`; a leading `.` is allowed
    /// (benchstat writes `.name`).
    pub fn parse(s: &str) -> Result<Dim, String> {
        let k = s.trim();
        let k = k.strip_prefix('.').unwrap_or(k);
        if k.is_empty() {
            return Err(format!("empty key: use one of {KEYS_HELP}"));
        }
        Ok(match k {
            "name" => Dim::Name,
            "label" => Dim::Label,
            "host" => Dim::Host,
            "tool" => Dim::Tool,
            "version" => Dim::Version,
            "run" => Dim::Run,
            "type" => Dim::Type,
            "metric" | "values" => Dim::Metric,
            "unit" => Dim::Unit,
            _ => {
                if let Some(n) = k.strip_prefix("label.") {
                    let level: usize = n.parse().ok().filter(|&l| l >= 1).ok_or_else(|| {
                        format!("\"{s}\": a label level is label.1, label.2, ...")
                    })?;
                    Dim::Level(level)
                } else if let Some(t) = k.strip_prefix("tag.").or_else(|| k.strip_prefix("tags.")) {
                    if t.is_empty() {
                        return Err(format!("\"{s}\": name the tag, e.g. tag.disk"));
                    }
                    Dim::Tag(t.to_string())
                } else if k.chars().any(|c| c.is_whitespace() || c == ',' || c == '=') {
                    return Err(format!("\"{s}\" is not a key: use one of {KEYS_HELP}"));
                } else {
                    Dim::Tag(k.to_string())
                }
            }
        })
    }

    /// A comma-separated list of keys.
    pub fn parse_list(s: &str, flag: &str) -> Result<Vec<Dim>, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            let d = Dim::parse(part).map_err(|e| format!("{flag} {s}: {e}"))?;
            if out.contains(&d) {
                return Err(format!("{flag} {s}: \"{}\" is named twice", part.trim()));
            }
            out.push(d);
        }
        Ok(out)
    }

    /// The key as written in output (`label.2`, `tag.disk`).
    pub fn key(&self) -> String {
        match self {
            Dim::Name => "name".into(),
            Dim::Label => "label".into(),
            Dim::Level(n) => format!("label.{n}"),
            Dim::Host => "host".into(),
            Dim::Tool => "tool".into(),
            Dim::Version => "version".into(),
            Dim::Run => "run".into(),
            Dim::Type => "type".into(),
            Dim::Metric => "metric".into(),
            Dim::Unit => "unit".into(),
            Dim::Tag(t) => format!("tag.{t}"),
            Dim::RunUnit => "run_unit".into(),
        }
    }

    /// Whether the value depends on the metric (rather than on the record alone).
    pub fn per_metric(&self) -> bool {
        matches!(self, Dim::Metric | Dim::Unit)
    }

    /// The value of this dimension for `metric` of record `r` (missing tags are empty).
    pub fn value<'a>(&self, r: &'a RecordView, metric: &'a str) -> &'a str {
        match self {
            Dim::Name => &r.name,
            Dim::Label => &r.label,
            Dim::Level(n) => r.label.split('/').nth(n - 1).unwrap_or(""),
            Dim::Host => &r.host,
            Dim::Tool => &r.tool,
            Dim::Version => &r.version,
            Dim::Run => &r.run,
            Dim::Type => r.kind.as_str(),
            Dim::Metric => metric,
            Dim::Unit => measure::record::unit_suffix(metric)
                .map(|s| &s[1..])
                .unwrap_or(""),
            Dim::Tag(t) => r.tag(t).unwrap_or(""),
            Dim::RunUnit => r.invocation.as_deref().unwrap_or(&r.run),
        }
    }

    /// The header levels this dimension's value stacks into: the label splits at `/`.
    pub fn levels(&self, value: &str) -> Vec<String> {
        match self {
            Dim::Label => value.split('/').map(str::to_string).collect(),
            _ => vec![value.to_string()],
        }
    }
}

/// Where the values of dimensions come from: a record, or the parts of a record's group key
/// (what the reader threads extract, so that the records themselves need not travel).
pub trait Source {
    fn get<'a>(&'a self, d: &Dim, metric: &'a str) -> &'a str;
}

impl Source for RecordView<'_> {
    fn get<'a>(&'a self, d: &Dim, metric: &'a str) -> &'a str {
        d.value(self, metric)
    }
}

/// The values of `dims` in order (one part each); metric-dependent dimensions come from
/// the metric.
#[derive(Debug)]
pub struct Parts<'a> {
    pub dims: &'a [Dim],
    pub parts: Vec<&'a str>,
}

impl Source for Parts<'_> {
    fn get<'a>(&'a self, d: &Dim, metric: &'a str) -> &'a str {
        match d {
            Dim::Metric => metric,
            Dim::Unit => measure::record::unit_suffix(metric)
                .map(|s| &s[1..])
                .unwrap_or(""),
            _ => self
                .dims
                .iter()
                .position(|x| x == d)
                .and_then(|i| self.parts.get(i).copied())
                .unwrap_or(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(Dim::parse(".name").unwrap(), Dim::Name);
        assert_eq!(Dim::parse("label.2").unwrap(), Dim::Level(2));
        assert_eq!(Dim::parse("disk").unwrap(), Dim::Tag("disk".into()));
        assert_eq!(Dim::parse("tag.disk").unwrap(), Dim::Tag("disk".into()));
        assert!(Dim::parse("label.0").is_err());
        assert!(Dim::parse("").is_err());
        assert!(Dim::parse_list("name,name", "--rows").is_err());
        assert_eq!(Dim::Level(3).key(), "label.3");
    }
}
