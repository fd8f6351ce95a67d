//! Source lines an export keeps so that `rlvr import parquet` gives them back byte for byte.
//!
//! The Parquet columns hold UTF-8 text and the import writes each row as the release writes
//! lines, which reproduces a line written that way. A line it would not reproduce (a lone
//! surrogate, which a UTF-8 column cannot hold; a `label` whose text is not the text of
//! `metadata.ground_truth`; other key order, spacing or escaping; extra keys) is kept verbatim
//! in the shard's key-value metadata under [`SOURCE_LINES_KEY`], as one JSON object mapping the
//! row's position in the shard to the line itself: `{"17": {...the line...}}`. Readers other
//! than `rlvr` ignore the key. A shard keeps at most [`SOURCE_LINES_BUDGET`] bytes of lines so
//! its footer stays far below pyarrow's 100 MB thrift limit; rows past it are reported by the
//! export (`inexact_rows`) and come back equal record by record, not byte for byte.

use std::collections::HashMap;

use rlvr_python_compat::json::{ValueRef, parse};

/// The key-value metadata key.
pub const SOURCE_LINES_KEY: &str = "rlvr.source_lines";

/// Most bytes of source lines one shard keeps.
pub const SOURCE_LINES_BUDGET: usize = 32 << 20;

/// The metadata value for `(row in shard, line)` pairs. Every line is a JSON object (the
/// reader accepted it), so it is embedded as it is.
pub fn encode(lines: &[(u64, Vec<u8>)]) -> String {
    let mut text = Vec::with_capacity(lines.iter().map(|(_, line)| line.len() + 16).sum());
    text.push(b'{');
    for (position, (row, line)) in lines.iter().enumerate() {
        if position > 0 {
            text.push(b',');
        }
        text.extend_from_slice(format!("\"{row}\":").as_bytes());
        text.extend_from_slice(line);
    }
    text.push(b'}');
    // The lines passed the reader's UTF-8 check.
    String::from_utf8_lossy(&text).into_owned()
}

/// The lines of a metadata value, by row in the shard; `None` when it is not what [`encode`]
/// writes.
pub fn decode(text: &str) -> Option<HashMap<u64, Vec<u8>>> {
    let value = parse(text).ok()?;
    let ValueRef::Object(object) = value else {
        return None;
    };
    object
        .members()
        .iter()
        .map(|(key, line)| {
            let row = key.to_str()?.parse().ok()?;
            Some((row, line.raw().to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_survive_the_metadata() {
        let lines = vec![
            (3, br#"{"prompt": "\ud800", "x":1}"#.to_vec()),
            (40, "{\"a\": \"é\u{2028}\"}".as_bytes().to_vec()),
        ];
        let decoded = decode(&encode(&lines)).expect("decodes");
        assert_eq!(decoded.len(), 2);
        assert_eq!(decoded[&3], lines[0].1);
        assert_eq!(decoded[&40], lines[1].1);
        assert!(decode("[1]").is_none());
    }
}
