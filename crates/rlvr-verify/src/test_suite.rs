//! A record's tests, parsed from its ground truth (a JSON object or a JSON string holding
//! one): paired `inputs`/`outputs` whose values are strings or lists, or `functional` assert
//! strings (a list, or a single string as Code-R1 writes it).

use serde_json::Value;

/// One input or expected output value: the dataset holds strings, and a few lists of values
/// (for example `["123"]`); both are kept as they are and joined per profile later.
#[derive(Debug, Clone, PartialEq)]
pub enum TestValue {
    /// A plain string, used verbatim.
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

/// The tests of one record plus the optional per-record settings Klear reads from the
/// ground truth (`timeout` seconds and `max_test_cases`).
#[derive(Debug, Clone, PartialEq)]
pub struct TestSuite {
    /// The tests themselves.
    pub tests: Tests,
    /// `ground_truth["timeout"]` when present: Klear's per-test time limit in seconds.
    pub time_limit_seconds: Option<f64>,
    /// `ground_truth["max_test_cases"]` when present: Klear's sampling limit.
    pub max_test_cases: Option<usize>,
}

/// The two test structures of the dataset.
#[derive(Debug, Clone, PartialEq)]
pub enum Tests {
    /// Paired stdin/stdout tests.
    InputOutput(Vec<InputOutputTest>),
    /// Statements run after the solution.
    Functional(FunctionalTests),
}

/// Why a ground truth could not be turned into tests; names the key and index at fault.
#[derive(Debug, thiserror::Error)]
pub enum TestSuiteError {
    /// The ground truth string is not JSON.
    #[error("ground truth is not valid json: {source}")]
    InvalidJson {
        #[source]
        source: serde_json::Error,
    },
    /// The ground truth is JSON but not an object.
    #[error("ground truth must be a json object, found {found}")]
    NotAnObject { found: &'static str },
    /// Neither test structure is present.
    #[error("ground truth has neither \"functional\" nor \"inputs\" and \"outputs\"")]
    NoTests,
    /// Only one of the paired keys is present.
    #[error("ground truth has {present:?} but no {missing:?}")]
    MissingPair {
        present: &'static str,
        missing: &'static str,
    },
    /// A key holds the wrong JSON type.
    #[error("ground truth key {key:?} must be {expected}, found {found}")]
    WrongType {
        key: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    /// One element of a test list holds the wrong JSON type.
    #[error("ground truth {key:?}[{index}] must be {expected}, found {found}")]
    WrongElementType {
        key: &'static str,
        index: usize,
        expected: &'static str,
        found: &'static str,
    },
    /// `inputs` and `outputs` differ in length.
    #[error("ground truth has {inputs} inputs but {outputs} outputs")]
    LengthMismatch { inputs: usize, outputs: usize },
    /// A test list is empty, so no reward can be computed.
    #[error("ground truth key {key:?} holds no tests")]
    Empty { key: &'static str },
}

/// The JSON type name used in error messages.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl TestSuite {
    /// Parses a ground truth given as a JSON string (Klear and verl accept both forms).
    pub fn from_json_str(text: &str) -> Result<Self, TestSuiteError> {
        let value: Value =
            serde_json::from_str(text).map_err(|source| TestSuiteError::InvalidJson { source })?;
        Self::from_value(&value)
    }

    /// Parses a ground truth value; a JSON string value is decoded first.
    pub fn from_value(value: &Value) -> Result<Self, TestSuiteError> {
        if let Value::String(text) = value {
            return Self::from_json_str(text);
        }
        let Value::Object(object) = value else {
            return Err(TestSuiteError::NotAnObject {
                found: json_type(value),
            });
        };
        // Klear checks `functional` before `inputs`/`outputs`; so do we.
        let tests = if let Some(functional) = object.get("functional") {
            Tests::Functional(parse_functional(functional)?)
        } else {
            match (object.get("inputs"), object.get("outputs")) {
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
        let time_limit_seconds = match object.get("timeout") {
            None | Some(Value::Null) => None,
            Some(Value::Number(number)) => number.as_f64().filter(|seconds| *seconds > 0.0),
            Some(other) => {
                return Err(TestSuiteError::WrongType {
                    key: "timeout",
                    expected: "a number",
                    found: json_type(other),
                });
            }
        };
        let max_test_cases = match object.get("max_test_cases") {
            None | Some(Value::Null) => None,
            Some(Value::Number(number)) if number.as_u64().is_some_and(|count| count > 0) => number
                .as_u64()
                .and_then(|count| usize::try_from(count).ok()),
            Some(other) => {
                return Err(TestSuiteError::WrongType {
                    key: "max_test_cases",
                    expected: "a positive integer",
                    found: json_type(other),
                });
            }
        };
        Ok(Self {
            tests,
            time_limit_seconds,
            max_test_cases,
        })
    }

    /// How many tests the suite holds (a single functional string counts as one).
    pub fn len(&self) -> usize {
        match &self.tests {
            Tests::InputOutput(tests) => tests.len(),
            Tests::Functional(FunctionalTests::List(statements)) => statements.len(),
            Tests::Functional(FunctionalTests::Single(_)) => 1,
        }
    }

    /// Whether the suite holds no test (parsing never produces one; kept for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn parse_functional(value: &Value) -> Result<FunctionalTests, TestSuiteError> {
    match value {
        Value::String(text) => Ok(FunctionalTests::Single(text.clone())),
        Value::Array(items) => {
            if items.is_empty() {
                return Err(TestSuiteError::Empty { key: "functional" });
            }
            items
                .iter()
                .enumerate()
                .map(|(index, item)| match item {
                    Value::String(text) => Ok(text.clone()),
                    other => Err(TestSuiteError::WrongElementType {
                        key: "functional",
                        index,
                        expected: "a string",
                        found: json_type(other),
                    }),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(FunctionalTests::List)
        }
        other => Err(TestSuiteError::WrongType {
            key: "functional",
            expected: "a list of strings or a string",
            found: json_type(other),
        }),
    }
}

fn parse_values(key: &'static str, value: &Value) -> Result<Vec<TestValue>, TestSuiteError> {
    let Value::Array(items) = value else {
        return Err(TestSuiteError::WrongType {
            key,
            expected: "a list",
            found: json_type(value),
        });
    };
    if items.is_empty() {
        return Err(TestSuiteError::Empty { key });
    }
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
                found: json_type(other),
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
        assert_eq!(suite.time_limit_seconds, Some(5.0));
        assert_eq!(suite.max_test_cases, Some(4));
    }

    #[test]
    fn errors_name_the_key_and_index() {
        let cases = [
            (
                json!([1]),
                "ground truth must be a json object, found a list",
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
                "ground truth \"inputs\"[1] must be a string or a list, found a number",
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
                "ground truth key \"functional\" must be a list of strings or a string, found a number",
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
}
