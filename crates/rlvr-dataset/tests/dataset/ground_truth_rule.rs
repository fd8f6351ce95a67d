//! Issue 33: the rule that finds a dataset row's tests, checked against the table of cases the
//! Python package's `rlvr.ground_truth.tests_of` is checked against too
//! (`python/tests/test_ground_truth_rule.py`), so the two cannot drift apart.

use std::path::Path;

use rlvr_dataset::ground_truth_of_row;
use rlvr_python_compat::loads::parse_python_json;
use serde_json::Value;

const TEST_KEYS: [&str; 3] = ["inputs", "outputs", "functional"];

/// `value` as the table writes tests: a JSON string read as its value, null keys dropped from
/// every object (the rule every entry point follows: a null key is an absent key).
fn normalized(value: &Value) -> Value {
    match value {
        Value::String(text) => parse_python_json(text.as_bytes())
            .map_or_else(|_| value.clone(), |parsed| normalized(&parsed)),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(_, member)| !member.is_null())
                .map(|(key, member)| (key.clone(), normalized_inner(member)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Inside the tests, strings are values, not JSON text.
fn normalized_inner(value: &Value) -> Value {
    match value {
        Value::Object(_) => normalized(value),
        Value::Array(items) => Value::Array(items.iter().map(normalized_inner).collect()),
        other => other.clone(),
    }
}

#[test]
fn issue_33_the_rows_tests_are_where_the_shared_table_says() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ground_truth_of_rows.json");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the table"))
        .expect("the table is JSON");
    let cases = table["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10, "the table lost its cases");
    for case in cases {
        let name = case["name"].as_str().expect("a name");
        let found = ground_truth_of_row(&case["row"]);
        assert_eq!(
            found.map(|(field, _)| field),
            case["field"].as_str(),
            "{name}: the field"
        );
        let tests = found
            .map(|(_, value)| normalized(value))
            .filter(|value| TEST_KEYS.iter().any(|key| value.get(key).is_some()));
        assert_eq!(
            tests.as_ref(),
            Some(&case["tests"]).filter(|tests| !tests.is_null()),
            "{name}: the tests"
        );
    }
}
