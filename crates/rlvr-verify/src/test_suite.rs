//! A record's tests, parsed from its ground truth (a JSON object or a JSON string holding one)
//! into [`rlvr_dataset::Tests`], the one type they are held in: paired `inputs`/`outputs`
//! whose values are strings or lists, or `functional` assert strings (a list, or a single
//! string as Code-R1 writes it).
//!
//! Every value is validated here, before anything uses it: a `timeout` that is negative, zero,
//! over an hour or not a number, a `max_test_cases` that is not a positive integer, more
//! than [`MAX_TESTS`] tests, or a `checker` that names no built-in checker (or one given with
//! functional tests) make the job `invalid_job` with the key named, never a panic later.
//! A key whose value is `null` is the same as an absent key: HF `datasets`, pyarrow and pandas
//! write `{"inputs": [...], "outputs": [...], "functional": null}` for a column of mixed labels.

use std::time::Duration;

use serde_json::Value;

use crate::checker::Checker;
use crate::limits::seconds_in_range;
use rlvr_dataset::{FunctionalTests, InputOutputTest, TestValue, Tests};
use rlvr_python_compat::loads::parse_python_json;

/// Most tests one ground truth may hold: eight times the dataset's largest record (1,226
/// tests). More is refused as `invalid_job` rather than planned, since every test costs a
/// program (or a referee run) and a line of `--details` output.
pub const MAX_TESTS: usize = 10_000;

/// The tests of one record plus the optional per-record settings Klear reads from the
/// ground truth (`timeout` seconds and `max_test_cases`).
#[derive(Debug, Clone, PartialEq)]
pub struct TestSuite {
    /// The tests themselves.
    pub tests: Tests,
    /// `ground_truth["timeout"]` when present: Klear's per-test time limit, validated to
    /// (0, 3600] seconds.
    pub time_limit: Option<Duration>,
    /// `ground_truth["max_test_cases"]` when present: Klear's sampling limit (at least 1).
    pub max_test_cases: Option<usize>,
    /// `ground_truth["checker"]` when present (input/output tests only): judges each test's
    /// output instead of the profile's comparison.
    pub checker: Option<Checker>,
}

/// Why a ground truth could not be turned into tests; names the key and index at fault.
#[derive(Debug, thiserror::Error)]
pub enum TestSuiteError {
    /// The ground truth string is not JSON.
    #[error("ground truth is not valid json: {error}")]
    InvalidJson { error: serde_json::Error },
    /// The ground truth is JSON but not an object.
    #[error("ground truth must be a json object, found {found}")]
    NotAnObject { found: String },
    /// Neither test structure is present.
    #[error("ground truth has neither \"functional\" nor \"inputs\" and \"outputs\"")]
    NoTests,
    /// Only one of the paired keys is present.
    #[error("ground truth has {present:?} but no {missing:?}")]
    MissingPair {
        present: &'static str,
        missing: &'static str,
    },
    /// A key holds the wrong JSON type or a value out of range.
    #[error("ground truth key {key:?} must be {expected}, found {found}")]
    WrongType {
        key: &'static str,
        expected: &'static str,
        found: String,
    },
    /// One element of a test list holds the wrong JSON type.
    #[error("ground truth {key:?}[{index}] must be {expected}, found {found}")]
    WrongElementType {
        key: &'static str,
        index: usize,
        expected: &'static str,
        found: String,
    },
    /// `inputs` and `outputs` differ in length.
    #[error("ground truth has {inputs} inputs but {outputs} outputs")]
    LengthMismatch { inputs: usize, outputs: usize },
    /// A test list is empty, so no reward can be computed.
    #[error("ground truth key {key:?} holds no tests")]
    Empty { key: &'static str },
    /// A test list is longer than [`MAX_TESTS`].
    #[error("ground truth key {key:?} holds {count} tests; at most {MAX_TESTS} are accepted")]
    TooManyTests { key: &'static str, count: usize },
    /// `checker` or `checker_cpp` names no checker rlvr can run, or cannot apply.
    #[error("ground truth key {key:?} {reason}")]
    Checker { key: &'static str, reason: String },
}

/// A value as error messages show it: the type, and for scalars the value itself (so a NaN
/// that arrived as the string `"NaN"` is visible), cut to a readable length.
/// What kind of JSON value `value` is, for messages: "null", "a boolean", "a number",
/// "a string", "a list" or "an object".
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("a boolean ({flag})"),
        Value::Number(number) => number.to_string(),
        Value::String(text) => {
            let shown: String = text.chars().take(24).collect();
            let cut = if shown.len() < text.len() { "..." } else { "" };
            format!("a string ({shown:?}{cut})")
        }
        Value::Array(items) => format!("a list of {} items", items.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// The member `key`, with `null` read as absent.
fn member<'a>(object: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|value| !value.is_null())
}

impl TestSuite {
    /// Parses a ground truth given as a JSON string (Klear and verl accept both forms), read
    /// as Python's `json.loads` reads it (lone surrogates, `NaN`: see [`rlvr_python_compat::loads`]).
    pub fn from_json_str(text: &str) -> Result<Self, TestSuiteError> {
        let value = parse_python_json(text.as_bytes())
            .map_err(|error| TestSuiteError::InvalidJson { error })?;
        Self::from_value(&value)
    }

    /// Parses a ground truth value; a JSON string value is decoded first.
    pub fn from_value(value: &Value) -> Result<Self, TestSuiteError> {
        if let Value::String(text) = value {
            return Self::from_json_str(text);
        }
        let Value::Object(object) = value else {
            return Err(TestSuiteError::NotAnObject {
                found: describe(value),
            });
        };
        // Klear checks `functional` before `inputs`/`outputs`; so do we.
        let tests = if let Some(functional) = member(object, "functional") {
            Tests::Functional(parse_functional(functional)?)
        } else {
            match (member(object, "inputs"), member(object, "outputs")) {
                (Some(inputs), Some(outputs)) => {
                    Tests::InputOutput(parse_input_output(inputs, outputs)?)
                }
                (Some(_), None) => {
                    return Err(TestSuiteError::MissingPair {
                        present: "inputs",
                        missing: "outputs",
                    });
                }
                (None, Some(_)) => {
                    return Err(TestSuiteError::MissingPair {
                        present: "outputs",
                        missing: "inputs",
                    });
                }
                (None, None) => return Err(TestSuiteError::NoTests),
            }
        };
        let checker = Checker::from_ground_truth(object)?;
        if checker.is_some() && matches!(tests, Tests::Functional(_)) {
            return Err(TestSuiteError::Checker {
                key: "checker",
                reason: "applies to \"inputs\"/\"outputs\" tests; this ground truth has \"functional\" tests".to_owned(),
            });
        }
        Ok(Self {
            tests,
            time_limit: member(object, "timeout").map(parse_timeout).transpose()?,
            max_test_cases: member(object, "max_test_cases")
                .map(parse_max_test_cases)
                .transpose()?,
            checker,
        })
    }

    /// How many tests the suite holds (a single functional string counts as one).
    pub fn len(&self) -> usize {
        self.tests.len()
    }

    /// Whether the suite holds no test (parsing never produces one; kept for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Klear's `timeout`: seconds in (0, 3600]. Python's `json` reads `NaN` and `Infinity`, which
/// reach us as strings (serde_json has no NaN) and are refused like any other string.
fn parse_timeout(value: &Value) -> Result<Duration, TestSuiteError> {
    let invalid = || TestSuiteError::WrongType {
        key: "timeout",
        expected: "a number of seconds in (0, 3600]",
        found: describe(value),
    };
    value
        .as_f64()
        .and_then(seconds_in_range)
        .ok_or_else(invalid)
}

/// Klear's `max_test_cases`: a positive integer (a larger one than the suite just means all).
fn parse_max_test_cases(value: &Value) -> Result<usize, TestSuiteError> {
    value
        .as_u64()
        .filter(|count| *count > 0)
        .map(|count| usize::try_from(count).unwrap_or(usize::MAX))
        .ok_or_else(|| TestSuiteError::WrongType {
            key: "max_test_cases",
            expected: "a positive integer",
            found: describe(value),
        })
}

fn check_count(key: &'static str, count: usize) -> Result<(), TestSuiteError> {
    if count == 0 {
        return Err(TestSuiteError::Empty { key });
    }
    if count > MAX_TESTS {
        return Err(TestSuiteError::TooManyTests { key, count });
    }
    Ok(())
}

fn parse_functional(value: &Value) -> Result<FunctionalTests, TestSuiteError> {
    match value {
        Value::String(text) => Ok(FunctionalTests::Single(text.clone())),
        Value::Array(items) => {
            check_count("functional", items.len())?;
            items
                .iter()
                .enumerate()
                .map(|(index, item)| match item {
                    Value::String(text) => Ok(text.clone()),
                    other => Err(TestSuiteError::WrongElementType {
                        key: "functional",
                        index,
                        expected: "a string",
                        found: describe(other),
                    }),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(FunctionalTests::List)
        }
        other => Err(TestSuiteError::WrongType {
            key: "functional",
            expected: "a list of strings or a string",
            found: describe(other),
        }),
    }
}

fn parse_values(key: &'static str, value: &Value) -> Result<Vec<TestValue>, TestSuiteError> {
    let Value::Array(items) = value else {
        return Err(TestSuiteError::WrongType {
            key,
            expected: "a list",
            found: describe(value),
        });
    };
    check_count(key, items.len())?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            Value::String(text) => Ok(TestValue::Text(text.clone())),
            Value::Array(values) => Ok(TestValue::List(values.clone())),
            other => Err(TestSuiteError::WrongElementType {
                key,
                index,
                expected: "a string or a list",
                found: describe(other),
            }),
        })
        .collect()
}

fn parse_input_output(
    inputs: &Value,
    outputs: &Value,
) -> Result<Vec<InputOutputTest>, TestSuiteError> {
    let inputs = parse_values("inputs", inputs)?;
    let outputs = parse_values("outputs", outputs)?;
    if inputs.len() != outputs.len() {
        return Err(TestSuiteError::LengthMismatch {
            inputs: inputs.len(),
            outputs: outputs.len(),
        });
    }
    Ok(inputs
        .into_iter()
        .zip(outputs)
        .map(|(input, output)| InputOutputTest { input, output })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_TIME_LIMIT;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn parses_input_output_with_list_values() {
        let suite = TestSuite::from_value(&json!({
            "inputs": ["1 1\n", ["123"]],
            "outputs": ["0\n", ["8", 9]]
        }))
        .unwrap();
        let Tests::InputOutput(tests) = &suite.tests else {
            panic!("expected input/output tests");
        };
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[1].input, TestValue::List(vec![json!("123")]));
        assert_eq!(tests[1].output, TestValue::List(vec![json!("8"), json!(9)]));
    }

    #[test]
    fn parses_a_json_string_ground_truth() {
        let suite =
            TestSuite::from_value(&json!("{\"functional\": [\"assert f(1) == 2\"]}")).unwrap();
        assert_eq!(
            suite.tests,
            Tests::Functional(FunctionalTests::List(vec!["assert f(1) == 2".into()]))
        );
        let single = TestSuite::from_json_str(r#"{"functional": "assert f(1) == 2"}"#).unwrap();
        assert_eq!(single.len(), 1);
    }

    #[test]
    fn reads_klear_settings() {
        let suite = TestSuite::from_value(&json!({
            "functional": ["assert True"], "timeout": 5, "max_test_cases": 4
        }))
        .unwrap();
        assert_eq!(suite.time_limit, Some(Duration::from_secs(5)));
        assert_eq!(suite.max_test_cases, Some(4));
        let fractional =
            TestSuite::from_value(&json!({"functional": ["assert True"], "timeout": 0.25}))
                .unwrap();
        assert_eq!(fractional.time_limit, Some(Duration::from_millis(250)));
    }

    /// Issue 13: a ground truth given as a JSON string is read as Python reads it.
    #[test]
    fn issue_13_json_string_ground_truths_are_read_as_python_reads_them() {
        let suite =
            TestSuite::from_json_str(r#"{"inputs": ["\ud800\n"], "outputs": ["x"]}"#).unwrap();
        let Tests::InputOutput(tests) = &suite.tests else {
            panic!("expected input/output tests");
        };
        assert_eq!(tests[0].input, TestValue::Text("\u{fffd}\n".into()));
        let error =
            TestSuite::from_value(&json!(r#"{"functional": ["assert 1"], "timeout": NaN}"#))
                .unwrap_err()
                .to_string();
        assert_eq!(
            error,
            "ground truth key \"timeout\" must be a number of seconds in (0, 3600], found a string (\"NaN\")"
        );
    }

    /// Issue 16: HF `datasets`, pyarrow and pandas write absent keys as `null`.
    #[test]
    fn issue_16_null_keys_are_absent_keys() {
        let input_output = TestSuite::from_value(&json!({
            "inputs": ["1\n"], "outputs": ["1\n"], "functional": null,
            "timeout": null, "max_test_cases": null
        }))
        .unwrap();
        assert!(matches!(input_output.tests, Tests::InputOutput(ref tests) if tests.len() == 1));
        assert_eq!(
            (input_output.time_limit, input_output.max_test_cases),
            (None, None)
        );
        let functional = TestSuite::from_value(&json!({
            "inputs": null, "outputs": null, "functional": ["assert True"]
        }))
        .unwrap();
        assert_eq!(functional.len(), 1);
        let error = TestSuite::from_value(&json!({"inputs": ["1"], "outputs": null})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "ground truth has \"inputs\" but no \"outputs\""
        );
        let error = TestSuite::from_value(&json!({"functional": null, "inputs": null}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("neither"), "{error}");
    }

    /// Issue 12: every numeric and size field is validated, with the key named.
    #[test]
    fn issue_12_out_of_range_settings_name_the_key() {
        let with = |key: &str, value: Value| {
            let mut truth = json!({"inputs": ["1\n"], "outputs": ["1\n"]});
            truth[key] = value;
            TestSuite::from_value(&truth)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        for (value, shown) in [
            (json!(1e300), "1e+300"),
            (json!(-1), "-1"),
            (json!(0), "0"),
            (json!(3600.5), "3600.5"),
            (json!("NaN"), "a string (\"NaN\")"),
            (json!("5"), "a string (\"5\")"),
            (json!([5]), "a list of 1 items"),
            (json!(true), "a boolean (true)"),
        ] {
            assert_eq!(
                with("timeout", value),
                format!(
                    "ground truth key \"timeout\" must be a number of seconds in (0, 3600], found {shown}"
                )
            );
        }
        for (value, shown) in [
            (json!(0), "0"),
            (json!(-3), "-3"),
            (json!(2.5), "2.5"),
            (json!(1e20), "1e+20"),
            (json!("16"), "a string (\"16\")"),
        ] {
            assert_eq!(
                with("max_test_cases", value),
                format!(
                    "ground truth key \"max_test_cases\" must be a positive integer, found {shown}"
                )
            );
        }
        let huge = u64::MAX;
        let suite =
            TestSuite::from_value(&json!({"functional": ["assert 1"], "max_test_cases": huge}))
                .unwrap();
        assert_eq!(suite.max_test_cases, Some(usize::MAX));
    }

    #[test]
    fn issue_12_huge_test_counts_are_refused() {
        let many: Vec<String> = (0..=MAX_TESTS).map(|index| index.to_string()).collect();
        let error = TestSuite::from_value(&json!({"inputs": many, "outputs": many}))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "ground truth key \"inputs\" holds {} tests; at most 10000 are accepted",
                MAX_TESTS + 1
            )
        );
        let error = TestSuite::from_value(&json!({"functional": many}))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("ground truth key \"functional\" holds 10001 tests"),
            "{error}"
        );
        let enough: Vec<String> = many[..MAX_TESTS].to_vec();
        assert_eq!(
            TestSuite::from_value(&json!({"inputs": enough, "outputs": enough}))
                .unwrap()
                .len(),
            MAX_TESTS
        );
    }

    #[test]
    fn errors_name_the_key_and_index() {
        let cases = [
            (
                json!([1]),
                "ground truth must be a json object, found a list of 1 items",
            ),
            (
                json!({}),
                "ground truth has neither \"functional\" nor \"inputs\" and \"outputs\"",
            ),
            (
                json!({"inputs": ["1"]}),
                "ground truth has \"inputs\" but no \"outputs\"",
            ),
            (
                json!({"inputs": ["1", 2], "outputs": ["1", "2"]}),
                "ground truth \"inputs\"[1] must be a string or a list, found 2",
            ),
            (
                json!({"inputs": ["1"], "outputs": ["1", "2"]}),
                "ground truth has 1 inputs but 2 outputs",
            ),
            (
                json!({"functional": ["assert 1", null]}),
                "ground truth \"functional\"[1] must be a string, found null",
            ),
            (
                json!({"functional": []}),
                "ground truth key \"functional\" holds no tests",
            ),
            (
                json!({"functional": 3}),
                "ground truth key \"functional\" must be a list of strings or a string, found 3",
            ),
        ];
        for (value, message) in cases {
            let error = TestSuite::from_value(&value).unwrap_err();
            assert_eq!(error.to_string(), message);
        }
        let error = TestSuite::from_json_str("{").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("ground truth is not valid json")
        );
    }

    /// Any JSON scalar or small container.
    fn any_value() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|number| serde_json::Number::from_f64(number)
                    .map_or(Value::Null, Value::Number)),
            "[a-zA-Z0-9 .\\-]{0,8}".prop_map(Value::from),
        ];
        scalar.prop_recursive(2, 8, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_]{1,16}", inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever a ground truth's settings hold, parsing never panics, and an accepted
        /// setting is always one the executor can use as is.
        #[test]
        fn issue_12_validated_settings_are_always_usable(
            timeout in any_value(),
            max_test_cases in any_value(),
            seconds in any::<f64>(),
        ) {
            let mut truth = json!({"inputs": ["1\n"], "outputs": ["1\n"]});
            truth["timeout"] = timeout;
            truth["max_test_cases"] = max_test_cases;
            if let Ok(suite) = TestSuite::from_value(&truth) {
                if let Some(limit) = suite.time_limit {
                    prop_assert!(!limit.is_zero() && limit <= MAX_TIME_LIMIT);
                }
                if let Some(count) = suite.max_test_cases {
                    prop_assert!(count > 0);
                }
            }
            let number = serde_json::Number::from_f64(seconds).map_or(Value::Null, Value::Number);
            let accepted = TestSuite::from_value(&json!({"functional": ["assert 1"], "timeout": number}))
                .map(|suite| suite.time_limit);
            match accepted {
                Ok(Some(limit)) => prop_assert!(
                    seconds > 0.0 && seconds <= 3600.0 && (limit.as_secs_f64() - seconds).abs() < 1e-6
                ),
                Ok(None) => prop_assert!(!seconds.is_finite()),
                Err(_) => prop_assert!(!(1e-9..=3600.0).contains(&seconds)),
            }
        }

        /// The same keys with `null` or absent give the same suite.
        #[test]
        fn issue_16_null_and_absent_agree(
            nulls in prop::collection::vec(any::<bool>(), 5),
            functional in any::<bool>(),
        ) {
            let mut with_nulls = serde_json::Map::new();
            let mut without = serde_json::Map::new();
            let present: Vec<(&str, Value)> = if functional {
                vec![("functional", json!(["assert 1"]))]
            } else {
                vec![("inputs", json!(["1\n"])), ("outputs", json!(["1\n"]))]
            };
            for (key, value) in present {
                with_nulls.insert(key.to_owned(), value.clone());
                without.insert(key.to_owned(), value);
            }
            for (key, null) in ["functional", "inputs", "outputs", "timeout", "max_test_cases"]
                .into_iter()
                .zip(nulls)
            {
                if null && !with_nulls.contains_key(key) {
                    with_nulls.insert(key.to_owned(), Value::Null);
                }
            }
            let left = TestSuite::from_value(&Value::Object(with_nulls)).unwrap();
            let right = TestSuite::from_value(&Value::Object(without)).unwrap();
            prop_assert_eq!(left, right);
        }
    }
}
