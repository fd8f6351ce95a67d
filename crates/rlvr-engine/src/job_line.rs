//! One job line of `rlvr verify`: `{"id": any, "response": str, "ground_truth": object | JSON
//! string}` or, with a dataset, `{"id": any, "response": str, "index": row}`; optionally
//! `"language"` (the language the judge scores the response in) and `"languages"` (those it
//! allows), issue 24.
//!
//! Lines are read as Python's `json` writes them (lone surrogates, `NaN`; see
//! [`rlvr_verify::parse_python_json`]), and a key whose value is `null` is the same as an absent key
//! (`{"ground_truth": null, "index": 3}` is a dataset job), as in every entry point.

use rlvr_verify::{
    Language, LanguageRequest, TestSuite, TestSuiteError, json_kind, parse_python_json,
};
use serde_json::Value;

/// Where a job's tests come from.
#[derive(Debug, Clone)]
pub enum JobTests {
    /// Given inline.
    Inline(TestSuite),
    /// Row `index` (zero-based) of the dataset file.
    DatasetRow(u64),
}

/// A parsed job line.
#[derive(Debug, Clone)]
pub struct JobLine {
    /// The caller's identifier, echoed back verbatim (`null` when absent).
    pub id: Value,
    /// The model's response.
    pub response: String,
    /// The tests.
    pub tests: JobTests,
    /// Its `language` (the one the judge scores it in) and `languages` (those it allows)
    /// keys (issue 24; the reference profiles ignore both).
    pub languages: LanguageRequest,
}

/// Why a job line is not a job. The id is kept when it could be read, so the result line can
/// still carry it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason}")]
pub struct JobLineError {
    /// The id, if the line had one.
    pub id: Value,
    /// What is wrong.
    pub reason: String,
}

/// Parses one job line.
pub fn parse_job_line(line: &str) -> Result<JobLine, JobLineError> {
    let value: Value = parse_python_json(line.as_bytes()).map_err(|error| JobLineError {
        id: Value::Null,
        reason: format!("not valid JSON: {error}"),
    })?;
    parse_job_value(value)
}

/// Parses one job already decoded from JSON (an element of `rlvr serve`'s `jobs` list).
pub fn parse_job_value(value: Value) -> Result<JobLine, JobLineError> {
    let Value::Object(mut object) = value else {
        return Err(JobLineError {
            id: Value::Null,
            reason: "a job must be a JSON object".into(),
        });
    };
    // `null` is absent: pyarrow and pandas write absent keys as `null`.
    object.retain(|_, value| !value.is_null());
    let id = object.remove("id").unwrap_or(Value::Null);
    let fail = |reason: String| JobLineError {
        id: id.clone(),
        reason,
    };
    let response = match object.remove("response") {
        Some(Value::String(response)) => response,
        Some(other) => {
            return Err(fail(format!(
                "`response` must be a string, found {}",
                json_kind(&other)
            )));
        }
        None => return Err(fail("missing `response`".into())),
    };
    let tests = match (object.remove("ground_truth"), object.remove("index")) {
        (Some(_), Some(_)) => {
            return Err(fail(
                "give either `ground_truth` or `index`, not both".into(),
            ));
        }
        (Some(ground_truth), None) => JobTests::Inline(
            TestSuite::from_value(&ground_truth)
                .map_err(|error: TestSuiteError| fail(error.to_string()))?,
        ),
        (None, Some(index)) => match index.as_u64() {
            Some(row) => JobTests::DatasetRow(row),
            None => {
                return Err(fail(format!(
                    "`index` must be a non-negative integer, found {}",
                    describe(&index)
                )));
            }
        },
        (None, None) => {
            return Err(fail(
                "missing `ground_truth` (or `index` with --dataset)".into(),
            ));
        }
    };
    let languages = language_request(&mut object).map_err(fail)?;
    Ok(JobLine {
        id,
        response,
        tests,
        languages,
    })
}

/// Reads the `language` and `languages` keys: a language name (`cpp`, `c++20`, `java`,
/// `nodejs`, ...) and a list of them; the language, when both are given, must be allowed.
fn language_request(
    object: &mut serde_json::Map<String, Value>,
) -> Result<LanguageRequest, String> {
    let name = |value: &Value, key: &str| {
        match value {
        Value::String(text) => Language::from_name(text).ok_or_else(|| {
            format!(
                "`{key}` names no language rlvr runs ({text:?}); known: python, cpp, cpp20, c, java, javascript, go, rust"
            )
        }),
        other => Err(format!("`{key}` must be a string, found {}", json_kind(other))),
    }
    };
    let requested = match object.remove("language") {
        Some(value) => Some(name(&value, "language")?),
        None => None,
    };
    let allowed = match object.remove("languages") {
        Some(Value::Array(values)) => Some(
            values
                .iter()
                .enumerate()
                .map(|(index, value)| {
                    name(value, "languages")
                        .map(|choice| choice.language)
                        .map_err(|error| format!("{error} (item {index})"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(format!(
                "`languages` must be a list of language names, found {}",
                json_kind(&other)
            ));
        }
        None => None,
    };
    if let (Some(requested), Some(allowed)) = (requested, &allowed)
        && !allowed.contains(&requested.language)
    {
        return Err(format!(
            "`language` {} is not among the job's `languages`",
            requested.language
        ));
    }
    Ok(LanguageRequest { requested, allowed })
}

/// A value as error messages show it: scalars with their value, containers by kind.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => json_kind(value).to_owned(),
        Value::String(text) => {
            format!("a string ({:?})", text.chars().take(24).collect::<String>())
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_ground_truth_as_object_or_json_string() {
        for line in [
            r#"{"id": 7, "response": "x", "ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"]}}"#,
            r#"{"id": 7, "response": "x", "ground_truth": "{\"inputs\": [\"1\\n\"], \"outputs\": [\"1\\n\"]}"}"#,
        ] {
            let job = parse_job_line(line).unwrap();
            assert_eq!(job.id, 7);
            assert!(matches!(job.tests, JobTests::Inline(ref suite) if suite.len() == 1));
        }
    }

    /// Issue 16: `null` keys are absent keys.
    #[test]
    fn issue_16_null_keys_are_absent() {
        let job = parse_job_line(r#"{"id": 1, "response": "x", "ground_truth": null, "index": 4}"#)
            .unwrap();
        assert!(matches!(job.tests, JobTests::DatasetRow(4)));
        let job = parse_job_line(
            r#"{"id": null, "response": "x", "index": null, "ground_truth": {"inputs": ["1"], "outputs": ["1"], "functional": null}}"#,
        )
        .unwrap();
        assert!(job.id.is_null());
        assert!(matches!(job.tests, JobTests::Inline(ref suite) if suite.len() == 1));
        let error = parse_job_line(r#"{"id": 1, "response": null, "index": 4}"#).unwrap_err();
        assert_eq!(error.reason, "missing `response`");
    }

    /// Issue 13: a lone surrogate escape does not make the line invalid.
    #[test]
    fn issue_13_lone_surrogates_and_nan_are_read_as_python_reads_them() {
        let job = parse_job_line(
            r#"{"id": "\udc80", "response": "x\ud800", "ground_truth": {"inputs": ["\ud800"], "outputs": ["1"]}}"#,
        )
        .unwrap();
        assert_eq!(job.id, "\u{fffd}");
        assert_eq!(job.response, "x\u{fffd}");
        let error = parse_job_line(
            r#"{"id": 2, "response": "x", "ground_truth": {"functional": ["assert 1"], "timeout": NaN}}"#,
        )
        .unwrap_err();
        assert_eq!(error.id, 2);
        assert!(
            error.reason.contains("\"timeout\" must be a number"),
            "{}",
            error.reason
        );
    }

    /// Any JSON a trainer might send, nested a little.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|number| serde_json::Number::from_f64(number)
                    .map_or(Value::Null, Value::Number)),
            "[a-z0-9 \\n]{0,12}".prop_map(Value::from),
        ];
        scalar.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just("id".to_owned()),
                            Just("response".to_owned()),
                            Just("ground_truth".to_owned()),
                            Just("index".to_owned()),
                            Just("inputs".to_owned()),
                            Just("outputs".to_owned()),
                            Just("functional".to_owned()),
                            Just("timeout".to_owned()),
                            Just("max_test_cases".to_owned()),
                        ],
                        inner
                    ),
                    0..6
                )
                .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Issue 12: whatever a job holds, parsing answers (a job or a reason), never panics,
        /// and keeps the id of an object for the result line.
        #[test]
        fn issue_12_any_job_value_is_a_job_or_a_reason(value in any_value()) {
            let id = value.get("id").cloned().unwrap_or(Value::Null);
            match parse_job_value(value) {
                Ok(job) => proptest::prop_assert_eq!(job.id, id),
                Err(error) => {
                    proptest::prop_assert!(!error.reason.is_empty());
                    proptest::prop_assert_eq!(error.id, id);
                }
            }
        }

        /// Issue 12: any text at all, JSON or not, never panics the line parser.
        #[test]
        fn issue_12_any_line_is_a_job_or_a_reason(line in "\\PC{0,64}") {
            let _ = parse_job_line(&line);
        }
    }

    #[test]
    fn dataset_rows_by_index() {
        let job = parse_job_line(r#"{"id": "a", "response": "x", "index": 12}"#).unwrap();
        assert!(matches!(job.tests, JobTests::DatasetRow(12)));
    }

    #[test]
    fn bad_lines_keep_their_id_and_say_why() {
        let cases = [
            ("{", "not valid JSON"),
            ("[1]", "must be a JSON object"),
            (r#"{"id": 1}"#, "missing `response`"),
            (
                r#"{"id": 1, "response": 3, "index": 0}"#,
                "`response` must be a string",
            ),
            (r#"{"id": 1, "response": "x"}"#, "missing `ground_truth`"),
            (
                r#"{"id": 1, "response": "x", "index": -1}"#,
                "`index` must be a non-negative integer",
            ),
            (
                r#"{"id": 1, "response": "x", "ground_truth": {"inputs": ["a"]}}"#,
                "ground truth",
            ),
        ];
        for (line, reason) in cases {
            let error = parse_job_line(line).unwrap_err();
            assert!(error.reason.contains(reason), "{line}: {}", error.reason);
            if line.starts_with("{\"id\"") {
                assert_eq!(error.id, 1, "{line}");
            }
        }
    }
}
