//! The shape of the last record the collector added: its group and its values' keys, each
//! with the series it feeds. A run's samples come one after another with the same keys, so
//! the next record of that shape skips the hash lookups of its group and of every key.

#[derive(Debug, Default)]
pub struct Shape {
    group_text: String,
    group: Option<u32>,
    /// The keys one after another, and for each the end of its text and its series.
    keys: String,
    slots: Vec<(usize, Option<u32>)>,
}

impl Shape {
    /// The id of group `text`, where it is the last record's.
    pub fn group(&self, text: &str) -> Option<u32> {
        self.group.filter(|_| self.group_text == text)
    }

    /// Starts a new shape: group `text` is `id`, no key known yet.
    pub fn set_group(&mut self, text: &str, id: u32) {
        self.group_text.clear();
        self.group_text.push_str(text);
        self.group = Some(id);
        self.keys.clear();
        self.slots.clear();
    }

    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |p| self.slots[p].0)
    }

    /// The series of the record's key `i`, where the last record of its group had `key`
    /// there (None inside: a key the filter or `--metric` leaves out).
    pub fn slot(&self, i: usize, key: &str) -> Option<Option<u32>> {
        let &(end, slot) = self.slots.get(i)?;
        (&self.keys[self.start(i)..end] == key).then_some(slot)
    }

    /// Key `i` is `key`, feeding `slot`; the keys after it are forgotten.
    pub fn learn(&mut self, i: usize, key: &str, slot: Option<u32>) {
        let i = i.min(self.slots.len());
        let start = self.start(i);
        self.slots.truncate(i);
        self.keys.truncate(start);
        self.keys.push_str(key);
        self.slots.push((self.keys.len(), slot));
    }
}

#[cfg(test)]
mod tests {
    use super::Shape;

    #[test]
    fn a_shape_is_known_key_by_key_and_relearned_where_it_changes() {
        let mut s = Shape::default();
        assert_eq!(s.group("g"), None);
        s.set_group("g", 3);
        assert_eq!(s.group("g"), Some(3));
        assert_eq!(s.group("h"), None);
        s.learn(0, "wall_s", Some(1));
        s.learn(1, "user_s", None);
        assert_eq!(s.slot(0, "wall_s"), Some(Some(1)));
        assert_eq!(s.slot(1, "user_s"), Some(None));
        assert_eq!(s.slot(1, "sys_s"), None);
        assert_eq!(s.slot(2, "sys_s"), None);
        s.learn(0, "rtt_s", Some(4));
        assert_eq!(s.slot(0, "rtt_s"), Some(Some(4)));
        assert_eq!(s.slot(1, "user_s"), None);
        s.set_group("h", 5);
        assert_eq!(s.slot(0, "rtt_s"), None);
    }
}
