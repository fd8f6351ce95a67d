//! The tests of a dataset row (`rlvr verify --dataset`, `rlvr serve --dataset`): the row's
//! ground truth as [`rlvr_dataset::DatasetRows`] finds it, read into a [`TestSuite`] like any
//! job's, and the phrases of its statement that accept more than one answer.

use rlvr_dataset::answer_variety::VarietyPhrase;
use rlvr_dataset::{DatasetRows, RowError};

use crate::test_suite::{TestSuite, TestSuiteError};

/// Why a row gives no tests; every message names the row (and the field at fault).
#[derive(Debug, thiserror::Error)]
pub enum RowTestsError {
    /// The row could not be read, or holds no ground truth.
    #[error(transparent)]
    Row(#[from] RowError),
    /// The row's ground truth is not tests the verifier accepts.
    #[error("{place}: field `{field}`: {error}")]
    Tests {
        /// `PATH row R (line L, byte offset B)`.
        place: String,
        /// `metadata.ground_truth` or `label`.
        field: &'static str,
        /// Why (in the message, not the chain).
        error: TestSuiteError,
    },
}

/// The tests of row `row` of `rows`, and the phrases of its statement that accept more than
/// one answer (empty when none, or when the row has no statement).
pub fn row_tests(
    rows: &DatasetRows,
    row: u64,
) -> Result<(TestSuite, Vec<VarietyPhrase>), RowTestsError> {
    let found = rows.ground_truth(row)?;
    let suite = TestSuite::from_value(&found.value).map_err(|error| RowTestsError::Tests {
        place: found.place,
        field: found.field,
        error,
    })?;
    Ok((suite, found.answer_variety))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_tests_are_read_like_a_jobs_and_errors_name_the_row_and_field() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.jsonl");
        std::fs::write(
            &path,
            "{\"label\": {\"inputs\": [\"1\\n\"], \"outputs\": [\"1\\n\"], \"functional\": null}}\n\n{\"label\": {\"inputs\": []}}\n",
        )
        .unwrap();
        let rows = DatasetRows::open(&path).unwrap();
        let (suite, phrases) = row_tests(&rows, 0).unwrap();
        assert_eq!(suite.len(), 1);
        assert!(phrases.is_empty());
        let error = row_tests(&rows, 1).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "{} row 1 (line 3, byte offset 72): field `label`: ground truth has \"inputs\" but no \"outputs\"",
                path.display()
            )
        );
        let error = row_tests(&rows, 2).unwrap_err().to_string();
        assert!(error.contains("past the end"), "{error}");
    }
}
