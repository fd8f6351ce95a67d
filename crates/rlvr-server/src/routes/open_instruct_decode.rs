//! The `tests` value of open-instruct's `TestRequest`, in every form its `CodeVerifier` sends
//! or rlvr's users hand it, decoded into asserts or stdin/stdout pairs.
//!
//! open-instruct's own server (`code_utils.decode_tests`) takes a list, or a string that is
//! JSON, or base64 of zlib of a pickle, and treats an empty value as no tests. Its
//! `CodeVerifier` posts the dataset's ground truth as `tests` unchanged, so with this dataset
//! that is the release's label: `{"inputs", "outputs"}` or `{"functional"}` (as an object or
//! JSON text, with `null` for absent keys when it went through `datasets`). Every one of these
//! is accepted on both routes, except the pickle: unpickling untrusted bytes runs code. Each
//! refusal is a 422 that says what `tests` held and what was expected.

use axum::http::StatusCode;
use rlvr_verify::json_kind;
use serde_json::Value;

use crate::error::ApiError;

/// What a request's tests are.
#[derive(Debug, PartialEq)]
pub(crate) enum DecodedTests {
    /// Statements run after the program, one per process (`/test_program`).
    Asserts(Vec<String>),
    /// Standard input and expected output pairs (`/test_program_stdio`).
    Stdio {
        inputs: Vec<Value>,
        outputs: Vec<Value>,
    },
}

impl DecodedTests {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Asserts(asserts) => asserts.len(),
            Self::Stdio { inputs, .. } => inputs.len(),
        }
    }
}

/// The forms accepted, for error messages.
const EXPECTED: &str = "expected a list of assert strings, a list of {\"input\", \"output\"} \
                        objects, or a label {\"inputs\", \"outputs\"} / {\"functional\"} (as JSON \
                        or JSON text)";

/// Decodes `tests`; `stdio` says which route asked (an empty list keeps its route's kind).
pub(crate) fn decode_tests(tests: &Value, stdio: bool) -> Result<DecodedTests, ApiError> {
    decode(tests, stdio, 0)
}

fn decode(tests: &Value, stdio: bool, depth: usize) -> Result<DecodedTests, ApiError> {
    match tests {
        Value::Null => Ok(empty(stdio)),
        Value::Array(items) if items.is_empty() => Ok(empty(stdio)),
        Value::Array(items) => list(items),
        Value::Object(object) => label(object),
        Value::String(text) if text.trim().is_empty() => Ok(empty(stdio)),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(inner @ (Value::Array(_) | Value::Object(_) | Value::Null)) => {
                decode(&inner, stdio, depth + 1)
            }
            Ok(Value::String(inner)) if depth == 0 => {
                decode(&Value::String(inner), stdio, depth + 1)
            }
            Ok(other) => Err(unprocessable(format!(
                "tests is JSON text holding {}; {EXPECTED}",
                json_kind(&other)
            ))),
            Err(_) if looks_like_base64(text) => Err(unprocessable(
                "tests is base64 text: open-instruct's pickled and zlib-compressed form, which \
                 rlvr refuses because unpickling runs code; send the tests as a JSON list",
            )),
            Err(error) => Err(unprocessable(format!(
                "tests is a string but not JSON ({error}; it starts {:?}); {EXPECTED}",
                text.chars().take(40).collect::<String>()
            ))),
        },
        other => Err(unprocessable(format!(
            "tests is {}; {EXPECTED}",
            json_kind(other)
        ))),
    }
}

fn empty(stdio: bool) -> DecodedTests {
    if stdio {
        DecodedTests::Stdio {
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    } else {
        DecodedTests::Asserts(Vec::new())
    }
}

/// A list: all assert strings, or all `{input, output}` objects (the first item decides).
fn list(items: &[Value]) -> Result<DecodedTests, ApiError> {
    if items[0].is_object() {
        let mut inputs = Vec::with_capacity(items.len());
        let mut outputs = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let pair = item.as_object().filter(|pair| {
                pair.get("input").is_some_and(|input| !input.is_null())
                    && pair.get("output").is_some_and(|output| !output.is_null())
            });
            let Some(pair) = pair else {
                return Err(unprocessable(format!(
                    "tests[{index}] is {}; every item of a stdio list is an object with \
                     \"input\" and \"output\"",
                    json_kind(item)
                )));
            };
            inputs.push(pair["input"].clone());
            outputs.push(pair["output"].clone());
        }
        return Ok(DecodedTests::Stdio { inputs, outputs });
    }
    let mut asserts = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::String(statement) => asserts.push(statement.clone()),
            other => {
                return Err(unprocessable(format!(
                    "tests[{index}] is {}; every item of an assert list is a string of Python",
                    json_kind(other)
                )));
            }
        }
    }
    Ok(DecodedTests::Asserts(asserts))
}

/// The release's label (null keys are absent keys), or verl's `{"assert_case": [...]}`.
fn label(object: &serde_json::Map<String, Value>) -> Result<DecodedTests, ApiError> {
    let present = |key: &str| object.get(key).filter(|value| !value.is_null());
    let strings = |key: &str, value: &Value| -> Result<Vec<String>, ApiError> {
        let Value::Array(items) = value else {
            return Err(unprocessable(format!(
                "tests.{key} is {}; expected a list of assert strings",
                json_kind(value)
            )));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(statement) => Ok(statement.clone()),
                other => Err(unprocessable(format!(
                    "tests.{key}[{index}] is {}; expected an assert string",
                    json_kind(other)
                ))),
            })
            .collect()
    };
    if let Some(functional) = present("functional") {
        return Ok(DecodedTests::Asserts(strings("functional", functional)?));
    }
    if let Some(assert_case) = present("assert_case") {
        return Ok(DecodedTests::Asserts(strings("assert_case", assert_case)?));
    }
    match (present("inputs"), present("outputs")) {
        (Some(Value::Array(inputs)), Some(Value::Array(outputs))) => {
            if inputs.len() != outputs.len() {
                return Err(unprocessable(format!(
                    "tests.inputs has {} items and tests.outputs {}; they pair up one to one",
                    inputs.len(),
                    outputs.len()
                )));
            }
            Ok(DecodedTests::Stdio {
                inputs: inputs.clone(),
                outputs: outputs.clone(),
            })
        }
        (Some(inputs), Some(outputs)) => Err(unprocessable(format!(
            "tests.inputs is {} and tests.outputs {}; both must be lists",
            json_kind(inputs),
            json_kind(outputs)
        ))),
        (Some(_), None) | (None, Some(_)) => Err(unprocessable(
            "tests has only one of \"inputs\" and \"outputs\"; a stdio label needs both",
        )),
        (None, None) => {
            let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
            keys.sort_unstable();
            Err(unprocessable(format!(
                "tests is an object with keys {keys:?} and no tests in them; {EXPECTED}"
            )))
        }
    }
}

fn looks_like_base64(text: &str) -> bool {
    let text = text.trim();
    text.len() >= 8
        && text.len().is_multiple_of(4)
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='))
}

fn unprocessable(reason: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, reason)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asserts(items: &[&str]) -> DecodedTests {
        DecodedTests::Asserts(items.iter().map(|item| (*item).to_owned()).collect())
    }

    #[test]
    fn issue16_every_form_open_instruct_sends_is_accepted() {
        let list = json!(["assert f(1) == 2"]);
        assert_eq!(
            decode_tests(&list, false).unwrap(),
            asserts(&["assert f(1) == 2"])
        );
        let text = Value::String(list.to_string());
        assert_eq!(
            decode_tests(&text, false).unwrap(),
            asserts(&["assert f(1) == 2"])
        );
        let twice = Value::String(text.to_string());
        assert_eq!(
            decode_tests(&twice, false).unwrap(),
            asserts(&["assert f(1) == 2"])
        );
        for nothing in [json!(null), json!(""), json!([]), json!("[]")] {
            assert_eq!(decode_tests(&nothing, false).unwrap().len(), 0, "{nothing}");
        }
        let pairs = json!([{"input": "1\n", "output": "2\n"}]);
        assert_eq!(
            decode_tests(&pairs, true).unwrap(),
            DecodedTests::Stdio {
                inputs: vec![json!("1\n")],
                outputs: vec![json!("2\n")]
            }
        );
    }

    #[test]
    fn issue16_the_release_label_is_accepted_directly_with_null_keys() {
        let io = json!({"inputs": ["1\n"], "outputs": ["2\n"], "functional": null});
        assert!(matches!(
            decode_tests(&io, false).unwrap(),
            DecodedTests::Stdio { .. }
        ));
        let functional = json!({"inputs": null, "outputs": null, "functional": ["assert 1"]});
        assert_eq!(
            decode_tests(&Value::String(functional.to_string()), true).unwrap(),
            asserts(&["assert 1"])
        );
        let verl = json!({"assert_case": ["assert 2"]});
        assert_eq!(decode_tests(&verl, false).unwrap(), asserts(&["assert 2"]));
    }

    #[test]
    fn issue16_every_refusal_is_a_422_saying_what_was_wrong() {
        let cases = [
            (json!("eJxLy8lPTgQACv8C/Q=="), "base64 text"),
            (json!("assert f(1) == 2"), "a string but not JSON"),
            (json!(3), "tests is a number"),
            (json!("3"), "JSON text holding a number"),
            (json!(["assert 1", 2]), "tests[1] is a number"),
            (json!([{"input": "1"}]), "tests[0] is an object"),
            (json!({"style": "rule"}), "keys [\"style\"]"),
            (json!({"inputs": ["1"]}), "only one of"),
            (
                json!({"inputs": ["1"], "outputs": []}),
                "1 items and tests.outputs 0",
            ),
            (
                json!({"functional": "assert 1"}),
                "tests.functional is a string",
            ),
        ];
        for (tests, wording) in cases {
            let error = decode_tests(&tests, false).unwrap_err();
            assert_eq!(error.status, StatusCode::UNPROCESSABLE_ENTITY, "{tests}");
            assert!(error.reason.contains(wording), "{tests}: {}", error.reason);
            assert!(
                !error.reason.contains("pickled") || wording == "base64 text",
                "{}",
                error.reason
            );
        }
    }
}
