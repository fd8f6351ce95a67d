//! A record's tests: the one type every crate holds them in ([`Tests`]), and the rule that
//! finds them in a dataset row ([`ground_truth_of_row`]).
//!
//! The verifier reads a ground truth into [`Tests`] (with its own settings beside them,
//! `rlvr_verify::TestSuite`); `rlvr check-checker` probes them; the dataset's reader looks at
//! a line through the borrowed [`crate::record::TestsRef`] instead, which decodes nothing.
//!
//! The row rule is shared with the Python package (`rlvr.ground_truth.tests_of`, which also
//! accepts the other shapes trainers hand over): a row's tests are its `metadata.ground_truth`,
//! else its `label`, a `null` counting as absent. Both sides read the same table of cases,
//! `crates/rlvr-dataset/tests/fixtures/ground_truth_of_rows.json` (the Rust test in
//! `tests/dataset/ground_truth_rule.rs`, the Python one in `python/tests/test_ground_truth_rule.py`).

use serde_json::Value;

/// One input or expected output: the dataset holds strings, and a few lists of values (for
/// example `["123"]`); both are kept as they are and joined per profile later.
#[derive(Debug, Clone, PartialEq)]
pub enum TestValue {
    /// A plain string, used verbatim (a lone surrogate escape is U+FFFD: a program could never
    /// print one).
    Text(String),
    /// A list of JSON values, rendered with Python's `str()` and joined per profile.
    List(Vec<Value>),
}

/// One stdin/stdout test.
#[derive(Debug, Clone, PartialEq)]
pub struct InputOutputTest {
    /// What the program reads on standard input.
    pub input: TestValue,
    /// What the program must print.
    pub output: TestValue,
}

/// Functional tests: Python statements (usually asserts) run after the solution.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionalTests {
    /// One statement per test, as the dataset stores them.
    List(Vec<String>),
    /// A single block of statements counted as one test (Code-R1's format).
    Single(String),
}

/// A record's tests, in one of the dataset's two structures.
#[derive(Debug, Clone, PartialEq)]
pub enum Tests {
    /// Paired stdin/stdout tests.
    InputOutput(Vec<InputOutputTest>),
    /// Statements run after the solution.
    Functional(FunctionalTests),
}

impl Tests {
    /// How many tests there are (a single functional block counts as one).
    pub fn len(&self) -> usize {
        match self {
            Self::InputOutput(tests) => tests.len(),
            Self::Functional(FunctionalTests::List(statements)) => statements.len(),
            Self::Functional(FunctionalTests::Single(_)) => 1,
        }
    }

    /// Whether there is no test.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The structure used.
    pub fn kind(&self) -> crate::record::TestKind {
        match self {
            Self::InputOutput(_) => crate::record::TestKind::InputOutput,
            Self::Functional(_) => crate::record::TestKind::Functional,
        }
    }
}

/// Where a row's tests are: `metadata.ground_truth`, else `label` (a `null` is absent), with
/// the field's name for messages; `None` when the row has neither.
pub fn ground_truth_of_row(row: &Value) -> Option<(&'static str, &Value)> {
    fn present(value: Option<&Value>) -> Option<&Value> {
        value.filter(|value| !value.is_null())
    }
    present(
        row.get("metadata")
            .and_then(|metadata| metadata.get("ground_truth")),
    )
    .map(|truth| ("metadata.ground_truth", truth))
    .or_else(|| present(row.get("label")).map(|truth| ("label", truth)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_ground_truth_wins_over_the_label_and_null_is_absent() {
        let row = json!({"label": {"functional": ["a"]}, "metadata": {"ground_truth": {"functional": ["b"]}}});
        assert_eq!(
            ground_truth_of_row(&row),
            Some(("metadata.ground_truth", &json!({"functional": ["b"]})))
        );
        let row = json!({"label": {"functional": ["a"]}, "metadata": {"ground_truth": null}});
        assert_eq!(
            ground_truth_of_row(&row),
            Some(("label", &json!({"functional": ["a"]})))
        );
        assert_eq!(
            ground_truth_of_row(&json!({"label": null, "metadata": {}})),
            None
        );
    }

    #[test]
    fn a_single_functional_block_counts_as_one_test() {
        let single = Tests::Functional(FunctionalTests::Single("assert 1\nassert 2".into()));
        assert_eq!((single.len(), single.is_empty()), (1, false));
        let none = Tests::InputOutput(Vec::new());
        assert!(none.is_empty());
    }
}
