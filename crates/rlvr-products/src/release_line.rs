//! The released line layout written piece by piece to a [`LineSink`]: into a buffer (what
//! `rlvr import parquet` and `rlvr convert` write), or compared with an existing line without
//! building it ([`LineMatcher`], what `rlvr export` uses to know whether an import will give the
//! source line back byte for byte).
//!
//! `{"prompt": [{"role": R, "content": C}, ...], "label": L, "metadata": {"data_type": ..,
//! "data_source": .., "ability": .., "style": .., "hash": .., "ground_truth": G}}` with
//! `json.dumps` separators; strings escaped as `json.dumps` escapes them (`ensure_ascii` per
//! line); `L` and `G` are JSON text copied as they are.

use rlvr_python_compat::dumps::push_string;

/// Where the pieces of a line go.
pub(crate) trait LineSink {
    /// Fixed text: keys, separators, brackets.
    fn literal(&mut self, bytes: &[u8]);
    /// A WTF-8 string, quoted and escaped as `json.dumps` does.
    fn string(&mut self, wtf8: &[u8], ensure_ascii: bool);
    /// JSON text copied as it is (the tests).
    fn text(&mut self, text: &[u8]);
}

impl LineSink for Vec<u8> {
    fn literal(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn string(&mut self, wtf8: &[u8], ensure_ascii: bool) {
        push_string(self, wtf8, ensure_ascii);
    }

    fn text(&mut self, text: &[u8]) {
        self.extend_from_slice(text);
    }
}

/// The pieces of one released line, borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReleaseLine<'a> {
    /// `(role, content)` of each prompt message, WTF-8.
    pub(crate) prompt: &'a [(&'a [u8], &'a [u8])],
    /// The JSON text of `label`.
    pub(crate) label: &'a [u8],
    /// The JSON text of `metadata.ground_truth`.
    pub(crate) ground_truth: &'a [u8],
    /// `data_type`, `data_source`, `ability`, `style`, `hash`, WTF-8.
    pub(crate) metadata: [&'a [u8]; 5],
    /// Escape every non-ASCII character.
    pub(crate) ensure_ascii: bool,
}

/// The metadata keys in the card's order (`ground_truth` follows them).
const METADATA_KEYS: [&[u8]; 5] = [
    b"\"data_type\": ",
    b"\"data_source\": ",
    b"\"ability\": ",
    b"\"style\": ",
    b"\"hash\": ",
];

impl ReleaseLine<'_> {
    /// Writes the line (without its newline) to `sink`.
    pub(crate) fn write_to(&self, sink: &mut impl LineSink) {
        let ascii = self.ensure_ascii;
        sink.literal(b"{\"prompt\": [");
        for (position, (role, content)) in self.prompt.iter().enumerate() {
            if position > 0 {
                sink.literal(b", ");
            }
            sink.literal(b"{\"role\": ");
            sink.string(role, ascii);
            sink.literal(b", \"content\": ");
            sink.string(content, ascii);
            sink.literal(b"}");
        }
        sink.literal(b"], \"label\": ");
        sink.text(self.label);
        sink.literal(b", \"metadata\": {");
        for (key, value) in METADATA_KEYS.iter().zip(self.metadata) {
            sink.literal(key);
            sink.string(value, ascii);
            sink.literal(b", ");
        }
        sink.literal(b"\"ground_truth\": ");
        sink.text(self.ground_truth);
        sink.literal(b"}}");
    }

    /// Whether writing this line gives exactly `line`.
    pub(crate) fn is_exactly(&self, line: &[u8]) -> bool {
        let mut matcher = LineMatcher {
            line,
            position: 0,
            matches: true,
            scratch: Vec::new(),
        };
        self.write_to(&mut matcher);
        matcher.matches && matcher.position == line.len()
    }
}

/// Compares pieces with an existing line as they come. Text that is a slice of the line itself
/// at the expected place (the tests, most of a record's bytes) is matched by its address, not
/// compared byte by byte.
pub(crate) struct LineMatcher<'a> {
    line: &'a [u8],
    position: usize,
    matches: bool,
    scratch: Vec<u8>,
}

impl LineMatcher<'_> {
    fn expect(&mut self, bytes: &[u8]) {
        if !self.matches {
            return;
        }
        let rest = &self.line[self.position..];
        let same_place = std::ptr::eq(rest.as_ptr(), bytes.as_ptr()) && rest.len() >= bytes.len();
        if same_place || rest.starts_with(bytes) {
            self.position += bytes.len();
        } else {
            self.matches = false;
        }
    }
}

impl LineSink for LineMatcher<'_> {
    fn literal(&mut self, bytes: &[u8]) {
        self.expect(bytes);
    }

    fn string(&mut self, wtf8: &[u8], ensure_ascii: bool) {
        if !self.matches {
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        push_string(&mut scratch, wtf8, ensure_ascii);
        self.expect(&scratch);
        self.scratch = scratch;
    }

    fn text(&mut self, text: &[u8]) {
        self.expect(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(prompt: &'a [(&'a [u8], &'a [u8])], ascii: bool) -> ReleaseLine<'a> {
        ReleaseLine {
            prompt,
            label: br#"{"inputs": ["1\n"], "outputs": ["2\n"]}"#,
            ground_truth: br#"{"inputs": ["1\n"], "outputs": ["2\n"]}"#,
            metadata: [b"code", b"coder1_longcot", b"code", b"rule", b"abc"],
            ensure_ascii: ascii,
        }
    }

    #[test]
    fn a_written_line_matches_itself_and_nothing_else() {
        let prompt: [(&[u8], &[u8]); 1] = [(b"user", "é\u{1c}\u{2028}".as_bytes())];
        for ascii in [false, true] {
            let mut written = Vec::new();
            line(&prompt, ascii).write_to(&mut written);
            assert!(line(&prompt, ascii).is_exactly(&written));
            assert!(!line(&prompt, !ascii).is_exactly(&written));
            let mut longer = written.clone();
            longer.push(b' ');
            assert!(!line(&prompt, ascii).is_exactly(&longer));
            written.pop();
            assert!(!line(&prompt, ascii).is_exactly(&written));
        }
    }
}
