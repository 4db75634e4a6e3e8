//! The hash map of collate's per-record lookups (groups, names, metrics, series, runs).

use std::collections::HashMap;

/// A hash map with foldhash's fast hash in place of SipHash: the lookups are made once or
/// more per record, and the keys come from the user's own files.
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
