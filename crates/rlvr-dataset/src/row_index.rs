//! Random access to a dataset file's rows (`rlvr verify --dataset`, `rlvr serve --dataset`):
//! one pass records where each row starts (rows are the reader's: non-blank lines, numbered as
//! [`crate::read_row`] and `rlvr show` number them, found by the same scan), then each job
//! reads only its own line, so memory holds sixteen bytes per row, never the tests.
//! [`DatasetRows::index_hashes`] also maps each row's `metadata.hash` to its row.
//!
//! A row is read as Python's `json` reads it (the released file holds lone surrogate escapes
//! in some prompts, which serde_json refuses): a row is a bad job only when its own ground
//! truth is, never because of a character elsewhere in it. Its tests are found by
//! [`ground_truth_of_row`]; its statement (`prompt[0].content`) is read for the phrases that
//! make it accept more than one answer (issue 25), which mark the job's result.

use std::collections::HashMap;
use std::convert::Infallible;
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rlvr_python_compat::loads::parse_python_json;
use serde_json::Value;

use crate::answer_variety::{VarietyPhrase, answer_variety};
use crate::error::ReadError;
use crate::ground_truth::ground_truth_of_row;
use crate::reader::{Scan, open, scan_rows};

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

/// Why a row's tests could not be read; every message names the row.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// The row number is past the last row.
    #[error("`index` {row} is past the end of {} ({rows} rows)", path.display())]
    PastTheEnd {
        /// The file.
        path: PathBuf,
        /// The row asked for.
        row: u64,
        /// Rows in the file.
        rows: u64,
    },
    /// Reading the row's bytes failed.
    #[error("{}: reading row {row}: {error}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The row.
        row: u64,
        /// What the system said (in the message, not the chain).
        error: std::io::Error,
    },
    /// The row is not JSON, even to Python.
    #[error("{place}: {error}")]
    NotJson {
        /// `PATH row R (line L, byte offset B)`.
        place: String,
        /// The parser's error (in the message, not the chain).
        error: serde_json::Error,
    },
    /// The row has neither a `metadata.ground_truth` nor a `label`.
    #[error("{place}: no `metadata.ground_truth` or `label`")]
    NoTests {
        /// `PATH row R (line L, byte offset B)`.
        place: String,
    },
}

/// A row's ground truth, as [`ground_truth_of_row`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowGroundTruth {
    /// Where the row is, for messages: `PATH row R (line L, byte offset B)`.
    pub place: String,
    /// The field the tests are in: `metadata.ground_truth` or `label`.
    pub field: &'static str,
    /// Its value, as Python's `json` reads it.
    pub value: Value,
    /// The phrases of the row's statement that accept more than one answer (empty when none,
    /// or when the row has no statement).
    pub answer_variety: Vec<VarietyPhrase>,
}

impl DatasetRows {
    /// Indexes `path` by byte offset (one pass, nothing parsed).
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let (mut file, _) = open(path)?;
        let mut starts = Vec::new();
        let mut lines = Vec::new();
        let scan = scan_rows(&mut file, path, |position| {
            starts.push(position.byte_offset);
            lines.push(position.line);
            ControlFlow::<Infallible>::Continue(())
        })?;
        let bytes = match scan {
            Scan::Ended { bytes, .. } => bytes,
            Scan::Stopped(never) => match never {},
        };
        starts.push(bytes);
        Ok(Self {
            path: path.to_path_buf(),
            file,
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
    pub fn index_hashes(&mut self) -> Result<u64, RowError> {
        let mut hashes: HashMap<String, Vec<u64>> = HashMap::new();
        let mut hashed = 0;
        for row in 0..self.len() {
            let value = self.value(row)?;
            if let Some(hash) = value
                .get("metadata")
                .and_then(|metadata| metadata.get("hash"))
                .and_then(Value::as_str)
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

    /// Where row `row` is, for messages.
    fn place(&self, row: u64) -> String {
        format!(
            "{} row {row} (line {}, byte offset {})",
            self.path.display(),
            self.lines[row as usize],
            self.starts[row as usize]
        )
    }

    /// Row `row`, parsed.
    fn value(&self, row: u64) -> Result<Value, RowError> {
        if row >= self.len() {
            return Err(RowError::PastTheEnd {
                path: self.path.clone(),
                row,
                rows: self.len(),
            });
        }
        let (start, end) = (self.starts[row as usize], self.starts[row as usize + 1]);
        let mut line = vec![0; (end - start) as usize];
        self.file
            .read_exact_at(&mut line, start)
            .map_err(|error| RowError::Unreadable {
                path: self.path.clone(),
                row,
                error,
            })?;
        parse_python_json(&line).map_err(|error| RowError::NotJson {
            place: self.place(row),
            error,
        })
    }

    /// The ground truth of row `row` ([`ground_truth_of_row`]) and its statement's phrases.
    pub fn ground_truth(&self, row: u64) -> Result<RowGroundTruth, RowError> {
        let value = self.value(row)?;
        let place = self.place(row);
        let Some((field, ground_truth)) = ground_truth_of_row(&value) else {
            return Err(RowError::NoTests { place });
        };
        let statement = value
            .get("prompt")
            .and_then(|prompt| prompt.get(0))
            .and_then(|message| message.get("content"))
            .and_then(Value::as_str);
        Ok(RowGroundTruth {
            place,
            field,
            value: ground_truth.clone(),
            answer_variety: statement.map(answer_variety).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        for (index, output) in ["a", "b", "c"].iter().enumerate() {
            let found = rows.ground_truth(index as u64).unwrap();
            assert_eq!(found.field, "metadata.ground_truth");
            assert_eq!(found.value, json!({"inputs": ["1\n"], "outputs": [output]}));
        }
        let error = rows.ground_truth(3).unwrap_err().to_string();
        assert!(error.contains("past the end"), "{error}");
        std::fs::write(&path, "\n\n{\"label\": {\"inputs\": []}}\n").unwrap();
        let found = DatasetRows::open(&path).unwrap().ground_truth(0).unwrap();
        assert_eq!(
            found.place,
            format!("{} row 0 (line 3, byte offset 2)", path.display())
        );
        assert_eq!(found.field, "label");
        std::fs::write(&path, "{\"label\": null, \"metadata\": {}}\n[\n").unwrap();
        let rows = DatasetRows::open(&path).unwrap();
        let error = rows.ground_truth(0).unwrap_err().to_string();
        assert!(
            error.ends_with("row 0 (line 1, byte offset 0): no `metadata.ground_truth` or `label`"),
            "{error}"
        );
        let error = rows.ground_truth(1).unwrap_err().to_string();
        assert!(
            error.contains("row 1 (line 2, byte offset 32): "),
            "{error}"
        );
    }

    /// Issue 33: `rlvr show`, `rlvr verify --dataset` and `rlvr serve --dataset` number rows
    /// alike: a line holding only a form feed is a row (not JSON whitespace), as the reader says.
    #[test]
    fn issue_33_rows_are_numbered_as_the_reader_numbers_them() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        std::fs::write(
            &path,
            " \t\r\n\u{c}\n{\"label\": {\"functional\": [\"x\"]}}\n",
        )
        .unwrap();
        let rows = DatasetRows::open(&path).unwrap();
        assert_eq!(rows.len(), 2);
        for row in 0..2 {
            let crate::RowLookup::Found(raw) = crate::read_row(&path, row).unwrap() else {
                panic!("row {row} not found");
            };
            assert_eq!(
                rows.place(row),
                format!(
                    "{} row {row} (line {}, byte offset {})",
                    path.display(),
                    raw.position.line,
                    raw.position.byte_offset
                )
            );
        }
        assert_eq!(rows.ground_truth(1).unwrap().field, "label");
    }

    /// Issue 13: a lone surrogate in a row's prompt does not make the row unreadable.
    #[test]
    fn issue_13_rows_are_read_as_python_reads_them() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        let row = r#"{"prompt": [{"role": "user", "content": "a \ud800 b"}], "label": null, "metadata": {"ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"], "functional": null}, "score": NaN}}"#;
        std::fs::write(&path, format!("{row}\n")).unwrap();
        let found = DatasetRows::open(&path).unwrap().ground_truth(0).unwrap();
        assert_eq!(found.field, "metadata.ground_truth");
        assert!(found.answer_variety.is_empty());
    }

    /// Issue 25: the row's statement is read for the phrases that accept more than one answer.
    #[test]
    fn a_rows_statement_marks_it_when_it_accepts_several_answers() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        let row = json!({
            "prompt": [{"role": "user", "content": "Print the pairs. If there are multiple answers, print any of them."}],
            "label": {"inputs": ["1\n"], "outputs": ["1\n"]},
        });
        std::fs::write(&path, format!("{row}\n")).unwrap();
        let found = DatasetRows::open(&path).unwrap().ground_truth(0).unwrap();
        assert_eq!(found.answer_variety.len(), 1, "{:?}", found.answer_variety);
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
