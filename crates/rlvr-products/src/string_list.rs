//! A list of strings kept as one byte buffer plus end offsets: the shape Arrow wants, so that
//! building a column from many rows is a few `memcpy`s rather than one allocation per value.

/// Strings (UTF-8) stored back to back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringList {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl StringList {
    /// Appends one string.
    pub fn push(&mut self, text: &str) {
        self.bytes.extend_from_slice(text.as_bytes());
        self.ends.push(self.bytes.len());
    }

    /// Reserves room for `bytes` more bytes of text and `count` more strings.
    pub fn reserve(&mut self, bytes: usize, count: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(count);
    }

    /// The text buffer and the end offsets, for handing over without a copy.
    pub fn into_parts(self) -> (Vec<u8>, Vec<usize>) {
        (self.bytes, self.ends)
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no strings.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total bytes of all strings.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// All strings' bytes, back to back.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// End offset of each string within [`StringList::bytes`].
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    /// The string at `index`.
    pub fn get(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        std::str::from_utf8(&self.bytes[start..end]).ok()
    }

    /// The strings in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|index| self.get(index))
    }
}

impl<'a> FromIterator<&'a str> for StringList {
    fn from_iter<Items: IntoIterator<Item = &'a str>>(items: Items) -> Self {
        let mut list = Self::default();
        for item in items {
            list.push(item);
        }
        list
    }
}
