//! Results arrive in completion order; [`InOrder`] releases them in submission order as soon
//! as every earlier one is there.

use std::collections::BTreeMap;

/// A reorder buffer keyed by a sequence number starting at 0.
#[derive(Debug)]
pub struct InOrder<T> {
    next: u64,
    waiting: BTreeMap<u64, T>,
}

impl<T> Default for InOrder<T> {
    fn default() -> Self {
        Self {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }
}

impl<T> InOrder<T> {
    /// Adds item `sequence`; returns every item now ready, in order.
    pub fn insert(&mut self, sequence: u64, item: T) -> Vec<T> {
        self.waiting.insert(sequence, item);
        let mut ready = Vec::new();
        while let Some(item) = self.waiting.remove(&self.next) {
            ready.push(item);
            self.next += 1;
        }
        ready
    }

    /// The next sequence number to be released.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Items held back because an earlier one is missing.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_in_sequence_order_as_soon_as_possible() {
        let mut order = InOrder::default();
        assert!(order.insert(1, "b").is_empty());
        assert!(order.insert(2, "c").is_empty());
        assert_eq!(order.insert(0, "a"), ["a", "b", "c"]);
        assert_eq!(order.insert(3, "d"), ["d"]);
        assert_eq!((order.next(), order.waiting()), (4, 0));
    }
}
