//! Random access to a dataset file's rows for `--dataset`: one pass records where each
//! non-blank line starts (rows are numbered like the reader numbers them), then each job reads
//! only its own line.
//!
//! A row is read as Python's `json` reads it (the released file holds lone surrogate escapes
//! in some prompts, which serde_json refuses): a row is a bad job only when its own ground
//! truth is, never because of a character elsewhere in it. Its ground truth is
//! `metadata.ground_truth`, else `label`; a `null` counts as absent. Its statement
//! (`prompt[0].content`) is read for the phrases that make it accept more than one answer
//! (issue 25), which mark the job's result.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, bail};
use rlvr_products::answer_variety::{VarietyPhrase, answer_variety};
use rlvr_verify::{TestSuite, parse_python_json};

/// The value unless it is `null` (absent and `null` are the same thing).
fn present(value: Option<&serde_json::Value>) -> Option<&serde_json::Value> {
    value.filter(|value| !value.is_null())
}

/// Row start offsets of one dataset file.
pub(crate) struct DatasetRows {
    path: PathBuf,
    file: Mutex<fs_err::File>,
    /// `starts[row]` is the byte offset of row `row`; the last entry is the file length.
    starts: Vec<u64>,
    /// `lines[row]` is the 1-based line number of row `row` (blank lines are not rows).
    lines: Vec<u64>,
}

impl DatasetRows {
    pub(crate) fn open(path: &Path) -> anyhow::Result<Self> {
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
            file: Mutex::new(file),
            starts,
            lines,
        })
    }

    /// Rows in the file.
    pub(crate) fn len(&self) -> u64 {
        self.starts.len() as u64 - 1
    }

    /// The tests of row `row` (its `metadata.ground_truth`), and the phrases of its statement
    /// that accept more than one answer (empty when none, or when the row has no statement).
    pub(crate) fn tests(&self, row: u64) -> anyhow::Result<(TestSuite, Vec<VarietyPhrase>)> {
        if row >= self.len() {
            bail!(
                "`index` {row} is past the end of {} ({} rows)",
                self.path.display(),
                self.len()
            );
        }
        let (start, end) = (self.starts[row as usize], self.starts[row as usize + 1]);
        let mut line = vec![0; (end - start) as usize];
        {
            let mut file = self
                .file
                .lock()
                .expect("the dataset file lock is never poisoned");
            file.seek(SeekFrom::Start(start))?;
            file.read_exact(&mut line)?;
        }
        let context = || {
            format!(
                "{} row {row} (line {}, byte offset {start})",
                self.path.display(),
                self.lines[row as usize]
            )
        };
        let value = parse_python_json(&line).with_context(context)?;
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
}
