//! The text of a test program, stored so that a job's memory is bounded by its response, not by
//! tests x response: the part every program of the job shares (the profile's prefix and the
//! response's code) is one allocation, and each program keeps only its own tail (a reference
//! profile's assert). A 2 MB response with 200 functional tests takes 2 MB, not 400 MB.
//!
//! [`SharedHeads`] finds the shared part without knowing how a profile assembles its programs:
//! the head is the common prefix of all the job's program texts (cut at a line end), so a
//! profile's assembly can change freely. The full text is built only for the moment the
//! runner loads it.

use std::fmt;
use std::sync::Arc;

/// A program's text: `head` (shared with the job's other programs) followed by `tail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramText {
    head: Arc<str>,
    tail: Box<str>,
}

impl ProgramText {
    /// A text that shares nothing.
    pub fn whole(text: impl Into<Arc<str>>) -> Self {
        Self {
            head: text.into(),
            tail: Box::from(""),
        }
    }

    /// The shared part.
    pub fn head(&self) -> &Arc<str> {
        &self.head
    }

    /// The program's own part, after the head.
    pub fn tail(&self) -> &str {
        &self.tail
    }

    /// Length in bytes of the whole text.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the whole text contains `needle` (also across the head/tail boundary).
    pub fn contains(&self, needle: &str) -> bool {
        if self.head.contains(needle) || self.tail.contains(needle) {
            return true;
        }
        if needle.len() < 2 || self.tail.is_empty() {
            return false;
        }
        // A match across the boundary starts in the head's last `needle.len() - 1` bytes.
        let mut start = self.head.len().saturating_sub(needle.len() - 1);
        while !self.head.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = self.tail.len().min(needle.len() - 1);
        while !self.tail.is_char_boundary(end) {
            end += 1;
        }
        format!("{}{}", &self.head[start..], &self.tail[..end]).contains(needle)
    }
}

impl fmt::Display for ProgramText {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.head)?;
        formatter.write_str(&self.tail)
    }
}

/// Turns a job's program texts into [`ProgramText`]s sharing one head: the common prefix of
/// all of them (cut at a line end, so the head stays readable), or nothing.
#[derive(Debug, Default)]
pub(crate) struct SharedHeads {
    head: Option<Arc<str>>,
}

impl SharedHeads {
    /// Prepares the head from the job's texts (each is dropped once compared, so only two
    /// exist at a time). Fewer than two texts share nothing.
    pub(crate) fn new(mut texts: impl Iterator<Item = String>) -> Self {
        let Some(first) = texts.next() else {
            return Self::default();
        };
        let mut common = None;
        for text in texts {
            let limit = common.unwrap_or(first.len());
            let length = first.as_bytes()[..limit]
                .iter()
                .zip(text.as_bytes())
                .take_while(|(left, right)| left == right)
                .count();
            common = Some(length);
        }
        let Some(common) = common else {
            return Self::default();
        };
        let cut = first.as_bytes()[..common]
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |newline| newline + 1);
        Self {
            head: (cut > 0).then(|| Arc::from(&first[..cut])),
        }
    }

    /// One program's text, sharing the head when it starts with it.
    pub(crate) fn text(&self, text: String) -> ProgramText {
        match &self.head {
            Some(head) if text.starts_with(&**head) => ProgramText {
                head: Arc::clone(head),
                tail: Box::from(&text[head.len()..]),
            },
            _ => ProgramText::whole(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_share_their_common_head() {
        let texts = [
            "prefix\ncode\nassert f(1) == 2\n",
            "prefix\ncode\nassert f(2) == 3\n",
            "other\n",
        ];
        let heads = SharedHeads::new(texts[..2].iter().map(|text| (*text).to_owned()));
        let programs: Vec<ProgramText> = texts
            .iter()
            .map(|text| heads.text((*text).to_owned()))
            .collect();
        assert!(Arc::ptr_eq(programs[0].head(), programs[1].head()));
        assert_eq!(&**programs[0].head(), "prefix\ncode\n");
        assert_eq!(programs[1].tail(), "assert f(2) == 3\n");
        for (program, text) in programs.iter().zip(texts) {
            assert_eq!(program.to_string(), text);
            assert_eq!(program.len(), text.len());
        }
        assert_eq!(programs[2].tail(), "");
    }

    #[test]
    fn contains_sees_across_the_boundary() {
        let heads = SharedHeads::new(
            ["import pan\nas pd\n", "import pan\nxx"]
                .map(String::from)
                .into_iter(),
        );
        let program = heads.text("import pan\nas pd\n".to_owned());
        assert_eq!(program.tail(), "as pd\n");
        assert!(program.contains("pan\nas"));
        assert!(program.contains("import"));
        assert!(program.contains("pd"));
        assert!(!program.contains("pandas"));
        let unicode = ProgramText {
            head: Arc::from("é\n"),
            tail: Box::from("ü"),
        };
        assert!(unicode.contains("\nü"));
        assert!(!unicode.contains("x\nü"));
    }

    #[test]
    fn one_program_shares_nothing() {
        let heads = SharedHeads::new(std::iter::once("a\nb".to_owned()));
        assert_eq!(heads.text("a\nb".to_owned()), ProgramText::whole("a\nb"));
    }

    /// Two identical tests first (the dataset has duplicate tests) must not stop the others
    /// from sharing.
    #[test]
    fn duplicate_first_programs_still_share_with_the_rest() {
        let texts = ["code\nassert a\n", "code\nassert a\n", "code\nassert b\n"];
        let heads = SharedHeads::new(texts.iter().map(|text| (*text).to_owned()));
        for text in texts {
            let program = heads.text(text.to_owned());
            assert_eq!(&**program.head(), "code\n");
            assert_eq!(program.to_string(), text);
        }
    }
}
