//! `label == metadata.ground_truth`, decided in one place for every command that asks
//! (`validate`, `stats`, `show`, `card`, `export`), exactly as Python decides it on the objects
//! `json.loads` builds: object key order and overwritten duplicate keys do not matter, `1 ==
//! 1.0 == true`, and a `NaN` equals the `NaN` at the same place (see
//! [`rlvr_python_compat::json::ValueRef::python_eq`]).

use rlvr_python_compat::json::ValueRef;

/// Whether Python finds `label == ground_truth`.
pub fn label_equals_ground_truth(label: &ValueRef<'_>, ground_truth: &ValueRef<'_>) -> bool {
    label.python_eq(ground_truth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlvr_python_compat::json::parse;

    fn equal(label: &str, ground_truth: &str) -> bool {
        label_equals_ground_truth(
            &parse(label).expect("label"),
            &parse(ground_truth).expect("ground truth"),
        )
    }

    /// Issue 13: export called these different while validate and stats did not.
    #[test]
    fn issue_13_key_order_does_not_matter() {
        assert!(equal(
            r#"{"inputs": ["1"], "outputs": ["2"]}"#,
            r#"{"outputs": ["2"], "inputs": ["1"]}"#
        ));
    }

    /// Issue 13: Python's `json` shares one `NaN` object, and containers compare items by
    /// identity first.
    #[test]
    fn issue_13_nan_equals_nan_at_the_same_place() {
        assert!(equal(
            r#"{"inputs": [NaN], "outputs": ["x"]}"#,
            r#"{"inputs": [NaN], "outputs": ["x"]}"#
        ));
        assert!(equal(r#"{"a": {"b": NaN}}"#, r#"{"a": {"b": NaN}}"#));
        assert!(!equal(r#"{"a": [NaN]}"#, r#"{"a": [1]}"#));
        assert!(!equal(r#"{"a": [NaN, 1]}"#, r#"{"a": [1, NaN]}"#));
    }
}
