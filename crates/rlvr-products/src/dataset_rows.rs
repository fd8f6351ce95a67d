//! Random access to a dataset file's rows (`rlvr verify --dataset`, `rlvr serve --dataset`):
//! one pass records where each non-blank line starts (rows are numbered like the reader numbers
//! them), then each job reads only its own line, so memory holds eight bytes per row, never the
//! tests. [`DatasetRows::index_hashes`] also maps each row's `metadata.hash` to its row.
//!
//! A row is read as Python's `json` reads it (the released file holds lone surrogate escapes
//! in some prompts, which serde_json refuses): a row is a bad job only when its own ground
//! truth is, never because of a character elsewhere in it. Its ground truth is
//! `metadata.ground_truth`, else `label`; a `null` counts as absent. Its statement
//! (`prompt[0].content`) is read for the phrases that make it accept more than one answer
//! (issue 25), which mark the job's result.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::answer_variety::{VarietyPhrase, answer_variety};
use rlvr_verify::{TestSuite, parse_python_json};

/// The value unless it is `null` (absent and `null` are the same thing).
fn present(value: Option<&serde_json::Value>) -> Option<&serde_json::Value> {
    value.filter(|value| !value.is_null())
}

/// Row start offsets of one dataset file.
pub struct DatasetRows {
    path: PathBuf,
    /// Read with positioned reads: jobs on several threads never wait for each other.
    file: std::fs::File,
    /// `starts[row]` is the byte offset of row `row`; the last entry is the file length.
    starts: Vec<u64>,
    /// `lines[row]` is the 1-based line number of row `row` (blank lines are not rows).
    lines: Vec<u64>,
    /// `metadata.hash` to the rows holding it, once [`DatasetRows::index_hashes`] ran.
    hashes: HashMap<String, Vec<u64>>,
}

impl std::fmt::Debug for DatasetRows {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DatasetRows")
            .field("path", &self.path)
            .field("rows", &self.len())
            .field("hashes", &self.hashes.len())
            .finish_non_exhaustive()
    }
}

/// Where a `metadata.hash` leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashLookup {
    /// The one row with that hash.
    Row(u64),
    /// No row has it.
    Unknown,
    /// Several rows have it (the rows, in file order).
    Ambiguous(Vec<u64>),
}

impl DatasetRows {
    /// Indexes `path` by byte offset (one pass, nothing parsed).
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if path.is_dir() {
            bail!("{}: is a directory, not a dataset file", path.display());
        }
        let mut file = fs_err::File::open(path)?;
        let mut starts = Vec::new();
        let mut lines = Vec::new();
        let mut line_number = 1u64;
        let mut buffer = vec![0; 1 << 20];
        let mut offset = 0u64;
        let mut line_start = 0u64;
        let mut line_blank = true;
        loop {
            let read = file.read(&mut buffer)?;
            if read == 0 {
                break;
            }
            let mut cursor = 0;
            while cursor < read {
                let end =
                    memchr::memchr(b'\n', &buffer[cursor..read]).map(|position| cursor + position);
                let segment = &buffer[cursor..end.unwrap_or(read)];
                line_blank &= segment.iter().all(u8::is_ascii_whitespace);
                match end {
                    Some(end) => {
                        if !line_blank {
                            starts.push(line_start);
                            lines.push(line_number);
                        }
                        line_number += 1;
                        line_start = offset + end as u64 + 1;
                        line_blank = true;
                        cursor = end + 1;
                    }
                    None => cursor = read,
                }
            }
            offset += read as u64;
        }
        if !line_blank {
            starts.push(line_start);
            lines.push(line_number);
        }
        starts.push(offset);
        Ok(Self {
            path: path.to_path_buf(),
            file: file.into_parts().0,
            starts,
            lines,
            hashes: HashMap::new(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows in the file.
    pub fn len(&self) -> u64 {
        self.starts.len() as u64 - 1
    }

    /// Whether the file has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads every row once and maps its `metadata.hash` (a string) to the row; rows without
    /// one are left out. Returns how many rows have a hash.
    pub fn index_hashes(&mut self) -> anyhow::Result<u64> {
        let mut hashes: HashMap<String, Vec<u64>> = HashMap::new();
        let mut hashed = 0;
        for row in 0..self.len() {
            let (line, context) = self.line(row)?;
            let value = parse_python_json(&line).with_context(&context)?;
            if let Some(hash) = value
                .get("metadata")
                .and_then(|metadata| metadata.get("hash"))
                .and_then(serde_json::Value::as_str)
            {
                hashes.entry(hash.to_owned()).or_default().push(row);
                hashed += 1;
            }
        }
        self.hashes = hashes;
        Ok(hashed)
    }

    /// The row whose `metadata.hash` is `hash` (after [`DatasetRows::index_hashes`]).
    pub fn row_of_hash(&self, hash: &str) -> HashLookup {
        match self.hashes.get(hash).map(Vec::as_slice) {
            None | Some([]) => HashLookup::Unknown,
            Some([row]) => HashLookup::Row(*row),
            Some(rows) => HashLookup::Ambiguous(rows.to_vec()),
        }
    }

    /// The bytes of row `row`, and a description of where it is for errors.
    fn line(&self, row: u64) -> anyhow::Result<(Vec<u8>, impl Fn() -> String + '_)> {
        if row >= self.len() {
            bail!(
                "`index` {row} is past the end of {} ({} rows)",
                self.path.display(),
                self.len()
            );
        }
        let (start, end) = (self.starts[row as usize], self.starts[row as usize + 1]);
        let mut line = vec![0; (end - start) as usize];
        self.file
            .read_exact_at(&mut line, start)
            .with_context(|| format!("{}: reading row {row}", self.path.display()))?;
        let context = move || {
            format!(
                "{} row {row} (line {}, byte offset {start})",
                self.path.display(),
                self.lines[row as usize]
            )
        };
        Ok((line, context))
    }

    /// The tests of row `row` (its `metadata.ground_truth`), and the phrases of its statement
    /// that accept more than one answer (empty when none, or when the row has no statement).
    pub fn tests(&self, row: u64) -> anyhow::Result<(TestSuite, Vec<VarietyPhrase>)> {
        let (line, context) = self.line(row)?;
        let value = parse_python_json(&line).with_context(&context)?;
        let (field, ground_truth) = present(
            value
                .get("metadata")
                .and_then(|metadata| metadata.get("ground_truth")),
        )
        .map(|truth| ("metadata.ground_truth", truth))
        .or_else(|| present(value.get("label")).map(|truth| ("label", truth)))
        .with_context(|| format!("{}: no `metadata.ground_truth` or `label`", context()))?;
        let suite = TestSuite::from_value(ground_truth)
            .with_context(|| format!("{}: field `{field}`", context()))?;
        let statement = value
            .get("prompt")
            .and_then(|prompt| prompt.get(0))
            .and_then(|message| message.get("content"))
            .and_then(serde_json::Value::as_str);
        Ok((suite, statement.map(answer_variety).unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_skip_blank_lines_and_accept_a_missing_final_newline() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        let row = |output: &str| {
            format!(
                r#"{{"metadata": {{"ground_truth": {{"inputs": ["1\n"], "outputs": ["{output}"]}}}}}}"#
            )
        };
        std::fs::write(
            &path,
            format!("{}\n\n  \n{}\r\n{}", row("a"), row("b"), row("c")),
        )
        .unwrap();
        let rows = DatasetRows::open(&path).unwrap();
        assert_eq!(rows.len(), 3);
        for (index, _) in ["a", "b", "c"].iter().enumerate() {
            assert_eq!(rows.tests(index as u64).unwrap().0.len(), 1);
        }
        let error = rows.tests(3).unwrap_err().to_string();
        assert!(error.contains("past the end"), "{error}");
        std::fs::write(&path, "\n\n{\"label\": {\"inputs\": []}}\n").unwrap();
        let error = format!(
            "{:#}",
            DatasetRows::open(&path).unwrap().tests(0).unwrap_err()
        );
        assert!(
            error.contains("row 0 (line 3, byte offset 2): field `label`"),
            "{error}"
        );
    }

    /// Issue 13: a lone surrogate in a row's prompt does not make the row unreadable.
    #[test]
    fn issue_13_rows_are_read_as_python_reads_them() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        let row = r#"{"prompt": [{"role": "user", "content": "a \ud800 b"}], "label": null, "metadata": {"ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"], "functional": null}, "score": NaN}}"#;
        std::fs::write(&path, format!("{row}\n")).unwrap();
        let (suite, variety) = DatasetRows::open(&path).unwrap().tests(0).unwrap();
        assert_eq!(suite.len(), 1);
        assert!(variety.is_empty());
    }

    /// Issue 34: `rlvr serve --dataset` finds rows by `metadata.hash`; a hash two rows share
    /// names both instead of picking one.
    #[test]
    fn rows_are_found_by_their_hash() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        let row = |hash: &str| {
            format!(
                r#"{{"label": {{"inputs": ["1\n"], "outputs": ["1\n"]}}, "metadata": {{"hash": "{hash}"}}}}"#
            )
        };
        let text = [
            row("a"),
            row("b"),
            "{\"label\": {\"inputs\": [\"1\"], \"outputs\": [\"1\"]}}".to_owned(),
            row("b"),
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        let mut rows = DatasetRows::open(&path).unwrap();
        assert_eq!(
            rows.row_of_hash("a"),
            HashLookup::Unknown,
            "not indexed yet"
        );
        assert_eq!(rows.index_hashes().unwrap(), 3);
        assert_eq!(rows.row_of_hash("a"), HashLookup::Row(0));
        assert_eq!(rows.row_of_hash("b"), HashLookup::Ambiguous(vec![1, 3]));
        assert_eq!(rows.row_of_hash("c"), HashLookup::Unknown);
    }
}
