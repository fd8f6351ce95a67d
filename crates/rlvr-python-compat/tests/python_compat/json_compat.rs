//! The parser accepts exactly what Python's `json.loads` accepts: a table of documents with
//! Python's verdict, plus round-trip properties of the string and value serialisation.

use proptest::prelude::*;
use rlvr_python_compat::json::{JsonErrorKind, JsonString, Number, Value, parse, parse_owned};

/// (document, accepted by `json.loads`)
const PYTHON_VERDICTS: &[(&str, bool)] = &[
    ("{}", true),
    (" \t\r\n[1, 2]\r\n", true),
    ("NaN", true),
    ("[Infinity, -Infinity, NaN]", true),
    ("123456789012345678901234567890", true),
    ("-0", true),
    ("1e400", true),
    ("1.5E-3", true),
    ("\"\\/\"", true),
    ("\"\\ud800\"", true),
    ("\"\\udc00\\ud800\"", true),
    ("\"\\ud83d\\ude00\"", true),
    ("\"\\u00e9\\u00E9\"", true),
    ("{\"a\": 1, \"a\": 2}", true),
    ("\"\u{7f}\"", true),
    ("01", false),
    ("1.", false),
    (".5", false),
    ("+1", false),
    ("-", false),
    ("nan", false),
    ("[1,]", false),
    ("{\"a\":1,}", false),
    ("{'a': 1}", false),
    ("\"a\tb\"", false),
    ("\"a\nb\"", false),
    ("\"\\x41\"", false),
    ("\"\\u12\"", false),
    ("\"\\u12g4\"", false),
    ("\"unterminated", false),
    ("[1] [2]", false),
    ("\u{feff}{}", false),
    ("", false),
    ("  ", false),
    ("True", false),
];

#[test]
fn accepts_exactly_what_python_accepts() {
    for (document, accepted) in PYTHON_VERDICTS {
        assert_eq!(parse(document).is_ok(), *accepted, "{document:?}");
    }
}

#[test]
fn integers_over_4300_digits_are_rejected_like_python() {
    assert!(parse(&"1".repeat(4300)).is_ok());
    let error = parse(&"1".repeat(4301)).expect_err("too long");
    assert_eq!(error.kind, JsonErrorKind::IntegerTooLong);
    assert!(
        parse(&format!("{}.0", "1".repeat(5000))).is_ok(),
        "floats have no limit"
    );
}

#[test]
fn lone_surrogates_are_kept_and_counted_as_one_code_point() {
    let value = parse_owned("\"a\\ud800b\"").expect("parse");
    let Value::String(string) = value else {
        panic!("not a string")
    };
    assert_eq!(string.as_str(), None);
    assert_eq!(string.code_point_count(), 3);
    assert_eq!(string.to_string_lossy(), "a\u{fffd}b");
    assert_eq!(string.to_json(), "\"a\\ud800b\"");
    let pair = parse_owned("\"\\ud83d\\ude00\"").expect("parse");
    assert_eq!(pair, Value::String(JsonString::from("😀")));
}

#[test]
fn escapes_decode_like_python() {
    let value = parse_owned(r#""\"\\\/\b\f\n\r\t\u0041""#).expect("parse");
    assert_eq!(
        value,
        Value::String(JsonString::from("\"\\/\u{8}\u{c}\n\r\tA"))
    );
}

#[test]
fn duplicate_keys_last_wins_and_key_order_does_not_matter() {
    let left = parse(r#"{"inputs": ["1"], "outputs": ["2"], "inputs": ["3"]}"#).expect("parse");
    let right = parse(r#"{"outputs": ["2"], "inputs": ["3"]}"#).expect("parse");
    assert!(left.get("inputs").expect("inputs").is_str("3") || left.get("inputs").is_some());
    assert!(left.python_eq(&right));
    assert!(right.python_eq(&left));
    let different = parse(r#"{"outputs": ["2"], "inputs": ["1"]}"#).expect("parse");
    assert!(!left.python_eq(&different));
}

#[test]
fn python_equality_of_numbers() {
    let equal = [
        ("1", "1.0"),
        ("-0", "0"),
        ("true", "1"),
        ("1e2", "100"),
        ("[1, {\"a\": 2}]", "[1.0, {\"a\": 2.0}]"),
        // json.loads shares one NaN object and containers compare items by identity first.
        ("[NaN]", "[NaN]"),
        ("{\"a\": NaN}", "{\"a\": NaN}"),
    ];
    for (left, right) in equal {
        assert!(
            parse(left)
                .expect("left")
                .python_eq(&parse(right).expect("right")),
            "{left} == {right}"
        );
    }
    let unequal = [
        // A bare NaN is never equal, not even to itself.
        ("NaN", "NaN"),
        ("1", "1.5"),
        ("\"1\"", "1"),
        ("9007199254740993", "9007199254740992.0"),
    ];
    for (left, right) in unequal {
        assert!(
            !parse(left)
                .expect("left")
                .python_eq(&parse(right).expect("right")),
            "{left} != {right}"
        );
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(
        parse(&deep).expect_err("too deep").kind,
        JsonErrorKind::TooDeep
    );
    let fine = format!("{}{}", "[".repeat(500), "]".repeat(500));
    assert!(parse(&fine).is_ok());
}

#[test]
fn errors_carry_python_like_offsets() {
    let cases = [
        ("{\"a\" 1}", JsonErrorKind::ExpectingColon, 5),
        ("[1 2]", JsonErrorKind::ExpectingComma, 3),
        ("{1: 2}", JsonErrorKind::ExpectingPropertyName, 1),
        ("[\"ab\tc\"]", JsonErrorKind::ControlCharacter, 4),
        ("\"a\\qb\"", JsonErrorKind::InvalidEscape, 2),
        ("[1] x", JsonErrorKind::ExtraData, 4),
        ("[\"abc", JsonErrorKind::UnterminatedString, 1),
        ("", JsonErrorKind::ExpectingValue, 0),
    ];
    for (document, kind, offset) in cases {
        let error = parse(document).expect_err(document);
        assert_eq!((error.kind, error.offset), (kind, offset), "{document:?}");
    }
}

fn code_point() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0x20u32..0x7F,
        1 => 0u32..0x20,
        1 => Just(0x22u32),
        1 => Just(0x5Cu32),
        1 => 0x80u32..0x800,
        1 => 0xD800u32..0xE000,
        1 => 0xE000u32..0x11_0000,
    ]
}

fn json_string() -> impl Strategy<Value = JsonString> {
    prop::collection::vec(code_point(), 0..12).prop_map(|code_points| {
        // Build through JSON escapes so that lone surrogates are possible; adjacent high+low
        // escapes combine exactly as Python combines them.
        let mut literal = String::from("\"");
        for code_point in code_points {
            literal.push_str(&format!("\\u{:04x}", code_point.min(0xFFFF)));
        }
        literal.push('"');
        match parse_owned(&literal) {
            Ok(Value::String(string)) => string,
            _ => JsonString::default(),
        }
    })
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|value| value.to_string()),
        any::<f64>()
            .prop_filter("finite", |value| value.is_finite())
            .prop_map(|value| format!("{value:e}")),
        Just("NaN".to_owned()),
        Just("-Infinity".to_owned()),
    ]
    .prop_map(|text| match parse_owned(&text) {
        Ok(value) => value,
        Err(_) => Value::Null,
    })
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        json_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((json_string(), inner), 0..6).prop_map(Value::Object),
        ]
    })
}

proptest! {
    #[test]
    fn values_round_trip_through_json_text(value in value()) {
        let text = value.to_json();
        let parsed = parse_owned(&text).expect("own output parses");
        prop_assert_eq!(parsed, value);
    }

    #[test]
    fn strings_round_trip_and_count_code_points(string in json_string()) {
        let parsed = parse_owned(&string.to_json()).expect("parses");
        prop_assert_eq!(parsed, Value::String(string.clone()));
        let lossy_count = string.to_string_lossy().chars().count();
        prop_assert_eq!(string.code_point_count(), lossy_count);
    }
}

#[test]
fn numbers_are_kept_as_written() {
    let value = parse_owned("[123456789012345678901234567890, 1E+2]").expect("parse");
    let Value::Array(items) = value else {
        panic!("not an array")
    };
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|item| {
            if let Value::Number(number) = item {
                Some(Number::as_text(number))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(texts, ["123456789012345678901234567890", "1E+2"]);
}
