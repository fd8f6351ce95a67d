//! JSON as Python's `json` module writes it, for everything a trainer or the dataset hands us:
//! request bodies, job lines, `--dataset` rows, ground truths given as JSON strings.
//!
//! Python's `json.dumps` writes what serde_json refuses: a lone surrogate escape such as
//! `"\ud800"` (the released file holds some in prompts) and `NaN`/`Infinity` (pandas' missing
//! values). serde_json is tried first (it is fast and most text is plain JSON); when it refuses,
//! the text is read again with the Python-compatible parser of [`crate::json`], so one odd character
//! no longer rejects a whole request or job. In the result:
//!
//! * each lone surrogate becomes U+FFFD (a Rust `String` cannot hold one; UTF-8 cannot encode
//!   one either, so a program could never print it and a test expecting it cannot pass
//!   as the references run it);
//! * `NaN`, `Infinity`, `-Infinity` and numbers beyond `f64` become strings holding their
//!   literal, so a validator that wants a number says `found a string ("NaN")`;
//! * duplicate keys keep the last value, as a Python `dict` does.
//!
//! A value of the wrong type is reported with the path of its field (`jobs[2].seed`), so a
//! client sees which of its values to fix.

use crate::json::{ValueRef, parse};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a text could not be deserialized.
#[derive(Debug, thiserror::Error)]
pub enum JsonTextError {
    /// Not JSON, even to Python.
    #[error("malformed json: {0}")]
    Syntax(serde_json::Error),
    /// JSON, but a field holds the wrong type or value.
    #[error("field `{path}`: {error}")]
    Data {
        /// Where the value is, e.g. `jobs[2].seed` (`.` for the whole document).
        path: String,
        /// What serde said.
        error: serde_json::Error,
    },
}

/// Reads JSON text as Python's `json.loads` would, into a serde value (see the module docs
/// for what changes on the way). The error is serde_json's (with its line and column) when
/// neither parser accepts the text.
pub fn parse_python_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let error = match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    match reparse(bytes) {
        Some(value) => Ok(value),
        None => Err(error),
    }
}

/// Deserializes `T` from JSON text as Python writes it: serde_json directly, or, when the text
/// is JSON only to Python, through [`parse_python_json`]. A data error (a field of the wrong
/// type) names the field's path and costs no second parse.
pub fn from_python_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonTextError> {
    let data_error = |error: serde_path_to_error::Error<serde_json::Error>| JsonTextError::Data {
        path: error.path().to_string(),
        error: error.into_inner(),
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let error = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => match deserializer.end() {
            Ok(()) => return Ok(value),
            Err(error) => error,
        },
        Err(error) if error.inner().is_data() => return Err(data_error(error)),
        Err(error) => error.into_inner(),
    };
    match reparse(bytes) {
        Some(value) => serde_path_to_error::deserialize(value).map_err(data_error),
        None => Err(JsonTextError::Syntax(error)),
    }
}

/// The second reading, with the Python-compatible parser (surrounding whitespace allowed, as
/// `json.loads` allows it).
fn reparse(bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value = parse(text.trim_matches([' ', '\t', '\n', '\r'])).ok()?;
    Some(to_serde(&value))
}

/// One Python-parsed value as a serde value.
fn to_serde(value: &ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(flag) => Value::Bool(*flag),
        ValueRef::Number(number) => {
            let text = number.as_text();
            match text.parse::<serde_json::Number>() {
                Ok(number) => Value::Number(number),
                // NaN, Infinity, 1e400: no serde number holds them.
                Err(_) => Value::String(text.to_owned()),
            }
        }
        ValueRef::String(text) => Value::String(text.to_string_lossy().into_owned()),
        ValueRef::Array(array) => Value::Array(array.items().iter().map(to_serde).collect()),
        ValueRef::Object(object) => {
            let mut members = serde_json::Map::with_capacity(object.members().len());
            for (key, member) in object.members() {
                members.insert(key.to_string_lossy().into_owned(), to_serde(member));
            }
            Value::Object(members)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 13: a lone surrogate escape is read, not refused.
    #[test]
    fn issue_13_lone_surrogates_become_the_replacement_character() {
        let text = br#"{"prompt": "a\ud800b", "pair": "\ud83d\ude00", "low": "\udc00"}"#;
        assert!(serde_json::from_slice::<Value>(text).is_err());
        let value = parse_python_json(text).unwrap();
        assert_eq!(
            value,
            json!({"prompt": "a\u{fffd}b", "pair": "\u{1f600}", "low": "\u{fffd}"})
        );
        let padded = parse_python_json(b" \n{\"a\": \"\\ud800\"}\r\n").unwrap();
        assert_eq!(padded, json!({"a": "\u{fffd}"}));
    }

    #[test]
    fn python_numbers_serde_cannot_hold_become_their_literal() {
        let value = parse_python_json(
            br#"{"a": NaN, "b": -Infinity, "c": 1e400, "d": 12345678901234567890123, "e": 2.5}"#,
        )
        .unwrap();
        assert_eq!(value["a"], "NaN");
        assert_eq!(value["b"], "-Infinity");
        assert_eq!(value["c"], "1e400");
        assert!(value["d"].is_number());
        assert_eq!(value["e"], 2.5);
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_in_the_first_place() {
        let value = parse_python_json(br#"{"a": 1, "b": "\ud800", "a": 2}"#).unwrap();
        assert_eq!(value.to_string(), "{\"a\":2,\"b\":\"\u{fffd}\"}");
    }

    #[test]
    fn text_neither_parser_reads_keeps_serdes_error() {
        let error = parse_python_json(b"{\"a\": [1, }").unwrap_err();
        assert!(error.is_syntax());
        assert!(error.to_string().contains("line 1 column"), "{error}");
        let error = parse_python_json(b"{\"a\": \xff}").unwrap_err();
        assert!(error.is_syntax(), "{error}");
    }

    #[derive(Debug, serde::Deserialize)]
    struct Request {
        count: u64,
    }

    #[test]
    fn data_errors_name_the_field() {
        let error = from_python_json::<Request>(br#"{"count": "x"}"#).unwrap_err();
        assert!(matches!(error, JsonTextError::Data { .. }));
        assert!(
            error
                .to_string()
                .starts_with("field `count`: invalid type: string \"x\""),
            "{error}"
        );
        let error = from_python_json::<Request>(br#"{"count": NaN}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("field `count`: invalid type: string \"NaN\""),
            "{error}"
        );
        let error =
            from_python_json::<Vec<Request>>(br#"[{"count": 1}, {"count": -1}]"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("field `[1].count`: invalid value: integer `-1`"),
            "{error}"
        );
    }

    #[test]
    fn typed_reads_take_python_text_and_refuse_trailing_data() {
        let ok = from_python_json::<Request>(b" {\"count\": 1, \"s\": \"\\ud800\"}\n").unwrap();
        assert_eq!(ok.count, 1);
        let error = from_python_json::<Request>(br#"{"count": 1} x"#).unwrap_err();
        assert!(matches!(error, JsonTextError::Syntax(_)), "{error}");
        assert!(error.to_string().starts_with("malformed json: "), "{error}");
    }
}
