//! What makes two records "the same problem" for splits, dedup and the audit: the exact prompt,
//! the whitespace-normalised prompt (Python's `" ".join(s.split())`, `str.isspace` including
//! U+001C..U+001F, as the card counted), or `metadata.hash`. Keys are 128-bit SHA-256 prefixes,
//! so memory is 16 bytes per row whatever the prompt length; a collision among n keys has
//! probability about n^2 / 2^129.

use rlvr_dataset::record::RecordRef;
use rlvr_python_compat::text::for_each_normalized_piece;
use sha2::{Digest, Sha256};

/// A 128-bit key standing for a group.
pub type GroupKey = [u8; 16];

/// How records are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupBy {
    /// `" ".join(prompt.split())` of `prompt[0]["content"]`.
    #[default]
    NormalizedPrompt,
    /// `prompt[0]["content"]` exactly.
    ExactPrompt,
    /// `metadata.hash`.
    Hash,
}

fn finish(hasher: Sha256) -> GroupKey {
    let digest = hasher.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// The key of bytes that stand for themselves (a bad line, a seed).
pub fn key_of_bytes(domain: &[u8], bytes: &[u8]) -> GroupKey {
    let mut hasher = Sha256::new();
    hasher.update(domain);
    hasher.update(bytes);
    finish(hasher)
}

/// The group key of a record.
pub fn group_key(record: &RecordRef<'_, '_>, by: GroupBy) -> GroupKey {
    let mut hasher = Sha256::new();
    match by {
        GroupBy::NormalizedPrompt => {
            hasher.update(b"normalized-prompt\0");
            for_each_normalized_piece(&record.prompt_content.decode(), |piece| {
                hasher.update(piece)
            });
        }
        GroupBy::ExactPrompt => {
            hasher.update(b"exact-prompt\0");
            hasher.update(record.prompt_content.decode());
        }
        GroupBy::Hash => {
            hasher.update(b"hash\0");
            hasher.update(record.hash.decode());
        }
    }
    finish(hasher)
}

/// The key of one line: its record's group key, or for a line that is not a record a key of
/// its bytes (so it forms a group of its own and is still placed deterministically) and why it
/// is not a record.
pub fn line_key(
    line: rlvr_dataset::Line<'_>,
    by: GroupBy,
) -> (GroupKey, Option<rlvr_dataset::LineError>) {
    let record = line.parse().and_then(|value| {
        RecordRef::from_value(&value)
            .map(|record| group_key(&record, by))
            .map_err(|error| rlvr_dataset::LineError::InvalidRecord { error })
    });
    match record {
        Ok(key) => (key, None),
        Err(error) => (key_of_bytes(b"unreadable-line\0", line.bytes), Some(error)),
    }
}
