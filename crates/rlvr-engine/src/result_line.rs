//! The result line shared by `rlvr verify` and `rlvr serve`: the job's id followed by the
//! [`JobResult`] fields, `tests` kept only when details were asked for.

use rlvr_verify::JobResult;
use serde_json::Value;

/// `{"id", "score", "pass_rate", "passed", "total", "all_passed", "status", "profile", ...}`.
pub fn result_line(id: Value, mut result: JobResult, details: bool) -> Value {
    if !details {
        result.tests = None;
    }
    let mut line = serde_json::Map::new();
    line.insert("id".to_owned(), id);
    if let Ok(Value::Object(fields)) = serde_json::to_value(&result) {
        line.extend(fields);
    }
    Value::Object(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlvr_verify::ProfileName;

    #[test]
    fn id_comes_first_and_tests_only_with_details() {
        let result = JobResult::invalid_job(ProfileName::Judge, "line 1: bad");
        let line = result_line(Value::from(7), result, false);
        let text = line.to_string();
        assert!(text.starts_with(r#"{"id":7,"score":null"#), "{text}");
        assert!(!text.contains("\"tests\""));
    }
}
